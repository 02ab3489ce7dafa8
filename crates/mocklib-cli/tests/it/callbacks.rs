//! `mocklib serve`'s callback channel (issue 39, item 4): `callback`
//! entries whose resolver is a function of the test's own language,
//! called over a WebSocket the test's client holds open to its scope —
//! here tokio-tungstenite, and a few lines of Python's standard library,
//! as the Python and Node packages do it; the requests come from curl.

use crate::common::*;

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::{self, Message, client::IntoClientRequest};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// `path` on the origin `origin` (`http://…`), as a `ws://` URL.
fn ws_url(origin: &str, path: &str) -> String {
    format!("{}{path}", origin.replacen("http://", "ws://", 1))
}

/// Opens the callback channel at `url` (with the admin token as a bearer
/// header when given): the socket, or the status that refused it.
async fn open_channel(url: &str, token: Option<&str>) -> Result<Socket, u16> {
    let mut request = url.into_client_request().unwrap();
    if let Some(token) = token {
        let value = format!("Bearer {token}").parse().unwrap();
        request.headers_mut().insert("authorization", value);
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((socket, _)) => Ok(socket),
        Err(tungstenite::Error::Http(response)) => Err(response.status().as_u16()),
        Err(error) => panic!("{url}: {error}"),
    }
}

/// Opens the channel at `url` once the server has let the last one go (it
/// answers `409` until it saw that one close).
async fn reopen(url: &str, token: Option<&str>) -> Socket {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match open_channel(url, token).await {
            Ok(socket) => return socket,
            Err(409) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(status) => panic!("{url}: {status}"),
        }
    }
}

/// The next frame the server sends on `socket`, as JSON.
async fn next_call(socket: &mut Socket) -> Value {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), socket.next())
            .await
            .expect("a call within 10 s")
            .expect("the channel is open")
            .expect("a frame");
        if let Message::Text(text) = message {
            return serde_json::from_str(&text).expect("a JSON frame");
        }
    }
}

async fn send(socket: &mut Socket, frame: Value) {
    socket.send(Message::text(frame.to_string())).await.unwrap();
}

/// Waits for `socket` to close: the close frame's code, if it sent one.
async fn close_code(socket: &mut Socket) -> Option<u16> {
    loop {
        let next = tokio::time::timeout(Duration::from_secs(10), socket.next())
            .await
            .expect("closed within 10 s");
        match next {
            Some(Ok(Message::Close(frame))) => return frame.map(|frame| frame.code.into()),
            Some(Ok(_)) => {}
            Some(Err(_)) | None => return None,
        }
    }
}

/// curl with `args` (and a scope's `env`), on a thread of its own so the
/// test answers its call meanwhile: the status and the body.
fn request(env: Option<&Value>, args: &[&str]) -> tokio::task::JoinHandle<(u16, String)> {
    let env = env.cloned();
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        call(env.as_ref(), &args)
    })
}

/// A request answered on `channel` with what `answer` makes of its call:
/// the call, and the requester's status and body.
async fn answered(
    channel: &mut Socket,
    env: Option<&Value>,
    args: &[&str],
    answer: impl FnOnce(&Value) -> Value,
) -> (Value, (u16, String)) {
    let requested = request(env, args);
    let call = next_call(channel).await;
    send(channel, answer(&call)).await;
    (call, requested.await.unwrap())
}

/// A request answered on `channel` with the text `body`, which the
/// requester gets: the call.
async fn answered_text(
    channel: &mut Socket,
    env: Option<&Value>,
    args: &[&str],
    body: &str,
) -> Value {
    let text = |call: &Value| json!({ "id": call["id"], "response": { "body": body } });
    let (call, answer) = answered(channel, env, args, text).await;
    assert_eq!(answer, (200, body.to_owned()), "{call}");
    call
}

/// Adds `yaml`'s entries through the admin API at `admin`
/// (`…/__mocklib`).
fn add_entries(admin: &str, yaml: &str) {
    let (status, body) = post_yaml(&format!("{admin}/handlers"), yaml);
    assert_eq!(status, 201, "{body}");
}

/// A server with `/fall` in its file (what a fallthrough reaches) and
/// `entries` added through its admin API: its folder, the server, its
/// admin URL and its base URL.
fn started(entries: &str) -> (tempfile::TempDir, Serve, String, String) {
    let dir = with_handler_file("- path: /fall\n  body: the file's answer\n");
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let base = serve.url().to_owned();
    let admin = format!("{base}/__mocklib");
    add_entries(&admin, entries);
    (dir, serve, admin, base)
}

/// The callback channel of the server's own scope, at `base`.
async fn own_channel(base: &str) -> Socket {
    open_channel(&ws_url(base, "/__mocklib/callbacks"), None)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_carries_the_request_and_its_answer_is_the_response() {
    let (dir, _serve, _, base) = started(
        "- method: POST\n  path: /users/:id\n  callback: users\n- method: PUT\n  path: /files/*\n  callback: files\n",
    );
    let mut channel = own_channel(&base).await;

    let url = format!("{base}/users/42?page=2");
    let (call, (status, answer)) = answered(
        &mut channel,
        None,
        &[
            "-i",
            "-X",
            "POST",
            "-H",
            "x-test: yes",
            "-H",
            "x-test: again",
            "-b",
            "session=abc",
            "--data-binary",
            "héllo",
            &url,
        ],
        |call| {
            json!({ "id": call["id"], "response": {
                "status": 201,
                "headers": [["x-made", "1"], ["set-cookie", "a=1"], ["set-cookie", "b=2"]],
                "body": "made",
            } })
        },
    )
    .await;
    assert_eq!(call["type"], "call");
    assert_eq!(call["callback"], "users");
    assert_eq!(call["handler"], "POST /users/:id");
    assert_eq!(call["request"]["method"], "POST");
    assert_eq!(call["request"]["url"], url);
    let headers = call["request"]["headers"].as_array().unwrap();
    // Order and repeats kept.
    let tests: Vec<&Value> = headers.iter().filter(|h| h[0] == "x-test").collect();
    assert_eq!(
        tests,
        [&json!(["x-test", "yes"]), &json!(["x-test", "again"])]
    );
    assert!(
        headers.contains(&json!(["cookie", "session=abc"])),
        "{call}"
    );
    assert_eq!(call["request"]["body"], "héllo");
    assert_eq!(call["request"]["body_base64"], Value::Null);
    assert_eq!(call["params"], json!({ "id": "42" }));
    assert_eq!(call["cookies"], json!({ "session": "abc" }));
    assert_eq!(status, 201, "{answer}");
    let lower = answer.to_ascii_lowercase();
    for line in [
        "x-made: 1\r\n",
        "set-cookie: a=1\r\n",
        "set-cookie: b=2\r\n",
    ] {
        assert!(lower.contains(line), "{line:?} in {answer}");
    }
    assert!(answer.ends_with("\r\n\r\nmade"), "{answer}");

    // A body that is not UTF-8 goes as base64; an answer's body may too,
    // and its delay is the server's to wait.
    std::fs::write(dir.path().join("bytes"), [0xff, 0x00, 0x01]).unwrap();
    let file = format!("@{}", dir.path().join("bytes").display());
    let started = Instant::now();
    let (call, answer) = answered(
        &mut channel,
        None,
        &[
            "-X",
            "PUT",
            "--data-binary",
            &file,
            &format!("{base}/files/a/b.bin"),
        ],
        |call| json!({ "id": call["id"], "response": { "body_base64": "aGk=", "delay_ms": 300 } }),
    )
    .await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(answer, (200, "hi".to_owned()));
    assert_eq!(call["request"]["body"], Value::Null);
    assert_eq!(call["request"]["body_base64"], "/wAB");
    assert_eq!(call["params"], json!({ "0": "a/b.bin" }));
    assert_eq!(call["cookies"], json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passthrough_fallthrough_network_errors_and_raised_errors_are_obeyed() {
    // No path: every request the entries before it leave.
    let (_dir, serve, _, base) = started("- callback: decide\n");
    let upstream = spawn_upstream(
        axum::Router::new().route("/real", axum::routing::get(|| async { "the real one" })),
    )
    .await;
    let mut channel = own_channel(&base).await;
    let kind = |key: &'static str, value: Value| move |call: &Value| json!({ "id": call["id"], key: value });

    let (call, answer) = answered(
        &mut channel,
        None,
        &[&format!("{base}/fall")],
        kind("fallthrough", json!(true)),
    )
    .await;
    assert_eq!(call["handler"], "ALL *");
    assert_eq!(answer, (200, "the file's answer".to_owned()));

    let proxy = &serve.variables["MOCKLIB_PROXY_URL"];
    let real = format!("http://{upstream}/real");
    let (_, answer) = answered(
        &mut channel,
        None,
        &["--proxy", proxy, &real],
        kind("passthrough", json!(true)),
    )
    .await;
    assert_eq!(answer, (200, "the real one".to_owned()));

    // curl: "Empty reply from server", no status.
    let (_, answer) = answered(
        &mut channel,
        None,
        &[&format!("{base}/broken")],
        kind("network_error", json!(true)),
    )
    .await;
    assert_eq!(answer.0, 0, "{answer:?}");

    let (_, (status, body)) = answered(
        &mut channel,
        None,
        &[&format!("{base}/raise")],
        kind(
            "error",
            json!("ValueError: no user 42\n  File \"test_users.py\", line 7"),
        ),
    )
    .await;
    assert_eq!(status, 500, "{body}");
    let error: Value = serde_json::from_str(&body).unwrap();
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("ALL *")
            && message.contains("callback decide")
            && message.contains("ValueError: no user 42"),
        "{body}"
    );

    // An answer mocklib cannot use is a 500 saying why, at once.
    for (answer, why) in [
        (
            json!({ "response": { "status": 99 } }),
            "99 is not an HTTP status",
        ),
        (
            json!({ "response": { "body": "a", "body_base64": "YQ==" } }),
            "not both",
        ),
        (
            json!({ "response": { "body_base64": "%%" } }),
            "not standard base64",
        ),
        (
            json!({ "passthrough": true, "fallthrough": true }),
            "exactly one",
        ),
        (json!({}), "exactly one"),
    ] {
        let (_, (status, body)) = answered(&mut channel, None, &[&format!("{base}/odd")], |call| {
            let mut answer = answer.clone();
            answer["id"] = call["id"].clone();
            answer
        })
        .await;
        assert_eq!(status, 500, "{answer}: {body}");
        assert!(body.contains(why), "{answer}: {body}");
    }
    assert!(serve.stderr().contains("cannot use"), "{}", serve.stderr());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_calls_in_flight_are_answered_out_of_order() {
    let (_dir, _serve, _, base) = started("- method: GET\n  path: /slow/:n\n  callback: slow\n");
    let mut channel = own_channel(&base).await;
    let requests: Vec<_> = (0..8)
        .map(|n| request(None, &[&format!("{base}/slow/{n}")]))
        .collect();
    let mut calls = Vec::new();
    for _ in 0..8 {
        calls.push(next_call(&mut channel).await);
    }
    let mut ids: Vec<u64> = calls
        .iter()
        .map(|call| call["id"].as_u64().unwrap())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 8, "ids are unique: {calls:?}");
    // Last first: each answer finds its own request.
    for call in calls.iter().rev() {
        let n = call["params"]["n"].as_str().unwrap();
        send(
            &mut channel,
            json!({ "id": call["id"], "response": { "body": format!("answer {n}") } }),
        )
        .await;
    }
    for (n, requested) in requests.into_iter().enumerate() {
        assert_eq!(requested.await.unwrap(), (200, format!("answer {n}")));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_channel_a_closed_channel_and_a_late_answer_are_502_502_and_504() {
    let (_dir, serve, _, base) = started("- path: /late\n  callback: late\n  timeout_ms: 300\n");
    let late = format!("{base}/late");

    let (status, body) = get(&late);
    assert_eq!(status, 502, "{body}");
    assert!(
        body.contains("ALL /late")
            && body.contains("callback late")
            && body.contains("no client holds"),
        "{body}"
    );

    // No answer in time: 504; the answer that comes later is ignored.
    let mut channel = own_channel(&base).await;
    let requested = request(None, &[&late]);
    let call = next_call(&mut channel).await;
    let (status, body) = requested.await.unwrap();
    assert_eq!(status, 504, "{body}");
    assert!(
        body.contains("ALL /late") && body.contains("callback late") && body.contains("300 ms"),
        "{body}"
    );
    send(
        &mut channel,
        json!({ "id": call["id"], "response": { "body": "too late" } }),
    )
    .await;
    answered_text(&mut channel, None, &[&late], "in time").await;

    // The channel closes with a call in flight: 502, and the server
    // takes a new channel.
    let requested = request(None, &[&late]);
    next_call(&mut channel).await;
    channel.close(None).await.unwrap();
    let (status, body) = requested.await.unwrap();
    assert_eq!(status, 502, "{body}");
    assert!(
        body.contains("closed before the callback late answered"),
        "{body}"
    );
    let mut channel = reopen(&ws_url(&base, "/__mocklib/callbacks"), None).await;
    answered_text(&mut channel, None, &[&late], "again").await;
    assert!(serve.stderr().contains("ignored"), "{}", serve.stderr());
}

/// A scope's channel, on its own origin or as `scopes/{id}/callbacks` on
/// the server's: one at a time, its calls only (a request through the
/// scope's proxy credential over HTTPS among them), and it closes when
/// the scope ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_scope_has_one_channel_of_its_own_which_ends_with_the_scope() {
    let entry = "- method: GET\n  path: https://api.example.com/profile\n  callback: profile\n";
    let (_dir, serve, admin, base) = started(entry);
    let (a, b) = (open_scope(&serve), open_scope(&serve));
    add_entries(text(&a, "admin_url"), entry);
    add_entries(&format!("{admin}/scopes/{}", b["id"]), entry);

    let mut a_channel = open_channel(&ws_url(text(&a, "url"), "/__mocklib/callbacks"), None)
        .await
        .unwrap();
    let a_elsewhere = ws_url(&base, &format!("/__mocklib/scopes/{}/callbacks", a["id"]));
    assert_eq!(open_channel(&a_elsewhere, None).await.err(), Some(409));
    let mut b_channel = open_channel(
        &ws_url(&base, &format!("/__mocklib/scopes/{}/callbacks", b["id"])),
        None,
    )
    .await
    .unwrap();
    let b_again = ws_url(text(&b, "url"), "/__mocklib/callbacks");
    assert_eq!(open_channel(&b_again, None).await.err(), Some(409));
    let mut root_channel = own_channel(&base).await;

    // HTTPS through each scope's proxy credential: the call arrives on
    // that scope's channel.
    for (scope, channel, name) in [(&a, &mut a_channel, "A"), (&b, &mut b_channel, "B")] {
        let profile = format!("{name}'s profile");
        let call = answered_text(
            channel,
            Some(&scope["env"]),
            &["https://api.example.com/profile"],
            &profile,
        )
        .await;
        assert_eq!(call["request"]["url"], "https://api.example.com/profile");
    }
    // The server's own scope, its own channel.
    let root_env = json!(serve.variables);
    answered_text(
        &mut root_channel,
        Some(&root_env),
        &["https://api.example.com/profile"],
        "the server's",
    )
    .await;

    // Ended, each closes its channel: the one on the scope's origin and
    // the one on the server's alike.
    assert_eq!(delete(&format!("{admin}/scopes/{}", a["id"])), 204);
    assert_eq!(delete(&format!("{admin}/scopes/{}", b["id"])), 204);
    assert_eq!(close_code(&mut a_channel).await, Some(1001));
    assert_eq!(close_code(&mut b_channel).await, Some(1001));
    // The server's own channel stays.
    answered_text(
        &mut root_channel,
        Some(&root_env),
        &["https://api.example.com/profile"],
        "still here",
    )
    .await;
}

/// A client holding its scope's channel is there: the scope outlives the
/// idle timeout while the channel is open, and sits idle from its close.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_channel_keeps_its_scope_from_ending_idle() {
    let dir = with_handler_file("[]\n");
    let serve = Serve::start(
        dir.path(),
        &["--handlers", "handlers.yaml", "--scope-idle-timeout", "1"],
    );
    let scope = open_scope(&serve);
    let mut channel = open_channel(&ws_url(text(&scope, "url"), "/__mocklib/callbacks"), None)
        .await
        .unwrap();
    let listed = || {
        let scopes = get_json(&format!("{}/__mocklib/scopes", serve.url()));
        scopes
            .as_array()
            .unwrap()
            .iter()
            .any(|open| open["id"] == scope["id"])
    };
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(listed(), "{}", serve.stderr());
    channel.close(None).await.unwrap();
    let closed = Instant::now();
    close_code(&mut channel).await;
    // Polled here, on a thread this test's runtime lends.
    tokio::task::block_in_place(|| {
        eventually("the scope to end idle", || (!listed()).then_some(()));
    });
    assert!(closed.elapsed() >= Duration::from_secs(1));
    let ended = format!("scope {} ended: idle for 1s", scope["id"]);
    assert!(serve.stderr().contains(&ended), "{}", serve.stderr());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_journal_verify_and_the_handler_list_count_a_callback_entry() {
    let (_dir, _serve, admin, base) =
        started("- method: GET\n  path: /counted\n  callback: counted\n  times: 2\n");
    let listed = get_json(&format!("{admin}/handlers"));
    assert_eq!(
        listed[0]["handler"], "GET /counted (callback counted)",
        "{listed}"
    );
    let mut channel = own_channel(&base).await;
    answered_text(&mut channel, None, &[&format!("{base}/counted")], "counted").await;

    let (status, body) = get(&format!("{admin}/verify"));
    assert_eq!(status, 422, "{body}");
    let report: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        report["unmet"],
        json!([{ "handler": "GET /counted (callback counted)", "expected": "exactly 2", "at_least": 2, "at_most": 2, "received": 1 }])
    );
    answered_text(&mut channel, None, &[&format!("{base}/counted")], "counted").await;
    assert_eq!(get_json(&format!("{admin}/verify")), json!({ "ok": true }));

    let journal = get_json(&format!("{admin}/requests?handler=callback"));
    let entries = journal.as_array().unwrap();
    assert_eq!(entries.len(), 2, "{journal}");
    for entry in entries {
        assert_eq!(
            entry["handler"], "GET /counted (callback counted)",
            "{entry}"
        );
        assert_eq!(entry["status"], 200, "{entry}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_the_server_cannot_read_is_ignored_and_the_channel_stays_open() {
    let (_dir, serve, _, base) = started("- path: /user\n  callback: user\n");
    let mut channel = own_channel(&base).await;
    channel.send(Message::text("not JSON")).await.unwrap();
    channel.send(Message::binary(vec![1, 2, 3])).await.unwrap();
    send(&mut channel, json!({ "id": 999, "fallthrough": true })).await;
    send(&mut channel, json!({ "answer": "without an id" })).await;
    // A second answer to the same call is ignored too.
    let requested = request(None, &[&format!("{base}/user")]);
    let call = next_call(&mut channel).await;
    send(
        &mut channel,
        json!({ "id": call["id"], "response": { "body": "first" } }),
    )
    .await;
    send(
        &mut channel,
        json!({ "id": call["id"], "response": { "body": "second" } }),
    )
    .await;
    assert_eq!(requested.await.unwrap(), (200, "first".to_owned()));
    answered_text(&mut channel, None, &[&format!("{base}/user")], "still open").await;
    let stderr = serve.stderr();
    assert_eq!(
        stderr.matches("a frame that is ignored").count(),
        5,
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_token_guards_the_channel_as_a_header_or_in_the_query() {
    let dir = with_handler_file("- path: /user\n  callback: user\n");
    let serve = Serve::start(
        dir.path(),
        &["--handlers", "handlers.yaml", "--admin-token", "s3cret"],
    );
    let url = ws_url(serve.url(), "/__mocklib/callbacks");
    assert_eq!(open_channel(&url, None).await.err(), Some(401));
    assert_eq!(open_channel(&url, Some("wrong")).await.err(), Some(401));
    let mut channel = open_channel(&format!("{url}?token=s3cret"), None)
        .await
        .unwrap();
    answered_text(
        &mut channel,
        None,
        &[&format!("{}/user", serve.url())],
        "from the query's channel",
    )
    .await;
    channel.close(None).await.unwrap();
    close_code(&mut channel).await;
    let mut channel = reopen(&url, Some("s3cret")).await;
    answered_text(
        &mut channel,
        None,
        &[&format!("{}/user", serve.url())],
        "from the header's channel",
    )
    .await;
    // Not an upgrade: the channel is a WebSocket.
    let (status, body) = call(
        None,
        &[
            "-H",
            "authorization: Bearer s3cret",
            &format!("{}/__mocklib/callbacks", serve.url()),
        ],
    );
    assert_eq!(status, 426, "{body}");
}

/// A gRPC call that meets a callback entry (its path written as the
/// method's) ends with a status, as every answer the server makes itself
/// to a gRPC call does: a `grpcio` client reads no garbled message.
#[test]
fn a_grpc_call_to_a_callback_entry_ends_with_a_status_when_its_function_cannot_answer() {
    let dir = with_handler_file(
        "- method: POST\n  path: /helloworld.Greeter/SayHello\n  callback: greet\n  timeout_ms: 300\n",
    );
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let say_hello = || grpcio_say_hello_to_kate(&serve);
    let ended = say_hello();
    assert!(
        ended.starts_with("UNAVAILABLE ") && ended.contains("callback greet"),
        "{ended}"
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut channel = runtime
        .block_on(open_channel(
            &ws_url(serve.url(), "/__mocklib/callbacks"),
            None,
        ))
        .unwrap();
    for (answer, status) in [
        (None, "DEADLINE_EXCEEDED "),
        (Some(json!("ValueError: no Kate")), "INTERNAL "),
    ] {
        let ended = std::thread::scope(|scope| {
            let call = scope.spawn(say_hello);
            runtime.block_on(async {
                let call = next_call(&mut channel).await;
                // A call's messages are streamed, not in the frame.
                assert_eq!(call["handler"], "POST /helloworld.Greeter/SayHello");
                if let Some(error) = answer {
                    send(&mut channel, json!({ "id": call["id"], "error": error })).await;
                }
            });
            call.join().unwrap()
        });
        assert!(
            ended.starts_with(status) && ended.contains("callback greet"),
            "{ended}"
        );
    }
}

/// A client in a few lines of Python's standard library: the handshake,
/// a text frame each way. What the Python package does, without it.
const PYTHON_CLIENT: &str = r#"
import base64, json, os, socket, struct, threading, urllib.request

url = os.environ["MOCKLIB_URL"]
host, port = url[len("http://"):].split(":")
sock = socket.create_connection((host, int(port)))
key = base64.b64encode(os.urandom(16)).decode()
sock.sendall((
    f"GET /__mocklib/callbacks HTTP/1.1\r\nHost: {host}:{port}\r\n"
    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
    f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
).encode())
stream = sock.makefile("rb")
assert b" 101 " in stream.readline()
while stream.readline() not in (b"\r\n", b""):
    pass

def receive():
    while True:
        first, second = stream.read(2)
        length = second & 127
        if length == 126:
            (length,) = struct.unpack(">H", stream.read(2))
        elif length == 127:
            (length,) = struct.unpack(">Q", stream.read(8))
        data = stream.read(length)
        if first & 15 == 1:
            return json.loads(data)

def send(frame):
    data, mask = json.dumps(frame).encode(), os.urandom(4)
    length = bytes([0x80 | len(data)]) if len(data) < 126 else bytes([0x80 | 126]) + struct.pack(">H", len(data))
    sock.sendall(bytes([0x81]) + length + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

def greet(name):
    return "hello " + name

got = {}
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
requester = threading.Thread(target=lambda: got.update(text=opener.open(url + "/greet/Kate").read().decode()))
requester.start()
call = receive()
send({"id": call["id"], "response": {"headers": [["content-type", "text/plain"]], "body": greet(call["params"]["name"])}})
requester.join()
print(got["text"])
"#;

#[test]
fn a_python_function_answers_through_a_standard_library_client() {
    let dir = with_handler_file("- method: GET\n  path: /greet/:name\n  callback: greet\n");
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    assert_eq!(python(&serve, PYTHON_CLIENT, &[]).trim(), "hello Kate");
}
