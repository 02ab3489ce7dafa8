//! Development only (the module is compiled under `debug_assertions`): the
//! handlers that stand in for the API, and starting mocklib's worker. In a
//! real app the handlers are shared with the native tests.

use mocklib::browser::setup_worker;
use mocklib::grpc::{self, ResolverArgs};
use mocklib::{HttpResponse, http};
use serde_json::json;

use crate::app::{HelloReply, HelloRequest};

fn handlers() -> Vec<mocklib::Handler> {
    vec![
        http::get("/api/todos", |_| {
            HttpResponse::json(&json!([
                { "title": "Write the handlers", "done": true },
                { "title": "Build the UI against them", "done": false },
            ]))
        }),
        // The gRPC service, as a tonic test mocks it: the app's gRPC-Web
        // call reaches this same handler.
        grpc::unary(
            "helloworld.Greeter/SayHello",
            |args: ResolverArgs<HelloRequest>| {
                Ok(HelloReply {
                    message: format!("Hello {}, from a mocked gRPC service!", args.message.name),
                })
            },
        ),
    ]
}

/// Starts mocking; the page keeps working (on the real API) if it cannot.
pub async fn enable() {
    let worker = setup_worker(handlers());
    match worker.start().await {
        // Keep the worker (and with it the interception) for the page's
        // lifetime.
        Ok(_) => std::mem::forget(worker),
        Err(error) => web_sys::console::error_1(&format!("mocking is off: {error}").into()),
    }
}
