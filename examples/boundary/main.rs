//! Boundaries: many concurrent "tests", each with its own handler overrides.
//!
//! Run it with `cargo run -p example-boundary`.

use mocklib::node::setup_server;
use mocklib::{BoundaryExt, HttpResponse, http};

#[tokio::main]
async fn main() {
    let server = setup_server([http::get("https://api.example.com/user", |_| {
        HttpResponse::json(&serde_json::json!({ "name": "John" }))
    })]);
    server.listen();
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(server.middleware())
        .build();

    // Each call of `test` runs in its own boundary: the override it adds is
    // seen only by requests made inside that call.
    let test = server.boundary({
        let (server, client) = (server.clone(), client.clone());
        move |name: String| async move {
            let reply = name.clone();
            server.use_handlers([http::get("https://api.example.com/user", move |_| {
                HttpResponse::json(&serde_json::json!({ "name": reply }))
            })]);
            let seen = client
                .get("https://api.example.com/user")
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            println!("test {name:>5} sees {seen}");
        }
    });

    // Spawned tasks do not inherit the caller's boundary; `.in_current_boundary()`
    // carries it. Here each test is itself the boundary call, so it is spawned as is.
    let tests: Vec<_> = ["Kate", "Alex", "Sam"]
        .into_iter()
        .map(|name| tokio::spawn(test(name.to_owned()).in_current_boundary()))
        .collect();
    for test in tests {
        test.await.unwrap();
    }

    let outside = client
        .get("https://api.example.com/user")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    println!("outside any boundary: {outside}");
}
