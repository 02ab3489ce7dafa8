//! A streamed chat-completion API, mocked: the client posts a prompt and
//! reads the answer token by token from a server-sent event stream that
//! ends with `data: [DONE]`, the way LLM APIs stream.
//!
//! Run it with `cargo run -p example-chat-stream`.

use std::io::Write;
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use mocklib::delay;
use mocklib::node::setup_server;
use mocklib::sse::{self, Event};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = setup_server([sse::post(
        "https://api.openai.test/v1/chat/completions",
        |args| async move {
            let request: Value = args.request.json()?;
            let prompt = request["messages"][0]["content"]
                .as_str()
                .unwrap_or_default();
            let answer = format!("You said: {prompt}");
            // One event per token, a little apart, as a model would stream.
            for token in answer.split_inclusive(' ') {
                let chunk = json!({ "choices": [{ "delta": { "content": token } }] });
                args.client.send(Event::json(&chunk));
                delay(Duration::from_millis(30)).await;
            }
            args.client.send(Event::data("[DONE]"));
            Ok::<_, mocklib::request::BodyError>(())
        },
    )]);
    server.listen();

    // The application's code: a plain reqwest client through the listener.
    let response = server
        .reqwest_client()
        .post("https://api.openai.test/v1/chat/completions")
        .json(&json!({
            "model": "gpt-test",
            "stream": true,
            "messages": [{ "role": "user", "content": "hello streaming world" }],
        }))
        .send()
        .await?;
    println!(
        "{} {}",
        response.status(),
        response.headers()["content-type"].to_str()?
    );

    let mut events = response.bytes_stream().eventsource();
    let mut answer = String::new();
    while let Some(event) = events.next().await {
        let event = event?;
        if event.data == "[DONE]" {
            break;
        }
        let chunk: Value = serde_json::from_str(&event.data)?;
        let token = chunk["choices"][0]["delta"]["content"]
            .as_str()
            .unwrap_or_default();
        print!("{token}");
        std::io::stdout().flush()?;
        answer.push_str(token);
    }
    println!();
    assert_eq!(answer, "You said: hello streaming world");
    server.close();
    Ok(())
}
