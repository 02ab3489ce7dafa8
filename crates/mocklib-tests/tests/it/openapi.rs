//! OpenAPI documents as handlers: the OpenAPI Initiative's Petstore (3.0,
//! YAML) and a 3.1 document of our own (JSON), answered and validated
//! through reqwest (in-process) and curl (through the listener).

use crate::common::serve;
use mocklib::node::setup_server;
use mocklib::openapi::{self, OpenApi, OpenApiError};
use mocklib::{HttpResponse, http};
use serde_json::{Value, json};
use test_support::curl;

const PETSTORE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/openapi/petstore.yaml"
);
const LIBRARY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/openapi/library.json"
);
const BOOKS: &str = "https://eu.library.example.com/api/books";

fn validating(path: &str) -> Vec<mocklib::Handler> {
    OpenApi::from_path(path)
        .unwrap()
        .validate_requests()
        .handlers()
        .unwrap()
}

/// The `errors` of a validation answer, as (location, message) pairs.
fn errors(body: &Value) -> Vec<(String, String)> {
    body["errors"]
        .as_array()
        .expect("an errors list")
        .iter()
        .map(|error| {
            (
                error["location"].as_str().unwrap().to_owned(),
                error["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn one_handler_per_operation_under_the_first_server() {
    let headers: Vec<String> = openapi::handlers(PETSTORE)
        .unwrap()
        .iter()
        .map(|handler| handler.header().to_owned())
        .collect();
    assert_eq!(
        headers,
        [
            "GET http://petstore.swagger.io/v1/pets",
            "POST http://petstore.swagger.io/v1/pets",
            "GET http://petstore.swagger.io/v1/pets/:petId",
        ]
    );
    // Server variables take their defaults; path-level parameters apply.
    let headers: Vec<String> = openapi::handlers(LIBRARY)
        .unwrap()
        .iter()
        .map(|handler| handler.header().to_owned())
        .collect();
    assert_eq!(
        headers,
        [
            format!("GET {BOOKS}"),
            format!("POST {BOOKS}"),
            format!("GET {BOOKS}/:bookId"),
            format!("DELETE {BOOKS}/:bookId"),
        ]
    );
}

#[tokio::test]
async fn petstore_answers_with_values_generated_from_its_schemas() {
    let client = serve(openapi::handlers(PETSTORE).unwrap());
    let pets = client.get("http://petstore.swagger.io/v1/pets").await;
    assert_eq!(pets.status(), 200);
    assert_eq!(pets.header("content-type"), "application/json");
    assert_eq!(
        pets.json::<Value>(),
        json!([{"id": 0, "name": "string", "tag": "string"}])
    );
    // The documented response header, from its schema.
    assert_eq!(pets.header("x-next"), "string");

    let pet = client.get("http://petstore.swagger.io/v1/pets/42").await;
    assert_eq!(
        pet.json::<Value>(),
        json!({"id": 0, "name": "string", "tag": "string"})
    );

    // No content documented: an empty body with the documented status.
    let created = client
        .post("http://petstore.swagger.io/v1/pets")
        .json(&json!({"id": 1, "name": "Rex"}))
        .await;
    assert_eq!(created, (201, ""));
    assert!(created.headers().get("content-type").is_none());

    // Another host is not the document's.
    client
        .get("http://example.com/v1/pets")
        .expect_unhandled()
        .await;
}

#[tokio::test]
async fn prefer_code_picks_the_response_by_status() {
    let client = serve(openapi::handlers(PETSTORE).unwrap());
    // Undocumented 404: `default` answers, with the status asked for.
    let missing = client
        .get("http://petstore.swagger.io/v1/pets/42")
        .header("prefer", "code=404")
        .await;
    assert_eq!(missing.status(), 404);
    assert_eq!(
        missing.json::<Value>(),
        json!({"code": 0, "message": "string"})
    );

    let client = serve(openapi::handlers(LIBRARY).unwrap());
    let problem = client
        .get(format!("{BOOKS}/1"))
        .header("prefer", "code=404")
        .await;
    assert_eq!(problem.status(), 404);
    assert_eq!(problem.header("content-type"), "application/problem+json");
    // The named example comes first for a media type without `example`.
    assert_eq!(
        problem.json::<Value>(),
        json!({"title": "Not Found", "status": 404, "detail": null})
    );
    // A range (`4XX`) answers for a code within it.
    let teapot = client
        .get(BOOKS)
        .header("x-library-card", "1234")
        .header("prefer", "code=418")
        .await;
    assert_eq!(teapot.status(), 418);
    assert_eq!(
        teapot.json::<Value>(),
        json!({"title": "string", "status": 400, "detail": "string"})
    );
    // Nothing documented for 500 on this operation: a 500 that says so.
    let none = client
        .get(format!("{BOOKS}/1"))
        .header("prefer", "code=503")
        .await;
    assert_eq!(none.status(), 500);
    assert_eq!(
        errors(&none.json()),
        [(
            "header.prefer".to_owned(),
            "no response documented for code 503".to_owned()
        )]
    );
}

#[tokio::test]
async fn openapi_3_1_examples_named_and_in_schemas() {
    let client = serve(openapi::handlers(LIBRARY).unwrap());
    // The first named example, its `$ref` followed.
    let books = client.get(BOOKS).header("x-library-card", "1234").await;
    assert_eq!(books.status(), 200);
    let body: Value = books.json();
    assert_eq!(body[0]["title"], "Dune");
    assert_eq!(body[1]["subtitle"], "A Novel");
    assert_eq!(body[1]["isbn"], Value::Null);
    // A header from its schema's `examples` (3.1).
    assert_eq!(books.header("x-total-count"), "2");

    let empty = client
        .get(BOOKS)
        .header("x-library-card", "1234")
        .header("prefer", "example=none")
        .await;
    assert_eq!(empty, (200, "[]"));
    let unknown = client.get(BOOKS).header("prefer", "example=three").await;
    assert_eq!(unknown.status(), 500);
    assert!(errors(&unknown.json())[0].1.contains("\"three\""));

    // Generated: `allOf` merged, `examples` arrays (3.1), `type: [string,
    // "null"]` as its string, `oneOf`'s first, formats, exclusive minimum,
    // `writeOnly` left out of a response.
    let book = client.get(format!("{BOOKS}/7")).await;
    assert_eq!(book.header("content-type"), "application/json");
    assert_eq!(
        book.json::<Value>(),
        json!({
            "id": 1,
            "title": "Dune",
            "subtitle": "string",
            "isbn": "978-0441013593",
            "added": "2024-01-01T00:00:00Z",
            "shelf": "00000000-0000-4000-8000-000000000000",
        })
    );
    // `Accept` picks another documented media type.
    let text = client
        .get(format!("{BOOKS}/7"))
        .header("accept", "text/plain")
        .await;
    assert_eq!(text, (200, "Dune, by Frank Herbert"));
    assert_eq!(text.header("content-type"), "text/plain");

    // A named example of another media type than the JSON one.
    let short = client
        .get(format!("{BOOKS}/7"))
        .header("prefer", "example=short")
        .await;
    assert_eq!(short, (200, "<b>Dune</b>"));
    assert_eq!(short.header("content-type"), "text/html");

    assert_eq!(client.delete(format!("{BOOKS}/7")).await, (204, ""));
}

#[tokio::test]
async fn petstore_validates_parameters_and_bodies() {
    let client = serve(validating(PETSTORE));
    let url = "http://petstore.swagger.io/v1/pets";
    assert_eq!(client.get(format!("{url}?limit=100")).await.status(), 200);

    let too_many = client.get(format!("{url}?limit=101")).await;
    assert_eq!(too_many.status(), 400);
    assert_eq!(too_many.header("content-type"), "application/json");
    assert_eq!(
        errors(&too_many.json()),
        [(
            "query.limit".to_owned(),
            "101 is greater than the maximum of 100".to_owned()
        )]
    );
    let not_a_number = client.get(format!("{url}?limit=ten")).await;
    assert_eq!(
        errors(&not_a_number.json()),
        [(
            "query.limit".to_owned(),
            r#""ten" is not of type "integer""#.to_owned()
        )]
    );

    // The body: required, JSON, and valid for its schema.
    let created = client
        .post(url)
        .json(&json!({"id": 1, "name": "Rex"}))
        .await;
    assert_eq!(created.status(), 201);
    let no_body = client.post(url).await;
    assert_eq!(
        errors(&no_body.json()),
        [("body".to_owned(), "the request body is required".to_owned())]
    );
    let invalid = client.post(url).json(&json!({"id": "one", "tag": 3})).await;
    assert_eq!(invalid.status(), 400);
    let mut found = errors(&invalid.json());
    found.sort();
    assert_eq!(
        found,
        [
            (
                "body".to_owned(),
                r#""name" is a required property"#.to_owned()
            ),
            (
                "body.id".to_owned(),
                r#""one" is not of type "integer""#.to_owned()
            ),
            (
                "body.tag".to_owned(),
                r#"3 is not of type "string""#.to_owned()
            ),
        ]
    );
    let text = client
        .post(url)
        .header("content-type", "text/plain")
        .body("Rex")
        .await;
    assert_eq!(
        errors(&text.json()),
        [(
            "header.content-type".to_owned(),
            r#"the content type "text/plain" is not one of application/json"#.to_owned()
        )]
    );
    let broken = client
        .post(url)
        .header("content-type", "application/json")
        .body("{")
        .await;
    assert_eq!(errors(&broken.json())[0].0, "body");
    assert!(
        errors(&broken.json())[0]
            .1
            .starts_with("the body is not JSON")
    );
}

#[tokio::test]
async fn openapi_3_1_validates_headers_arrays_paths_and_nullables() {
    let client = serve(validating(LIBRARY));
    // A required header, an array query parameter, a referenced parameter.
    let wrong = client
        .get(format!("{BOOKS}?genre=novel&genre=comic&limit=0"))
        .await;
    assert_eq!(wrong.status(), 400);
    let mut found = errors(&wrong.json());
    found.sort();
    assert_eq!(
        found,
        [
            (
                "header.X-Library-Card".to_owned(),
                "the required header parameter is missing".to_owned()
            ),
            (
                "query.genre".to_owned(),
                r#""comic" is not one of "novel", "poetry" or "essay""#.to_owned()
            ),
            (
                "query.limit".to_owned(),
                "0 is less than the minimum of 1".to_owned()
            ),
        ]
    );
    let right = client
        .get(format!("{BOOKS}?genre=novel,essay&limit=5"))
        .header("x-library-card", "0042")
        .await;
    assert_eq!(right.status(), 200);
    let bad_card = client.get(BOOKS).header("x-library-card", "42").await;
    assert_eq!(errors(&bad_card.json())[0].0, "header.X-Library-Card");

    // Path parameters declared on the path item: 3.1's numeric exclusiveMinimum.
    let zero = client.get(format!("{BOOKS}/0")).await;
    assert_eq!(
        errors(&zero.json()),
        [(
            "path.bookId".to_owned(),
            "0 is less than or equal to the minimum of 0".to_owned()
        )]
    );
    assert_eq!(client.get(format!("{BOOKS}/3")).await.status(), 200);

    // Cookie parameters.
    let anonymous = client.delete(format!("{BOOKS}/3")).await;
    assert_eq!(
        errors(&anonymous.json()),
        [(
            "cookie.session".to_owned(),
            "the required cookie parameter is missing".to_owned()
        )]
    );
    let short = client
        .delete(format!("{BOOKS}/3"))
        .header("cookie", "session=abc")
        .await;
    assert_eq!(
        errors(&short.json()),
        [(
            "cookie.session".to_owned(),
            r#""abc" is shorter than 8 characters"#.to_owned()
        )]
    );
    let signed_in = client
        .delete(format!("{BOOKS}/3"))
        .header("cookie", "theme=dark; session=0123456789")
        .await;
    assert_eq!(signed_in, (204, ""));

    // `type: [string, "null"]` takes null; unknown fields are refused.
    let added = client
        .post(BOOKS)
        .json(&json!({"title": "Dune", "subtitle": null, "copies": 2}))
        .await;
    assert_eq!(added.status(), 201);
    assert_eq!(added.json::<Value>()["title"], "Dune");
    let refused = client
        .post(BOOKS)
        .json(&json!({"title": "", "pages": 3}))
        .await;
    let mut found = errors(&refused.json());
    found.sort();
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].0, "body");
    assert!(found[0].1.contains("pages"), "{found:?}");
    assert_eq!(found[1].0, "body.title");
}

#[tokio::test]
async fn handlers_written_by_hand_come_first_and_base_url_overrides_the_server() {
    let mut list = vec![http::get("http://localhost:9000/v2/pets/:petId", |args| {
        (args.params.get("petId") == Some("1"))
            .then(|| HttpResponse::json(&json!({"id": 1, "name": "Ada"})))
    })];
    list.extend(
        OpenApi::from_path(PETSTORE)
            .unwrap()
            .base_url("http://localhost:9000/v2/")
            .handlers()
            .unwrap(),
    );
    let client = serve(list);
    assert_eq!(
        client.get_text("http://localhost:9000/v2/pets/1").await,
        r#"{"id":1,"name":"Ada"}"#
    );
    // Falls through to the document.
    assert_eq!(
        client.get_text("http://localhost:9000/v2/pets/2").await,
        r#"{"id":0,"name":"string","tag":"string"}"#
    );
    client
        .get("http://petstore.swagger.io/v1/pets")
        .expect_unhandled()
        .await;
}

#[tokio::test]
async fn curl_through_the_listener_as_proxy_and_base_url() {
    let server = setup_server(validating(PETSTORE));
    server.listen();
    let proxy = server.proxy_url().to_string();
    let body = curl(&["--proxy", &proxy, "http://petstore.swagger.io/v1/pets/9"]);
    assert_eq!(body, r#"{"id":0,"name":"string","tag":"string"}"#);
    let status = curl(&[
        "--proxy",
        &proxy,
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "-H",
        "Prefer: code=500",
        "http://petstore.swagger.io/v1/pets?limit=5",
    ]);
    assert_eq!(status, "500");
    let invalid = curl(&[
        "--proxy",
        &proxy,
        "http://petstore.swagger.io/v1/pets?limit=x",
    ]);
    assert_eq!(
        errors(&serde_json::from_str(&invalid).unwrap())[0].0,
        "query.limit"
    );
    server.close();

    // A relative base URL: the listener's own origin serves the document.
    let server = setup_server(
        OpenApi::from_path(PETSTORE)
            .unwrap()
            .base_url("/v1")
            .handlers()
            .unwrap(),
    );
    server.listen();
    let url = format!("{}v1/pets", server.url());
    assert_eq!(
        curl(&["-X", "POST", "-o", "/dev/null", "-w", "%{http_code}", &url]),
        "201"
    );
    server.close();
}

#[test]
fn broken_documents_name_the_position() {
    let error = OpenApi::from_yaml("openapi: 3.0.0\npaths:\n  /pets: [\n").unwrap_err();
    let OpenApiError::Parse { line, .. } = &error else {
        panic!("{error}")
    };
    assert!(*line >= 3, "{error}");
    assert!(
        error
            .to_string()
            .starts_with("the OpenAPI text is not valid YAML or JSON (line")
    );

    let error = OpenApi::from_json("{\"openapi\": \"3.1.0\",\n  \"paths\": {,}}").unwrap_err();
    assert!(
        matches!(
            error,
            OpenApiError::Parse {
                line: 2,
                column: 13,
                ..
            }
        ),
        "{error}"
    );

    let error = OpenApi::from_yaml("swagger: '2.0'\npaths: {}\n").unwrap_err();
    assert!(error.to_string().contains("Swagger 2.0"), "{error}");

    let dangling = "openapi: 3.0.0\npaths:\n  /pets/{id}:\n    get:\n      responses:\n        '200':\n          $ref: '#/components/responses/Gone'\n";
    let error = OpenApi::from_yaml(dangling)
        .unwrap()
        .handlers()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the OpenAPI text cannot be served: at /paths/~1pets~1{id}/get/responses/200: \
         the reference \"#/components/responses/Gone\" points nowhere"
    );

    let error = openapi::handlers("/nonexistent/openapi.yaml").unwrap_err();
    assert!(matches!(error, OpenApiError::Read { .. }), "{error}");
}

/// OpenAPI 3.0's own schema dialect, parameter names that are no
/// identifiers, literal text that is pattern syntax, and both `Prefer`
/// parameters at once.
const SHAPES: &str = r#"
openapi: 3.0.3
info: { title: Shapes, version: "1" }
paths:
  /shapes/{shape-id}/area:compute:
    post:
      parameters:
        - { name: shape-id, in: path, required: true, schema: { type: integer, minimum: 0, exclusiveMinimum: true } }
        - { name: debug, in: query, schema: { type: boolean } }
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                scale: { type: number, nullable: true, maximum: 10 }
      responses:
        200:
          description: The area
          content:
            application/json:
              schema: { type: object, properties: { area: { type: number, minimum: 2.5 } } }
        422:
          description: Not a shape
          content:
            application/json:
              examples:
                flat: { value: { reason: flat } }
                open: { value: { reason: open } }
"#;

#[tokio::test]
async fn openapi_3_0_dialect_odd_names_and_prefer_code_with_example() {
    let handlers = OpenApi::from_yaml(SHAPES)
        .unwrap()
        .validate_requests()
        .handlers()
        .unwrap();
    // No server: a relative predicate; the name and the ':' are escaped.
    assert_eq!(
        handlers[0].header(),
        r"POST /shapes/:shape_id/area\:compute"
    );
    let client = serve(handlers);
    let url = "https://shapes.example.com/shapes/3/area:compute";
    // Integer keys (`200:` in YAML) and numbers within bounds.
    assert_eq!(client.post(url).await, (200, r#"{"area":2.5}"#));
    // `nullable: true` takes null (3.0); the boolean query parameter is read as one.
    let nulled = client
        .post(format!("{url}?debug=true"))
        .json(&json!({"scale": null}))
        .await;
    assert_eq!(nulled.status(), 200);
    let wrong = client
        .post("https://shapes.example.com/shapes/0/area:compute?debug=yes")
        .json(&json!({"scale": 11}))
        .await;
    let mut found = errors(&wrong.json());
    found.sort();
    assert_eq!(
        found,
        [
            (
                "body.scale".to_owned(),
                "11 is greater than the maximum of 10".to_owned()
            ),
            (
                "path.shape-id".to_owned(),
                "0 is less than or equal to the minimum of 0".to_owned()
            ),
            (
                "query.debug".to_owned(),
                r#""yes" is not of type "boolean""#.to_owned()
            ),
        ]
    );
    let open = client
        .post(url)
        .header("prefer", "code=422, example=open")
        .await;
    assert_eq!(open, (422, r#"{"reason":"open"}"#));
    let flat = client.post(url).header("prefer", "code=422").await;
    assert_eq!(flat, (422, r#"{"reason":"flat"}"#));
}

#[test]
fn servers_of_a_path_item_or_an_operation_come_first_unless_a_base_url_is_set() {
    let document = r#"
openapi: 3.1.0
info: { title: Servers, version: "1" }
servers: [{ url: "https://api.example.com/" }]
paths:
  /a:
    get: { responses: { "204": { description: none } } }
  /b:
    servers: [{ url: "https://b.example.com" }]
    get: { responses: { "204": { description: none } } }
    put:
      servers: [{ url: "/{version}", variables: { version: { default: v2 } } }]
      responses: { "204": { description: none } }
"#;
    let headers = |api: OpenApi| -> Vec<String> {
        let handlers = api.handlers().unwrap();
        handlers.iter().map(|h| h.header().to_owned()).collect()
    };
    let api = OpenApi::from_yaml(document).unwrap();
    assert_eq!(
        headers(api.clone()),
        [
            "GET https://api.example.com/a",
            "GET https://b.example.com/b",
            "PUT /v2/b"
        ]
    );
    assert_eq!(
        headers(api.base_url("http://localhost:1234")),
        [
            "GET http://localhost:1234/a",
            "GET http://localhost:1234/b",
            "PUT http://localhost:1234/b"
        ]
    );
}

#[tokio::test]
async fn recursive_schemas_end_where_they_recur() {
    let document = r##"{"openapi": "3.1.0", "info": {"title": "Tree", "version": "1"},
      "paths": {"/tree": {"get": {"responses": {"200": {"description": "a tree",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}}}}},
      "components": {"schemas": {"Node": {"type": "object", "required": ["name", "next"],
        "properties": {"name": {"type": "string"},
                       "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
                       "parent": {"$ref": "#/components/schemas/Node"},
                       "next": {"$ref": "#/components/schemas/Node"}}}}}}"##;
    let client = serve(OpenApi::from_json(document).unwrap().handlers().unwrap());
    let tree = client.get("https://example.com/tree").await;
    // Optional recursion left out, a list of it empty, required recursion null.
    assert_eq!(
        tree.json::<Value>(),
        json!({"name": "string", "children": [], "next": null})
    );
}

#[tokio::test]
async fn yaml_anchors_and_merge_keys_are_applied() {
    let document = r#"
openapi: 3.0.3
info: { title: Anchors, version: "1" }
x-common: &common
  description: shared
  content:
    application/json:
      example: { shared: true }
paths:
  /a:
    get:
      responses:
        "200": *common
  /b:
    get:
      responses:
        "202":
          <<: *common
          description: merged
"#;
    let client = serve(OpenApi::from_yaml(document).unwrap().handlers().unwrap());
    assert_eq!(
        client.get("http://x.example/a").await,
        (200, r#"{"shared":true}"#)
    );
    assert_eq!(
        client.get("http://x.example/b").await,
        (202, r#"{"shared":true}"#)
    );
}

#[test]
fn only_local_references_are_followed() {
    let remote = "openapi: 3.1.0\npaths:\n  /a:\n    $ref: 'https://example.com/paths.yaml#/a'\n";
    let error = OpenApi::from_yaml(remote).unwrap().handlers().unwrap_err();
    assert!(
        matches!(&error, OpenApiError::Invalid { pointer, .. } if pointer == "/paths/~1a"),
        "{error}"
    );
    assert!(
        error.to_string().contains("only local references"),
        "{error}"
    );
}
