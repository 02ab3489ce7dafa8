//! A front-end app in plain web-sys whose API does not exist yet: mocklib's
//! browser worker answers it with the same kind of handlers a native test
//! uses. The page shows the mocked user and posts, plus a file the real
//! server has (an unhandled request, performed as it is).
//!
//! Build and serve it with `./scripts/browser-example` (see this folder's
//! README); `crates/browser-tests/tests/example_app.rs` loads it in headless
//! Chromium and checks what the page shows.
#![cfg(target_arch = "wasm32")]

use mocklib::browser::{StartOptions, setup_worker};
use mocklib::{HttpResponse, UnhandledRequest, http};
use serde::Deserialize;
use serde_json::json;
use wasm_bindgen::prelude::*;

#[derive(Deserialize)]
struct User {
    name: String,
}

#[derive(Deserialize)]
struct Post {
    title: String,
}

/// The handlers: in a real app they live next to the tests and are shared.
fn handlers() -> Vec<mocklib::Handler> {
    vec![
        http::get("/api/user", |_| {
            HttpResponse::json(&json!({ "name": "John" }))
        }),
        http::get("/api/posts", |_| {
            HttpResponse::json(
                &json!([{ "title": "Hello, mocklib" }, { "title": "Mocking in the browser" }]),
            )
        }),
    ]
}

#[wasm_bindgen(start)]
pub async fn start() -> Result<(), JsValue> {
    let worker = setup_worker(handlers());
    // notes.txt is served for real: let it through without a warning.
    let options = StartOptions::new().on_unhandled_request(UnhandledRequest::Bypass);
    let mode = worker
        .start_with(options)
        .await
        .map_err(|error| JsValue::from_str(&error.to_string()))?;
    let user: User = get_json("/api/user").await?;
    let posts: Vec<Post> = get_json("/api/posts").await?;
    let notes = gloo_net::http::Request::get("/notes.txt")
        .send()
        .await
        .map_err(to_js)?
        .text()
        .await
        .map_err(to_js)?;

    set_text("greeting", &format!("Hello, {}", user.name))?;
    let list = element("posts")?;
    for post in posts {
        let item = document()?.create_element("li")?;
        item.set_text_content(Some(&post.title));
        list.append_child(&item)?;
    }
    set_text("notes", notes.trim())?;
    set_text("mode", &mode.to_string())?;
    element("app")?.set_attribute("data-state", "done")?;
    // Keep the worker (and with it the interception) for the page's lifetime.
    std::mem::forget(worker);
    Ok(())
}

async fn get_json<T: for<'de> Deserialize<'de>>(url: &str) -> Result<T, JsValue> {
    gloo_net::http::Request::get(url)
        .send()
        .await
        .map_err(to_js)?
        .json()
        .await
        .map_err(to_js)
}

fn to_js(error: gloo_net::Error) -> JsValue {
    JsValue::from_str(&error.to_string())
}

fn document() -> Result<web_sys::Document, JsValue> {
    web_sys::window()
        .and_then(|window| window.document())
        .ok_or_else(|| JsValue::from_str("no document"))
}

fn element(id: &str) -> Result<web_sys::Element, JsValue> {
    document()?
        .get_element_by_id(id)
        .ok_or_else(|| JsValue::from_str(&format!("no #{id}")))
}

fn set_text(id: &str, text: &str) -> Result<(), JsValue> {
    element(id)?.set_text_content(Some(text));
    Ok(())
}
