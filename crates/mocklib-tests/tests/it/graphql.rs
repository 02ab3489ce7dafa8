//! The `graphql` namespace end to end: through the in-process reqwest
//! middleware and through the loopback listener (HTTPS via CONNECT), with
//! hand-written requests and with a real GraphQL client (`graphql_client`).

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::common::TestClient;
use graphql_client::GraphQLQuery;
use mocklib::graphql::{self, OperationType, Predicate, ResolverArgs, Upload};
use mocklib::node::{Server, setup_server};
use mocklib::{HttpResponse, front_door::NetworkErrorKind, http, passthrough};
use regex::Regex;
use serde::Deserialize;
use serde_json::{Value, json};

const ENDPOINT: &str = "https://api.example.com/graphql";

// ───────────────────────────── helpers ─────────────────────────────

/// What mocklib logs during one test, for asserting on warnings: a
/// subscriber of the test's own, in effect on its thread while this lives
/// (mocklib hands a warning to the subscriber of the test that caused it,
/// also from the listener's threads: tests/it/logs.rs). Not a global one:
/// the other modules of this binary run beside it.
struct Logs {
    text: Arc<Mutex<String>>,
    _scope: tracing::subscriber::DefaultGuard,
}

impl Logs {
    fn capture() -> Logs {
        #[derive(Clone)]
        struct Writer(Arc<Mutex<String>>);
        impl std::io::Write for Writer {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(buf));
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let text = Arc::new(Mutex::new(String::new()));
        let writer = Writer(Arc::clone(&text));
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        Logs {
            text,
            _scope: tracing::subscriber::set_default(subscriber),
        }
    }

    /// How many logged messages contain `needle`.
    fn count(&self, needle: &str) -> usize {
        self.text.lock().unwrap().matches(needle).count()
    }

    /// The logged lines that contain `needle`.
    fn containing(&self, needle: &str) -> String {
        let text = self.text.lock().unwrap();
        let lines = text.lines().filter(|line| line.contains(needle));
        lines.collect::<Vec<_>>().join("\n")
    }
}

/// POSTs `request` (an operation or a batch) to `url` as JSON and returns
/// the JSON answer.
async fn json_answer(client: &TestClient, url: &str, request: Value) -> Value {
    client.post(url).json(&request).await.json()
}

fn get_user_query() -> Value {
    json!({
        "query": "query GetUser($id: ID!) { user(id: $id) { id name } }",
        "variables": { "id": "1" },
        "operationName": "GetUser",
    })
}

/// A handler list with a little of everything, used by several tests.
fn api() -> Server {
    let github = graphql::link(ENDPOINT);
    setup_server([
        github.query("GetUser", |args| {
            graphql::data(json!({ "user": { "id": args.variables["id"], "name": "John" } }))
        }),
        github.mutation("UpdatePost", |args| async move {
            #[derive(Deserialize)]
            struct Vars {
                id: String,
                title: String,
            }
            let vars: Vars = args.variables()?;
            Ok::<_, graphql::VariablesError>(graphql::data(
                json!({ "updatePost": { "id": vars.id, "title": vars.title } }),
            ))
        }),
        github.mutation("Upload", |args| {
            let upload: Upload = serde_json::from_value(args.variables["file"].clone())
                .expect("the file is an upload description");
            graphql::data(json!({ "upload": upload }))
        }),
        github.operation(|args| {
            graphql::data(json!({
                "anonymous": args.operation_name.is_none(),
                "type": args.operation_type.as_str(),
            }))
        }),
    ])
}

const MULTIPART_BODY: &str = concat!(
    "--XyZ\r\n",
    "Content-Disposition: form-data; name=\"operations\"\r\n\r\n",
    r#"{"query":"mutation Upload($file: Upload!) { upload(file: $file) { name } }","variables":{"file":null}}"#,
    "\r\n--XyZ\r\n",
    "Content-Disposition: form-data; name=\"map\"\r\n\r\n",
    r#"{"0":["variables.file"]}"#,
    "\r\n--XyZ\r\n",
    "Content-Disposition: form-data; name=\"0\"; filename=\"a.txt\"\r\n",
    "Content-Type: text/plain\r\n\r\n",
    "hello\r\n",
    "--XyZ--\r\n",
);

// ─────────────────────── graphql_client (a real client) ───────────────────────

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "tests/fixtures/graphql/schema.graphql",
    query_path = "tests/fixtures/graphql/get_user.graphql",
    response_derives = "Debug, PartialEq"
)]
struct GetUser;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "tests/fixtures/graphql/schema.graphql",
    query_path = "tests/fixtures/graphql/update_post.graphql",
    response_derives = "Debug, PartialEq"
)]
struct UpdatePost;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graphql_client_in_process() {
    let server = api();
    let client = TestClient::new(&server);

    let body = GetUser::build_query(get_user::Variables { id: "7".into() });
    let response: graphql_client::Response<get_user::ResponseData> =
        client.post(ENDPOINT).json(&body).await.json();
    assert!(response.errors.is_none());
    assert_eq!(
        response.data.unwrap().user,
        Some(get_user::GetUserUser {
            id: "7".into(),
            name: "John".into()
        })
    );

    let body = UpdatePost::build_query(update_post::Variables {
        id: "3".into(),
        title: "Hello".into(),
    });
    let response: graphql_client::Response<update_post::ResponseData> =
        client.post(ENDPOINT).json(&body).await.json();
    assert_eq!(response.data.unwrap().update_post.title, "Hello");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graphql_client_through_the_listener() {
    let server = api();
    server.listen_with(common::error_on_unhandled());
    // graphql_client 0.16 is built on reqwest 0.12: the `reqwest-0-12` path.
    let client = server.reqwest_client_0_12();

    let response = graphql_client::reqwest::post_graphql::<GetUser, _>(
        &client,
        ENDPOINT,
        get_user::Variables { id: "9".into() },
    )
    .await
    .unwrap();
    assert_eq!(response.data.unwrap().user.unwrap().id, "9");

    let response = graphql_client::reqwest::post_graphql::<UpdatePost, _>(
        &client,
        ENDPOINT,
        update_post::Variables {
            id: "1".into(),
            title: "Via the listener".into(),
        },
    )
    .await
    .unwrap();
    assert_eq!(
        response.data.unwrap().update_post,
        update_post::UpdatePostUpdatePost {
            id: "1".into(),
            title: "Via the listener".into()
        }
    );
}

// ─────────────────────── the resolver's arguments ───────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_resolver_sees_query_variables_name_type_cookies_and_request() {
    let seen = Arc::new(Mutex::new(None));
    let record = Arc::clone(&seen);
    let server = setup_server([graphql::query(
        "GetUser",
        move |ResolverArgs {
                  query,
                  variables,
                  operation_name,
                  operation_type,
                  cookies,
                  request,
                  ..
              }| {
            *record.lock().unwrap() = Some((
                query,
                variables,
                operation_name,
                operation_type,
                cookies.get("session").map(str::to_owned),
                request.method().clone(),
            ));
            graphql::data(json!({ "user": null }))
        },
    )]);
    let client = TestClient::new(&server);
    let response = client
        .post("https://args.example.com/graphql")
        .header("cookie", "session=abc")
        .json(&get_user_query())
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.json::<Value>(),
        json!({ "data": { "user": null } })
    );
    let (query, variables, name, kind, session, method) = seen.lock().unwrap().take().unwrap();
    assert_eq!(query, get_user_query()["query"]);
    assert_eq!(variables, json!({ "id": "1" }));
    assert_eq!(name.as_deref(), Some("GetUser"));
    assert_eq!(kind, OperationType::Query);
    assert_eq!(session.as_deref(), Some("abc"));
    assert_eq!(method, ::http::Method::POST);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_variables_of_the_wrong_shape_are_a_500_not_a_panic() {
    let server = api();
    let client = TestClient::new(&server);
    let response = client
        .post(ENDPOINT)
        .json(&json!({
            "query": "mutation UpdatePost($id: ID!) { updatePost(id: $id) { id } }",
            "variables": { "id": "1" },
        }))
        .await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json();
    assert_eq!(body["name"], "VariablesError");
    assert!(
        body["message"].as_str().unwrap().contains("title"),
        "{body}"
    );
}

// ─────────────────────── predicates and operation types ───────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_regexes_closures_and_types() {
    let server = setup_server([
        graphql::query(Regex::new("^List").unwrap(), |_| {
            graphql::data(json!({ "by": "regex" }))
        }),
        graphql::query(
            Predicate::custom(|op| op.variables().get("vip") == Some(&json!(true))),
            |_| graphql::data(json!({ "by": "closure" })),
        ),
        graphql::mutation("GetUser", |_| graphql::data(json!({ "by": "mutation" }))),
        graphql::query(String::from("GetUser"), |_| {
            graphql::data(json!({ "by": "name" }))
        }),
    ]);
    let client = TestClient::new(&server);
    let url = "https://predicates.example.com/graphql";
    let by = |body: Value| body["data"]["by"].as_str().unwrap().to_owned();

    let body = json_answer(
        &client,
        url,
        json!({ "query": "query ListPosts { posts { id } }" }),
    )
    .await;
    assert_eq!(by(body), "regex");
    let body = json_answer(
        &client,
        url,
        json!({ "query": "query Other { a }", "variables": { "vip": true } }),
    )
    .await;
    assert_eq!(by(body), "closure");
    // A query named GetUser is not a mutation named GetUser.
    let body = json_answer(&client, url, json!({ "query": "query GetUser { a }" })).await;
    assert_eq!(by(body), "name");
    let body = json_answer(&client, url, json!({ "query": "mutation GetUser { a }" })).await;
    assert_eq!(by(body), "mutation");
    // Names are case-sensitive; nothing matches → unhandled (a network error here).
    client
        .post(url)
        .json(&json!({ "query": "query getuser { a }" }))
        .expect_unhandled()
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operation_name_narrows_a_document_with_several_operations() {
    let server = api();
    let client = TestClient::new(&server);
    let document = "query GetUser($id: ID!) { user(id: $id) { id } } \
                    mutation UpdatePost($id: ID!, $title: String!) { updatePost(id: $id, title: $title) { id } }";
    let client = client;
    let body = json_answer(
        &client,
        ENDPOINT,
        json!({ "query": document, "operationName": "UpdatePost", "variables": { "id": "5", "title": "T" } }),
    )
    .await;
    assert_eq!(
        body,
        json!({ "data": { "updatePost": { "id": "5", "title": "T" } } })
    );
    let body = json_answer(
        &client,
        ENDPOINT,
        json!({ "query": document, "operationName": "GetUser", "variables": { "id": "5" } }),
    )
    .await;
    assert_eq!(body["data"]["user"]["name"], "John");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anonymous_operations_match_only_operation_and_warn_once_per_request() {
    let logs = Logs::capture();
    let url = "https://anonymous.example.com/graphql";
    let server = setup_server([
        graphql::query("A", |_| graphql::data(json!("A"))),
        graphql::query(Regex::new(".*").unwrap(), |_| {
            graphql::data(json!("any name"))
        }),
        graphql::query(Predicate::custom(|_| true), |_| {
            graphql::data(json!("closure"))
        }),
        graphql::operation(|args| {
            graphql::data(json!({ "name": args.operation_name, "type": args.operation_type }))
        }),
    ]);
    let client = TestClient::new(&server);
    let body = json_answer(&client, url, json!({ "query": "{ user { id } }" })).await;
    assert_eq!(body, json!({ "data": { "name": null, "type": "query" } }));
    let needle = format!("anonymous GraphQL query at POST {url}");
    assert_eq!(logs.count(&needle), 1, "{}", logs.containing(url));

    let body = json_answer(&client, url, json!({ "query": "query { user { id } }" })).await;
    assert_eq!(body["data"]["type"], "query");
    assert_eq!(logs.count(&needle), 2, "one more request, one more warning");

    // A named query is answered by the first named handler, without a warning.
    let body = json_answer(&client, url, json!({ "query": "query B { a }" })).await;
    assert_eq!(body["data"], "any name");
    assert_eq!(logs.count(&needle), 2);

    // Anonymous subscriptions and mutations go to operation() too.
    let body = json_answer(&client, url, json!({ "query": "subscription { events }" })).await;
    assert_eq!(body["data"]["type"], "subscription");
}

// ─────────────────────── link: one endpoint ───────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn link_handlers_answer_only_their_endpoint() {
    let github = graphql::link("https://api.github.com/graphql");
    let stripe = graphql::link("https://api.stripe.com/graphql");
    let server = setup_server([
        github.query("GetUser", |_| graphql::data(json!("github"))),
        stripe.query("GetUser", |_| graphql::data(json!("stripe"))),
        graphql::query("GetUser", |_| graphql::data(json!("anywhere"))),
    ]);
    let client = TestClient::new(&server);
    for (url, expected) in [
        ("https://api.github.com/graphql", "github"),
        ("https://api.stripe.com/graphql", "stripe"),
        ("https://api.stripe.com/graphql?x=1", "stripe"),
        ("https://api.github.com/other", "anywhere"),
    ] {
        let body = json_answer(&client, url, get_user_query()).await;
        assert_eq!(body["data"], expected, "{url}");
    }
    assert!(graphql::try_link("https://api.example.com/:").is_err());
    assert_eq!(github.url(), "https://api.github.com/graphql");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_handlers_prints_operation_and_origin() {
    let server = setup_server([
        graphql::query("GetUser", |_| {}),
        graphql::link("https://api.example.com/graphql").mutation("UpdatePost", |_| {}),
        graphql::operation(|_| {}).once(),
        http::get("/user", |_| {}),
    ]);
    let headers: Vec<String> = server
        .list_handlers()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        headers,
        [
            "query GetUser (origin: *)",
            "mutation UpdatePost (origin: https://api.example.com/graphql)",
            "operation (origin: *) (once)",
            "GET /user",
        ]
    );
}

// ─────────────────────── request forms ───────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_requests_carry_the_operation_in_the_query_string() {
    let server = api();
    let client = TestClient::new(&server);
    let mut url = url::Url::parse(ENDPOINT).unwrap();
    url.query_pairs_mut()
        .append_pair("query", "query GetUser($id: ID!) { user(id: $id) { id } }")
        .append_pair("variables", r#"{"id":"42"}"#)
        .append_pair("operationName", "GetUser");
    assert_eq!(
        client.get(url).await.json::<Value>(),
        json!({ "data": { "user": { "id": "42", "name": "John" } } })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multipart_uploads_substitute_files_into_variables() {
    let server = api();
    let client = TestClient::new(&server);
    let response = client
        .post(ENDPOINT)
        .header("content-type", "multipart/form-data; boundary=XyZ")
        .body(MULTIPART_BODY)
        .await;
    assert_eq!(response.status(), 200, "{}", response.text());
    assert_eq!(
        response.json::<Value>(),
        json!({ "data": { "upload": { "name": "a.txt", "type": "text/plain", "size": 5, "text": "hello" } } })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_graphql_response_json_changes_the_default_content_type() {
    let server = setup_server([
        graphql::query("Default", |_| graphql::data(json!(1))),
        graphql::query("Explicit", |_| {
            HttpResponse::json(&json!({ "data": 2 }))
                .header("content-type", "application/json; charset=utf-8")
        }),
        graphql::query("Text", |_| HttpResponse::text("plain")),
    ]);
    let client = TestClient::new(&server);
    let send = |name: &'static str, accept: &'static str| {
        let client = client.clone();
        async move {
            let mut request = client
                .post("https://accept.example.com/graphql")
                .json(&json!({ "query": format!("query {name} {{ a }}") }));
            if !accept.is_empty() {
                request = request.header("accept", accept);
            }
            request.await.header("content-type").to_owned()
        }
    };
    let preferred = "application/graphql-response+json, application/json;q=0.9";
    assert_eq!(send("Default", "").await, "application/json");
    assert_eq!(
        send("Default", "application/json").await,
        "application/json"
    );
    assert_eq!(
        send("Default", preferred).await,
        "application/graphql-response+json"
    );
    assert_eq!(
        send(
            "Default",
            "application/json, application/graphql-response+json;q=0.5"
        )
        .await,
        "application/json"
    );
    assert_eq!(
        send("Explicit", preferred).await,
        "application/json; charset=utf-8"
    );
    assert_eq!(send("Text", preferred).await, "text/plain");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_and_errors_pass_through_unchanged() {
    let payload = json!({
        "data": { "user": null },
        "errors": [{ "message": "Not authorized", "path": ["user"], "extensions": { "code": "FORBIDDEN" } }],
    });
    let expected = payload.clone();
    let server = setup_server([graphql::query("GetUser", move |_| {
        HttpResponse::json(&payload)
    })]);
    let client = TestClient::new(&server);
    let response = client
        .post("https://errors.example.com/graphql")
        .json(&get_user_query())
        .await;
    assert_eq!(
        (response.status(), response.header("content-type")),
        (200, "application/json")
    );
    assert_eq!(response.json::<Value>(), expected);
}

// ─────────────────────── batches ───────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_is_answered_operation_by_operation_as_an_array() {
    let server = api();
    server.use_handlers([graphql::query("GetUser", |_| {
        // Answers nothing: the next matching handler answers this operation.
    })]);
    let client = TestClient::new(&server);
    let response = client
        .post(ENDPOINT)
        .json(&json!([
            get_user_query(),
            { "query": "mutation UpdatePost($id: ID!, $title: String!) { updatePost(id: $id, title: $title) { id } }",
              "variables": { "id": "2", "title": "B" } },
            { "query": "{ anonymous }" },
        ]))
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.json::<Value>(),
        json!([
            { "data": { "user": { "id": "1", "name": "John" } } },
            { "data": { "updatePost": { "id": "2", "title": "B" } } },
            { "data": { "anonymous": true, "type": "query" } },
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_with_an_unanswered_operation_goes_on_down_the_list() {
    let logs = Logs::capture();
    let url = "https://partial-batch.example.com/graphql";
    let server = setup_server([
        graphql::query("A", |_| graphql::data(json!("a"))),
        http::post(url, |_| HttpResponse::text("http handler")),
    ]);
    let client = TestClient::new(&server);
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .body(json!([{ "query": "query A { a }" }, { "query": "query B { b }" }]).to_string())
        .await;
    assert_eq!(response, (200, "http handler"));
    let warning = logs.containing(&format!("POST {url} was not answered as a whole"));
    assert!(warning.contains("#1 query B"), "{warning}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_operation_fails_the_whole_batch() {
    let server = setup_server([
        graphql::query("A", |_| graphql::data(json!("a"))),
        graphql::query("B", |_| HttpResponse::text("not json")),
    ]);
    let client = TestClient::new(&server);
    let response = client
        .post("https://failing-batch.example.com/graphql")
        .json(&json!([{ "query": "query A { a }" }, { "query": "query B { b }" }]))
        .await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json();
    assert_eq!(body["name"], "InvalidResponse");
    assert!(
        body["message"].as_str().unwrap().contains("#1 query B"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thrown_error_or_a_network_error_decides_for_the_whole_batch() {
    let url = "https://deciding-batch.example.com/graphql";
    let server = setup_server([
        graphql::query("A", |_| graphql::data(json!("a"))),
        graphql::query("Boom", |_| -> Result<HttpResponse, &str> { Err("boom") }),
        graphql::query("Offline", |_| HttpResponse::error()),
    ]);
    let client = TestClient::new(&server);
    let response = client
        .post(url)
        .json(&json!([{ "query": "query A { a }" }, { "query": "query Boom { b }" }]))
        .await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json();
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("boom (operation #1 query Boom of a batched request)"),
        "{body}"
    );
    let error = client
        .post(url)
        .json(&json!([{ "query": "query A { a }" }, { "query": "query Offline { o }" }]))
        .expect_network_error()
        .await;
    assert_eq!(error.kind(), NetworkErrorKind::Mocked);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_keeps_the_cookies_of_every_answer() {
    let server = setup_server([
        graphql::query("A", |_| graphql::data(json!("a")).cookie("a", "1")),
        graphql::query("B", |_| graphql::data(json!("b")).cookie("b", "2")),
    ]);
    let client = TestClient::new(&server);
    let response = client
        .post("https://cookie-batch.example.com/graphql")
        .json(&json!([{ "query": "query A { a }" }, { "query": "query B { b }" }]))
        .await;
    assert_eq!(response.header_values("set-cookie"), ["a=1", "b=2"]);
    assert_eq!(
        response.json::<Value>(),
        json!([{ "data": "a" }, { "data": "b" }])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_once_handler_is_used_up_by_one_batch() {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    let server = setup_server([
        graphql::query("A", move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
            graphql::data(json!("once"))
        })
        .once(),
        graphql::query("A", |_| graphql::data(json!("always"))),
    ]);
    let client = TestClient::new(&server);
    let batch = json!([{ "query": "query A { a }" }, { "query": "query A { a }" }]);
    let body = json_answer(
        &client,
        "https://once-batch.example.com/graphql",
        batch.clone(),
    )
    .await;
    assert_eq!(body, json!([{ "data": "once" }, { "data": "once" }]));
    let body = json_answer(&client, "https://once-batch.example.com/graphql", batch).await;
    assert_eq!(body, json!([{ "data": "always" }, { "data": "always" }]));
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}

// ─────────────────────── once, fall-through, boundaries, mixing ───────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_and_fall_through() {
    let seen = Arc::new(AtomicUsize::new(0));
    let spy = Arc::clone(&seen);
    let server = setup_server([
        graphql::operation(move |_| {
            spy.fetch_add(1, Ordering::SeqCst);
        }),
        graphql::query("GetUser", |_| graphql::data(json!("first"))).once(),
        graphql::query("GetUser", |_| graphql::data(json!("then"))),
    ]);
    let client = TestClient::new(&server);
    let url = "https://once.example.com/graphql";
    let body = json_answer(&client, url, get_user_query()).await;
    assert_eq!(body["data"], "first");
    let body = json_answer(&client, url, get_user_query()).await;
    assert_eq!(body["data"], "then");
    server.restore_handlers();
    let body = json_answer(&client, url, get_user_query()).await;
    assert_eq!(body["data"], "first");
    assert_eq!(seen.load(Ordering::SeqCst), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boundaries_scope_graphql_overrides() {
    let server = api();
    let client = TestClient::new(&server);
    let inside = server.boundary({
        let server = server.clone();
        let client = client.clone();
        move || async move {
            server.use_handlers([graphql::query("GetUser", |_| {
                graphql::error_message("overridden")
            })]);
            json_answer(&client, ENDPOINT, get_user_query()).await
        }
    });
    assert_eq!(
        inside().await,
        json!({ "errors": [{ "message": "overridden" }] })
    );
    let outside = json_answer(&client, ENDPOINT, get_user_query()).await;
    assert_eq!(outside["data"]["user"]["name"], "John");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_and_graphql_handlers_share_an_endpoint() {
    let url = "https://mixed.example.com/graphql";
    let server = setup_server([
        http::get(url, |_| HttpResponse::text("http GET")),
        graphql::link(url).query("GetUser", |_| graphql::data(json!("graphql"))),
        http::post(url, |args| {
            HttpResponse::text(format!(
                "http POST {}",
                args.request.text().unwrap_or_default()
            ))
        }),
    ]);
    let client = TestClient::new(&server);
    // The graphql handler answers its operation...
    let body = json_answer(&client, url, get_user_query()).await;
    assert_eq!(body["data"], "graphql");
    // ...other operations fall to the http handler after it...
    let other = json!({ "query": "query Other { a }" });
    let body = client.post(url).json(&other).await.text();
    assert!(body.starts_with("http POST"), "{body}");
    // ...and an http handler listed first wins, even for GraphQL.
    let response = client
        .get(format!("{url}?query=query%20GetUser%20%7B%20a%20%7D"))
        .await;
    assert_eq!(response.text(), "http GET");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passthrough_and_network_errors_work_as_for_http() {
    let server = setup_server([
        graphql::query("Offline", |_| HttpResponse::error()),
        graphql::query("Real", |_| passthrough()),
        http::post("https://pass.example.com/graphql", |_| {
            HttpResponse::text("not reached")
        }),
    ]);
    let client = TestClient::new(&server);
    let error = client
        .post("https://pass.example.com/graphql")
        .json(&json!({ "query": "query Offline { a }" }))
        .expect_network_error()
        .await;
    assert_eq!(error.kind(), NetworkErrorKind::Mocked);
    // passthrough() stops the lookup: the request is performed for real, and
    // this host does not exist, so it fails — but not with a mocklib error.
    let error = client
        .post("http://127.0.0.1:9/graphql")
        .json(&json!({ "query": "query Real { a }" }))
        .expect_error()
        .await;
    assert!(!common::is_network_error(&error));
}

// ─────────────────────── bad input ───────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_not_graphql_and_falls_to_http_handlers() {
    let logs = Logs::capture();
    let url = "https://bad.example.com/graphql";
    let server = setup_server([
        graphql::operation(|_| graphql::data(json!("graphql"))),
        http::post(url, |_| HttpResponse::text("http")),
    ]);
    let client = TestClient::new(&server);
    let cases: [(&str, &str, &str); 10] = [
        ("not json", "application/json", "not json"),
        ("truncated json", "application/json", r#"{"query": "{ a }""#),
        ("no query", "application/json", r#"{"variables": {}}"#),
        (
            "variables not an object",
            "application/json",
            r#"{"query": "{ a }", "variables": [1]}"#,
        ),
        (
            "variables a string",
            "application/json",
            r#"{"query": "{ a }", "variables": "{}"}"#,
        ),
        ("query not a string", "application/json", r#"{"query": 1}"#),
        (
            "document does not parse",
            "application/json",
            r#"{"query": "query Broken { a "}"#,
        ),
        (
            "unknown operationName",
            "application/json",
            r#"{"query": "query A { a }", "operationName": "B"}"#,
        ),
        (
            "broken multipart",
            "multipart/form-data; boundary=XyZ",
            "--XyZ\r\nnot a part",
        ),
        (
            "multipart map pointing nowhere",
            "multipart/form-data; boundary=XyZ",
            "--XyZ\r\nContent-Disposition: form-data; name=\"operations\"\r\n\r\n{\"query\":\"{ a }\"}\r\n--XyZ\r\nContent-Disposition: form-data; name=\"map\"\r\n\r\n{\"0\":[\"variables.file\"]}\r\n--XyZ--\r\n",
        ),
    ];
    for (case, content_type, body) in cases {
        let request = client.post(url).header("content-type", content_type);
        assert_eq!(request.body(body).await, (200, "http"), "{case}");
    }
    // The parser's message, with line and column, is printed once for that request.
    let parse_errors = logs.containing("Parse error at 1:");
    assert_eq!(parse_errors.matches(url).count(), 1, "{parse_errors}");
    assert!(
        logs.containing(url)
            .contains("\"variables\" is an array, not an object")
    );
    // Without the http handler, bad input is simply unhandled.
    server.reset_handlers_to([graphql::operation(|_| graphql::data(json!("graphql")))]);
    let error = client
        .post(url)
        .header("content-type", "application/json")
        .body("not json")
        .expect_unhandled()
        .await;
    assert!(error.contains(url), "{error}");
}

// ─────────────────────── the loopback listener ───────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_form_through_the_listener() {
    let server = api();
    server.listen_with(common::error_on_unhandled());
    let client = server.reqwest_client();

    // POST application/json
    let response = client
        .post(ENDPOINT)
        .json(&get_user_query())
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({ "data": { "user": { "id": "1", "name": "John" } } })
    );

    // GET with the query string
    let mut url = url::Url::parse(ENDPOINT).unwrap();
    url.query_pairs_mut()
        .append_pair("query", "query GetUser($id: ID!) { user(id: $id) { id } }")
        .append_pair("variables", r#"{"id":"3"}"#);
    let response = client.get(url).send().await.unwrap();
    assert_eq!(
        response.json::<Value>().await.unwrap()["data"]["user"]["id"],
        "3"
    );

    // multipart
    let response = client
        .post(ENDPOINT)
        .header("content-type", "multipart/form-data; boundary=XyZ")
        .body(MULTIPART_BODY)
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.json::<Value>().await.unwrap()["data"]["upload"]["text"],
        "hello"
    );

    // batch, with the GraphQL response media type
    let response = client
        .post(ENDPOINT)
        .header("accept", "application/graphql-response+json")
        .json(&json!([get_user_query(), { "query": "{ a }" }]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.headers()["content-type"],
        "application/graphql-response+json"
    );
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!([
            { "data": { "user": { "id": "1", "name": "John" } } },
            { "data": { "anonymous": true, "type": "query" } },
        ])
    );

    // bad input over the socket: not GraphQL, unhandled → the listener fails it
    let response = client
        .post(ENDPOINT)
        .header("content-type", "application/json")
        .body("{nope")
        .send()
        .await;
    // (the listener answers a failed request with a 5xx or closes the connection)
    if let Ok(response) = response {
        assert!(response.status().is_server_error(), "{}", response.status());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_and_boundaries_through_the_listener() {
    let server = api();
    server.use_handlers([graphql::link(ENDPOINT)
        .query("GetUser", |_| graphql::data(json!("once")))
        .once()]);
    server.listen_with(common::error_on_unhandled());
    let client = server.reqwest_client();
    let first: Value = client
        .post(ENDPOINT)
        .json(&get_user_query())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(first["data"], "once");
    let second: Value = client
        .post(ENDPOINT)
        .json(&get_user_query())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(second["data"]["user"]["name"], "John");

    // A client made inside a boundary resolves against that boundary (while
    // the boundary runs).
    let scoped = server.boundary({
        let server = server.clone();
        move || async move {
            server.use_handlers([graphql::query("GetUser", |_| {
                graphql::data(json!("scoped"))
            })]);
            let client = server.reqwest_client();
            let inside: Value = client
                .post(ENDPOINT)
                .json(&get_user_query())
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            inside
        }
    });
    assert_eq!(scoped().await["data"], "scoped");
    let outside: Value = client
        .post(ENDPOINT)
        .json(&get_user_query())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(outside["data"]["user"]["name"], "John");
}
