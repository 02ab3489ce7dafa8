//! Stateful REST resources (`mocklib::rest::resource`): the CRUD cycle, the
//! 400/404/405/409 answers a real REST API gives, ids generated and kept,
//! filters, and the collection kept per scope (boundaries, restore).
//!
//! Requests are real reqwest requests through `server.middleware()` (and,
//! once, through the listener with a plain client); each server answers an
//! unmatched request with an error, so nothing reaches the network.

use crate::common;

use crate::common::{TestClient, serve};
use mocklib::node::setup_server;
use mocklib::rest::{self, ResourceError};
use mocklib::{HttpResponse, http};
use reqwest::Method;
use serde_json::{Value, json};

const USERS: &str = "https://api.example.com/users";

fn users() -> mocklib::Handler {
    rest::resource(USERS)
        .seed([
            json!({ "id": 1, "name": "Kate", "role": "admin" }),
            json!({ "id": 2, "name": "Sarah", "role": "user" }),
        ])
        .handler()
}

fn user(id: impl std::fmt::Display) -> String {
    format!("{USERS}/{id}")
}

/// The JSON body of `response` after checking its status.
fn json_of(response: &common::TestResponse, status: u16) -> Value {
    assert_eq!(response.status(), status, "{response:?}");
    assert_eq!(response.header("content-type"), "application/json");
    response.json()
}

#[tokio::test]
async fn a_resource_answers_the_whole_crud_cycle() {
    let client = serve([users()]);

    let list = client.get(USERS).await;
    assert_eq!(
        json_of(&list, 200),
        json!([
            { "id": 1, "name": "Kate", "role": "admin" },
            { "id": 2, "name": "Sarah", "role": "user" },
        ])
    );
    assert_eq!(
        json_of(&client.get(user(2)).await, 200),
        json!({ "id": 2, "name": "Sarah", "role": "user" })
    );

    // Create: the next integer id, a Location naming the new item.
    let created = client.post(USERS).json(&json!({ "name": "John" })).await;
    assert_eq!(json_of(&created, 201), json!({ "id": 3, "name": "John" }));
    assert_eq!(created.header("location"), user(3));
    assert_eq!(
        json_of(&client.get(user(3)).await, 200),
        json!({ "id": 3, "name": "John" })
    );

    // Replace: the body is the whole item; the id stays (and stays a number).
    let replaced = client
        .put(user(3))
        .json(&json!({ "name": "Johnny", "role": "user" }))
        .await;
    assert_eq!(
        json_of(&replaced, 200),
        json!({ "id": 3, "name": "Johnny", "role": "user" })
    );

    // Merge patch: fields merge, null removes.
    let patched = client
        .request(Method::PATCH, user(3))
        .json(&json!({ "role": null, "email": "j@example.com" }))
        .await;
    assert_eq!(
        json_of(&patched, 200),
        json!({ "id": 3, "name": "Johnny", "email": "j@example.com" })
    );

    // Delete answers with what it removed; the item is gone.
    let deleted = client.delete(user(1)).await;
    assert_eq!(
        json_of(&deleted, 200),
        json!({ "id": 1, "name": "Kate", "role": "admin" })
    );
    let gone = client.get(user(1)).await;
    assert_eq!(
        json_of(&gone, 404),
        json!({
            "error": "Not Found",
            "message": format!("{USERS} has no item with id \"1\""),
        })
    );

    // The list keeps insertion order; replaced and patched items keep their place.
    assert_eq!(
        json_of(&client.get(USERS).await, 200),
        json!([
            { "id": 2, "name": "Sarah", "role": "user" },
            { "id": 3, "name": "Johnny", "email": "j@example.com" },
        ])
    );
    // A deleted id is not given again.
    client.delete(user(3)).await;
    let next = client.post(USERS).json(&json!({ "name": "Ann" })).await;
    assert_eq!(json_of(&next, 201)["id"], 4);
}

#[tokio::test]
async fn missing_items_and_taken_ids_answer_404_and_409() {
    let client = serve([users()]);
    for response in [
        client.get(user(9)).await,
        client.put(user(9)).json(&json!({ "name": "X" })).await,
        client
            .request(Method::PATCH, user(9))
            .json(&json!({ "name": "X" }))
            .await,
        client.delete(user(9)).await,
    ] {
        let body = json_of(&response, 404);
        assert_eq!(body["error"], "Not Found");
        assert!(
            body["message"].as_str().unwrap().contains("\"9\""),
            "{body}"
        );
    }
    // PUT does not create: items get their ids from POST.
    assert_eq!(client.get(user(9)).await.status(), 404);

    let taken = client
        .post(USERS)
        .json(&json!({ "id": 2, "name": "Impostor" }))
        .await;
    assert_eq!(
        json_of(&taken, 409),
        json!({ "error": "Conflict", "message": format!("{USERS} already has an item with id 2") })
    );
    // A string id names the same item as the number: "2" is taken too.
    let taken = client.post(USERS).json(&json!({ "id": "2" })).await;
    assert_eq!(taken.status(), 409);
    // Nothing changed.
    assert_eq!(json_of(&client.get(user(2)).await, 200)["name"], "Sarah");
}

#[tokio::test]
async fn bodies_that_are_not_a_json_object_answer_400_saying_why() {
    let client = serve([users()]);
    let cases: [(Method, String, &str, &str); 7] = [
        (
            Method::POST,
            USERS.to_owned(),
            "[1, 2]",
            "expected a JSON object, found an array",
        ),
        (
            Method::POST,
            USERS.to_owned(),
            "\"Kate\"",
            "expected a JSON object, found a string",
        ),
        (
            Method::POST,
            USERS.to_owned(),
            "{\"name\": ",
            "the request body is not valid JSON: ",
        ),
        (
            Method::POST,
            USERS.to_owned(),
            "",
            "the request has no body; expected a JSON object",
        ),
        (
            Method::PUT,
            user(1),
            "name=Kate",
            "the request body is not valid JSON: ",
        ),
        (
            Method::PATCH,
            user(1),
            "null",
            "expected a JSON object, found null",
        ),
        (
            Method::POST,
            USERS.to_owned(),
            "{\"id\": true}",
            "`id` is the id: a non-empty string or a number, not true",
        ),
    ];
    for (method, url, body, message) in cases {
        let what = format!("{method} {url} {body:?}");
        let response = client
            .request(method, &url)
            .header("content-type", "application/json")
            .body(body)
            .await;
        let answer = json_of(&response, 400);
        assert_eq!(answer["error"], "Bad Request", "{what}");
        let text = answer["message"].as_str().unwrap();
        assert!(text.starts_with(message), "{what}: {text}");
    }
    // An id in the body must be the path's: ids do not change.
    let moved = client
        .put(user(1))
        .json(&json!({ "id": 5, "name": "Kate" }))
        .await;
    assert_eq!(
        json_of(&moved, 400)["message"],
        "the body's id 5 differs from the path's \"1\"; an item's id does not change"
    );
    let same = client
        .put(user(1))
        .json(&json!({ "id": 1, "name": "Kate" }))
        .await;
    assert_eq!(json_of(&same, 200), json!({ "id": 1, "name": "Kate" }));
    let removed = client
        .request(Method::PATCH, user(1))
        .json(&json!({ "id": null }))
        .await;
    assert_eq!(
        json_of(&removed, 400)["message"],
        "the patch removes the id field `id`"
    );
    // None of it changed the collection.
    assert_eq!(
        json_of(&client.get(USERS).await, 200)
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn other_methods_answer_405_with_allow_and_options_falls_through() {
    let client = serve([
        users(),
        http::options(USERS, |_| {
            HttpResponse::empty()
                .status(204)
                .header("access-control-allow-methods", "GET, POST")
        }),
    ]);
    let on_collection = client.put(USERS).json(&json!({})).await;
    assert_eq!(on_collection.status(), 405);
    assert_eq!(on_collection.header("allow"), "GET, HEAD, POST");
    let on_item = client.post(user(1)).json(&json!({})).await;
    assert_eq!(on_item.status(), 405);
    assert_eq!(on_item.header("allow"), "GET, HEAD, PUT, PATCH, DELETE");
    assert_eq!(
        json_of(&on_item, 405)["message"],
        "POST is not allowed here (allowed: GET, HEAD, PUT, PATCH, DELETE)"
    );

    // HEAD answers as GET, without a body.
    let head = client.head(user(1)).await;
    assert_eq!((head.status(), head.bytes()), (200, &b""[..]));
    assert_eq!(client.head(user(7)).await.status(), 404);

    let preflight = client.request(Method::OPTIONS, USERS).await;
    assert_eq!(preflight.status(), 204);
    // Deeper paths are not the resource's.
    client
        .get(format!("{}/posts", user(1)))
        .expect_unhandled()
        .await;
}

#[tokio::test]
async fn string_ids_get_uuids_and_any_id_field_works() {
    let client = serve([rest::resource("/books/")
        .id_field("isbn")
        .seed([json!({ "isbn": "978-0", "title": "Dune" })])
        .handler()]);
    let base = "https://shop.example.com/books";
    // A relative resource answers on every origin (no base URL here).
    let created = client.post(base).json(&json!({ "title": "Emma" })).await;
    let book = json_of(&created, 201);
    let isbn = book["isbn"].as_str().expect("a string id, as the seed's");
    assert_eq!(isbn.len(), 36, "{isbn}");
    assert_eq!(created.header("location"), format!("{base}/{isbn}"));
    assert_eq!(
        json_of(&client.get(format!("{base}/{isbn}")).await, 200),
        book
    );

    // An id with characters a path escapes: Location escapes it, the
    // path parameter is decoded.
    let odd = client
        .post(base)
        .json(&json!({ "isbn": "a b/c", "title": "Odd" }))
        .await;
    assert_eq!(odd.header("location"), format!("{base}/a%20b%2Fc"));
    assert_eq!(
        json_of(&client.get(format!("{base}/a%20b%2Fc")).await, 200)["title"],
        "Odd"
    );
    // A trailing slash on the request is tolerated, as for every pattern.
    let list = json_of(&client.get(format!("{base}/")).await, 200);
    assert_eq!(list.as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn query_parameters_filter_the_list() {
    let client = serve([rest::resource(USERS)
        .seed([
            json!({ "id": 1, "name": "Kate", "age": 30, "active": true }),
            json!({ "id": 2, "name": "Sarah", "age": 30, "active": false }),
            json!({ "id": 3, "name": "John", "age": 41, "active": true }),
        ])
        .handler()]);
    let ids = |query: &'static str| {
        let client = client.clone();
        async move {
            let list = json_of(&client.get(format!("{USERS}?{query}")).await, 200);
            let ids: Vec<u64> = list
                .as_array()
                .unwrap()
                .iter()
                .map(|u| u["id"].as_u64().unwrap())
                .collect();
            ids
        }
    };
    assert_eq!(ids("name=Kate").await, [1]);
    assert_eq!(ids("age=30").await, [1, 2]);
    assert_eq!(ids("age=30&active=true").await, [1]);
    assert_eq!(ids("name=Kate&name=John").await, [1, 3]);
    assert_eq!(ids("name=Nobody").await, Vec::<u64>::new());
}

#[tokio::test]
async fn boundaries_start_from_the_enclosing_collection_and_keep_their_changes() {
    let server = setup_server([users()]);
    let client = TestClient::new(&server);
    // The server's own change, before any boundary.
    client.delete(user(2)).await;

    let test = server.boundary({
        let client = client.clone();
        move |name: &'static str| {
            let client = client.clone();
            async move {
                let created = client.post(USERS).json(&json!({ "name": name })).await;
                assert_eq!(created.status(), 201);
                client.delete(user(1)).await;
                let list: Value = client.get(USERS).await.json();
                list
            }
        }
    });
    // Concurrent boundaries: each starts from the server's collection
    // ([Kate]) and sees only its own changes.
    let (one, two) = tokio::join!(test("Ann"), test("Bob"));
    assert_eq!(one, json!([{ "id": 3, "name": "Ann" }]));
    assert_eq!(two, json!([{ "id": 3, "name": "Bob" }]));
    // The server's collection is untouched by them.
    assert_eq!(
        json_of(&client.get(USERS).await, 200),
        json!([{ "id": 1, "name": "Kate", "role": "admin" }])
    );

    // A nested boundary starts from its parent's collection as it was when
    // it was entered.
    let outer = server.boundary({
        let client = client.clone();
        let server = server.clone();
        move || {
            let client = client.clone();
            let server = server.clone();
            async move {
                client.post(USERS).json(&json!({ "name": "Outer" })).await;
                let inner = server.boundary({
                    let client = client.clone();
                    move || {
                        let client = client.clone();
                        async move {
                            client.delete(user(1)).await;
                            let list: Value = client.get(USERS).await.json();
                            list
                        }
                    }
                });
                let inner = inner().await;
                let outer: Value = client.get(USERS).await.json();
                (inner, outer)
            }
        }
    });
    let (inner, outer) = outer().await;
    assert_eq!(inner, json!([{ "id": 3, "name": "Outer" }]));
    assert_eq!(
        outer,
        json!([
            { "id": 1, "name": "Kate", "role": "admin" },
            { "id": 3, "name": "Outer" },
        ])
    );
}

#[tokio::test]
async fn restore_handlers_starts_over_from_the_seed_and_reset_handlers_keeps_it() {
    let server = setup_server([users()]);
    let client = TestClient::new(&server);
    client.delete(user(1)).await;
    server.use_handlers([http::get("/other", |_| HttpResponse::empty())]);
    server.reset_handlers();
    assert_eq!(client.get(user(1)).await.status(), 404);
    server.restore_handlers();
    assert_eq!(client.get(user(1)).await.status(), 200);
    // And the id sequence starts over with it.
    let created = client.post(USERS).json(&json!({})).await;
    assert_eq!(json_of(&created, 201)["id"], 3);
}

#[tokio::test]
async fn conditions_and_earlier_handlers_apply_to_a_resource() {
    let client = serve([
        http::get(user(1), |_| HttpResponse::text("overridden")),
        users().when(mocklib::matchers::bearer("t0ken")),
    ]);
    assert_eq!(client.get(user(1)).await, (200, "overridden"));
    let authorized = client
        .get(user(2))
        .header("authorization", "Bearer t0ken")
        .await;
    assert_eq!(json_of(&authorized, 200)["name"], "Sarah");
    client.get(user(2)).expect_unhandled().await;
}

#[tokio::test]
async fn through_the_listener_a_relative_resource_answers_on_the_base_url() {
    let server = setup_server([rest::resource("/todos").handler()]);
    server.listen_with(common::error_on_unhandled());
    let base = server.url().join("todos").unwrap();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let created = client
        .post(base.clone())
        .json(&json!({ "title": "write tests" }))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let location = created.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(location, format!("{base}/1"));
    let todo: Value = client
        .get(&location)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(todo, json!({ "id": 1, "title": "write tests" }));
}

#[test]
fn invalid_seeds_are_errors_naming_the_item_and_the_field() {
    let error = |resource: rest::Resource| resource.try_handler().unwrap_err();
    assert_eq!(
        error(rest::resource(USERS).seed([json!({ "id": 1 }), json!("Kate")])),
        ResourceError::NotAnObject {
            index: 1,
            found: "a string"
        }
    );
    assert_eq!(
        error(
            rest::resource(USERS)
                .id_field("uuid")
                .seed([json!({ "id": 1 })])
        )
        .to_string(),
        "seed[0]: no `uuid` field (the id field)"
    );
    assert_eq!(
        error(rest::resource(USERS).seed([json!({ "id": "" })])).to_string(),
        "seed[0].id: an id is a string or a number, found \"\""
    );
    assert_eq!(
        error(rest::resource(USERS).seed([json!({ "id": 1 }), json!({ "id": "1" })])).to_string(),
        "seed[1].id: duplicate id \"1\" (seed[0] has it too)"
    );
    assert!(matches!(
        error(rest::resource("/users/:id(")),
        ResourceError::Pattern(_)
    ));
    assert_eq!(
        error(rest::resource(USERS).id_field("")),
        ResourceError::EmptyIdField
    );
}

#[test]
#[should_panic(expected = "rest::resource: seed[0]: no `id` field")]
fn handler_panics_on_an_invalid_seed() {
    let _ = rest::resource(USERS)
        .seed([json!({ "name": "Kate" })])
        .handler();
}
