//! What remained of Prism's mock server (issue 25, part 5), through a real
//! client: dynamic answers (`Prefer: dynamic=true`, seeds, the
//! document-wide switch), strings from `pattern`, security requirements
//! (401 with `WWW-Authenticate`), `externalValue` examples, and invalid
//! requests reported by `verify()` instead of answered 400. Dynamic
//! answers are checked against the document itself: attached as a
//! contract, it finds nothing wrong with them.

use std::collections::HashSet;

use crate::common::{TestClient, serve};
use mocklib::node::setup_server;
use mocklib::openapi::{OpenApi, OpenApiError};
use regex::Regex;
use serde_json::{Value, json};
use test_support::curl;

const ACCOUNTS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/openapi/accounts.yaml"
);
const BANK: &str = "https://bank.example.com/v2";
const TOKEN: (&str, &str) = ("authorization", "Bearer t0k3n");

fn accounts() -> OpenApi {
    OpenApi::from_path(ACCOUNTS).unwrap()
}

/// A client for `api`'s handlers, the document attached as a contract:
/// every answer is checked against it (`verify()` reports what is not).
fn checked(api: &OpenApi) -> TestClient {
    let server = setup_server(api.handlers().unwrap());
    server.attach_contract(api.contract().unwrap());
    TestClient::new(&server)
}

/// Checks one generated account field by field (the contract checks the
/// schema as a whole).
fn assert_account(account: &Value) {
    let text = |field: &str| {
        account[field]
            .as_str()
            .unwrap_or_else(|| panic!("{field} in {account}"))
    };
    let matches = |field: &str, pattern: &str| {
        assert!(
            Regex::new(pattern).unwrap().is_match(text(field)),
            "{field}: {account}"
        );
    };
    matches(
        "id",
        "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
    );
    matches("iban", r"^[A-Z]{2}\d{2}[A-Z0-9]{12,30}$");
    matches("reference", r"^[A-Z]{3}-\d{4}$");
    matches("phone", r"^\+?[1-9]\d{1,14}$");
    assert!(text("phone").len() <= 12, "{account}");
    matches("owner", r"^[a-z]+@example\.com$");
    matches(
        "opened",
        r"^20[0-3]\d-[01]\d-[0-3]\dT[0-2]\d:[0-5]\d:[0-5]\dZ$",
    );
    assert!(
        ["EUR", "USD", "GBP", "CHF"].contains(&text("currency")),
        "{account}"
    );
    let balance = account["balance"].as_f64().unwrap();
    assert!((0.0..=100_000.0).contains(&balance), "{account}");
    let overdraft = account["overdraft"].as_i64().unwrap();
    assert!(
        (0..=5000).contains(&overdraft) && overdraft % 100 == 0,
        "{account}"
    );
    let tags = account["tags"].as_array().unwrap();
    assert!((1..=5).contains(&tags.len()), "{account}");
    for tag in tags {
        assert!((3..=8).contains(&tag.as_str().unwrap().len()), "{account}");
    }
}

#[tokio::test]
async fn prefer_dynamic_generates_values_per_request_and_a_seed_reproduces_them() {
    let client = checked(&accounts());
    let list = |prefer: &'static str| {
        client
            .get(format!("{BANK}/accounts"))
            .header(TOKEN.0, TOKEN.1)
            .header("prefer", prefer)
    };

    // Static: the documented example.
    let example = client
        .get(format!("{BANK}/accounts"))
        .header(TOKEN.0, TOKEN.1)
        .await;
    assert_eq!(example.json::<Value>()[0]["iban"], "DE89370400440532013000");
    assert_eq!(
        example.header("x-request-id"),
        "00000000-0000-4000-8000-000000000001"
    );
    assert!(example.headers().get("preference-applied").is_none());

    // Dynamic: the example ignored, values generated within the schema.
    let mut bodies = HashSet::new();
    let uuid = Regex::new("^[0-9a-f-]{36}$").unwrap();
    for _ in 0..5 {
        let dynamic = list("dynamic=true").await;
        assert_eq!(dynamic.status(), 200);
        let accounts: Value = dynamic.json();
        let accounts = accounts.as_array().unwrap();
        assert!((2..=6).contains(&accounts.len()), "{accounts:?}");
        accounts.iter().for_each(assert_account);
        // Items are generated one by one, not copied.
        assert_ne!(accounts[0], accounts[1]);
        // The header too, from its schema.
        let request_id = dynamic.header("x-request-id");
        assert_ne!(request_id, "00000000-0000-4000-8000-000000000001");
        assert!(uuid.is_match(request_id), "{request_id}");
        bodies.insert(dynamic.text());
    }
    // Without a seed, every request differs.
    assert_eq!(bodies.len(), 5);

    // A seed gives the same answer every time, headers included.
    let seeded = list("dynamic=true, seed=42").await;
    let again = list("dynamic=true; seed=42").await;
    assert_eq!(seeded.text(), again.text());
    assert_eq!(seeded.header("x-request-id"), again.header("x-request-id"));
    assert_eq!(seeded.header("preference-applied"), "dynamic=true, seed=42");
    assert_ne!(seeded.text(), list("dynamic=true, seed=43").await.text());
    // `seed` alone asks for a dynamic answer too.
    assert_eq!(list("seed=42").await.text(), seeded.text());

    // An unseeded answer says which seed made it: asking for that seed
    // makes it again.
    let random = list("dynamic=true").await;
    let applied = random.header("preference-applied").to_owned();
    let seed = applied.strip_prefix("dynamic=true, seed=").expect(&applied);
    let replay = client
        .get(format!("{BANK}/accounts"))
        .header(TOKEN.0, TOKEN.1)
        .header("prefer", format!("seed={seed}"))
        .await;
    assert_eq!(replay.text(), random.text());

    // A named example asked for is sent as it is.
    let chosen = client
        .get(format!("{BANK}/statements/3?api_key=k"))
        .header("prefer", "dynamic=true, example=march")
        .await;
    assert_eq!(chosen.json::<Value>()["month"], "2024-03");

    // Every answer above keeps the document's contract.
    client.server().verify().unwrap();
}

#[tokio::test]
async fn the_document_wide_switch_and_seed_make_runs_reproducible() {
    let api = accounts().dynamic().dynamic_seed(7);
    let first = checked(&api);
    // Another server, as another test run would have.
    let second = serve(api.handlers().unwrap());
    let get = |client: &TestClient, id: u32| client.get(format!("{BANK}/accounts/{id}"));

    let (one, other) = (get(&first, 1).await, get(&second, 1).await);
    assert_eq!(one.status(), 200);
    assert_account(&one.json());
    // The same request, the same answer: in this run and the next.
    assert_eq!(one.text(), other.text());
    assert_eq!(one.text(), get(&first, 1).await.text());
    // Another request, another answer (the seed is mixed with the URL).
    assert_ne!(one.text(), get(&first, 2).await.text());
    let applied = one.header("preference-applied").to_owned();
    assert!(applied.starts_with("dynamic=true, seed="), "{applied}");

    // `Prefer: dynamic=false` asks for the static answer: values from the
    // schema, `pattern`s honoured with the simplest matching strings.
    let fixed = first
        .get(format!("{BANK}/accounts/1"))
        .header("prefer", "dynamic=false")
        .await;
    assert!(fixed.headers().get("preference-applied").is_none());
    assert_eq!(
        fixed.json::<Value>(),
        json!({
            "id": "00000000-0000-4000-8000-000000000000",
            "iban": "AA00AAAAAAAAAAAA",
            "reference": "AAA-0000",
            "phone": "10",
            "currency": "EUR",
            "owner": "user@example.com",
            "balance": 0.0,
            "overdraft": 0,
            "opened": "2024-01-01T00:00:00Z",
            "active": true,
            "tags": ["string"],
        })
    );
    first.server().verify().unwrap();
}

#[tokio::test]
async fn requests_without_the_credentials_get_401_with_the_challenges() {
    let client = serve(accounts().handlers().unwrap());
    let list = format!("{BANK}/accounts");

    // The document's requirement: a bearer token or an API key. The
    // operation documents a 401, which is sent.
    let refused = client.get(&list).await;
    assert_eq!(refused.status(), 401);
    assert_eq!(
        refused.header("www-authenticate"),
        r#"Bearer, ApiKey in="header", name="X-API-Key""#
    );
    assert_eq!(refused.header("content-type"), "application/problem+json");
    assert_eq!(
        refused.json::<Value>(),
        json!({"title": "Unauthorized", "status": 401})
    );
    assert_eq!(
        client.get(&list).header(TOKEN.0, TOKEN.1).await.status(),
        200
    );
    assert_eq!(
        client.get(&list).header("x-api-key", "k").await.status(),
        200
    );
    // Present but not a bearer token, or an empty one: no credentials.
    for authorization in ["Basic dXNlcjpwYXNz", "Bearer ", "Bearer"] {
        let refused = client
            .get(&list)
            .header("authorization", authorization)
            .await;
        assert_eq!(refused.status(), 401, "{authorization}");
    }

    // Basic only, and no 401 documented: the failures, as validation
    // lists them.
    let close = format!("{BANK}/accounts/7");
    let refused = client.delete(&close).await;
    assert_eq!(refused.status(), 401);
    assert_eq!(
        refused.header("www-authenticate"),
        r#"Basic realm="Accounts""#
    );
    assert_eq!(
        refused.json::<Value>(),
        json!({"errors": [{
            "location": "header.authorization",
            "message": "basicAuth: expected Authorization: Basic <base64 of user:password>",
        }]})
    );
    let closed = client
        .delete(&close)
        .header("authorization", "Basic dXNlcjpwYXNz")
        .await;
    assert_eq!(closed.status(), 204);
    // "nocolon" is no user:password.
    let malformed = client
        .delete(&close)
        .header("authorization", "Basic bm9jb2xvbg==")
        .await;
    assert_eq!(malformed.status(), 401);
    assert!(
        malformed.text().contains("not the base64 of user:password"),
        "{}",
        malformed.text()
    );

    // Two alternatives: an API key in the query or a session cookie.
    let statement = format!("{BANK}/statements/3");
    let refused = client.get(&statement).await;
    assert_eq!(refused.status(), 401);
    assert_eq!(
        refused.header("www-authenticate"),
        r#"ApiKey in="query", name="api_key", ApiKey in="cookie", name="session""#
    );
    let errors: Value = refused.json();
    assert_eq!(errors["errors"][0]["location"], "query.api_key");
    assert_eq!(errors["errors"][1]["location"], "cookie.session");
    assert!(
        errors["errors"][1]["message"]
            .as_str()
            .unwrap()
            .starts_with(
                "one of 2 ways to authenticate: session: expected an API key in the session cookie"
            ),
        "{errors}"
    );
    assert_eq!(
        client.get(format!("{statement}?api_key=k")).await.status(),
        200
    );
    assert_eq!(
        client
            .get(&statement)
            .header("cookie", "session=s")
            .await
            .status(),
        200
    );

    // OAuth 2: a bearer token.
    let report = client
        .post(format!("{BANK}/reports"))
        .json(&json!({"from": "2024-01-01", "to": "2024-02-01"}));
    assert_eq!(report.await.status(), 401);
    let report = client
        .post(format!("{BANK}/reports"))
        .header(TOKEN.0, TOKEN.1)
        .json(&json!({"from": "2024-01-01", "to": "2024-02-01"}));
    assert_eq!(report.await.status(), 201);

    // `{}` among the alternatives makes credentials optional; `[]` drops
    // the document's requirement.
    assert_eq!(client.get(&close).await.status(), 200);
    assert_eq!(client.get(format!("{BANK}/health")).await.status(), 204);

    // `Prefer: code=403` answers as documented (here: nothing for 403,
    // so a 500 that says so) — mocklib never judges a credential wrong.
    let forbidden = client
        .get(&list)
        .header(TOKEN.0, TOKEN.1)
        .header("prefer", "code=403")
        .await;
    assert_eq!(forbidden.status(), 500);

    // Switched off, nothing is checked.
    let open = serve(accounts().check_security(false).handlers().unwrap());
    assert_eq!(open.get(&list).await.status(), 200);
    assert_eq!(open.delete(&close).await.status(), 204);
}

#[tokio::test]
async fn curl_through_the_listener_gets_seeded_answers_and_challenges() {
    // The listener's own origin, plain HTTP: a relative server URL.
    let server = setup_server(accounts().base_url("/v2").handlers().unwrap());
    server.listen();
    let account = format!("{}v2/accounts/9", server.url());
    let get = |prefer: &str| curl(&["-H", "X-API-Key: k", "-H", prefer, &account]);
    let seeded = get("Prefer: dynamic=true, seed=5");
    assert_eq!(seeded, get("Prefer: dynamic=true, seed=5"));
    assert_account(&serde_json::from_str(&seeded).unwrap());
    assert_ne!(seeded, get("Prefer: dynamic=true"));

    let head = curl(&["-X", "DELETE", "-o", "/dev/null", "-D", "-", &account]);
    assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    let challenge = "www-authenticate: basic realm=\"accounts\"";
    assert!(head.to_ascii_lowercase().contains(challenge), "{head}");
    let with = ["-X", "DELETE", "-u", "kate:secret", "-o", "/dev/null"];
    let status = curl(&[&with[..], &["-w", "%{http_code}", &account]].concat());
    assert_eq!(status, "204");
    server.close();
}

#[tokio::test]
async fn external_value_examples_are_read_once_and_served() {
    let client = serve(accounts().handlers().unwrap());
    let statement = format!("{BANK}/statements/3?api_key=k");
    // JSON media type: the file parsed as JSON (a `$ref` to
    // components/examples followed on the way).
    let json = client.get(&statement).await;
    assert_eq!(json.header("content-type"), "application/json");
    assert_eq!(
        json.json::<Value>(),
        json!({"month": "2024-03", "lines": [{"amount": -42.5, "text": "Groceries"}], "balance": 1158})
    );
    // Another media type: the bytes as they are (a percent-encoded name).
    let pdf = client
        .get(&statement)
        .header("accept", "application/pdf")
        .await;
    assert_eq!(pdf.header("content-type"), "application/pdf");
    let file = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/openapi/examples/statement march.pdf"
    ))
    .unwrap();
    assert_eq!(pdf.bytes(), &file[..]);
    assert!(file.contains(&0xe2), "a file that is not UTF-8");

    // From text: relative to the current directory (the package's, under
    // `cargo test`), or a file: URL.
    let text = |reference: &str| {
        json!({
            "openapi": "3.0.3",
            "info": {"title": "t", "version": "1"},
            "paths": {"/s": {"get": {"responses": {"200": {
                "description": "ok",
                "content": {"application/json": {"examples": {"one": {"externalValue": reference}}}},
            }}}}},
        })
        .to_string()
    };
    let url = format!(
        "file://{}/tests/fixtures/openapi/examples/statement.json",
        env!("CARGO_MANIFEST_DIR")
    );
    for reference in ["tests/fixtures/openapi/examples/statement.json", &url] {
        let api = OpenApi::from_json(&text(reference)).unwrap();
        let client = serve(api.base_url("https://s.example.com").handlers().unwrap());
        let body: Value = client.get("https://s.example.com/s").await.json();
        assert_eq!(body["balance"], 1158, "{reference}");
    }

    // A missing file fails `handlers()`, naming where and which file.
    let error = OpenApi::from_json(&text("examples/missing.json"))
        .unwrap()
        .handlers()
        .unwrap_err();
    let OpenApiError::ExternalValue { pointer, path, .. } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(
        pointer,
        "/paths/~1s/get/responses/200/content/application~1json/examples/one/externalValue"
    );
    assert_eq!(path, std::path::Path::new("examples/missing.json"));
    let message = error.to_string();
    assert!(
        message.contains("examples/missing.json") && message.contains(pointer),
        "{message}"
    );
    // Not JSON for a JSON media type; not a file.
    let error = OpenApi::from_json(&text(
        "tests/fixtures/openapi/examples/statement%20march.pdf",
    ))
    .unwrap()
    .handlers()
    .unwrap_err();
    assert!(error.to_string().contains("is not JSON"), "{error}");
    let error = OpenApi::from_json(&text("https://example.com/x.json"))
        .unwrap()
        .handlers()
        .unwrap_err();
    assert!(error.to_string().contains("does not fetch"), "{error}");
}

#[tokio::test]
async fn reported_validation_answers_and_verify_lists_the_failures() {
    let api = accounts().report_invalid_requests();
    let server = setup_server(api.handlers().unwrap());
    // A contract as well: its findings join the document's own.
    server.attach_contract(api.contract().unwrap());
    let client = TestClient::new(&server);

    // No token and a body missing `to`: answered as a valid request.
    let created = client
        .post(format!("{BANK}/reports"))
        .json(&json!({"from": "2024-01-01"}))
        .await;
    assert_eq!(created.status(), 201);
    assert_eq!(
        created.json::<Value>(),
        json!({"id": 1, "status": "queued"})
    );
    // A valid one leaves no trace.
    let valid = client
        .get(format!("{BANK}/accounts?limit=5"))
        .header(TOKEN.0, TOKEN.1)
        .await;
    assert_eq!(valid.status(), 200);
    let too_many = client
        .get(format!("{BANK}/accounts?limit=500"))
        .header("x-api-key", "k")
        .await;
    assert_eq!(too_many.status(), 200);

    let journal = server.requests();
    assert_eq!(journal.len(), 3);
    let pointers = |index: usize| -> Vec<(String, String)> {
        journal[index]
            .contract_findings()
            .iter()
            .map(|finding| (finding.operation.clone().unwrap(), finding.pointer.clone()))
            .collect()
    };
    let own = |operation: &str, pointer: &str| (operation.to_owned(), pointer.to_owned());
    assert_eq!(
        pointers(0),
        [
            own("createReport", "/request/header/authorization"),
            own("createReport", "/request/body"),
            // The contract attached finds the body too.
            own("createReport", "/request/body"),
        ]
    );
    assert_eq!(journal[0].contract_findings()[0].contract, "Accounts");
    assert!(pointers(1).is_empty());
    assert_eq!(pointers(2)[0], own("listAccounts", "/request/query/limit"));

    let report = server.verify().unwrap_err();
    assert_eq!(report.contract_findings().len(), 5);
    let text = report.to_string();
    for said in [
        "POST https://bank.example.com/v2/reports",
        "oauth: expected an OAuth 2 access token",
        "answered by POST https://bank.example.com/v2/reports",
        "500 is greater than the maximum of 50",
    ] {
        assert!(text.contains(said), "{said:?} in {text}");
    }

    // Without the document's reporting, the same requests are refused.
    let strict = serve(accounts().validate_requests().handlers().unwrap());
    let refused = strict
        .post(format!("{BANK}/reports"))
        .json(&json!({"from": "2024-01-01"}))
        .await;
    assert_eq!(refused.status(), 401);
    let invalid = strict
        .post(format!("{BANK}/reports"))
        .header(TOKEN.0, TOKEN.1)
        .json(&json!({"from": "2024-01-01"}))
        .await;
    assert_eq!(invalid.status(), 400);
}

#[test]
fn a_scheme_the_document_does_not_define_fails_handlers() {
    let document = r#"{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
        "paths": {"/a": {"get": {"security": [{"nope": []}], "responses": {"200": {"description": "ok"}}}}}}"#;
    let error = OpenApi::from_json(document)
        .unwrap()
        .handlers()
        .unwrap_err();
    let message = error.to_string();
    for said in [
        "/paths/~1a/get/security/0/nope",
        "not in components/securitySchemes",
    ] {
        assert!(message.contains(said), "{said:?} in {message}");
    }
    // Not checking security, the document serves.
    assert!(
        OpenApi::from_json(document)
            .unwrap()
            .check_security(false)
            .handlers()
            .is_ok()
    );
}
