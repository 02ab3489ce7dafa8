//! The app: a list of todos from `GET /api/todos`, and a greeting from the
//! gRPC service `helloworld.Greeter` (called over gRPC-Web, as browsers
//! must). Nothing here knows about mocking.

use leptos::prelude::*;
use serde::Deserialize;

#[derive(Clone, Deserialize)]
pub struct Todo {
    pub title: String,
    pub done: bool,
}

#[derive(Clone)]
enum Loaded {
    Waiting,
    Todos(Vec<Todo>),
    Failed(String),
}

async fn todos() -> Result<Vec<Todo>, String> {
    let response = gloo_net::http::Request::get("/api/todos")
        .send()
        .await
        .map_err(|error| error.to_string())?;
    if !response.ok() {
        return Err(format!("the API answered {}", response.status()));
    }
    response.json().await.map_err(|error| error.to_string())
}

/// `helloworld.HelloRequest` (prost, as tonic-build would generate it).
#[derive(Clone, PartialEq, prost::Message)]
pub struct HelloRequest {
    #[prost(string, tag = "1")]
    pub name: String,
}

/// `helloworld.HelloReply`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HelloReply {
    #[prost(string, tag = "1")]
    pub message: String,
}

/// `helloworld.Greeter/SayHello` on this page's origin, over gRPC-Web: what
/// a generated `GreeterClient` over `tonic_web_wasm_client::Client` does.
async fn greeting(name: &str) -> Result<String, String> {
    let origin = web_sys::window()
        .and_then(|window| window.location().origin().ok())
        .ok_or("no origin")?;
    let mut grpc = tonic::client::Grpc::new(tonic_web_wasm_client::Client::new(origin));
    grpc.ready().await.map_err(|error| error.to_string())?;
    let reply: tonic::Response<HelloReply> = grpc
        .unary(
            tonic::Request::new(HelloRequest { name: name.into() }),
            http::uri::PathAndQuery::from_static("/helloworld.Greeter/SayHello"),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .map_err(|status| format!("no greeting: {:?}", status.code()))?;
    Ok(reply.into_inner().message)
}

#[component]
pub fn App() -> impl IntoView {
    let (greeted, set_greeted) = signal(None::<String>);
    leptos::task::spawn_local(async move {
        set_greeted.set(Some(greeting("Leptos").await.unwrap_or_else(|error| error)));
    });
    let (loaded, set_loaded) = signal(Loaded::Waiting);
    leptos::task::spawn_local(async move {
        set_loaded.set(match todos().await {
            Ok(todos) => Loaded::Todos(todos),
            Err(error) => Loaded::Failed(error),
        });
    });
    view! {
        <main id="app">
            <p id="greeting">{move || greeted.get().unwrap_or_else(|| "…".to_owned())}</p>
            <h1>"Todos"</h1>
            {move || match loaded.get() {
                Loaded::Waiting => view! { <p id="state">"Loading…"</p> }.into_any(),
                Loaded::Failed(error) => view! { <p id="state">{error}</p> }.into_any(),
                Loaded::Todos(todos) => view! {
                    <ul id="todos">
                        {todos
                            .into_iter()
                            .map(|todo| {
                                let mark = if todo.done { "✓ " } else { "" };
                                view! { <li>{mark}{todo.title}</li> }
                            })
                            .collect_view()}
                    </ul>
                }
                    .into_any(),
            }}
        </main>
    }
}
