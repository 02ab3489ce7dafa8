//! The app: a list of todos from `GET /api/todos`. Nothing here knows about
//! mocking.

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

#[component]
pub fn App() -> impl IntoView {
    let (loaded, set_loaded) = signal(Loaded::Waiting);
    leptos::task::spawn_local(async move {
        set_loaded.set(match todos().await {
            Ok(todos) => Loaded::Todos(todos),
            Err(error) => Loaded::Failed(error),
        });
    });
    view! {
        <main id="app">
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
