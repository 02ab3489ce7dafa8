//! The walkers on their own: a request's operation against the schema, an
//! answer against the operation.

use serde_json::{Value as Json, json};

use super::{Schema, request, response};
use crate::namespace::graphql::document::tree;

const SDL: &str = r#"
    schema { query: Query mutation: Mutation }
    scalar Date
    interface Node { id: ID! }
    interface Named { name: String! }
    type User implements Node & Named {
        id: ID!
        name: String!
        email: String
        age: Int
        score: Float
        admin: Boolean!
        role: Role!
        born: Date
        tags: [String!]!
        friends(first: Int = 10, after: String): [User!]
    }
    type Bot implements Node { id: ID! model: String! }
    union Actor = User | Bot
    enum Role { ADMIN USER }
    input UserFilter { name: String!, role: Role, limit: Int = 5 }
    type Query {
        user(id: ID!): User
        node(id: ID!): Node
        actors(filter: UserFilter): [Actor!]!
        me: User!
    }
    type Mutation { rename(id: ID!, name: String!): User }
    extend type Query { version: String! }
"#;

/// `(pointer, expected, received)` of each finding about `query` (with
/// `variables`) and its answer `body`.
fn findings(query: &str, variables: Json, body: Option<Json>) -> Vec<(String, String, String)> {
    let schema = Schema::from_sdl(SDL).unwrap();
    let document = tree::executable(query).unwrap();
    let operation = &document.operations[0];
    let mut found = Vec::new();
    request::check(
        &schema.0, &document, operation, &variables, "/request", &mut found,
    );
    if let Some(body) = body {
        response::check(
            &schema.0,
            &document,
            operation,
            &variables,
            &body,
            "/response/body",
            &mut found,
        );
    }
    found
        .into_iter()
        .map(|finding| (finding.pointer, finding.expected, finding.received))
        .collect()
}

fn pointers(found: &[(String, String, String)]) -> Vec<&str> {
    found
        .iter()
        .map(|(pointer, _, _)| pointer.as_str())
        .collect()
}

fn user() -> Json {
    json!({
        "id": "1", "name": "Kate", "email": null, "age": 30, "score": 1.5, "admin": false,
        "role": "ADMIN", "born": "2000-01-01", "tags": ["a"]
    })
}

const ALL_USER_FIELDS: &str = "id name email age score admin role born tags";

#[test]
fn a_conforming_exchange_has_no_findings() {
    let query = format!("query Q($id: ID!) {{ user(id: $id) {{ {ALL_USER_FIELDS} }} version }}");
    let body = json!({ "data": { "user": user(), "version": "1" } });
    assert_eq!(findings(&query, json!({ "id": "1" }), Some(body)), []);
    // A nullable field may be null; errors may come with partial data.
    let body = json!({ "data": { "user": null, "version": "1" }, "errors": [{ "message": "no" }] });
    assert_eq!(findings(&query, json!({ "id": 1 }), Some(body)), []);
    let body = json!({ "data": null, "errors": [{ "message": "no" }], "extensions": {} });
    assert_eq!(findings(&query, json!({ "id": 1 }), Some(body)), []);
}

#[test]
fn unknown_fields_name_the_type_and_its_fields() {
    let found = findings("{ user(id: 1) { id emial } nope }", json!({}), None);
    assert_eq!(
        found,
        [
            (
                "/request/query/user/emial".to_owned(),
                "a field of User (id, name, email, age, score, admin, role, born, tags, friends)"
                    .to_owned(),
                "emial".to_owned()
            ),
            (
                "/request/query/nope".to_owned(),
                "a field of Query (user, node, actors, me, version)".to_owned(),
                "nope".to_owned()
            ),
        ]
    );
    // On a union only `__typename` and fragments.
    let found = findings("{ actors { id } }", json!({}), None);
    assert_eq!(found[0].0, "/request/query/actors/id");
    assert!(found[0].1.contains("union Actor (User, Bot)"), "{found:?}");
}

#[test]
fn arguments_unknown_missing_and_of_the_wrong_type() {
    let found = findings(
        r#"{ user(idd: 1) { id } a: user(id: true) { id } me { friends(first: "ten") { id } } }"#,
        json!({}),
        None,
    );
    assert_eq!(
        found,
        [
            (
                "/request/query/user(idd)".to_owned(),
                "an argument of Query.user (id)".to_owned(),
                "idd".to_owned()
            ),
            (
                "/request/query/user(id)".to_owned(),
                "the required argument `id: ID!`".to_owned(),
                "none".to_owned()
            ),
            (
                "/request/query/a(id)".to_owned(),
                "ID (a string)".to_owned(),
                "true".to_owned()
            ),
            (
                "/request/query/me/friends(first)".to_owned(),
                "Int (a 32-bit integer)".to_owned(),
                "\"ten\"".to_owned()
            ),
        ]
    );
    let found = findings(
        r#"{ actors(filter: { name: null, role: BOSS, limt: 1 }) { __typename } }"#,
        json!({}),
        None,
    );
    assert_eq!(
        pointers(&found),
        [
            "/request/query/actors(filter)/name",
            "/request/query/actors(filter)/role",
            "/request/query/actors(filter)/limt",
        ]
    );
    assert_eq!(found[1].1, "one of the enum Role (ADMIN, USER)");
    let found = findings(
        "{ actors(filter: { role: USER }) { __typename } }",
        json!({}),
        None,
    );
    assert_eq!(found[0].0, "/request/query/actors(filter)/name");
    assert_eq!(found[0].1, "the required field `name: String!`");
    // A single value where a list goes is a list of one; 2^31 is no Int.
    let found = findings(
        "{ me { friends(first: 2147483648) { id } } }",
        json!({}),
        None,
    );
    assert_eq!(pointers(&found), ["/request/query/me/friends(first)"]);
}

#[test]
fn variables_defined_allowed_and_sent_with_the_right_types() {
    let found = findings(
        "query Q($id: ID, $n: Int!, $f: UserFilter, $u: User, $d: Nope) { \
         user(id: $id) { friends(first: $n, after: $missing) { id } } actors(filter: $f) { __typename } }",
        json!({ "f": { "name": 3, "extra": 1 } }),
        None,
    );
    assert_eq!(
        found,
        [
            (
                "/request/variables/n".to_owned(),
                "a value of type Int! (required)".to_owned(),
                "none".to_owned()
            ),
            (
                "/request/variables/f/extra".to_owned(),
                "a field of the input UserFilter (name, role, limit)".to_owned(),
                "extra".to_owned()
            ),
            (
                "/request/variables/f/name".to_owned(),
                "String (a string)".to_owned(),
                "3".to_owned()
            ),
            (
                "/request/query/$u".to_owned(),
                "an input type (a scalar, an enum or an input type)".to_owned(),
                "User, an object type".to_owned()
            ),
            (
                "/request/query/$d".to_owned(),
                "a type of the schema".to_owned(),
                "Nope".to_owned()
            ),
            (
                "/request/query/user(id)".to_owned(),
                "a variable of type ID!".to_owned(),
                "$id: ID".to_owned()
            ),
            (
                "/request/query/user/friends(after)".to_owned(),
                "a variable the operation defines".to_owned(),
                "$missing".to_owned()
            ),
        ]
    );
    // A nullable variable with a default may go where a non-null one does.
    assert_eq!(
        findings(
            "query Q($id: ID = 1) { user(id: $id) { id } }",
            json!({}),
            None
        ),
        []
    );
}

#[test]
fn operation_types_selection_sets_and_fragments() {
    let found = findings("subscription S { a }", json!({}), None);
    assert_eq!(
        found,
        [(
            "/request/query".to_owned(),
            "an operation type the schema has (query, mutation)".to_owned(),
            "subscription".to_owned()
        )]
    );
    let found = findings("{ me version { x } }", json!({}), None);
    assert_eq!(
        pointers(&found),
        ["/request/query/me", "/request/query/version"]
    );
    let found = findings(
        "{ me { ...F ...G ... on Robot { x } ... on Bot { model } } } fragment F on Nope { a }",
        json!({}),
        None,
    );
    assert_eq!(
        found,
        [
            (
                "/request/query/me/...F".to_owned(),
                "a fragment on a type of the schema".to_owned(),
                "on Nope".to_owned()
            ),
            (
                "/request/query/me/...G".to_owned(),
                "a fragment the document defines".to_owned(),
                "G".to_owned()
            ),
            (
                "/request/query/me/... on Robot".to_owned(),
                "a fragment on a type of the schema".to_owned(),
                "on Robot".to_owned()
            ),
            (
                "/request/query/me/... on Bot".to_owned(),
                "a fragment on a type a User can be".to_owned(),
                "on Bot".to_owned()
            ),
        ]
    );
    // Fields inside fragments are checked on the fragment's type; a cycle
    // is not followed forever.
    let found = findings(
        "{ node(id: 1) { ...N } } fragment N on Node { id nam ...N }",
        json!({}),
        None,
    );
    assert_eq!(pointers(&found), ["/request/query/node/...N/nam"]);
}

#[test]
fn missing_null_unselected_and_mistyped_fields_in_data() {
    let query = format!("{{ me {{ {ALL_USER_FIELDS} }} }}");
    let mut me = user();
    me["name"] = Json::Null; // non-null
    me.as_object_mut().unwrap().remove("email"); // selected, missing
    me["extra"] = json!(1); // not selected
    me["age"] = json!("30"); // Int
    me["score"] = json!("high"); // Float
    me["admin"] = json!("yes"); // Boolean
    me["role"] = json!("BOSS"); // enum
    me["id"] = json!(1); // ID is a string
    me["tags"] = json!("a"); // a list
    me["born"] = json!({ "any": "thing" }); // a custom scalar: anything
    let found = findings(&query, json!({}), Some(json!({ "data": { "me": me } })));
    assert_eq!(
        found,
        [
            (
                "/response/body/data/me/id".to_owned(),
                "ID (a string)".to_owned(),
                "1".to_owned()
            ),
            (
                "/response/body/data/me/name".to_owned(),
                "a non-null String!".to_owned(),
                "null".to_owned()
            ),
            (
                "/response/body/data/me/email".to_owned(),
                "the field `email` (selected)".to_owned(),
                "none".to_owned()
            ),
            (
                "/response/body/data/me/age".to_owned(),
                "Int (a 32-bit integer)".to_owned(),
                "\"30\"".to_owned()
            ),
            (
                "/response/body/data/me/score".to_owned(),
                "Float (a number)".to_owned(),
                "\"high\"".to_owned()
            ),
            (
                "/response/body/data/me/admin".to_owned(),
                "Boolean (true or false)".to_owned(),
                "\"yes\"".to_owned()
            ),
            (
                "/response/body/data/me/role".to_owned(),
                "one of the enum Role (ADMIN, USER)".to_owned(),
                "\"BOSS\"".to_owned()
            ),
            (
                "/response/body/data/me/tags".to_owned(),
                "a list ([String!])".to_owned(),
                "\"a\"".to_owned()
            ),
            (
                "/response/body/data/me/extra".to_owned(),
                format!(
                    "only the fields the query selected ({})",
                    ALL_USER_FIELDS.replace(' ', ", ")
                ),
                "a field it did not select".to_owned()
            ),
        ]
    );
    // A single value where the type is not a list.
    let found = findings(
        "{ me { name } }",
        json!({}),
        Some(json!({ "data": { "me": { "name": ["a"] } } })),
    );
    assert_eq!(found[0].1, "a single String, not a list");
}

#[test]
fn aliases_lists_and_nested_pointers() {
    let found = findings(
        "{ boss: me { friends { who: name } } }",
        json!({}),
        Some(
            json!({ "data": { "boss": { "friends": [{ "who": "a" }, { "who": null }, { "name": "b" }] } } }),
        ),
    );
    assert_eq!(
        pointers(&found),
        [
            "/response/body/data/boss/friends/1/who",
            "/response/body/data/boss/friends/2/who",
            "/response/body/data/boss/friends/2/name",
        ]
    );
}

#[test]
fn fragments_on_interfaces_and_unions_follow_typename() {
    let query = "{ actors { __typename ... on User { name } ...B } } fragment B on Bot { model }";
    let body = json!({ "data": { "actors": [
        { "__typename": "User", "name": "Kate" },
        { "__typename": "Bot", "model": "T-800" },
        { "__typename": "Bot", "name": "Kate" },
        { "__typename": "Robot" },
    ] } });
    let found = findings(query, json!({}), Some(body));
    assert_eq!(
        pointers(&found),
        [
            "/response/body/data/actors/2/model",
            "/response/body/data/actors/2/name",
            "/response/body/data/actors/3/__typename",
        ]
    );
    assert_eq!(found[2].1, "one of the types of Actor (User, Bot)");
    // Without `__typename` a fragment's fields may or may not be there,
    // and those of the interface itself must.
    let query = "{ node(id: 1) { id ... on User { name } ... on Bot { model } } }";
    let body = json!({ "data": { "node": { "id": "1", "name": "Kate" } } });
    assert_eq!(findings(query, json!({}), Some(body)), []);
    let body = json!({ "data": { "node": { "name": "Kate" } } });
    assert_eq!(
        pointers(&findings(query, json!({}), Some(body))),
        ["/response/body/data/node/id"]
    );
    // `__typename` on an object type is its name.
    let found = findings(
        "{ me { __typename } }",
        json!({}),
        Some(json!({ "data": { "me": { "__typename": "Bot" } } })),
    );
    assert_eq!(found[0].1, "\"User\"");
}

#[test]
fn skip_and_include_make_fields_optional_unless_their_condition_is_known() {
    let query = "query Q($a: Boolean!, $b: Boolean!) { me { id @include(if: $a) name @skip(if: $b) email @include(if: false) } }";
    let body = json!({ "data": { "me": {} } });
    // Unknown conditions: may be absent.
    assert_eq!(
        findings(query, json!({}), Some(body.clone()))
            .into_iter()
            .filter(|(pointer, ..)| pointer.starts_with("/response"))
            .count(),
        0
    );
    // Known: `id` included, `name` not skipped; `email` never there.
    let found = findings(query, json!({ "a": true, "b": false }), Some(body));
    assert_eq!(
        pointers(&found),
        ["/response/body/data/me/id", "/response/body/data/me/name"]
    );
}

#[test]
fn the_response_shape() {
    let query = "{ version }";
    let found = |body: Json| pointers(&findings(query, json!({}), Some(body))).join(" ");
    assert_eq!(found(json!([])), "/response/body");
    assert_eq!(found(json!({})), "/response/body");
    assert_eq!(found(json!({ "data": null })), "/response/body/data");
    assert_eq!(found(json!({ "errors": [] })), "/response/body/errors");
    assert_eq!(
        found(json!({ "errors": [{ "msg": "x" }] })),
        "/response/body/errors/0/message"
    );
    assert_eq!(
        found(json!({ "data": { "version": "1" }, "extra": 1 })),
        "/response/body/extra"
    );
    assert_eq!(found(json!({ "data": [] })), "/response/body/data");
}

#[test]
fn introspection_is_left_alone_and_nothing_panics() {
    let query = "{ __schema { types { name } } __type(name: \"User\") { name } __typename }";
    let body =
        json!({ "data": { "__schema": { "types": [] }, "__type": null, "__typename": "Query" } });
    assert_eq!(findings(query, json!({}), Some(body)), []);
    // Odd values everywhere: findings, never a panic.
    for body in [
        json!(null),
        json!("text"),
        json!({ "data": { "me": [1, 2] } }),
        json!({ "data": { "me": { "friends": { "id": 1 } } } }),
        json!({ "data": { "actors": [null, 1, { "__typename": 3 }] } }),
    ] {
        let _ = findings(
            "{ me { friends { id } } actors { __typename ... on User { id } } }",
            json!([]),
            Some(body),
        );
    }
}
