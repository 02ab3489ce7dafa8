//! The admin API of `mocklib serve` (first part): handlers added, listed
//! and removed at runtime by a test in any language, on the server's own
//! origin.
//!
//! - `GET /__mocklib/handlers`: the handlers in lookup order, as JSON
//!   (`handler`, `once`, `added_at_runtime`).
//! - `POST /__mocklib/handlers`: entries in the handler-file format (YAML
//!   when the content type says `yaml`, JSON otherwise), put ahead of every
//!   other handler as `use_handlers` does; `201 {"added": n}`, or `400`
//!   naming the entry and the field as a bad file would.
//! - `DELETE /__mocklib/handlers`: removes the handlers added at runtime
//!   (`reset_handlers`); the files' handlers stay. `204`.
//!
//! - `GET /__mocklib/verify`: whether every entry with `times` got its
//!   count of requests (and, in strict mode, no request went unhandled):
//!   `200 {"ok": true}`, or `422 {"ok": false, "report": ...}` with
//!   `verify()`'s report, closest requests included.
//!
//! Handlers added at runtime survive a reload of the files.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use mocklib::node::Server;
use mocklib::{Handler, HttpResponse};
use url::Url;

use crate::handler_file;

/// The path of the handlers resource on the listener's own origin.
pub(crate) const HANDLERS_PATH: &str = "/__mocklib/handlers";

/// The path of the verification on the listener's own origin.
pub(crate) const VERIFY_PATH: &str = "/__mocklib/verify";

/// The handler answering [`VERIFY_PATH`].
pub(crate) fn verify_endpoint(server: &Server, base_url: &Url) -> Handler {
    let endpoint = base_url
        .join(VERIFY_PATH)
        .expect("a path joins the base URL");
    let server = server.clone();
    mocklib::http::get(endpoint.as_str(), move |_| match server.verify() {
        Ok(()) => HttpResponse::json(&serde_json::json!({ "ok": true })),
        Err(failure) => HttpResponse::json(&serde_json::json!({
            "ok": false,
            "report": failure.to_string(),
        }))
        .status(422),
    })
}

/// The handlers added at runtime, first first (their lookup order).
pub(crate) type Added = Arc<Mutex<Vec<Handler>>>;

/// The descriptors of the `--proto` files, for `grpc` entries.
type Pool = Arc<Mutex<Option<prost_reflect::DescriptorPool>>>;

/// The handler answering [`HANDLERS_PATH`]. `dir` is what `body_file` and
/// `seed_file` of added entries are relative to (the command's folder).
pub(crate) fn handlers_endpoint(
    server: &Server,
    base_url: &Url,
    pool: Pool,
    added: Added,
    dir: PathBuf,
) -> Handler {
    let endpoint = base_url
        .join(HANDLERS_PATH)
        .expect("a path joins the base URL");
    let server = server.clone();
    mocklib::http::all(endpoint.as_str(), move |args| {
        match args.request.method().as_str() {
            "GET" => {
                // The ones added at runtime come first, as they were put.
                let runtime = lock(&added).len();
                let listed: Vec<serde_json::Value> = server
                    .list_handlers()
                    .iter()
                    .enumerate()
                    .map(|(index, handler)| {
                        serde_json::json!({
                            "handler": handler.header(),
                            "once": handler.is_once(),
                            "added_at_runtime": index < runtime,
                        })
                    })
                    .collect();
                HttpResponse::json(&listed)
            }
            "POST" => {
                let Ok(text) = args.request.text() else {
                    return HttpResponse::text("the body is not UTF-8 text\n").status(400);
                };
                let yaml = args
                    .request
                    .header("content-type")
                    .is_some_and(|value| value.contains("yaml"));
                let pool = lock(&pool).clone();
                match handler_file::parse(text, yaml, "the request body", &dir, pool.as_ref()) {
                    Ok((handlers, _)) => {
                        let count = handlers.len();
                        let mut added = lock(&added);
                        // Ahead of the ones added before, as `use_handlers` puts them.
                        added.splice(0..0, handlers.iter().cloned());
                        server.use_handlers(handlers);
                        HttpResponse::json(&serde_json::json!({ "added": count })).status(201)
                    }
                    Err(error) => HttpResponse::text(format!("{error}\n")).status(400),
                }
            }
            "DELETE" => {
                lock(&added).clear();
                server.reset_handlers();
                HttpResponse::empty().status(204)
            }
            _ => HttpResponse::empty()
                .status(405)
                .header("allow", "GET, POST, DELETE"),
        }
    })
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
