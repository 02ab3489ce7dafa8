//! Expectations and `verify()`, the request journal, strict mode, and the
//! report a failed verification prints — through real clients: reqwest with
//! the in-process middleware, and curl against the listener.

use crate::common;

use std::panic::AssertUnwindSafe;

use crate::common::{TestClient, serve};
use mocklib::node::setup_server;
use mocklib::{HttpResponse, ListenOptions, Times, UnhandledRequest, http, journal::AnswerSummary};
use test_support::curl;

const USERS: &str = "https://api.example.com/users/:id";

fn report(server: &mocklib::node::Server) -> String {
    server
        .verify()
        .expect_err("verification should fail")
        .to_string()
}

#[tokio::test]
async fn met_expectations_verify() {
    let client = serve([
        http::get(USERS, |_| HttpResponse::text("John")).times(2),
        http::post("https://api.example.com/users", |_| {
            HttpResponse::empty().status(201)
        })
        .at_least(1),
        http::delete(USERS, |_| HttpResponse::empty()).never(),
        http::put(USERS, |_| HttpResponse::empty()).at_most(1),
        http::patch(USERS, |_| HttpResponse::empty()).expect(1..3),
    ]);
    client.get("https://api.example.com/users/1").await;
    client.get("https://api.example.com/users/2").await;
    client.post("https://api.example.com/users").await;
    client
        .request(reqwest::Method::PATCH, "https://api.example.com/users/1")
        .await;
    client.server().verify().unwrap();
}

#[tokio::test]
async fn unmet_expectations_name_handler_expected_and_received() {
    let client = serve([
        http::get(USERS, |_| HttpResponse::text("John")).times(1),
        http::delete(USERS, |_| HttpResponse::empty()).never(),
        http::put(USERS, |_| HttpResponse::empty()).expect(2..=3),
    ]);
    client.delete("https://api.example.com/users/7").await;
    client.put("https://api.example.com/users/7").await;

    let error = client.server().verify().unwrap_err();
    let unmet: Vec<_> = error
        .unmet()
        .iter()
        .map(|u| (u.handler().header().to_owned(), u.expected(), u.received()))
        .collect();
    assert_eq!(
        unmet,
        [
            (format!("GET {USERS}"), Times::exactly(1), 0),
            (format!("DELETE {USERS}"), Times::exactly(0), 1),
            (format!("PUT {USERS}"), Times::from(2..=3), 1),
        ]
    );
    let text = error.to_string();
    assert!(
        text.starts_with("mocklib: verification failed (3 problems)"),
        "{text}"
    );
    assert!(
        text.contains(&format!("1. GET {USERS}: expected exactly 1, received 0")),
        "{text}"
    );
    assert!(
        text.contains(&format!("2. DELETE {USERS}: expected never, received 1")),
        "{text}"
    );
    // Too many: the requests it matched are listed.
    assert!(
        text.contains("The requests it matched:\n     • DELETE https://api.example.com/users/7"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "3. PUT {USERS}: expected between 2 and 3, received 1"
        )),
        "{text}"
    );
}

#[tokio::test]
async fn the_report_marks_how_the_closest_requests_differ() {
    let client = serve([
        http::get(USERS, |_| HttpResponse::text("John")).times(1),
        http::post("https://api.example.com/users/:id", |_| {
            HttpResponse::empty()
        }),
    ]);
    // Two mistakes of the code under test: a typo and the wrong method.
    client
        .get("https://api.example.com/user/1")
        .expect_unhandled()
        .await;
    client.post("https://api.example.com/users/1").await;
    client
        .get("https://elsewhere.example.org/nothing/like/it")
        .expect_unhandled()
        .await;

    let text = report(client.server());
    let expected = [
        "1. GET https://api.example.com/users/:id: expected exactly 1, received 0",
        "   The closest requests it did not match:",
        "     • POST https://api.example.com/users/1 (mocked 200 by POST https://api.example.com/users/:id)",
        // Only the method differs: the URL lines are left out.
        "         method: expected GET, received POST",
        "     • GET https://api.example.com/user/1 (unhandled)",
        "         expected https://api.example.com/users/:id",
        "         received https://api.example.com/user/1",
        // Where the two part ways.
        "                                              ^^",
    ];
    assert!(text.contains(&expected.join("\n")), "{text}");
    // Far-off requests are not suggested.
    assert!(!text.contains("elsewhere"), "{text}");
}

#[tokio::test]
async fn a_shadowed_handler_is_explained() {
    let client = serve([
        http::get("https://api.example.com/user", |_| {
            HttpResponse::text("first")
        }),
        http::get("https://api.example.com/user", |_| {
            HttpResponse::text("second")
        })
        .times(1),
    ]);
    assert_eq!(
        client.get_text("https://api.example.com/user").await,
        "first"
    );
    let text = report(client.server());
    assert!(
        text.contains(
            "its predicate matches this request, but an earlier handler answered it first"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn nothing_recorded_is_said_plainly() {
    let client = serve([http::get("/user", |_| HttpResponse::empty()).times(1)]);
    let text = report(client.server());
    assert!(
        text.contains("No request was recorded in this scope."),
        "{text}"
    );
}

#[tokio::test]
async fn a_fall_through_counts_as_a_match() {
    let client = serve([
        http::all("https://api.example.com/*", |_| None::<HttpResponse>).times(2),
        http::get("https://api.example.com/user", |_| {
            HttpResponse::text("John")
        }),
    ]);
    client.get("https://api.example.com/user").await;
    client.get("https://api.example.com/user").await;
    client.server().verify().unwrap();
}

#[tokio::test]
async fn counts_are_per_scope_and_restore_resets_them() {
    let server = setup_server([http::get("https://api.example.com/user", |_| {
        HttpResponse::text("John")
    })
    .times(1)]);
    let client = TestClient::new(&server);
    client.get("https://api.example.com/user").await;
    server.verify().unwrap();

    // A boundary starts from its enclosing scope's counts, like `once`,
    // and what happens inside stays inside.
    let (client_in, server_in) = (client.clone(), server.clone());
    server
        .in_boundary(async move {
            client_in.get("https://api.example.com/user").await;
            assert!(report(&server_in).contains("expected exactly 1, received 2"));
        })
        .await;
    server.verify().unwrap();

    server.restore_handlers();
    assert!(report(&server).contains("expected exactly 1, received 0"));
}

#[tokio::test]
async fn a_boundary_verifies_its_own_on_exit_when_asked() {
    let server = setup_server([]);
    let client = TestClient::new(&server);
    let (client_in, server_in) = (client.clone(), server.clone());
    server
        .in_boundary(async move {
            server_in.use_handlers([http::get("/ok", |_| HttpResponse::empty()).times(1)]);
            client_in.get("http://localhost/ok").await;
        })
        .verify_on_exit()
        .await;

    let server_in = server.clone();
    let failed = tokio::spawn(
        server
            .in_boundary(async move {
                server_in.use_handlers([http::get("/missed", |_| HttpResponse::empty()).times(1)]);
            })
            .verify_on_exit(),
    )
    .await
    .unwrap_err();
    let message = test_support::panic_text(failed.into_panic());
    assert!(
        message.contains("GET /missed: expected exactly 1, received 0"),
        "{message}"
    );
    // The boundary's handler never reached the server's own scope.
    server.verify().unwrap();
}

#[test]
fn dropping_a_server_verifies_when_asked() {
    let server = setup_server([http::get("/user", |_| HttpResponse::empty()).times(1)]);
    server.verify_on_drop();
    let clone = server.clone();
    drop(server); // not the last clone: nothing yet
    let panic = std::panic::catch_unwind(AssertUnwindSafe(move || drop(clone))).unwrap_err();
    let message = test_support::panic_text(panic);
    assert!(
        message.contains("GET /user: expected exactly 1, received 0"),
        "{message}"
    );

    // Without the opt-in, dropping never panics.
    drop(setup_server([http::get("/user", |_| {
        HttpResponse::empty()
    })
    .times(1)]));
}

#[test]
fn dropping_while_unwinding_does_not_panic_again() {
    let panic = std::panic::catch_unwind(|| {
        let server = setup_server([http::get("/user", |_| HttpResponse::empty()).times(1)]);
        server.verify_on_drop();
        panic!("the test's own assertion failed");
    })
    .unwrap_err();
    // One panic, the test's own: a second one would have aborted the process.
    assert_eq!(
        test_support::panic_text(panic),
        "the test's own assertion failed"
    );
}

#[tokio::test]
async fn the_journal_records_every_request_in_order() {
    let upstream = test_support::spawn_upstream(
        axum::Router::new().route("/real", axum::routing::get(|| async { "real" })),
    )
    .await;
    let server = setup_server([
        http::post("https://api.example.com/posts", |_| {
            HttpResponse::text("created").status(201)
        }),
        http::get("https://api.example.com/offline", |_| HttpResponse::error()),
        http::get(format!("http://{upstream}/real"), |_| {
            mocklib::passthrough()
        }),
    ]);
    let client = TestClient::with_options(&server, common::on_unhandled(UnhandledRequest::Bypass));
    client
        .post("https://api.example.com/posts")
        .header("x-trace", "abc")
        .body("hello")
        .await;
    client
        .get("https://api.example.com/offline")
        .expect_error()
        .await;
    assert_eq!(
        client.get_text(format!("http://{upstream}/real")).await,
        "real"
    );
    client.get(format!("http://{upstream}/unknown")).await;

    let journal = server.requests();
    let seen: Vec<_> = journal
        .iter()
        .map(|r| {
            (
                r.method().to_string(),
                r.url().to_string(),
                r.answer().clone(),
                r.handler().map(|h| h.header().to_owned()),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "POST".to_owned(),
                "https://api.example.com/posts".to_owned(),
                AnswerSummary::Mocked(::http::StatusCode::CREATED),
                Some("POST https://api.example.com/posts".to_owned())
            ),
            (
                "GET".to_owned(),
                "https://api.example.com/offline".to_owned(),
                AnswerSummary::NetworkError,
                Some("GET https://api.example.com/offline".to_owned())
            ),
            (
                "GET".to_owned(),
                format!("http://{upstream}/real"),
                AnswerSummary::Passthrough,
                Some(format!("GET http://{upstream}/real"))
            ),
            (
                "GET".to_owned(),
                format!("http://{upstream}/unknown"),
                AnswerSummary::Unhandled,
                None
            ),
        ]
    );
    assert_eq!(journal[0].headers()["x-trace"], "abc");
    assert_eq!(journal[0].body(), "hello");

    server.clear_requests();
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn requests_matching_reads_like_a_handler() {
    let client = serve([http::all("https://api.example.com/*", |_| {
        HttpResponse::empty()
    })]);
    client
        .post("https://api.example.com/posts")
        .body("first")
        .await;
    client.get("https://api.example.com/posts").await;
    client
        .post("https://api.example.com/posts")
        .body("second")
        .await;

    let posts = client
        .server()
        .requests_matching(&http::post("https://api.example.com/posts", |_| {
            HttpResponse::empty()
        }));
    let bodies: Vec<_> = posts.iter().map(|r| r.body().clone()).collect();
    assert_eq!(bodies, ["first", "second"]);
}

#[tokio::test]
async fn the_journal_is_bounded_and_can_be_switched_off() {
    let server = setup_server([http::all("*", |_| HttpResponse::empty())]);
    let client = TestClient::with_options(&server, ListenOptions::new().journal_capacity(2));
    for path in ["/1", "/2", "/3"] {
        client.get(format!("http://localhost{path}")).await;
    }
    let paths: Vec<_> = server
        .requests()
        .iter()
        .map(|r| r.url().path().to_owned())
        .collect();
    assert_eq!(paths, ["/2", "/3"]);

    // Large bodies are cut, their length kept.
    let big = vec![b'x'; mocklib::journal::MAX_BODY + 5];
    client.post("http://localhost/upload").body(big).await;
    let last = server.requests().pop().unwrap();
    assert_eq!(last.body().len(), mocklib::journal::MAX_BODY);
    assert_eq!(last.body_len(), mocklib::journal::MAX_BODY + 5);

    server.listen_with(ListenOptions::new().journal_capacity(0));
    server.clear_requests();
    client.get("http://localhost/4").await;
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn each_boundary_has_its_own_journal() {
    let server = setup_server([http::all("*", |_| HttpResponse::empty())]);
    let client = TestClient::new(&server);
    client.get("http://localhost/outside").await;
    let (client_in, server_in) = (client.clone(), server.clone());
    let inside = server
        .in_boundary(async move {
            client_in.get("http://localhost/inside").await;
            server_in.requests()
        })
        .await;
    assert_eq!(inside.len(), 1);
    assert_eq!(inside[0].url().path(), "/inside");
    let outside = server.requests();
    assert_eq!(outside.len(), 1);
    assert_eq!(outside[0].url().path(), "/outside");
}

#[tokio::test]
async fn the_listener_records_too() {
    let server = setup_server([http::get("/status", |_| HttpResponse::text("ok")).times(1)]);
    server.listen();
    let url = server.url();
    let body = curl(&["-s", "-H", "x-from: curl", &format!("{url}status")]);
    assert_eq!(body, "ok");
    server.verify().unwrap();
    let [request] = server.requests().try_into().unwrap();
    assert_eq!(request.headers()["x-from"], "curl");
    assert_eq!(
        request.answer(),
        &AnswerSummary::Mocked(::http::StatusCode::OK)
    );
}

#[tokio::test]
async fn strict_mode_fails_the_request_and_the_verification() {
    let server = setup_server([http::get("https://api.example.com/user", |_| {
        HttpResponse::text("John")
    })]);
    let client = TestClient::with_options(&server, ListenOptions::strict());
    // The requester sees the failure...
    let message = client
        .get("https://api.example.com/users")
        .expect_unhandled()
        .await;
    assert!(
        message.contains("GET https://api.example.com/users"),
        "{message}"
    );
    // ...and so does verify(), even if the code under test swallowed it.
    let error = server.verify().unwrap_err();
    assert_eq!(error.unhandled().len(), 1);
    let text = error.to_string();
    assert!(
        text.contains("1. strict mode: intercepted a request without a matching request handler"),
        "{text}"
    );
    assert!(
        text.contains("Did you mean to request \"GET https://api.example.com/user\""),
        "{text}"
    );
    // With how the request differs from the closest handler.
    let difference = [
        "   How it differs from the closest handlers:",
        "     • GET https://api.example.com/user",
        "         expected https://api.example.com/user",
        "         received https://api.example.com/users",
    ];
    assert!(text.contains(&difference.join("\n")), "{text}");

    server.clear_requests();
    server.verify().unwrap();
}

#[tokio::test]
async fn strict_mode_counts_a_handler_that_answers_nothing_as_unhandled() {
    let server = setup_server([http::get("https://api.example.com/user", |_| {
        None::<HttpResponse>
    })]);
    let get_user = || {
        let url = "https://api.example.com/user".parse().unwrap();
        server.handle(mocklib::Request::new(::http::Method::GET, url), None)
    };
    // MSW's default, even with the Strict strategy: matched, so performed
    // as it is, and handled.
    server.listen_with(common::on_unhandled(UnhandledRequest::Strict));
    let outcome = get_user().await;
    assert!(
        matches!(outcome, mocklib::front_door::Outcome::Passthrough(_)),
        "{outcome:?}"
    );
    server.verify().unwrap();

    // Strict mode: nobody answered, so it is unhandled.
    let client = TestClient::with_options(&server, ListenOptions::strict());
    let message = client
        .get("https://api.example.com/user")
        .expect_unhandled()
        .await;
    let expected = "intercepted a request that request handlers matched but none answered";
    assert!(message.contains(expected), "{message}");
    assert!(report(&server).contains(&format!("1. strict mode: {expected}")));
}

#[tokio::test]
async fn requests_matching_matches_with_the_base_url_the_lookup_used() {
    let server = common::listening([http::get("/status", |_| HttpResponse::text("ok"))]);
    let front_door_origin: url::Url = "http://localhost:8080/".parse().unwrap();
    // Another origin than the front door's: the relative predicate does not
    // match it, and neither does requests_matching afterwards.
    for url in [
        "http://localhost:8080/status",
        "https://elsewhere.example/status",
    ] {
        let request = mocklib::Request::new(::http::Method::GET, url.parse().unwrap());
        server
            .handle(request, Some(front_door_origin.clone()))
            .await;
    }
    let matching: Vec<_> = server
        .requests_matching(&http::get("/status", |_| HttpResponse::empty()))
        .iter()
        .map(|r| r.url().to_string())
        .collect();
    assert_eq!(matching, ["http://localhost:8080/status"]);
}
