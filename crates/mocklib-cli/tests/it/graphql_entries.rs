//! `graphql:` entries of handler files, called as GraphQL clients call:
//! curl posting a JSON body and sending a GET with query parameters,
//! Python's `requests` and Node's `fetch` posting a query, and through the
//! admin API.

use crate::common::*;

const GRAPHQL_YAML: &str = r#"
- graphql: query GetUser
  match: { variables: { id: "1" } }
  headers: { x-entry: first }
  data: { user: { id: "1", name: Kate } }
- graphql: query GetUser
  template: true
  data: { user: { id: "{{ variables.id }}", name: "user {{ variables.id }}", op: "{{ operationName }}" } }
- graphql: mutation /^Delete/
  endpoint: /graphql
  errors: [ { message: not allowed } ]
- graphql: operation
  data: { anything: true }
"#;

/// Posts `body` (JSON) to `url` with curl; the status and the body.
fn post_json(url: &str, body: &str) -> (u16, String) {
    call(
        None,
        &[
            "-X",
            "POST",
            "-H",
            "content-type: application/json",
            "--data-binary",
            body,
            url,
        ],
    )
}

#[test]
fn graphql_entries_answer_operations_posted_or_sent_by_get_from_curl_and_python() {
    let dir = with_handler_file(GRAPHQL_YAML);
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let endpoint = format!("{}/graphql", serve.url());

    // POST, variables holding the match: the first entry.
    let (status, body) = post_json(
        &endpoint,
        r#"{"query": "query GetUser($id: ID!) { user(id: $id) { name } }", "variables": {"id": "1", "extra": true}}"#,
    );
    assert_eq!(status, 200, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["data"]["user"]["name"], "Kate", "{body}");

    // GET with query parameters, other variables: the templated entry.
    let (status, body) = call(
        None,
        &[
            "-G",
            "--data-urlencode",
            "query=query GetUser($id: ID!) { user(id: $id) { name } }",
            "--data-urlencode",
            r#"variables={"id": "2"}"#,
            &endpoint,
        ],
    );
    assert_eq!(status, 200, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        answer["data"]["user"],
        serde_json::json!({"id": "2", "name": "user 2", "op": "GetUser"}),
        "{body}"
    );

    // A mutation by pattern, only at its endpoint; elsewhere the catch-all
    // `operation` entry answers it, and anonymous operations too.
    let delete = r#"{"query": "mutation DeleteUser { deleteUser(id: 1) }"}"#;
    let (_, body) = post_json(&endpoint, delete);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&body).unwrap(),
        serde_json::json!({"errors": [{"message": "not allowed"}]})
    );
    let (_, body) = post_json(&format!("{}/other", serve.url()), delete);
    assert_eq!(body, r#"{"data":{"anything":true}}"#);
    let (_, body) = post_json(&endpoint, r#"{"query": "{ ping }"}"#);
    assert_eq!(body, r#"{"data":{"anything":true}}"#);

    // Python's requests, as a GraphQL client posts: the response headers
    // of the entry and the content type GraphQL clients ask for.
    let printed = python(
        &serve,
        "import os, requests\n\
         response = requests.post(os.environ['MOCKLIB_URL'] + '/graphql', timeout=30,\n\
             headers={'accept': 'application/graphql-response+json'},\n\
             json={'query': 'query GetUser($id: ID!) { user(id: $id) { name } }', 'variables': {'id': '1'}})\n\
         print(response.status_code, response.headers['content-type'], response.headers['x-entry'],\n\
             response.json()['data']['user']['name'], end='')",
        &[],
    );
    assert_eq!(
        printed,
        "200 application/graphql-response+json first Kate",
        "{}",
        serve.stderr()
    );

    // Node's fetch, the way graphql-request and urql's fetch exchange post.
    let output = std::process::Command::new("node")
        .args([
            "--input-type=module",
            "-e",
            "const response = await fetch(process.argv[1], { method: 'POST',\n\
               headers: { 'content-type': 'application/json' },\n\
               body: JSON.stringify({ query: 'query GetUser($id: ID!) { user(id: $id) { name } }',\n\
                 variables: { id: '7' }, operationName: 'GetUser' }) });\n\
             const { data } = await response.json();\n\
             console.log(response.status, data.user.name, data.user.op);",
            &endpoint,
        ])
        .output()
        .expect("node runs");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "200 user 7 GetUser\n",
        "{output:?}"
    );
}

#[test]
fn a_graphql_entry_added_through_the_admin_api_answers_once_and_a_bad_one_gets_its_pointer() {
    let dir = with_handler_file("[]");
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let admin = format!("{}/__mocklib/handlers", serve.url());
    let (status, body) = post_yaml(
        &admin,
        "- graphql: query Me\n  once: true\n  data: { me: { name: Kate } }\n",
    );
    assert_eq!((status, body.as_str()), (201, r#"{"added":1}"#));
    let listed: serde_json::Value = serde_json::from_str(&curl(&[&admin])).unwrap();
    assert!(
        listed[0]["handler"].as_str().unwrap().contains("query Me"),
        "{listed}"
    );
    let me = r#"{"query": "query Me { me { name } }"}"#;
    let url = format!("{}/api", serve.url());
    let (status, body) = post_json(&url, me);
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"data":{"me":{"name":"Kate"}}}"#)
    );
    // `once`: used up, the operation is unhandled now.
    let (status, _) = post_json(&url, me);
    assert_ne!(status, 200);

    // A bad entry: a 400 naming the entry and the field, with its pointer.
    admin_refuses(
        &admin,
        &[(
            "- graphql: query /(/\n  data: {}\n",
            "/0/graphql",
            "entry 1 (graphql query /(/): graphql: /(/ is not a regular expression",
        )],
    );
}

#[test]
fn a_bad_graphql_entry_fails_the_load_naming_the_file_the_entry_and_the_field() {
    for (entry, says) in [
        (
            "- graphql: subscription OnPrice\n  data: {}\n",
            "graphql: expected `query NAME`, `mutation NAME` or `operation`",
        ),
        (
            "- graphql: query GetUser\n  template: true\n  data: { user: \"{{ x\" }\n",
            "data.user: not a template",
        ),
        (
            "- graphql: query GetUser\n  data: {}\n  method: POST\n",
            "`method` does not go on a graphql entry; it takes graphql, endpoint, data",
        ),
        (
            "- graphql: query GetUser\n  data: {}\n  match: { variables: [1] }\n",
            "match.variables",
        ),
        (
            "- graphql: query GetUser\n  data: {}\n  endpoint: \"https://[\"\n",
            "endpoint: ",
        ),
    ] {
        let stderr = load_error(entry);
        assert!(
            stderr.contains("handlers.yaml, entry 1") && stderr.contains(says),
            "{entry}: {stderr}"
        );
    }
}
