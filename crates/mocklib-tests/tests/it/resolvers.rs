//! The resolver contract, end to end through a real reqwest client: what a
//! resolver receives (`ResolverArgs`), what each return type does, fall-through,
//! `once`, failures (errors, panics, bad bodies) and `delay`.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::serve;
use mocklib::{
    HttpResponse, ResolverArgs, delay, front_door::NetworkError, front_door::NetworkErrorKind,
    http, passthrough, request::BodyError, request::FormValue,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use test_support::spawn_upstream;

/// A real upstream answering `GET /data` with "real" and counting its hits.
async fn upstream() -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    let app = axum::Router::new().route(
        "/data",
        axum::routing::get(move || {
            let counter = Arc::clone(&counter);
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                "real"
            }
        }),
    );
    let address = spawn_upstream(app).await;
    (format!("http://{address}"), hits)
}

// ─────────────────────── sync, async, destructuring ───────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_and_async_closures_are_both_resolvers() {
    let client = serve([
        http::get("https://api.example.com/sync", |_| {
            HttpResponse::text("sync")
        }),
        http::get("https://api.example.com/async", |_| async {
            tokio::task::yield_now().await;
            HttpResponse::text("async")
        }),
    ]);

    assert_eq!(
        client.get("https://api.example.com/sync").await,
        (200, "sync")
    );
    assert_eq!(
        client.get("https://api.example.com/async").await,
        (200, "async")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolver_args_can_be_destructured() {
    let client = serve([http::get(
        "https://api.example.com/users/:id",
        |ResolverArgs {
             request,
             params,
             cookies,
             ..
         }| {
            HttpResponse::json(&json!({
                "method": request.method().as_str(),
                "id": &params["id"],
                "session": cookies.get("session"),
            }))
        },
    )]);

    let body: Value = client
        .get("https://api.example.com/users/42")
        .header("cookie", "session=abc")
        .await
        .json();
    assert_eq!(
        body,
        json!({ "method": "GET", "id": "42", "session": "abc" })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_id_is_distinct_per_request() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let client = serve([http::get("https://api.example.com/id", move |args| {
        record.lock().unwrap().push(args.request_id);
        HttpResponse::text(args.request_id.to_string())
    })]);

    let first = client.get("https://api.example.com/id").await.text();
    let second = client.get("https://api.example.com/id").await.text();
    assert_ne!(first, second);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert_ne!(seen[0], seen[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fall_through_handlers_see_the_same_request_id() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (first, second) = (Arc::clone(&seen), Arc::clone(&seen));
    let client = serve([
        http::get("https://api.example.com/id", move |args| {
            first.lock().unwrap().push(args.request_id);
        }),
        http::get("https://api.example.com/id", move |args| {
            second.lock().unwrap().push(args.request_id);
            HttpResponse::empty()
        }),
    ]);

    client.get("https://api.example.com/id").await;
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0], seen[1], "one request, one id");
}

// ─────────────────────────── the request ───────────────────────────

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct NewPost {
    id: u32,
    title: String,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolver_reads_method_url_headers_and_body() {
    let client = serve([http::post("https://api.example.com/posts", |args| {
        let request = &args.request;
        let post: NewPost = request.json().expect("a NewPost");
        HttpResponse::json(&json!({
            "method": request.method().as_str(),
            "url": request.url().as_str(),
            "x_trace": request.headers().get("x-trace").and_then(|v| v.to_str().ok()),
            "content_type": request.header("content-type"),
            "text": request.text().expect("utf-8"),
            "bytes_len": request.bytes().len(),
            "post": post,
        }))
    })]);

    let post = NewPost {
        id: 1,
        title: "Hello".into(),
    };
    let body: Value = client
        .post("https://api.example.com/posts?draft=true")
        .header("x-trace", "t-1")
        .json(&post)
        .await
        .json();
    let sent = serde_json::to_string(&post).unwrap();
    assert_eq!(
        body,
        json!({
            "method": "POST",
            "url": "https://api.example.com/posts?draft=true",
            "x_trace": "t-1",
            "content_type": "application/json",
            "text": sent,
            "bytes_len": sent.len(),
            "post": { "id": 1, "title": "Hello" },
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolver_reads_binary_body_bytes() {
    let client = serve([http::put("https://api.example.com/blob", |args| {
        let bytes = args.request.bytes();
        // Not UTF-8: text() is an error, bytes() is not.
        assert!(matches!(args.request.text(), Err(BodyError::NotUtf8(_))));
        HttpResponse::json(&bytes.to_vec())
    })]);

    let body: Vec<u8> = client
        .put("https://api.example.com/blob")
        .body(vec![0u8, 255, 1, 254])
        .await
        .json();
    assert_eq!(body, [0, 255, 1, 254]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolver_reads_an_urlencoded_form() {
    let client = serve([http::post("https://api.example.com/form", |args| {
        let form = args.request.form().expect("a form");
        let tags: Vec<&str> = form.get_all("tag").filter_map(FormValue::as_text).collect();
        HttpResponse::json(&json!({ "title": form.get("title"), "tags": tags }))
    })]);

    let body: Value = client
        .post("https://api.example.com/form")
        .form(&[("title", "Hello world & more"), ("tag", "a"), ("tag", "b")])
        .await
        .json();
    assert_eq!(
        body,
        json!({ "title": "Hello world & more", "tags": ["a", "b"] })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolver_reads_a_multipart_form() {
    let client = serve([http::post("https://api.example.com/upload", |args| {
        let form = args.request.form().expect("a multipart form");
        let Some(FormValue::File {
            filename,
            content_type,
            data,
        }) = form.get_value("upload")
        else {
            return HttpResponse::text("no file").status(400);
        };
        HttpResponse::json(&json!({
            "title": form.get("title"),
            "filename": filename,
            "content_type": content_type,
            "data": String::from_utf8_lossy(data),
        }))
    })]);

    // reqwest's `multipart` feature is not enabled for the tests: build the
    // body by hand, as a browser would send it.
    let boundary = "----mocklibTestBoundary7MA4YWxk";
    let body = format!(
        "--{boundary}\r\n\
         Content-Disposition: form-data; name=\"title\"\r\n\r\n\
         Hello\r\n\
         --{boundary}\r\n\
         Content-Disposition: form-data; name=\"upload\"; filename=\"a.txt\"\r\n\
         Content-Type: text/plain\r\n\r\n\
         line1\r\nline2\r\n\
         --{boundary}--\r\n"
    );
    let response: Value = client
        .post("https://api.example.com/upload")
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(body)
        .await
        .json();
    assert_eq!(
        response,
        json!({
            "title": "Hello",
            "filename": "a.txt",
            "content_type": "text/plain",
            "data": "line1\r\nline2",
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolver_reads_a_multipart_field_whose_name_has_a_semicolon() {
    let client = serve([http::post("https://api.example.com/upload", |args| {
        let form = args.request.form().expect("a multipart form");
        let names: Vec<&str> = form.iter().map(|(name, _)| name).collect();
        HttpResponse::json(&names)
    })]);

    // Browsers send ';' in a quoted name as it is (only '"', CR, LF are escaped).
    let body = "--b\r\nContent-Disposition: form-data; name=\"a;b\"\r\n\r\n1\r\n--b--\r\n";
    let names: Vec<String> = client
        .post("https://api.example.com/upload")
        .header("content-type", "multipart/form-data; boundary=b")
        .body(body)
        .await
        .json();
    assert_eq!(names, ["a;b"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cookies_are_parsed_from_the_cookie_header() {
    let client = serve([http::get("https://api.example.com/user", |args| {
        if args.cookies.get("session").is_none() {
            return HttpResponse::empty().status(401);
        }
        HttpResponse::json(&args.cookies)
    })]);

    let response = client.get("https://api.example.com/user").await;
    assert_eq!(response.status(), 401);

    let body: Value = client
        .get("https://api.example.com/user")
        .header("cookie", "session=abc%20def; theme=dark")
        .await
        .json();
    assert_eq!(body, json!({ "session": "abc def", "theme": "dark" }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fall_through_handler_can_read_the_body() {
    let first_saw = Arc::new(Mutex::new(None));
    let record = Arc::clone(&first_saw);
    let client = serve([
        http::post("https://api.example.com/echo", move |args| {
            // Reads the body, then lets the next handler answer.
            *record.lock().unwrap() = Some(args.request.text().unwrap().to_owned());
        }),
        http::post("https://api.example.com/echo", |args| async move {
            HttpResponse::text(format!("second read {}", args.request.text().unwrap()))
        }),
    ]);

    let body = client
        .post("https://api.example.com/echo")
        .body("payload")
        .await
        .text();
    assert_eq!(body, "second read payload");
    assert_eq!(first_saw.lock().unwrap().as_deref(), Some("payload"));
}

// ─────────────────────────── return types ───────────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn returning_http_response_answers_with_it() {
    let client = serve([http::get("https://api.example.com/r", |_| {
        HttpResponse::text("created").status(201)
    })]);

    assert_eq!(
        client.get("https://api.example.com/r").await,
        (201, "created")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn returning_an_http_crate_response_answers_with_it() {
    let client = serve([http::get("https://api.example.com/r", |_| {
        ::http::Response::builder()
            .status(202)
            .header("x-kind", "http-crate")
            .body(String::from("accepted"))
            .unwrap()
    })]);

    let response = client.get("https://api.example.com/r").await;
    assert_eq!(response.status(), 202);
    assert_eq!(response.header("x-kind"), "http-crate");
    assert_eq!(response.text(), "accepted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn returning_unit_falls_through_to_the_next_matching_handler() {
    let client = serve([
        http::get("https://api.example.com/r", |_| {}),
        http::get("https://api.example.com/other", |_| {
            HttpResponse::text("wrong handler")
        }),
        http::get("https://api.example.com/r", |_| {
            HttpResponse::text("second")
        }),
    ]);

    assert_eq!(
        client.get("https://api.example.com/r").await,
        (200, "second")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn returning_none_falls_through_and_some_answers() {
    let client = serve([
        http::get("https://api.example.com/r/:id", |args| {
            (&args.params["id"] == "1").then(|| HttpResponse::text("some"))
        }),
        http::get("https://api.example.com/r/:id", |_| async {
            HttpResponse::text("fallback")
        }),
    ]);

    assert_eq!(
        client.get("https://api.example.com/r/1").await,
        (200, "some")
    );
    assert_eq!(
        client.get("https://api.example.com/r/2").await,
        (200, "fallback")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passthrough_performs_the_request_and_stops_the_lookup() {
    let (origin, hits) = upstream().await;
    let client = serve([
        http::get(format!("{origin}/data"), |_| passthrough()),
        // Matches too, but must not be reached.
        http::get(format!("{origin}/data"), |_| HttpResponse::text("mocked")),
    ]);

    assert_eq!(client.get(format!("{origin}/data")).await, (200, "real"));
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passthrough_sends_the_original_body_upstream() {
    let app = axum::Router::new().route(
        "/echo",
        axum::routing::post(|body: String| async move { format!("upstream got {body}") }),
    );
    let origin = format!("http://{}", spawn_upstream(app).await);
    let client = serve([http::post(format!("{origin}/echo"), |args| {
        // Reading the body does not consume it.
        assert_eq!(args.request.text().unwrap(), "original");
        passthrough()
    })]);

    let body = client
        .post(format!("{origin}/echo"))
        .body("original")
        .await
        .text();
    assert_eq!(body, "upstream got original");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ok_is_used_as_its_value() {
    let client = serve([
        http::get("https://api.example.com/ok", |_| {
            Ok::<_, std::io::Error>(HttpResponse::text("ok"))
        }),
        http::get("https://api.example.com/ok-nothing", |_| {
            Ok::<_, std::io::Error>(())
        }),
        http::get("https://api.example.com/ok-nothing", |_| {
            HttpResponse::text("next")
        }),
    ]);

    assert_eq!(client.get("https://api.example.com/ok").await, (200, "ok"));
    // Ok(()) is "nothing", like ().
    assert_eq!(
        client.get("https://api.example.com/ok-nothing").await,
        (200, "next")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn err_http_response_is_used_as_the_response() {
    let client = serve([
        http::get("https://api.example.com/denied", |_| {
            Err::<HttpResponse, _>(HttpResponse::text("denied").status(403))
        }),
        // A later matching handler is not consulted.
        http::get("https://api.example.com/denied", |_| {
            HttpResponse::text("allowed")
        }),
    ]);

    assert_eq!(
        client.get("https://api.example.com/denied").await,
        (403, "denied")
    );
}

#[derive(Debug)]
struct PostNotFound(u32);

impl std::fmt::Display for PostNotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "post {} does not exist", self.0)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn err_with_a_custom_error_is_a_500_with_name_and_message() {
    let client = serve([
        http::get("https://api.example.com/posts/:id", |args| async move {
            let id: u32 = args.params["id"].parse().unwrap();
            Err::<HttpResponse, _>(PostNotFound(id))
        }),
        http::get("https://api.example.com/posts/:id", |_| {
            HttpResponse::text("not reached")
        }),
    ]);

    let response = client.get("https://api.example.com/posts/7").await;
    assert_eq!(response.status(), 500);
    assert_eq!(response.header("content-type"), "application/json");
    let body: Value = response.json();
    assert_eq!(
        body,
        json!({ "name": "PostNotFound", "message": "post 7 does not exist" })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn question_mark_on_a_bad_body_is_a_500_naming_body_error() {
    let client = serve([http::post(
        "https://api.example.com/posts",
        |args| async move {
            let post: NewPost = args.request.json()?;
            Ok::<_, BodyError>(HttpResponse::json(&post).status(201))
        },
    )]);

    let response = client
        .post("https://api.example.com/posts")
        .body(r#"{"id": "not a number"}"#)
        .await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json();
    assert_eq!(body["name"], "BodyError");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .starts_with("request body is not the expected JSON"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handler_returning_nothing_alone_performs_the_request_and_counts_as_handled() {
    let (origin, hits) = upstream().await;
    let observed = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&observed);
    // `serve` uses the `Error` strategy: an unhandled request would fail, this one must not.
    let client = serve([http::all("*", move |_| {
        count.fetch_add(1, Ordering::SeqCst);
    })]);

    assert_eq!(client.get(format!("{origin}/data")).await, (200, "real"));
    assert_eq!(observed.load(Ordering::SeqCst), 1);
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

// ─────────────────────────────── once ───────────────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_handler_answers_only_once_then_the_next_handler_answers() {
    let client = serve([
        http::get("https://api.example.com/r", |_| HttpResponse::text("once")).once(),
        http::get("https://api.example.com/r", |_| {
            HttpResponse::text("always")
        }),
    ]);

    assert_eq!(client.get("https://api.example.com/r").await.text(), "once");
    assert_eq!(
        client.get("https://api.example.com/r").await.text(),
        "always"
    );
    assert_eq!(
        client.get("https://api.example.com/r").await.text(),
        "always"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn used_once_handler_alone_leaves_the_request_unhandled() {
    let client =
        serve([http::get("https://api.example.com/r", |_| HttpResponse::text("once")).once()]);

    assert_eq!(client.get("https://api.example.com/r").await.text(), "once");
    let error = client.get("https://api.example.com/r").expect_error().await;
    assert!(common::is_network_error(&error), "{error:?}");
}

// Paused time: the delay costs no wall-clock time.
#[tokio::test(start_paused = true)]
async fn parallel_requests_to_a_once_handler_only_one_gets_it() {
    let client = serve([
        http::get("https://api.example.com/r", |_| async {
            // Give the other request a chance to run meanwhile.
            delay(Duration::from_millis(20)).await;
            HttpResponse::text("once")
        })
        .once(),
        http::get("https://api.example.com/r", |_| {
            HttpResponse::text("always")
        }),
    ]);

    let (a, b) = tokio::join!(
        client.get("https://api.example.com/r"),
        client.get("https://api.example.com/r"),
    );
    let mut bodies = [a.text(), b.text()];
    bodies.sort();
    assert_eq!(bodies, ["always", "once"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_handlers_re_arms_once_handlers() {
    let client = serve([
        http::get("https://api.example.com/r", |_| HttpResponse::text("once")).once(),
        http::get("https://api.example.com/r", |_| {
            HttpResponse::text("always")
        }),
    ]);

    assert_eq!(client.get("https://api.example.com/r").await.text(), "once");
    assert_eq!(
        client.get("https://api.example.com/r").await.text(),
        "always"
    );
    client.server().restore_handlers();
    assert_eq!(client.get("https://api.example.com/r").await.text(), "once");
    assert_eq!(
        client.get("https://api.example.com/r").await.text(),
        "always"
    );
}

// ───────────────────────────── failures ─────────────────────────────

fn explode(message: &str) -> HttpResponse {
    panic!("{message}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panicking_sync_resolver_gives_a_500_and_the_server_keeps_serving() {
    let client = serve([
        http::get("https://api.example.com/boom", |_| explode("sync kaboom")),
        http::get("https://api.example.com/fine", |_| {
            HttpResponse::text("fine")
        }),
    ]);

    let response = client.get("https://api.example.com/boom").await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json();
    assert_eq!(body, json!({ "name": "Panic", "message": "sync kaboom" }));

    assert_eq!(
        client.get("https://api.example.com/fine").await,
        (200, "fine")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panicking_async_resolver_gives_a_500_and_the_server_keeps_serving() {
    let client = serve([
        http::get("https://api.example.com/boom", |args| async move {
            tokio::task::yield_now().await;
            explode(&format!("async kaboom at {}", args.request.url().path()))
        }),
        http::get("https://api.example.com/fine", |_| async {
            HttpResponse::text("fine")
        }),
    ]);

    let response = client.get("https://api.example.com/boom").await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json();
    assert_eq!(
        body,
        json!({ "name": "Panic", "message": "async kaboom at /boom" })
    );

    assert_eq!(
        client.get("https://api.example.com/fine").await,
        (200, "fine")
    );
    // The panicking handler still answers (with a 500), it is not poisoned away.
    let again = client.get("https://api.example.com/boom").await;
    assert_eq!(again.status(), 500);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_json_body_is_an_error_value_for_the_resolver() {
    let client = serve([http::post(
        "https://api.example.com/posts",
        |args| match args.request.json::<Value>() {
            Ok(_) => HttpResponse::text("parsed"),
            Err(error) => {
                let kind = if matches!(error, BodyError::Json(_)) {
                    "json"
                } else {
                    "other"
                };
                HttpResponse::text(error.to_string())
                    .status(400)
                    .header("x-error-kind", kind)
            }
        },
    )]);

    let response = client
        .post("https://api.example.com/posts")
        .header("content-type", "application/json")
        .body("{nope")
        .await;
    assert_eq!(response.status(), 400);
    assert_eq!(response.header("x-error-kind"), "json");
    let message = response.text();
    assert!(
        message.starts_with("request body is not the expected JSON"),
        "{message}"
    );

    // An empty body is an error too, not a panic.
    let response = client.post("https://api.example.com/posts").await;
    assert_eq!(response.status(), 400);
}

#[tokio::test(start_paused = true)]
async fn delay_in_an_async_resolver_completes() {
    let client = serve([http::get("https://api.example.com/slow", |_| async {
        delay(Duration::from_millis(50)).await;
        HttpResponse::text("finally")
    })]);

    let started = tokio::time::Instant::now();
    assert_eq!(
        client.get("https://api.example.com/slow").await,
        (200, "finally")
    );
    assert_eq!(started.elapsed(), Duration::from_millis(50));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_error_from_a_resolver_is_of_kind_mocked() {
    let client = serve([http::get("https://api.example.com/down", |_| {
        HttpResponse::error()
    })]);

    let error = client
        .get("https://api.example.com/down")
        .expect_error()
        .await;
    let reqwest_middleware::Error::Middleware(inner) = &error else {
        panic!("expected a middleware error, got {error:?}")
    };
    let network = inner
        .downcast_ref::<NetworkError>()
        .expect("a NetworkError");
    assert_eq!(network.kind(), NetworkErrorKind::Mocked);
}
