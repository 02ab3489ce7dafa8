//! Contracts (issue 25): handlers of every kind checked against an OpenAPI
//! document attached to the server — a hand-written handler answering an
//! old shape, a HAR replay, a path the document does not have, a bad
//! request — reported by the journal and `verify()`, or failing the
//! request itself in strict mode.

use crate::common;

use crate::common::serve;
use mocklib::contract::Finding;
use mocklib::openapi::OpenApi;
use mocklib::{HttpResponse, http};
use serde_json::{Value, json};

const USERS: &str = r#"
openapi: 3.0.3
info: { title: Users API, version: "2" }
servers: [{ url: "https://api.example.com/v2" }]
paths:
  /users/{id}:
    get:
      operationId: getUser
      parameters:
        - { name: id, in: path, required: true, schema: { type: integer } }
        - { name: fields, in: query, schema: { type: string, enum: [short, full] } }
      responses:
        "200":
          description: a user
          headers:
            x-request-id: { required: true, schema: { type: string } }
          content:
            application/json:
              schema:
                type: object
                additionalProperties: false
                required: [id, fullName]
                properties:
                  id: { type: integer }
                  fullName: { type: string }
                  email: { type: string, format: email }
        "404":
          description: no such user
  /users:
    post:
      operationId: createUser
      responses:
        "201": { description: created }
"#;

const USER: &str = "https://api.example.com/v2/users/7";

fn contract() -> mocklib::openapi::OpenApiContract {
    OpenApi::from_yaml(USERS).unwrap().contract().unwrap()
}

/// (operation, pointer) of each finding.
fn places(findings: &[Finding]) -> Vec<(String, String)> {
    findings
        .iter()
        .map(|finding| {
            (
                finding.operation.clone().unwrap_or_default(),
                finding.pointer.clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_handler_that_answers_the_old_shape_is_reported_with_the_field_and_the_handler() {
    // Written when the field was `name`; the API renamed it `fullName`.
    let client = serve([http::get("https://api.example.com/v2/users/:id", |_| {
        HttpResponse::json(&json!({ "id": 7, "name": "Kate" })).header("x-request-id", "r1")
    })]);
    client.server().attach_contract(contract());
    let answer = client.get(USER).await;
    assert_eq!(
        answer.status(),
        200,
        "not strict: the client gets the answer"
    );

    let [entry] = &client.server().requests()[..] else {
        panic!("one request")
    };
    assert_eq!(
        places(entry.contract_findings()),
        [
            ("getUser".to_owned(), "/response/body".to_owned()),
            ("getUser".to_owned(), "/response/body".to_owned()),
        ],
        "{:?}",
        entry.contract_findings()
    );
    let said: Vec<String> = entry
        .contract_findings()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(said.iter().any(|s| s.contains("fullName")), "{said:?}");
    assert!(said.iter().any(|s| s.contains("name")), "{said:?}");
    assert!(
        said.iter()
            .all(|s| s.starts_with("Users API, getUser: /response/body")),
        "{said:?}"
    );

    let report = client.server().verify().unwrap_err();
    assert_eq!(report.contract_findings().len(), 2);
    let text = report.to_string();
    assert!(
        text.contains("GET https://api.example.com/v2/users/7"),
        "{text}"
    );
    assert!(
        text.contains("answered by GET https://api.example.com/v2/users/:id"),
        "{text}"
    );
    assert!(text.contains("fullName"), "{text}");
}

#[tokio::test]
async fn the_status_the_headers_and_the_field_types_are_checked() {
    let client = serve([
        http::get("https://api.example.com/v2/users/1", |_| {
            // Undocumented status.
            HttpResponse::json(&json!({ "message": "gone" })).status(410)
        }),
        http::get("https://api.example.com/v2/users/2", |_| {
            // No x-request-id, a wrong type, a wrong content type on 404.
            HttpResponse::json(&json!({ "id": "2", "fullName": "Ann" }))
        }),
        http::get("https://api.example.com/v2/users/3", |_| {
            HttpResponse::text("nope").status(404)
        }),
        http::get("https://api.example.com/v2/users/4", |_| {
            HttpResponse::json(&json!({ "id": 4, "fullName": "Bo" })).header("x-request-id", "r4")
        }),
    ]);
    client.server().attach_contract(contract());
    for id in 1..=4 {
        client
            .get(format!("https://api.example.com/v2/users/{id}"))
            .await;
    }
    let findings: Vec<Vec<(String, String)>> = client
        .server()
        .requests()
        .iter()
        .map(|entry| places(entry.contract_findings()))
        .collect();
    let get_user = |pointer: &str| ("getUser".to_owned(), pointer.to_owned());
    assert_eq!(findings[0], [get_user("/response/status")]);
    assert_eq!(
        findings[1],
        [
            get_user("/response/headers/x-request-id"),
            get_user("/response/body/id")
        ]
    );
    // 404 documents no body: a text body is not what it promises.
    assert_eq!(findings[2], [get_user("/response/body")]);
    assert!(findings[3].is_empty(), "{:?}", findings[3]);
}

#[tokio::test]
async fn requests_are_checked_and_paths_the_document_lacks_are_findings() {
    let client = serve([
        http::all("https://api.example.com/v2/*", |_| {
            HttpResponse::json(&json!({ "id": 7, "fullName": "Kate" })).header("x-request-id", "r")
        }),
        // Not under the document's server: not its business.
        http::get("https://other.example.com/anything", |_| {
            HttpResponse::text("fine")
        }),
    ]);
    client.server().attach_contract(contract());
    client
        .get("https://api.example.com/v2/users/seven?fields=everything")
        .await;
    client.get("https://api.example.com/v2/orders").await;
    client.delete(USER).await;
    client.get("https://other.example.com/anything").await;
    let findings: Vec<Vec<(String, String)>> = client
        .server()
        .requests()
        .iter()
        .map(|entry| places(entry.contract_findings()))
        .collect();
    assert_eq!(
        findings[0],
        [
            ("getUser".to_owned(), "/request/path/id".to_owned()),
            ("getUser".to_owned(), "/request/query/fields".to_owned()),
        ]
    );
    assert_eq!(findings[1], [(String::new(), "/request/path".to_owned())]);
    assert_eq!(findings[2], [(String::new(), "/request/method".to_owned())]);
    assert!(findings[3].is_empty());
    let entries = client.server().requests();
    let method = &entries[2].contract_findings()[0];
    assert_eq!(
        (method.expected.as_str(), method.received.as_str()),
        ("one of GET", "DELETE")
    );
}

#[tokio::test]
async fn a_strict_contract_fails_the_request_with_a_body_that_explains() {
    let client = serve([http::get("https://api.example.com/v2/users/:id", |_| {
        HttpResponse::json(&json!({ "id": 7 })).header("x-request-id", "r")
    })]);
    client.server().attach_contract_strict(contract());
    let answer = client.get(USER).await;
    assert_eq!(answer.status(), 500);
    let body: Value = serde_json::from_str(&answer.text()).unwrap();
    assert_eq!(body["findings"][0]["operation"], "getUser");
    assert_eq!(body["findings"][0]["pointer"], "/response/body");
    assert!(
        body["error"].as_str().unwrap().contains("Users API"),
        "{body}"
    );
    // The journal keeps what was found too.
    assert_eq!(client.server().requests()[0].contract_findings().len(), 1);
}

#[tokio::test]
async fn answers_that_keep_the_contract_leave_no_trace() {
    let client = serve([http::get("https://api.example.com/v2/users/:id", |_| {
        HttpResponse::json(&json!({ "id": 7, "fullName": "Kate", "email": "kate@example.com" }))
            .header("x-request-id", "r")
    })]);
    client.server().attach_contract(contract());
    client.server().attach_contract_strict(contract());
    assert_eq!(
        client.get(format!("{USER}?fields=short")).await.status(),
        200
    );
    assert!(client.server().requests()[0].contract_findings().is_empty());
    client.server().verify().unwrap();
}

#[tokio::test]
async fn coverage_counts_operations_and_documented_responses_remembered_or_not() {
    let client = serve([http::get("https://api.example.com/v2/users/:id", |args| {
        let id: i64 = args
            .params
            .get("id")
            .unwrap_or_default()
            .parse()
            .unwrap_or(0);
        HttpResponse::json(&json!({ "id": id, "fullName": "Kate" })).header("x-request-id", "r")
    })]);
    let contract = contract();
    client.server().attach_contract(contract.clone());
    // Twice the same exchange (the second remembered), once another.
    for url in [USER, USER, "https://api.example.com/v2/users/8"] {
        assert_eq!(client.get(url).await.status(), 200);
    }
    let coverage = contract.coverage();
    assert_eq!(coverage.exercised(), 1);
    let get_user = &coverage.operations[0];
    assert_eq!(
        (get_user.operation.as_str(), get_user.requests),
        ("getUser", 3)
    );
    let answers: Vec<(&str, u64)> = get_user
        .responses
        .iter()
        .map(|response| (response.status.as_str(), response.answers))
        .collect();
    assert_eq!(answers, [("200", 3), ("404", 0)]);
    assert_eq!(coverage.operations[1].requests, 0);
    let table = coverage.to_string();
    assert!(
        table.starts_with("Users API: 1 of 2 operations exercised, 1 of 3 documented responses"),
        "{table}"
    );
    assert!(
        table.contains("| getUser (GET /users/{id}) | 3 | 200 (3) | 404 |"),
        "{table}"
    );
    assert!(
        table.contains("| createUser (POST /users) | 0 | — | 201 |"),
        "{table}"
    );
    let data = serde_json::to_value(&coverage).unwrap();
    assert_eq!(data["operations"][1]["operation"], "createUser");
}

/// A request performed for real (no handler answers it; the listener
/// passes it to the real API) is checked once its answer is whole: the
/// findings join its journal entry and fail `verify()`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_performed_for_real_are_checked_too() {
    let upstream = test_support::spawn_upstream(axum::Router::new().route(
        "/v2/users/{id}",
        axum::routing::get(|| async {
            (
                [("x-request-id", "real")],
                axum::Json(json!({ "id": 7, "name": "Kate" })),
            )
        }),
    ))
    .await;
    let document = USERS.replace(
        "https://api.example.com/v2",
        &format!("http://{upstream}/v2"),
    );
    let server = mocklib::node::setup_server([]);
    server.attach_contract(OpenApi::from_yaml(&document).unwrap().contract().unwrap());
    server.listen_with(common::on_unhandled(mocklib::UnhandledRequest::Bypass));
    let client = server.reqwest_client();
    let answer = client
        .get(format!("http://{upstream}/v2/users/7"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer.status(),
        200,
        "performed for real, answered as it was"
    );
    assert_eq!(answer.text().await.unwrap(), r#"{"id":7,"name":"Kate"}"#);
    let mut findings = Vec::new();
    for _ in 0..100 {
        findings = server.requests()[0].contract_findings().to_vec();
        if !findings.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        places(&findings),
        [
            ("getUser".to_owned(), "/response/body".to_owned()),
            ("getUser".to_owned(), "/response/body".to_owned()),
        ],
        "{findings:?}"
    );
    let report = server.verify().unwrap_err().to_string();
    assert!(report.contains("fullName"), "{report}");
    assert!(
        !report.contains("answered by"),
        "no handler answered: {report}"
    );
}

/// A HAR replay is checked like any handler: the recording's answers
/// against today's description of the API.
#[tokio::test]
async fn a_har_replay_is_checked_against_the_contract() {
    const HAR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/har/api.har");
    let document = r#"
openapi: 3.1.0
info: { title: Posts API, version: "3" }
servers: [{ url: "https://api.example.com" }]
paths:
  /posts:
    post:
      operationId: createPost
      responses:
        "201":
          description: created
          content:
            application/json:
              schema:
                type: object
                required: [id, slug]
                properties: { id: { type: string }, slug: { type: string } }
"#;
    let client = serve(mocklib::har::handlers(HAR).unwrap());
    client
        .server()
        .attach_contract(OpenApi::from_yaml(document).unwrap().contract().unwrap());
    let created = client.post("https://api.example.com/posts").await;
    assert_eq!(created.status(), 201, "replayed as recorded");
    let journal = client.server().requests();
    let findings = journal[0].contract_findings();
    assert_eq!(
        places(findings),
        [
            ("createPost".to_owned(), "/response/body".to_owned()),
            ("createPost".to_owned(), "/response/body/id".to_owned()),
        ],
        "the recording has `id` a number and no `slug`: {findings:?}"
    );
    let handler = journal[0].handler().unwrap().header().to_owned();
    assert!(
        client
            .server()
            .verify()
            .unwrap_err()
            .to_string()
            .contains(&format!("answered by {handler}")),
        "the report names the replayed entry"
    );
}
