//! GraphQL contracts (issue 25, part 2): a schema attached to a server for
//! one endpoint; every GraphQL request answered there is validated against
//! it, and the mocked `data` walked along the operation's selection set —
//! reported by the journal and `verify()`, or failing the request itself in
//! strict mode. Requests go through real clients: reqwest through the
//! in-process middleware, and through the listener.

use crate::common::{TestClient, serve};
use mocklib::graphql::{self, Contract, Schema};
use mocklib::{HttpResponse, http};
use serde_json::{Value, json};

const SCHEMA: &str = r#"
    "The users API"
    schema { query: Query mutation: Mutation }

    interface Node { id: ID! }
    type User implements Node {
        id: ID!
        name: String!
        email: String
        role: Role!
        posts(first: Int = 10): [Post!]!
    }
    type Post implements Node { id: ID! title: String! }
    union SearchResult = User | Post
    enum Role { ADMIN MEMBER }
    input NewUser { name: String!, role: Role = MEMBER }

    type Query {
        user(id: ID!): User
        search(term: String!): [SearchResult!]!
    }
    type Mutation { createUser(input: NewUser!): User! }
    extend type Query { viewer: User! }
"#;

const ENDPOINT: &str = "https://api.example.com/graphql";

fn contract() -> Contract {
    Schema::from_sdl(SCHEMA)
        .unwrap()
        .contract(ENDPOINT)
        .unwrap()
        .named("Users API")
}

/// `(operation, pointer, expected, received)` of each finding of the only
/// request the server saw.
fn findings_of(client: &TestClient) -> Vec<(String, String, String, String)> {
    let requests = client.server().requests();
    let [entry] = &requests[..] else {
        panic!("one request, not {}", requests.len())
    };
    entry
        .contract_findings()
        .iter()
        .map(|finding| {
            (
                finding.operation.clone().unwrap_or_default(),
                finding.pointer.clone(),
                finding.expected.clone(),
                finding.received.clone(),
            )
        })
        .collect()
}

fn finding(
    operation: &str,
    pointer: &str,
    expected: &str,
    received: &str,
) -> (String, String, String, String) {
    (
        operation.to_owned(),
        pointer.to_owned(),
        expected.to_owned(),
        received.to_owned(),
    )
}

/// A server answering every operation with `answer`, the contract
/// attached; `query` (with `variables`) sent to the endpoint.
async fn exchange(answer: Value, query: &str, variables: Value) -> TestClient {
    let client = serve([graphql::operation(move |_| HttpResponse::json(&answer))]);
    client.server().attach_contract(contract());
    let answer = client
        .post(ENDPOINT)
        .json(&json!({ "query": query, "variables": variables }))
        .await;
    assert_eq!(
        answer.status(),
        200,
        "not strict: the client gets the answer"
    );
    client
}

#[tokio::test]
async fn conforming_exchanges_have_no_findings() {
    let client = serve([
        graphql::query("GetUser", |args| {
            graphql::data(json!({ "user": {
                "id": args.variables["id"], "name": "Kate", "email": null, "role": "ADMIN",
                "latest": [{ "id": "p1", "title": "Hello" }]
            } }))
        }),
        graphql::query("GetId", |args| {
            graphql::data(json!({ "user": { "id": args.variables["id"] } }))
        }),
        graphql::query("Search", |_| {
            graphql::data(json!({ "search": [
                { "__typename": "User", "id": "1", "name": "Kate" },
                { "__typename": "Post", "id": "2", "title": "Hello" },
            ] }))
        }),
        graphql::query("Missing", |_| {
            HttpResponse::json(
                &json!({ "data": { "user": null }, "errors": [{ "message": "not found", "path": ["user"] }] }),
            )
        }),
        graphql::mutation("CreateUser", |_| {
            graphql::errors(json!([{ "message": "not allowed" }]))
        }),
    ]);
    client.server().attach_contract_strict(contract());
    let requests = [
        json!({
            "query": "query GetUser($id: ID!) { user(id: $id) { id name email role latest: posts(first: 1) { id title } } }",
            "variables": { "id": "1" },
        }),
        json!({
            "query": "query Search { search(term: \"k\") { __typename ... on User { id name } ...P } } \
                      fragment P on Post { id title }",
        }),
        json!({ "query": "query Missing { user(id: 9) { id } }" }),
        json!({
            "query": "mutation CreateUser($input: NewUser!) { createUser(input: $input) { id } }",
            "variables": { "input": { "name": "Kate" } },
        }),
    ];
    for request in &requests {
        let answer = client.post(ENDPOINT).json(request).await;
        assert_eq!(answer.status(), 200, "{request}: {}", answer.text());
    }
    // GET with the operation in the query string.
    let get = url::Url::parse_with_params(
        ENDPOINT,
        [
            ("query", "query GetId($id: ID!) { user(id: $id) { id } }"),
            ("variables", r#"{"id":"7"}"#),
        ],
    )
    .unwrap();
    let get = client.get(get).await;
    assert_eq!(get.status(), 200, "{}", get.text());
    for entry in client.server().requests() {
        assert_eq!(entry.contract_findings(), [], "{}", entry.url());
    }
    client.server().verify().unwrap();
}

#[tokio::test]
async fn unknown_fields_and_arguments_name_the_type() {
    let client = exchange(
        json!({ "data": { "user": null } }),
        "query GetUser { user(id: 1, idd: 2) { id emial } }",
        json!({}),
    )
    .await;
    assert_eq!(
        findings_of(&client),
        [
            finding(
                "query GetUser",
                "/request/query/user(idd)",
                "an argument of Query.user (id)",
                "idd"
            ),
            finding(
                "query GetUser",
                "/request/query/user/emial",
                "a field of User (id, name, email, role, posts)",
                "emial"
            ),
        ]
    );
}

#[tokio::test]
async fn missing_required_arguments_and_arguments_of_the_wrong_type() {
    let client = exchange(
        json!({ "data": { "user": null, "viewer": { "posts": [] } } }),
        r#"query Q { user { id } viewer { posts(first: "ten") { id } } }"#,
        json!({}),
    )
    .await;
    assert_eq!(
        findings_of(&client),
        [
            finding(
                "query Q",
                "/request/query/user(id)",
                "the required argument `id: ID!`",
                "none"
            ),
            finding(
                "query Q",
                "/request/query/viewer/posts(first)",
                "Int (a 32-bit integer)",
                "\"ten\""
            ),
        ]
    );
}

#[tokio::test]
async fn variables_of_the_wrong_type_in_the_query_and_in_the_values() {
    let client = exchange(
        json!({ "data": { "user": null, "createUser": { "id": "1" } } }),
        "mutation M($id: String!, $input: NewUser!) { createUser(input: $input) { id } }",
        json!({ "id": "1", "input": { "name": "Kate", "role": "OWNER" } }),
    )
    .await;
    assert_eq!(
        findings_of(&client),
        [
            finding(
                "mutation M",
                "/request/variables/input/role",
                "one of the enum Role (ADMIN, MEMBER)",
                "\"OWNER\""
            ),
            // `data.user` was not selected.
            finding(
                "mutation M",
                "/response/body/data/user",
                "only the fields the query selected (createUser)",
                "a field it did not select"
            ),
        ]
    );
    let client = exchange(
        json!({ "data": { "user": null } }),
        "query Q($id: String!) { user(id: $id) { id } }",
        json!({ "id": "1" }),
    )
    .await;
    assert_eq!(
        findings_of(&client),
        [finding(
            "query Q",
            "/request/query/user(id)",
            "a variable of type ID!",
            "$id: String!"
        )]
    );
}

#[tokio::test]
async fn operation_types_the_schema_lacks_and_fragments_on_unknown_types() {
    let client = exchange(
        json!({ "data": { "onPost": { "id": "1" } } }),
        "subscription OnPost { onPost { id } }",
        json!({}),
    )
    .await;
    assert_eq!(
        findings_of(&client),
        [finding(
            "subscription OnPost",
            "/request/query",
            "an operation type the schema has (query, mutation)",
            "subscription"
        )]
    );
    let client = exchange(
        json!({ "data": { "viewer": { "id": "1" } } }),
        "query Q { viewer { id ...A } } fragment A on Admin { level }",
        json!({}),
    )
    .await;
    assert_eq!(
        findings_of(&client),
        [finding(
            "query Q",
            "/request/query/viewer/...A",
            "a fragment on a type of the schema",
            "on Admin"
        )]
    );
}

#[tokio::test]
async fn a_missing_non_null_field_an_unselected_field_and_wrong_scalars_in_data() {
    let client = exchange(
        json!({ "data": { "viewer": {
            "id": 7, "name": null, "role": "OWNER", "age": 3,
            "posts": { "id": "1", "title": "Hello" }
        } } }),
        "query Viewer { viewer { id name email role posts { id title } } }",
        json!({}),
    )
    .await;
    assert_eq!(
        findings_of(&client),
        [
            finding(
                "query Viewer",
                "/response/body/data/viewer/id",
                "ID (a string)",
                "7"
            ),
            finding(
                "query Viewer",
                "/response/body/data/viewer/name",
                "a non-null String!",
                "null"
            ),
            finding(
                "query Viewer",
                "/response/body/data/viewer/email",
                "the field `email` (selected)",
                "none"
            ),
            finding(
                "query Viewer",
                "/response/body/data/viewer/role",
                "one of the enum Role (ADMIN, MEMBER)",
                "\"OWNER\""
            ),
            finding(
                "query Viewer",
                "/response/body/data/viewer/posts",
                "a list ([Post!])",
                "an object"
            ),
            finding(
                "query Viewer",
                "/response/body/data/viewer/age",
                "only the fields the query selected (id, name, email, role, posts)",
                "a field it did not select"
            ),
        ]
    );
}

#[tokio::test]
async fn aliases_typename_and_fragments_on_unions() {
    let client = exchange(
        json!({ "data": { "found": [
            { "__typename": "User", "id": "1", "who": "Kate" },
            { "__typename": "Post", "id": "2", "who": "Kate" },
            { "__typename": "Comment" },
        ] } }),
        "query Search { found: search(term: \"k\") { __typename ... on User { id who: name } ... on Post { id title } } }",
        json!({}),
    )
    .await;
    assert_eq!(
        findings_of(&client),
        [
            finding(
                "query Search",
                "/response/body/data/found/1/title",
                "the field `title` (selected)",
                "none"
            ),
            finding(
                "query Search",
                "/response/body/data/found/1/who",
                "only the fields the query selected (__typename, id, title)",
                "a field it did not select"
            ),
            finding(
                "query Search",
                "/response/body/data/found/2/__typename",
                "one of the types of SearchResult (User, Post)",
                "\"Comment\""
            ),
        ]
    );
}

#[tokio::test]
async fn data_null_needs_errors_and_errors_need_messages() {
    let client = exchange(
        json!({ "data": null }),
        "query Q { viewer { id } }",
        json!({}),
    )
    .await;
    assert_eq!(
        findings_of(&client),
        [finding(
            "query Q",
            "/response/body/data",
            "an object (`data` is null only with `errors`)",
            "null"
        )]
    );
    let client = exchange(
        json!({ "data": { "viewer": null }, "errors": [{ "msg": "no" }] }),
        "query Q { viewer { id } }",
        json!({}),
    )
    .await;
    assert_eq!(
        findings_of(&client),
        [
            finding(
                "query Q",
                "/response/body/errors/0/message",
                "a string (the error's message)",
                "none"
            ),
            finding(
                "query Q",
                "/response/body/data/viewer",
                "a non-null User!",
                "null"
            ),
        ]
    );
}

#[tokio::test]
async fn verify_reports_the_findings_with_the_handler_that_answered() {
    let client = serve([graphql::query("GetUser", |_| {
        graphql::data(json!({ "user": { "id": "1" } }))
    })]);
    client.server().attach_contract(contract());
    client
        .post(ENDPOINT)
        .json(&json!({ "query": "query GetUser { user(id: 1) { id name } }" }))
        .await;
    let report = client.server().verify().unwrap_err();
    assert_eq!(report.contract_findings().len(), 1);
    let text = report.to_string();
    assert!(
        text.contains("Users API, query GetUser: /response/body/data/user/name: expected the field `name` (selected), received none"),
        "{text}"
    );
    assert!(text.contains("answered by query GetUser"), "{text}");
}

#[tokio::test]
async fn a_strict_contract_fails_the_request_with_a_500_that_explains() {
    let client = serve([graphql::query("GetUser", |_| {
        graphql::data(json!({ "user": { "id": "1", "name": null } }))
    })]);
    client.server().attach_contract_strict(contract());
    let answer = client
        .post(ENDPOINT)
        .json(&json!({ "query": "query GetUser { user(id: 1) { id name } }" }))
        .await;
    assert_eq!(answer.status(), 500);
    let body: Value = serde_json::from_str(&answer.text()).unwrap();
    assert_eq!(body["findings"][0]["operation"], "query GetUser");
    assert_eq!(
        body["findings"][0]["pointer"],
        "/response/body/data/user/name"
    );
    assert!(
        body["error"].as_str().unwrap().contains("Users API"),
        "{body}"
    );
}

#[tokio::test]
async fn other_endpoints_are_ignored_and_broken_requests_are_findings() {
    let client = serve([
        graphql::operation(|_| graphql::data(json!({ "anything": 1 }))),
        http::post(ENDPOINT, |_| HttpResponse::text("ok")),
        http::get("https://api.example.com/health", |_| {
            HttpResponse::text("ok")
        }),
    ]);
    client.server().attach_contract(contract());
    // Another endpoint: not the contract's.
    client
        .post("https://other.example.com/graphql")
        .json(&json!({ "query": "{ anything }" }))
        .await;
    client.get("https://api.example.com/health").await;
    // The endpoint, not GraphQL.
    client.post(ENDPOINT).body("hello").await;
    // A document that does not parse.
    client
        .post(ENDPOINT)
        .json(&json!({ "query": "{ user(id: 1) { id }" }))
        .await;
    let findings: Vec<Vec<(String, String)>> = client
        .server()
        .requests()
        .iter()
        .map(|entry| {
            entry
                .contract_findings()
                .iter()
                .map(|finding| (finding.pointer.clone(), finding.received.clone()))
                .collect()
        })
        .collect();
    assert_eq!(findings[0], []);
    assert_eq!(findings[1], []);
    assert_eq!(
        findings[2],
        [(
            "/request/body".to_owned(),
            "a body without a `query`".to_owned()
        )]
    );
    assert_eq!(findings[3].len(), 1);
    assert_eq!(findings[3][0].0, "/request");
    assert!(
        findings[3][0]
            .1
            .starts_with("its document does not parse: Parse error at 1:21"),
        "{findings:?}"
    );
}

#[tokio::test]
async fn a_batch_is_checked_operation_by_operation() {
    let client = serve([
        graphql::query("A", |_| graphql::data(json!({ "viewer": { "id": "1" } }))),
        graphql::query("B", |_| graphql::data(json!({ "viewer": { "id": 2 } }))),
    ]);
    client.server().attach_contract(contract());
    client
        .post(ENDPOINT)
        .json(&json!([
            { "query": "query A { viewer { id } }" },
            { "query": "query B { viewer { id nope } }" },
        ]))
        .await;
    assert_eq!(
        findings_of(&client),
        [
            finding(
                "query B",
                "/request/1/query/viewer/nope",
                "a field of User (id, name, email, role, posts)",
                "nope"
            ),
            finding(
                "query B",
                "/response/body/1/data/viewer/id",
                "ID (a string)",
                "2"
            ),
        ]
    );
}

/// Through the listener, with a plain reqwest client (proxy and CA set up
/// by the server): the same contract, the same findings, remembered for
/// the same exchange.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_listener_with_a_plain_client() {
    let server = mocklib::node::setup_server([graphql::link(ENDPOINT).query("GetUser", |_| {
        graphql::data(json!({ "user": { "id": "1", "name": "Kate", "role": "BOSS" } }))
    })]);
    server.attach_contract(contract());
    server.listen();
    let client = server.reqwest_client();
    for _ in 0..2 {
        let answer = client
            .post(ENDPOINT)
            .json(&json!({ "query": "query GetUser { user(id: \"1\") { id name role } }" }))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
    }
    for entry in server.requests() {
        let pointers: Vec<&str> = entry
            .contract_findings()
            .iter()
            .map(|finding| finding.pointer.as_str())
            .collect();
        assert_eq!(pointers, ["/response/body/data/user/role"]);
    }
}

/// Coverage: the root fields the operations asked for (through fragments
/// too), remembered exchanges counted; the same `Coverage` as OpenAPI's,
/// through the `Contract` trait as well.
#[tokio::test]
async fn coverage_counts_the_root_fields_asked_for() {
    let client = serve([graphql::operation(|_| {
        HttpResponse::json(&json!({ "data": { "viewer": { "id": "1", "name": "Kate" } } }))
    })]);
    let contract = contract();
    client.server().attach_contract(contract.clone());
    let query = "query Me { ...Top } fragment Top on Query { viewer { id name } }";
    for _ in 0..2 {
        let answer = client.post(ENDPOINT).json(&json!({ "query": query })).await;
        assert_eq!(answer.status(), 200);
    }
    let coverage = contract.coverage();
    let counted: Vec<(&str, &str, u64)> = coverage
        .operations
        .iter()
        .map(|op| (op.operation.as_str(), op.method.as_str(), op.requests))
        .collect();
    assert_eq!(
        counted,
        [
            ("Query.user", "query", 0),
            ("Query.search", "query", 0),
            ("Query.viewer", "query", 2),
            ("Mutation.createUser", "mutation", 0),
        ]
    );
    assert!(
        coverage
            .to_string()
            .starts_with("Users API: 1 of 4 operations exercised\n"),
        "{coverage}"
    );
    let through_trait = mocklib::contract::Contract::coverage(&contract).unwrap();
    assert_eq!(through_trait, coverage);
}
