//! Mocking a GraphQL API: queries, mutations with typed variables, an
//! endpoint-scoped link, a catch-all for anonymous operations, and a batch.
//!
//! Run with `cargo run -p example-graphql`.

use mocklib::graphql;
use mocklib::node::setup_server;
use serde::Deserialize;
use serde_json::{Value, json};

const ENDPOINT: &str = "https://api.example.com/graphql";

#[derive(Deserialize)]
struct UpdatePostVars {
    id: u32,
    title: String,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let api = graphql::link(ENDPOINT);
    let server = setup_server([
        // `query GetUser { … }` sent to the endpoint.
        api.query("GetUser", |args| {
            if args.cookies.get("session").is_none() {
                return graphql::error_message("Not signed in");
            }
            graphql::data(json!({ "user": { "id": args.variables["id"], "name": "John" } }))
        }),
        // An async resolver reading its variables into a struct.
        api.mutation("UpdatePost", |args| async move {
            let vars: UpdatePostVars = args.variables()?;
            Ok::<_, graphql::VariablesError>(graphql::data(json!({
                "updatePost": { "id": vars.id, "title": vars.title }
            })))
        }),
        // Anything else, including anonymous operations, on any endpoint.
        graphql::operation(|args| {
            graphql::error_message(format!(
                "no mock for the {} {}",
                args.operation_type,
                args.operation_name.as_deref().unwrap_or("(anonymous)")
            ))
        }),
    ]);
    server.listen();
    println!("handlers:");
    for handler in server.list_handlers() {
        println!("  {handler}");
    }

    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(server.middleware())
        .build();
    let send = |body: Value| {
        let client = client.clone();
        async move {
            client
                .post(ENDPOINT)
                .header("cookie", "session=abc")
                .json(&body)
                .send()
                .await?
                .json::<Value>()
                .await
                .map_err(reqwest_middleware::Error::from)
        }
    };

    let user = send(json!({
        "query": "query GetUser($id: ID!) { user(id: $id) { id name } }",
        "variables": { "id": "1" },
    }))
    .await?;
    println!("GetUser      → {user}");

    let post = send(json!({
        "query": "mutation UpdatePost($id: Int!, $title: String!) { updatePost(id: $id, title: $title) { id title } }",
        "variables": { "id": 7, "title": "Hello" },
    }))
    .await?;
    println!("UpdatePost   → {post}");

    let anonymous = send(json!({ "query": "{ viewer { login } }" })).await?;
    println!("anonymous    → {anonymous}");

    // A batch: one request, an array of operations, an array of answers.
    let batch = send(json!([
        { "query": "query GetUser { user(id: 2) { name } }", "variables": { "id": "2" } },
        { "query": "query Unknown { x }" },
    ]))
    .await?;
    println!("batch        → {batch}");

    server.close();
    Ok(())
}
