//! Expectations, the request journal and strict mode: a "test" whose code
//! under test has a typo, and the report `verify()` prints for it.
//!
//! Run it with `cargo run -p example-verify`.

use mocklib::node::setup_server;
use mocklib::{HttpResponse, ListenOptions, http};

#[tokio::main]
async fn main() {
    let server = setup_server([
        http::get("https://api.example.com/users/:id", |args| {
            let id = args.params.get("id").unwrap_or_default().to_owned();
            HttpResponse::json(&serde_json::json!({ "id": id, "name": "John" }))
        })
        .times(1),
        http::post("https://api.example.com/audit", |_| {
            HttpResponse::empty().status(204)
        })
        .at_least(1),
    ]);
    // Strict: what no handler answers fails at the requester *and* in verify().
    server.listen_with(ListenOptions::strict());
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(server.middleware())
        .build();

    // The code under test: posts an audit record, then fetches the user from
    // the wrong path and swallows the error.
    client
        .post("https://api.example.com/audit")
        .body("login")
        .send()
        .await
        .unwrap();
    let _ = client.get("https://api.example.com/user/42").send().await;

    println!("journal:");
    for request in server.requests() {
        println!(
            "  {} {} -> {:?}",
            request.method(),
            request.url(),
            request.answer()
        );
    }
    let report = server.verify().expect_err("the typo is caught").to_string();
    println!("\n{report}");
    assert!(
        report.contains("GET https://api.example.com/users/:id: expected exactly 1, received 0")
    );
    assert!(report.contains("received https://api.example.com/user/42"));
    assert!(
        report.contains("strict mode: intercepted a request without a matching request handler")
    );
}
