//! The quick start: a posts API and a user endpoint, served from handlers
//! and exercised with a real reqwest client.
//!
//! Run it with `cargo run -p example-quickstart`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use mocklib::node::setup_server;
use mocklib::{HttpResponse, events::EventKind, http};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The posts live in memory, keyed by id. Empty at the beginning.
    let posts: Arc<Mutex<BTreeMap<String, Value>>> = Arc::default();

    let server = setup_server([
        http::get("/posts", {
            let posts = Arc::clone(&posts);
            move |_| {
                let all: Vec<Value> = posts.lock().unwrap().values().cloned().collect();
                HttpResponse::json(&all)
            }
        }),
        http::post("/posts", {
            let posts = Arc::clone(&posts);
            move |args| {
                let posts = Arc::clone(&posts);
                async move {
                    // A bad body is an error value; `?` turns it into a 500.
                    let post: Value = args.request.json()?;
                    let id = post["id"].to_string().trim_matches('"').to_owned();
                    posts.lock().unwrap().insert(id, post.clone());
                    Ok::<_, mocklib::request::BodyError>(HttpResponse::json(&post).status(201))
                }
            }
        }),
        http::delete("/posts/:id", {
            let posts = Arc::clone(&posts);
            move |args| match posts.lock().unwrap().remove(&args.params["id"]) {
                None => HttpResponse::empty().status(404),
                Some(deleted) => HttpResponse::json(&deleted),
            }
        }),
        http::get("/user", |args| {
            if args.cookies.get("session").is_none() {
                return HttpResponse::empty().status(401);
            }
            HttpResponse::json(&json!({ "name": "John" }))
        }),
    ]);
    server.events().on(EventKind::RequestStart, |event| {
        let body = event.request.text().unwrap_or("<binary>");
        println!(
            "→ {} {} {}",
            event.request.method(),
            event.request.url(),
            body
        );
    });
    server.listen();

    // The client under test: plain reqwest with the mocklib middleware.
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(server.middleware())
        .build();
    let api = "https://api.example.com";

    let requests = [
        client.get(format!("{api}/posts")),
        client
            .post(format!("{api}/posts"))
            .json(&json!({ "id": 1, "title": "Hello" })),
        client
            .post(format!("{api}/posts"))
            .json(&json!({ "id": 2, "title": "World" })),
        client.get(format!("{api}/posts")),
        client.delete(format!("{api}/posts/1")),
        client.delete(format!("{api}/posts/1")),
        client.get(format!("{api}/posts")),
        client.get(format!("{api}/user")),
        client
            .get(format!("{api}/user"))
            .header("cookie", "session=abc123"),
    ];
    for request in requests {
        let response = request.send().await?;
        let status = response.status();
        let body = response.text().await?;
        println!(
            "← {status} {}\n",
            if body.is_empty() { "(no body)" } else { &body }
        );
    }

    server.close();
    Ok(())
}
