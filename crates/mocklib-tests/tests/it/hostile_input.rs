//! Hostile input at every entry point (issue 27, part 2), as property
//! tests: request heads through the listener, path patterns, form and
//! multipart bodies, GraphQL requests, HAR files, OpenAPI documents and
//! WebSocket frames. The properties: no panic, no hang (every case ends
//! within a deadline), a clear error value for invalid input, and the
//! listener keeps serving afterwards.
//!
//! Each property runs a bounded number of cases from a fixed seed, so a
//! run is reproducible and the file stays well under 30 s in a debug build.
//! Longer runs (docs/RELIABILITY.md): `MOCKLIB_PROPTEST_CASES=N` sets the
//! number of cases of every property, `MOCKLIB_PROPTEST_SEED=S` another
//! seed. Failures are not persisted to files; a failure prints its seed and
//! the shrunk input, which a plain regression test then keeps.
//!
//! Deadlines here are hang guards, never speed assertions.

use std::fmt::Debug;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::listener_panics::{count_listener_panics, listener_panics};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method};
use mocklib::node::{Server, setup_server};
use mocklib::{
    HttpResponse, Request, front_door::Outcome, graphql, http as mhttp, request::FormData,
    request::FormError, ws,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};
use test_support::raw::{Ended, read_until_closed, status_of};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Hang guard for one case's work (an exchange, a document, a request).
const DEADLINE: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------
// the runner

/// `cases` cases from the fixed seed, no failure files, a bounded shrink.
fn config(cases: u32) -> Config {
    test_support::proptest_config(cases, 512)
}

/// Runs `test` on `cases` values of `strategy` (see [`config`]); prints the
/// count and the time taken, and fails with the seed and the shrunk input.
fn check<S>(
    name: &str,
    cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) where
    S: Strategy,
    S::Value: Debug,
{
    let config = config(cases);
    let (cases, seed) = (config.cases, config.rng_seed);
    let started = Instant::now();
    let result = TestRunner::new(config).run(&strategy, test);
    let took = started.elapsed();
    // Shown with --nocapture (the long-run script collects these lines).
    println!("property {name}: {cases} cases, seed {seed}, {took:.2?}");
    if let Err(error) = result {
        panic!("{name} (seed {seed}, {cases} cases): {error}");
    }
}

/// What a property's cases ran into, counted, so that a run whose strategy
/// never reaches one of the paths it is meant to (a valid pattern, an
/// error) fails rather than passing on nothing.
#[derive(Default)]
struct Reached(std::sync::Mutex<std::collections::BTreeMap<&'static str, usize>>);

impl Reached {
    fn note(&self, what: &'static str) {
        *self.0.lock().unwrap().entry(what).or_default() += 1;
    }

    /// Prints the counts; with 100 cases or more, fails unless each of
    /// `wanted` was met.
    fn assert(&self, name: &str, wanted: &[&'static str]) {
        let counts = self.0.lock().unwrap();
        println!("property {name}: {counts:?}");
        if test_support::env_number("MOCKLIB_PROPTEST_CASES").is_none_or(|cases| cases >= 100) {
            for what in wanted {
                assert!(
                    counts.get(what).is_some_and(|n| *n > 0),
                    "{name}: no case {what}: {counts:?}"
                );
            }
        }
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    })
}

/// Runs the sync `work` on a blocking thread, failing the case when it
/// takes longer than [`DEADLINE`] (a CPU-bound hang cannot be interrupted,
/// so it is left behind and the case fails).
fn within<T: Send + 'static>(
    what: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, TestCaseError> {
    runtime().block_on(async {
        match tokio::time::timeout(DEADLINE, tokio::task::spawn_blocking(work)).await {
            Err(_) => Err(TestCaseError::fail(format!(
                "{what}: no answer within {DEADLINE:?}"
            ))),
            Ok(Err(join)) => Err(TestCaseError::fail(format!("{what}: panicked: {join}"))),
            Ok(Ok(value)) => Ok(value),
        }
    })
}

/// How `server` resolves `request` (through `Server::handle`, as every
/// front door does), within [`DEADLINE`]; a panic or a hang fails the case.
/// A mocked response comes back with its body read.
fn resolve(server: &Server, request: Request) -> Result<Resolved, TestCaseError> {
    let what = format!("{} {}", request.method(), request.url());
    let outcome = server.handle(request, None);
    runtime().block_on(async {
        let task = tokio::spawn(async move {
            match outcome.await {
                Outcome::Mocked(response) => {
                    let (head, body) = response.into_parts();
                    Resolved::Mocked(
                        head.status.as_u16(),
                        body.collect().await.map_err(|e| e.to_string()),
                    )
                }
                Outcome::NetworkError(error) => {
                    Resolved::NetworkError(error.kind(), error.to_string())
                }
                other => Resolved::Other(format!("{other:?}")),
            }
        });
        match tokio::time::timeout(DEADLINE, task).await {
            Err(_) => Err(TestCaseError::fail(format!(
                "{what}: no outcome within {DEADLINE:?}"
            ))),
            Ok(Err(join)) => Err(TestCaseError::fail(format!("{what}: panicked: {join}"))),
            Ok(Ok(resolved)) => Ok(resolved),
        }
    })
}

#[derive(Debug)]
enum Resolved {
    Mocked(u16, Result<Bytes, String>),
    NetworkError(mocklib::front_door::NetworkErrorKind, String),
    Other(String),
}

/// A listening server with `handlers` that fails unhandled requests, so
/// nothing here ever leaves the machine.
fn listening(handlers: impl IntoIterator<Item = mocklib::Handler>) -> Server {
    count_listener_panics();
    let server = setup_server(handlers);
    server.listen_with(
        mocklib::ListenOptions::new().on_unhandled_request(mocklib::UnhandledRequest::Error),
    );
    server
}

fn url(text: &str) -> url::Url {
    text.parse().unwrap()
}

// ---------------------------------------------------------------------------
// panics on listener threads (see listener_panics.rs)

fn assert_no_listener_panics() -> Result<(), TestCaseError> {
    prop_assert_eq!(
        listener_panics(),
        0,
        "a listener thread panicked (see the panic message in the output)"
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// shared strategies

/// Bytes that can stand in a header line: anything but CR and LF.
fn line_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..max).prop_map(|mut bytes| {
        for byte in &mut bytes {
            if *byte == b'\r' || *byte == b'\n' {
                *byte = b' ';
            }
        }
        bytes
    })
}

/// Concatenations of pieces that trip parsers of URLs and targets.
fn odd_text() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop::sample::select(vec![
        &b"a"[..],
        b"users",
        b"/",
        b"//",
        b"%",
        b"%2F",
        b"%zz",
        b"%00",
        b"%ff",
        b"?",
        b"?q=1",
        b"#",
        b"..",
        b".",
        b"@",
        b":",
        b"[",
        b"]",
        b" ",
        b"\t",
        "\u{e9}".as_bytes(),
        b"\xff",
        b"\x00",
        b"\x7f",
        b"\\",
        b"*",
        b";",
        b"=",
        b"&",
        b"+",
        b"{",
        b"}",
        b"\"",
        b"'",
        b"<",
        b"|",
    ]);
    proptest::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

/// A JSON value of any shape, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::String),
        prop::sample::select(vec![
            "query",
            "GetUser",
            "$ref",
            "#/components/schemas/A",
            "{",
            "}",
            ""
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec(("\\PC{0,8}", inner), 0..6)
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
        ]
    })
}

// ---------------------------------------------------------------------------
// 1. request heads through the listener

/// Connects, writes `bytes` (the listener may hang up first: write errors
/// are part of the game), optionally half-closes, and reads until the
/// connection ends.
async fn exchange(address: std::net::SocketAddr, bytes: &[u8], half_close: bool) -> Ended {
    let mut stream = TcpStream::connect(address).await.unwrap();
    let _ = tokio::time::timeout(DEADLINE, async {
        stream.write_all(bytes).await?;
        if half_close {
            stream.shutdown().await?;
        }
        Ok::<_, std::io::Error>(())
    })
    .await;
    read_until_closed(&mut stream, DEADLINE).await
}

fn address(server: &Server) -> std::net::SocketAddr {
    server.url().socket_addrs(|| None).unwrap()[0]
}

/// A valid request on a new connection is answered `200 ok`.
async fn assert_healthy(address: std::net::SocketAddr) -> Result<(), TestCaseError> {
    // Not half-closed: hyper drops a request whose client half-closes
    // before the answer (its default, `half_close(false)`).
    let request = b"GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    let ended = exchange(address, request, false).await;
    prop_assert!(
        matches!(&ended, Ended::Closed(reply) if status_of(reply) == Some(200) && reply.ends_with(b"\r\n\r\nok")),
        "the next valid request was not answered: {:?}",
        ended
    );
    Ok(())
}

#[derive(Debug, Clone)]
struct Head {
    method: Vec<u8>,
    target: Vec<u8>,
    version: &'static str,
    headers: Vec<(Vec<u8>, Vec<u8>)>,
    eol: &'static str,
    body: Vec<u8>,
    /// Cut the message at this fraction of its length.
    truncate: Option<f64>,
}

impl Head {
    fn bytes(&self) -> Vec<u8> {
        let eol = self.eol.as_bytes();
        let mut out = Vec::new();
        out.extend_from_slice(&self.method);
        out.push(b' ');
        out.extend_from_slice(&self.target);
        if !self.version.is_empty() {
            out.push(b' ');
            out.extend_from_slice(self.version.as_bytes());
        }
        out.extend_from_slice(eol);
        for (name, value) in &self.headers {
            out.extend_from_slice(name);
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(eol);
        }
        out.extend_from_slice(eol);
        out.extend_from_slice(&self.body);
        if let Some(fraction) = self.truncate {
            out.truncate((out.len() as f64 * fraction) as usize);
        }
        out
    }
}

fn host() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::sample::select(vec![
            "127.0.0.1",
            "localhost",
            "api.example.com",
            "API.Example.COM.",
            "[::1]",
            "[::ffff:127.0.0.1]",
            "",
            "0",
            "256.256.256.256",
            "xn--",
            "[",
            "[::1",
            "a..b",
            "-a-",
            "user:pw@api.example.com",
            "%41",
            "\u{e9}.example",
            "127.1",
            "0x7f.1",
        ])
        .prop_map(|host| host.as_bytes().to_vec()),
        "[a-z0-9.-]{0,20}".prop_map(String::into_bytes),
        odd_text(),
    ]
}

fn port() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        (0u32..70_000).prop_map(|port| Some(port.to_string())),
        prop::sample::select(vec![
            "",
            "-1",
            "65536",
            "99999999999999999999",
            "0x50",
            "80a",
            ":",
            " 80"
        ])
        .prop_map(|port| Some(port.to_owned())),
    ]
}

fn target() -> impl Strategy<Value = Vec<u8>> {
    let origin_form = odd_text().prop_map(|path| [&b"/"[..], &path].concat());
    let scheme = prop::sample::select(vec![
        "http://", "https://", "HTTP://", "ws://", "ftp://", "", "http:/",
    ]);
    let absolute_form =
        (scheme, host(), port(), odd_text()).prop_map(|(scheme, host, port, path)| {
            let port = port.map(|port| format!(":{port}")).unwrap_or_default();
            [scheme.as_bytes(), &host, port.as_bytes(), b"/", &path].concat()
        });
    let authority_form = (host(), port()).prop_map(|(host, port)| {
        let port = port.map(|port| format!(":{port}")).unwrap_or_default();
        [&host[..], port.as_bytes()].concat()
    });
    prop_oneof![
        3 => origin_form,
        3 => absolute_form,
        2 => authority_form,
        1 => Just(b"*".to_vec()),
        1 => line_bytes(24),
    ]
}

fn header() -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
    let name = prop_oneof![
        4 => prop::sample::select(vec![
            "Host", "Content-Length", "Transfer-Encoding", "Connection", "Upgrade", "Expect", "Cookie",
            "Content-Type", "TE", "Trailer", "Proxy-Connection", "Keep-Alive", "Sec-WebSocket-Key",
            "Sec-WebSocket-Version", "HTTP2-Settings", "Proxy-Authorization",
        ])
        .prop_map(|name| name.as_bytes().to_vec()),
        2 => "[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}".prop_map(String::into_bytes),
        1 => line_bytes(16),
    ];
    let value = prop_oneof![
        4 => prop::sample::select(vec![
            "chunked", "gzip, chunked", "chunked, chunked", "chunked, gzip", "identity", "0", "1", "-1", "5",
            "+5", "18446744073709551616", "1,1", "1, 2", " 3 ", "100-continue", "upgrade", "close",
            "keep-alive", "websocket", "h2c", "127.0.0.1", "api.example.com:443", "", "dGhlIHNhbXBsZSBub25jZQ==",
            "13", "a=b; c", "multipart/form-data; boundary=x",
        ])
        .prop_map(|value| value.as_bytes().to_vec()),
        2 => line_bytes(40),
        // A value that breaks the line structure.
        1 => proptest::collection::vec(any::<u8>(), 0..20),
    ];
    (name, value)
}

fn head() -> impl Strategy<Value = Head> {
    let method = prop_oneof![
        4 => prop::sample::select(vec![
            "GET", "POST", "PUT", "HEAD", "OPTIONS", "CONNECT", "DELETE", "PATCH", "TRACE", "PRI", "get", "PROPFIND",
        ])
        .prop_map(|method| method.as_bytes().to_vec()),
        2 => "[!#$%&'*+.^_`|~0-9A-Za-z-]{1,12}".prop_map(String::into_bytes),
        1 => line_bytes(12),
    ];
    let version = prop::sample::select(vec![
        "HTTP/1.1",
        "HTTP/1.1",
        "HTTP/1.1",
        "HTTP/1.0",
        "HTTP/2.0",
        "HTTP/0.9",
        "HTTP/1.1x",
        "http/1.1",
        "",
        "HTTP/1.1 extra",
        "HTTP/3",
    ]);
    let body = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..64),
        prop::sample::select(vec![
            "0\r\n\r\n",
            "5\r\nhello\r\n0\r\n\r\n",
            "ffffffffffffffffff\r\n",
            "zz\r\n",
            "3\r\nab",
            "5;ext=1\r\nhello\r\n0\r\nx-trailer: 1\r\n\r\n",
            "-1\r\n",
            "GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        ])
        .prop_map(|body| body.as_bytes().to_vec()),
    ];
    let eol = prop::sample::select(vec!["\r\n", "\r\n", "\r\n", "\n"]);
    let truncate = prop_oneof![3 => Just(None), 1 => (0.0..1.0f64).prop_map(Some)];
    let anything = (
        method,
        target(),
        version,
        proptest::collection::vec(header(), 0..8),
        eol,
        body.clone(),
        truncate,
    )
        .prop_map(
            |(method, target, version, headers, eol, body, truncate)| Head {
                method,
                target,
                version,
                headers,
                eol,
                body,
                truncate,
            },
        );
    // A valid request with a few hostile headers (framing among them):
    // these reach the engine and its handlers.
    let nearly_valid = (
        prop::sample::select(vec!["GET", "POST"]),
        prop::sample::select(vec![
            "/ok",
            "/ok?x=%zz&&=",
            "http://api.example.com/ok",
            "/echo",
            "/ok#f",
            "/%6Fk",
        ]),
        proptest::collection::vec(header(), 0..3),
        body,
    )
        .prop_map(|(method, target, extra, body)| Head {
            method: method.as_bytes().to_vec(),
            target: target.as_bytes().to_vec(),
            version: "HTTP/1.1",
            headers: [(b"Host".to_vec(), b"127.0.0.1".to_vec())]
                .into_iter()
                .chain(extra)
                .collect(),
            eol: "\r\n",
            body,
            truncate: None,
        });
    prop_oneof![anything, nearly_valid]
}

#[test]
fn request_heads_through_the_listener_end_and_the_listener_keeps_serving() {
    let server = listening([
        mhttp::get("/ok", |_| HttpResponse::text("ok")),
        mhttp::post("/echo", |args| HttpResponse::bytes(args.request.bytes())),
        mhttp::get("http://api.example.com/ok", |_| HttpResponse::text("ok")),
    ]);
    let address = address(&server);
    let reached = Reached::default();
    check("request_heads", 1024, head(), |head| {
        let bytes = head.bytes();
        runtime().block_on(async {
            let ended = exchange(address, &bytes, true).await;
            // The client has sent everything and half-closed: the listener
            // must end the connection, whatever it made of the bytes.
            prop_assert!(
                !matches!(ended, Ended::StillOpen(_)),
                "the listener neither answered nor closed: {:?}",
                ended
            );
            // Whatever it answered is HTTP/1.x (a prior-knowledge HTTP/2
            // preface aside).
            let received = ended.received();
            reached.note(match status_of(received) {
                Some(200..=299) => "2xx",
                Some(_) => "other status",
                None if received.is_empty() => "closed without an answer",
                None => "other bytes",
            });
            if !received.is_empty() && !bytes.starts_with(b"PRI") {
                prop_assert!(
                    status_of(received).is_some(),
                    "not an HTTP/1.x answer: {:?}",
                    String::from_utf8_lossy(&received[..received.len().min(200)])
                );
            }
            assert_healthy(address).await?;
            assert_no_listener_panics()
        })
    });
    reached.assert(
        "request_heads",
        &["2xx", "other status", "closed without an answer"],
    );
}

// ---------------------------------------------------------------------------
// 2. path patterns

fn pattern() -> impl Strategy<Value = String> {
    let lead = prop::sample::select(vec![
        "/",
        "/",
        "*",
        "http://",
        "https://",
        "*://",
        "http://*.",
        "https://[::1]:",
        "ws://",
        "",
        "https://api.example.com",
        "http://:id.example.com",
        "https://*:*",
        "mailto:",
        "a:",
    ]);
    let piece = prop::sample::select(vec![
        ":id",
        ":id?",
        ":id*",
        ":id+",
        ":a(\\d+)",
        "(",
        ")",
        "(.*)",
        "*",
        "**",
        "?",
        "+",
        "{",
        "}",
        "\\",
        "/",
        "//",
        ".",
        "\u{e9}",
        "\u{1F600}",
        "%",
        "%2F",
        ":",
        "::",
        "[",
        "]",
        "#",
        "?q=1",
        "a",
        "users",
        "-",
        "_",
        ":1",
        ":_x",
        "{a}",
        "\\:",
        "(?<n>x)",
        "(a|b)",
        "[a-",
        "$",
        "^",
        "(?",
        "(\\",
        "\u{0}",
        " ",
        "\t",
        ":\u{e9}",
        "(?i)",
        "(()",
        "([)",
        "\\(",
        ":id(",
        ":id)",
    ]);
    prop_oneof![
        3 => (lead, proptest::collection::vec(piece, 0..10)).prop_map(|(lead, pieces)| format!("{lead}{}", pieces.concat())),
        1 => "\\PC{0,30}",
        1 => ".{0,30}",
    ]
}

fn request_url() -> impl Strategy<Value = String> {
    let origin = prop::sample::select(vec![
        "http://127.0.0.1:1",
        "https://api.example.com",
        "http://api.example.com",
        "http://[::1]:8080",
        "https://xn--e1afmkfd.example",
        "ws://a.b",
    ]);
    let path = proptest::collection::vec(
        prop::sample::select(vec![
            "/",
            "users",
            "1",
            "%2F",
            "%e9",
            "\u{e9}",
            "..",
            ".",
            "a b",
            "%",
            "?",
            "?q=1&q=2",
            "#f",
            ";p",
            "*",
            ":id",
            "(",
            ")",
            "+",
            "~",
            "x".repeat(40).leak(),
        ]),
        0..10,
    );
    (origin, path).prop_map(|(origin, path)| format!("{origin}/{}", path.concat()))
}

#[test]
fn any_pattern_compiles_or_says_where_it_is_wrong_and_never_panics_when_matched() {
    let server = listening([]);
    let base = server.url();
    let strategy = (pattern(), proptest::collection::vec(request_url(), 1..4));
    let reached = Reached::default();
    check("path_patterns", 4096, strategy, |(pattern, urls)| {
        match mhttp::try_get(pattern.as_str(), |_| HttpResponse::text("hit")) {
            Err(error) => {
                reached.note("rejected");
                let length = pattern.chars().count();
                prop_assert_eq!(&error.pattern, &pattern);
                prop_assert!(
                    error.position <= length,
                    "position {} outside the pattern of {} characters: {}",
                    error.position,
                    length,
                    error
                );
                prop_assert!(!error.reason.is_empty());
                let message = error.to_string();
                let expected = format!("at position {}", error.position);
                prop_assert!(message.contains(&expected), "{}", message);
            }
            Ok(handler) => {
                reached.note("compiled");
                server.reset_handlers_to([handler]);
                // The pattern itself as a URL (when it is one), then the rest.
                let own = base.join(&pattern).ok();
                for url in own
                    .into_iter()
                    .chain(urls.iter().filter_map(|url| url.parse().ok()))
                {
                    let outcome = runtime().block_on(async {
                        let what = format!("{pattern:?} against {url}");
                        let outcome =
                            server.handle(Request::new(Method::GET, url), Some(base.clone()));
                        match tokio::time::timeout(DEADLINE, outcome).await {
                            Ok(outcome) => Ok(outcome),
                            Err(_) => Err(TestCaseError::fail(format!("{what}: no outcome"))),
                        }
                    })?;
                    match outcome {
                        Outcome::Mocked(response) => {
                            reached.note("matched");
                            prop_assert_eq!(response.status().as_u16(), 200)
                        }
                        Outcome::NetworkError(error) => {
                            prop_assert_eq!(
                                error.kind(),
                                mocklib::front_door::NetworkErrorKind::Unhandled
                            )
                        }
                        other => prop_assert!(false, "unexpected outcome {:?}", other),
                    }
                }
            }
        }
        Ok(())
    });
    reached.assert("path_patterns", &["rejected", "compiled", "matched"]);
}

// ---------------------------------------------------------------------------
// 3. form and multipart bodies

#[derive(Debug, Clone)]
struct Part {
    name: Option<String>,
    filename: Option<String>,
    content_type: Option<String>,
    data: Vec<u8>,
}

fn part() -> impl Strategy<Value = Part> {
    let text = || {
        prop_oneof![
            "\\PC{0,8}",
            prop::sample::select(vec!["", "a;b", "x\"y", "%22", "\\", "a=b"])
                .prop_map(String::from)
        ]
    };
    (
        proptest::option::weighted(0.9, text()),
        proptest::option::of(text()),
        proptest::option::of(prop::sample::select(vec![
            "text/plain",
            "",
            "application/json; charset=utf-8",
        ])),
        proptest::collection::vec(any::<u8>(), 0..24),
    )
        .prop_map(|(name, filename, content_type, data)| Part {
            name,
            filename,
            content_type: content_type.map(String::from),
            data,
        })
}

#[derive(Debug, Clone)]
enum Mutation {
    None,
    Truncate(f64),
    Insert(f64, Vec<u8>),
    Flip(f64, u8),
}

fn multipart_body(boundary: &str, parts: &[Part], close: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for part in parts {
        out.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data").as_bytes());
        if let Some(name) = &part.name {
            out.extend_from_slice(format!("; name=\"{name}\"").as_bytes());
        }
        if let Some(filename) = &part.filename {
            out.extend_from_slice(format!("; filename=\"{filename}\"").as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        if let Some(content_type) = &part.content_type {
            out.extend_from_slice(format!("Content-Type: {content_type}\r\n").as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&part.data);
        out.extend_from_slice(b"\r\n");
    }
    if close {
        out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    }
    out
}

fn form_case() -> impl Strategy<Value = (String, Vec<u8>)> {
    let boundary = prop_oneof![
        3 => "[A-Za-z0-9'()+_,./:=?-]{1,70}",
        1 => "\\PC{0,20}",
        1 => prop::sample::select(vec!["", " ", "\"", "--", "a b", "\u{e9}"]).prop_map(String::from),
    ];
    let content_type = prop::sample::select(vec![
        "multipart/form-data; boundary={}",
        "multipart/form-data; boundary=\"{}\"",
        "Multipart/Form-Data;boundary={};charset=utf-8",
        "multipart/form-data; charset=utf-8; boundary={}",
        "multipart/form-data",
        "multipart/form-data; boundary=",
        "multipart/form-data; boundary",
        "multipart/form-data; boundary=\"{}",
        "application/x-www-form-urlencoded",
        "application/x-www-form-urlencoded; charset=utf-8",
        "text/plain",
        "",
        ";",
        "multipart/form-data;;;=;boundary={}",
    ]);
    let mutation = prop_oneof![
        3 => Just(Mutation::None),
        1 => (0.0..1.0f64).prop_map(Mutation::Truncate),
        1 => (0.0..1.0f64, proptest::collection::vec(any::<u8>(), 1..8)).prop_map(|(at, bytes)| Mutation::Insert(at, bytes)),
        1 => (0.0..1.0f64, any::<u8>()).prop_map(|(at, byte)| Mutation::Flip(at, byte)),
    ];
    let body_kind = prop_oneof![
        3 => (proptest::collection::vec(part(), 0..4), any::<bool>(), mutation).prop_map(|(parts, close, mutation)| (Some((parts, close, mutation)), Vec::new())),
        1 => proptest::collection::vec(any::<u8>(), 0..128).prop_map(|bytes| (None, bytes)),
        1 => odd_text().prop_map(|bytes| (None, bytes)),
    ];
    (boundary, content_type, body_kind).prop_map(|(boundary, content_type, (structured, raw))| {
        let body = match structured {
            None => raw,
            Some((parts, close, mutation)) => {
                let mut body = multipart_body(&boundary, &parts, close);
                let at = |fraction: f64, len: usize| ((len as f64) * fraction) as usize;
                match mutation {
                    Mutation::None => {}
                    Mutation::Truncate(fraction) => body.truncate(at(fraction, body.len())),
                    Mutation::Insert(fraction, bytes) => {
                        let index = at(fraction, body.len());
                        body.splice(index..index, bytes);
                    }
                    Mutation::Flip(fraction, byte) => {
                        if !body.is_empty() {
                            let index = at(fraction, body.len() - 1);
                            body[index] = byte;
                        }
                    }
                }
                body
            }
        };
        (content_type.replace("{}", &boundary), body)
    })
}

#[test]
fn any_form_or_multipart_body_parses_or_is_a_form_error() {
    let reached = Reached::default();
    check("form_bodies", 4096, form_case(), |(content_type, body)| {
        // Straight to the parser, with any text as the content type…
        let direct = FormData::parse(&content_type, &body);
        reached.note(match &direct {
            Ok(form) if form.is_empty() => "parsed, empty",
            Ok(_) => "parsed",
            Err(FormError::Malformed(_)) => "malformed",
            Err(_) => "other error",
        });
        if let Err(error) = &direct {
            prop_assert!(!error.to_string().is_empty());
            if let FormError::UnsupportedContentType(named) = error {
                prop_assert_eq!(named, &content_type, "the error names the content type");
            }
        }
        // …and through a request, as a resolver reads it.
        if let Ok(value) = HeaderValue::from_str(&content_type) {
            let mut headers = HeaderMap::new();
            headers.insert("content-type", value);
            let request = Request::from_parts(
                Method::POST,
                url("http://127.0.0.1/form"),
                headers,
                Bytes::from(body),
            );
            let through = request.form();
            prop_assert_eq!(
                through.is_ok(),
                direct.is_ok(),
                "{:?} vs {:?}",
                through,
                direct
            );
        }
        Ok(())
    });
    reached.assert("form_bodies", &["parsed", "malformed", "other error"]);
}

#[test]
fn well_formed_multipart_and_urlencoded_bodies_round_trip() {
    let field = (
        "[a-zA-Z0-9_ .-]{1,10}",
        prop_oneof![
            "\\PC{0,20}".prop_map(|text| (text, None)),
            (
                "[a-z0-9.]{1,10}",
                proptest::collection::vec(any::<u8>(), 0..32)
            )
                .prop_map(|(file, data)| (file, Some(data))),
        ],
    );
    let strategy = (
        "[A-Za-z0-9'()+_,./:=?-]{1,69}[A-Za-z0-9'()+_,./:=?]",
        proptest::collection::vec(field, 0..5),
    );
    check("form_round_trip", 1024, strategy, |(boundary, fields)| {
        let mut expected = FormData::new();
        let mut parts = Vec::new();
        for (name, (value, data)) in &fields {
            match data {
                None => {
                    expected = expected.text(name, value);
                    parts.push(Part {
                        name: Some(name.clone()),
                        filename: None,
                        content_type: None,
                        data: value.clone().into_bytes(),
                    });
                }
                Some(data) => {
                    expected = expected.file(name, value, "application/octet-stream", data.clone());
                    parts.push(Part {
                        name: Some(name.clone()),
                        filename: Some(value.clone()),
                        content_type: Some("application/octet-stream".to_owned()),
                        data: data.clone(),
                    });
                }
            }
        }
        let delimiter = format!("\r\n--{boundary}");
        if parts.iter().any(|part| {
            part.data
                .windows(delimiter.len())
                .any(|w| w == delimiter.as_bytes())
        }) {
            return Ok(()); // a file that contains the delimiter cannot be sent
        }
        let body = multipart_body(&boundary, &parts, true);
        let parsed = FormData::parse(
            &format!("multipart/form-data; boundary=\"{boundary}\""),
            &body,
        );
        prop_assert_eq!(parsed, Ok(expected));

        let pairs: Vec<(&String, String)> = fields
            .iter()
            .map(|(name, (value, _))| (name, value.clone()))
            .collect();
        let encoded = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs.iter().map(|(n, v)| (n.as_str(), v.as_str())))
            .finish();
        let parsed =
            FormData::parse("application/x-www-form-urlencoded", encoded.as_bytes()).unwrap();
        let mut expected = FormData::new();
        for (name, value) in &pairs {
            expected = expected.text(name.as_str(), value.as_str());
        }
        prop_assert_eq!(parsed, expected);
        Ok(())
    });
}

// ---------------------------------------------------------------------------
// 4. GraphQL requests

fn graphql_text() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "query",
        "mutation",
        "subscription",
        "fragment",
        "on",
        "GetUser",
        "Save",
        "{",
        "}",
        "(",
        ")",
        "[",
        "]",
        "$id",
        ":",
        "!",
        "@include",
        "...",
        ",",
        "=",
        "\"s\"",
        "\"\"\"block\"\"\"",
        "\"unclosed",
        "#c\n",
        "1",
        "-1.5e3",
        "ID",
        "user",
        "name",
        " ",
        "\n",
        "\u{e9}",
        "\\",
        "$",
        "@",
        "|",
        "&",
        "\u{feff}",
        "\u{0}",
    ]);
    prop_oneof![
        4 => proptest::collection::vec(token, 0..24).prop_map(|tokens| tokens.concat()),
        1 => "\\PC{0,40}",
        1 => (1usize..400).prop_map(|depth| format!("query GetUser {}{}", "{ a ".repeat(depth), "}".repeat(depth))),
        1 => (1usize..400).prop_map(|depth| format!("query GetUser($id: {}ID{}) {{ user }}", "[".repeat(depth), "]".repeat(depth))),
    ]
}

fn graphql_body() -> impl Strategy<Value = (bool, Vec<u8>)> {
    let operation = (
        graphql_text(),
        proptest::option::of(json_value()),
        proptest::option::of(json_value()),
    )
        .prop_map(|(query, variables, name)| {
            let mut body = json!({ "query": query });
            if let Some(variables) = variables {
                body["variables"] = variables;
            }
            if let Some(name) = name {
                body["operationName"] = name;
            }
            body
        })
        .boxed();
    let valid =
        proptest::collection::vec(("\\PC{0,6}", json_value()), 0..4).prop_map(|variables| {
            json!({
                "query": "query GetUser($id: ID) { user(id: $id) { name } }",
                "variables": Value::Object(variables.into_iter().collect()),
            })
        });
    prop_oneof![
        2 => valid.prop_map(|body| (true, body.to_string().into_bytes())),
        4 => operation.clone().prop_map(|body| (false, body.to_string().into_bytes())),
        2 => proptest::collection::vec(operation, 0..4).prop_map(|batch| (false, Value::Array(batch).to_string().into_bytes())),
        1 => json_value().prop_map(|body| (false, body.to_string().into_bytes())),
        1 => proptest::collection::vec(any::<u8>(), 0..64).prop_map(|bytes| (false, bytes)),
    ]
}

#[test]
fn any_graphql_request_is_answered() {
    let server = listening([
        graphql::query("GetUser", |args| {
            graphql::data(json!({ "user": { "name": "John", "vars": args.variables } }))
        }),
        graphql::mutation("Save", |_| graphql::data(json!({ "save": true }))),
        mhttp::all("*", |_| HttpResponse::text("no handler").status(404)),
    ]);
    let content_type = prop::sample::select(vec![
        "application/json",
        "application/graphql-response+json",
        "text/plain",
        "",
    ]);
    let reached = Reached::default();
    check(
        "graphql_requests",
        2048,
        (graphql_body(), content_type),
        |((valid, body), content_type)| {
            let mut headers = HeaderMap::new();
            if !content_type.is_empty() {
                headers.insert("content-type", HeaderValue::from_static(content_type));
            }
            let request = Request::from_parts(
                Method::POST,
                url("http://api.example.com/graphql"),
                headers,
                Bytes::from(body),
            );
            match resolve(&server, request)? {
                Resolved::Mocked(status, body) => {
                    let body = body.map_err(TestCaseError::fail)?;
                    reached.note(match status {
                        200 => "200",
                        404 => "404 from the fallback",
                        _ => "other status",
                    });
                    if valid && content_type == "application/json" {
                        prop_assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
                        let answer: Value = serde_json::from_slice(&body).unwrap();
                        prop_assert_eq!(&answer["data"]["user"]["name"], "John");
                    }
                }
                other => prop_assert!(false, "no answer: {:?}", other),
            }
            Ok(())
        },
    );
    reached.assert("graphql_requests", &["200", "404 from the fallback"]);
}

// ---------------------------------------------------------------------------
// 5. HAR files and OpenAPI documents

fn har_entry() -> impl Strategy<Value = Value> {
    let method = prop_oneof![
        4 => prop::sample::select(vec!["GET", "POST", "get", "", "G ET", "CONNECT", "PROPFIND", "\u{e9}", "GET\n"]).prop_map(String::from),
        1 => "\\PC{0,6}",
    ];
    let request_url = prop_oneof![
        3 => prop::sample::select(vec![
            "https://api.example.com/users?x=1", "http://[::1]:8080/a", "not a url", "", "/relative",
            "https://api.example.com/%zz", "data:text/plain,hi", "file:///etc/passwd", "http://a/b#frag",
            "https://api.example.com:0/", "https://api.example.com/users?x=1&x=2&y", "https://user:pw@h/p",
        ])
        .prop_map(String::from),
        1 => "\\PC{0,30}",
    ];
    let name_value = || {
        proptest::collection::vec(
            (
                prop_oneof![
                    prop::sample::select(vec![
                        "content-type",
                        "set-cookie",
                        "content-length",
                        "transfer-encoding",
                        ":status",
                        "x-a"
                    ])
                    .prop_map(String::from),
                    "\\PC{0,8}",
                ],
                "\\PC{0,16}",
            ),
            0..4,
        )
        .prop_map(|pairs| {
            Value::Array(
                pairs
                    .into_iter()
                    .map(|(name, value)| json!({ "name": name, "value": value }))
                    .collect(),
            )
        })
    };
    let encoding = proptest::option::of(prop::sample::select(vec!["base64", "BASE64", "gzip", ""]));
    let body_text = prop_oneof![
        "\\PC{0,24}",
        prop::sample::select(vec!["aGk=", "aGk", "!!!!", "====", "a===", ""])
            .prop_map(String::from)
    ];
    let status = prop_oneof![4 => Just(200u16), 2 => any::<u16>(), 1 => prop::sample::select(vec![0u16, 99, 100, 101, 204, 304, 599, 600, 999, 1000])];
    (
        method,
        request_url,
        name_value(),
        proptest::option::of((body_text.clone(), encoding.clone())),
        status,
        name_value(),
        proptest::option::of((body_text, encoding)),
        proptest::option::of(prop::sample::select(vec!["HTTP/1.1", "HTTP/2", "h3", ""])),
    )
        .prop_map(|(method, url, headers, post, status, response_headers, content, version)| {
            let mut entry = json!({
                "request": { "method": method, "url": url, "headers": headers },
                "response": { "status": status, "headers": response_headers, "content": { "mimeType": "text/plain" } },
            });
            if let Some((text, encoding)) = post {
                entry["request"]["postData"] = json!({ "mimeType": "text/plain", "text": text, "encoding": encoding });
            }
            if let Some((text, encoding)) = content {
                entry["response"]["content"] = json!({ "mimeType": "text/plain", "text": text, "encoding": encoding });
            }
            if let Some(version) = version {
                entry["response"]["httpVersion"] = json!(version);
            }
            entry
        })
}

fn har_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::collection::vec(har_entry(), 0..4).prop_map(|entries| json!({ "log": { "version": "1.2", "entries": entries } }).to_string()),
        1 => json_value().prop_map(|value| json!({ "log": value }).to_string()),
        1 => json_value().prop_map(|value| value.to_string()),
        1 => "\\PC{0,80}",
    ]
}

#[test]
fn any_har_file_loads_or_is_a_har_error_and_its_handlers_answer() {
    let server = listening([]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile.har");
    let reached = Reached::default();
    check("har_files", 512, har_text(), |text| {
        std::fs::write(&path, &text).unwrap();
        let loaded = {
            let path = path.clone();
            within("har::handlers", move || {
                mocklib::har::handlers(path).map_err(|error| error.to_string())
            })?
        };
        match loaded {
            Err(message) => {
                reached.note("rejected");
                let file = path.display().to_string();
                prop_assert!(
                    message.contains(&file),
                    "the error names the file: {}",
                    message
                );
            }
            Ok(handlers) => {
                reached.note("loaded");
                server.reset_handlers_to(handlers);
                // Replay every recorded request that is one.
                let document: Value = serde_json::from_str(&text).unwrap();
                for entry in document["log"]["entries"].as_array().into_iter().flatten() {
                    let (Some(method), Some(target)) = (
                        entry["request"]["method"].as_str(),
                        entry["request"]["url"].as_str(),
                    ) else {
                        continue;
                    };
                    let (Ok(method), Ok(target)) = (
                        Method::from_bytes(method.as_bytes()),
                        target.parse::<url::Url>(),
                    ) else {
                        continue;
                    };
                    let body = entry["request"]["postData"]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    let request =
                        Request::from_parts(method, target, HeaderMap::new(), Bytes::from(body));
                    match resolve(&server, request)? {
                        Resolved::Other(other) => {
                            prop_assert!(false, "unexpected outcome {}", other)
                        }
                        Resolved::Mocked(..) => reached.note("replayed"),
                        Resolved::NetworkError(..) => reached.note("replay failed"),
                    }
                }
            }
        }
        Ok(())
    });
    reached.assert("har_files", &["rejected", "loaded", "replayed"]);
}

/// A schema that refers to components (some missing, some recursive).
fn schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        prop::sample::select(vec![
            "string", "integer", "number", "boolean", "null", "object", "array", "bogus"
        ])
        .prop_map(|t| json!({ "type": t })),
        prop::sample::select(vec![
            "#/components/schemas/A",
            "#/components/schemas/B",
            "#/components/schemas/Missing",
            "#/",
            "#",
            "",
            "#/paths",
            "other.yaml#/x",
            "#/components/schemas/A/properties/a",
            "#/components/schemas/%41",
            "#/components/schemas/~2",
        ])
        .prop_map(|target| json!({ "$ref": target })),
        json_value().prop_map(|example| json!({ "example": example })),
        json_value().prop_map(|value| json!({ "enum": value })),
        Just(json!({ "type": ["string", "null"] })),
        Just(json!({ "type": "string", "format": "date-time" })),
        Just(json!({ "type": "integer", "minimum": 10, "maximum": 1 })),
        prop::sample::select(vec![json!(5), json!(1e12), json!(-1), json!(1e300)])
            .prop_map(|min| json!({ "type": "string", "minLength": min, "maxLength": 3 })),
        prop::sample::select(vec![json!(5), json!(1e12), json!(-1)])
            .prop_map(|min| json!({ "type": "string", "minLength": min })),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(("[a-z]{1,4}", inner.clone()), 0..4)
                .prop_map(|properties| json!({ "type": "object", "properties": Value::Object(properties.into_iter().collect()), "required": ["a"] })),
            (inner.clone(), prop::sample::select(vec![json!(3), json!(1e9), json!(1e15), json!(-1), json!(0.5), json!("3")]))
                .prop_map(|(items, min)| json!({ "type": "array", "items": items, "minItems": min })),
            proptest::collection::vec(inner.clone(), 0..3).prop_map(|all| json!({ "allOf": all })),
            proptest::collection::vec(inner, 0..3).prop_map(|one| json!({ "oneOf": one })),
        ]
    })
}

/// `depth` schemas each with `width` properties referring to the next: a
/// document of a few hundred bytes whose examples, generated naively, have
/// `width ^ depth` values.
fn wide_chain(depth: usize, width: usize) -> Value {
    let mut schemas = serde_json::Map::new();
    for level in 0..depth {
        let properties: serde_json::Map<String, Value> = (0..width)
            .map(|i| {
                (
                    format!("p{i}"),
                    json!({ "$ref": format!("#/components/schemas/S{}", level + 1) }),
                )
            })
            .collect();
        schemas.insert(
            format!("S{level}"),
            json!({ "type": "object", "properties": properties }),
        );
    }
    schemas.insert(format!("S{depth}"), json!({ "type": "string" }));
    json!({
        "openapi": "3.0.3",
        "info": { "title": "wide", "version": "1" },
        "paths": { "/wide": { "get": { "responses": { "200": {
            "description": "ok",
            "content": { "application/json": { "schema": { "$ref": "#/components/schemas/S0" } } }
        } } } } },
        "components": { "schemas": schemas },
    })
}

fn openapi_document() -> impl Strategy<Value = Value> {
    let version = prop::sample::select(vec!["3.0.3", "3.1.0", "3.1.1", "2.0", "x", ""]);
    let server = prop_oneof![
        prop::sample::select(vec![
            "https://api.example.com/v1",
            "/api",
            "",
            "not a url",
            "http://{host}/v1",
            "https://api.example.com/v1/",
            "//x"
        ])
        .prop_map(String::from),
        "\\PC{0,20}",
    ];
    let path = prop_oneof![
        prop::sample::select(vec![
            "/pets",
            "/pets/{petId}",
            "/pets/{petId",
            "/{a}/{a}",
            "pets",
            "/",
            "",
            "/{}",
            "/x:y",
            "/a*"
        ])
        .prop_map(String::from),
        pattern(),
    ];
    let parameter = (
        "[a-zA-Z]{0,5}",
        prop::sample::select(vec!["path", "query", "header", "cookie", "body", ""]),
        any::<bool>(),
        schema(),
    )
        .prop_map(|(name, place, required, schema)| json!({ "name": name, "in": place, "required": required, "schema": schema }));
    let response = (
        schema(),
        proptest::option::of(json_value()),
        prop::sample::select(vec![
            "application/json",
            "text/plain",
            "application/xml",
            "*/*",
            "",
        ]),
    )
        .prop_map(|(schema, example, media)| {
            let mut content = json!({ "schema": schema });
            if let Some(example) = example {
                content["example"] = example;
            }
            json!({ "description": "r", "content": { media: content } })
        });
    let operation = (
        proptest::collection::vec(parameter, 0..3),
        proptest::collection::vec((prop::sample::select(vec!["200", "201", "404", "default", "2XX", "abc", "99"]), response), 0..3),
        proptest::option::of(schema()),
    )
        .prop_map(|(parameters, responses, body)| {
            let mut operation = json!({
                "parameters": parameters,
                "responses": Value::Object(responses.into_iter().map(|(code, response)| (code.to_owned(), response)).collect()),
            });
            if let Some(body) = body {
                operation["requestBody"] = json!({ "content": { "application/json": { "schema": body } } });
            }
            operation
        });
    let method = prop::sample::select(vec![
        "get",
        "post",
        "put",
        "delete",
        "patch",
        "head",
        "options",
        "trace",
        "GET",
        "x-other",
        "parameters",
    ]);
    let structured = (
        version,
        proptest::collection::vec(server, 0..2),
        proptest::collection::vec((path, proptest::collection::vec((method, operation), 1..3)), 0..4),
        proptest::collection::vec((prop::sample::select(vec!["A", "B", "C"]), schema()), 0..3),
    )
        .prop_map(|(version, servers, paths, schemas)| {
            let paths: serde_json::Map<String, Value> = paths
                .into_iter()
                .map(|(path, operations)| {
                    let item: serde_json::Map<String, Value> = operations.into_iter().map(|(m, o)| (m.to_owned(), o)).collect();
                    (path, Value::Object(item))
                })
                .collect();
            json!({
                "openapi": version,
                "info": { "title": "hostile", "version": "1" },
                "servers": servers.into_iter().map(|url| json!({ "url": url })).collect::<Vec<_>>(),
                "paths": paths,
                "components": { "schemas": Value::Object(schemas.into_iter().map(|(n, s)| (n.to_owned(), s)).collect()) },
            })
        });
    prop_oneof![
        6 => structured,
        1 => (2usize..14, 1usize..7).prop_map(|(depth, width)| wide_chain(depth, width)),
        1 => json_value(),
    ]
}

/// How an OpenAPI text is given: JSON, or the same as YAML text (JSON is
/// YAML), or as raw text to either reader.
#[derive(Debug, Clone)]
enum OpenApiText {
    Json(String),
    Yaml(String),
}

fn openapi_text() -> impl Strategy<Value = OpenApiText> {
    prop_oneof![
        4 => openapi_document().prop_map(|document| OpenApiText::Json(document.to_string())),
        2 => openapi_document().prop_map(|document| OpenApiText::Yaml(serde_json::to_string_pretty(&document).unwrap())),
        1 => "\\PC{0,80}".prop_map(OpenApiText::Yaml),
        1 => prop::sample::select(vec![
            "a: &a [*a]", "a: &a\n  b: *a", "- &x [*x, *x]", "{", "openapi: 3.0.0\npaths: !!binary aGk=", "? [a]\n: b",
            "openapi: 3.0.0\npaths:\n  /x:\n    get:\n      responses:\n        '200': &r\n          description: *r",
            "%YAML 9.9\n---\na: 1", "a: !custom 1", "\u{feff}openapi: 3.0.0",
        ])
        .prop_map(|text| OpenApiText::Yaml(text.to_owned())),
        1 => "\\PC{0,80}".prop_map(OpenApiText::Json),
    ]
}

#[test]
fn any_openapi_document_loads_or_is_an_openapi_error_and_its_handlers_answer() {
    let server = listening([]);
    let reached = Reached::default();
    check("openapi_documents", 256, openapi_text(), |text| {
        let loaded = within("OpenApi::handlers", {
            let text = text.clone();
            move || {
                let document = match &text {
                    OpenApiText::Json(text) => mocklib::openapi::OpenApi::from_json(text),
                    OpenApiText::Yaml(text) => mocklib::openapi::OpenApi::from_yaml(text),
                };
                let document = document.map_err(|error| error.to_string())?;
                let handlers = document.handlers().map_err(|error| error.to_string())?;
                Ok::<_, String>((document.server_url(), handlers))
            }
        })?;
        match loaded {
            Err(message) => {
                reached.note("rejected");
                prop_assert!(
                    message.contains("the OpenAPI text"),
                    "the error names its source: {}",
                    message
                )
            }
            Ok((server_url, handlers)) => {
                reached.note("loaded");
                server.reset_handlers_to(handlers);
                // One request per operation of the document, on its path.
                let document: Value = match &text {
                    OpenApiText::Json(text) | OpenApiText::Yaml(text) => {
                        serde_json::from_str(text).unwrap_or_default()
                    }
                };
                let base = if server_url.starts_with("http") {
                    server_url
                } else {
                    format!("http://127.0.0.1{server_url}")
                };
                for (path, item) in document["paths"].as_object().into_iter().flatten() {
                    for method in item
                        .as_object()
                        .into_iter()
                        .flatten()
                        .map(|(method, _)| method)
                    {
                        let Ok(method) = Method::from_bytes(method.to_ascii_uppercase().as_bytes())
                        else {
                            continue;
                        };
                        let path = path.replace(['{', '}'], "");
                        let Ok(target) = format!("{base}{path}").parse::<url::Url>() else {
                            continue;
                        };
                        match resolve(&server, Request::new(method, target))? {
                            Resolved::Other(other) => {
                                prop_assert!(false, "unexpected outcome {}", other)
                            }
                            Resolved::Mocked(..) => reached.note("answered"),
                            Resolved::NetworkError(
                                mocklib::front_door::NetworkErrorKind::Unhandled,
                                _,
                            ) => reached.note("unhandled"),
                            Resolved::NetworkError(_, message) => {
                                prop_assert!(false, "{}", message)
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    });
    reached.assert("openapi_documents", &["rejected", "loaded", "answered"]);
}

// ---------------------------------------------------------------------------
// 6. WebSocket frames

#[derive(Debug, Clone)]
struct Frame {
    fin: bool,
    rsv: u8,
    opcode: u8,
    masked: bool,
    /// Claim this length instead of the payload's.
    claimed: Option<u64>,
    /// 0: shortest length encoding, 1: 16-bit, 2: 64-bit.
    form: u8,
    mask: [u8; 4],
    payload: Vec<u8>,
}

impl Frame {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(u8::from(self.fin) << 7 | (self.rsv & 7) << 4 | (self.opcode & 15));
        let length = self.claimed.unwrap_or(self.payload.len() as u64);
        let mask_bit = u8::from(self.masked) << 7;
        match self.form {
            0 if length < 126 => out.push(mask_bit | length as u8),
            0 | 1 if length <= u64::from(u16::MAX) => {
                out.push(mask_bit | 126);
                out.extend_from_slice(&(length as u16).to_be_bytes());
            }
            _ => {
                out.push(mask_bit | 127);
                out.extend_from_slice(&length.to_be_bytes());
            }
        }
        if self.masked {
            out.extend_from_slice(&self.mask);
            out.extend(
                self.payload
                    .iter()
                    .enumerate()
                    .map(|(i, byte)| byte ^ self.mask[i % 4]),
            );
        } else {
            out.extend_from_slice(&self.payload);
        }
    }
}

fn frame() -> impl Strategy<Value = Frame> {
    let close_payload = prop_oneof![
        (
            prop_oneof![
                prop::sample::select(vec![
                    0u16, 999, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1011, 1012, 1014,
                    1015, 1016, 2999, 3000, 4999, 5000, 65535
                ]),
                any::<u16>(),
            ],
            prop_oneof![
                "\\PC{0,20}".prop_map(String::into_bytes),
                proptest::collection::vec(any::<u8>(), 0..20),
                Just(vec![b'x'; 124]),
            ],
        )
            .prop_map(|(code, reason)| [&code.to_be_bytes()[..], &reason].concat()),
        proptest::collection::vec(any::<u8>(), 0..2),
    ];
    let payload = prop_oneof![
        3 => proptest::collection::vec(any::<u8>(), 0..64),
        1 => "\\PC{0,32}".prop_map(String::into_bytes),
        1 => (126usize..70_000).prop_map(|len| vec![b'a'; len]),
    ];
    let opcode = prop_oneof![4 => prop::sample::select(vec![0u8, 1, 2, 8, 9, 10]), 1 => 0u8..16];
    let claimed = prop_oneof![
        6 => Just(None),
        1 => prop::sample::select(vec![0u64, 1, 125, 126, 65_535, 65_536, 16 << 20, (16 << 20) + 1, 1 << 32, (1 << 63) - 1, 1 << 63, u64::MAX]).prop_map(Some),
    ];
    (
        prop_oneof![3 => Just(true), 1 => Just(false)],
        prop_oneof![4 => Just(0u8), 1 => 0u8..8],
        opcode,
        prop_oneof![6 => Just(true), 1 => Just(false)],
        claimed,
        0u8..3,
        any::<[u8; 4]>(),
        payload,
        close_payload,
    )
        .prop_map(
            |(fin, rsv, opcode, masked, claimed, form, mask, payload, close)| Frame {
                fin,
                rsv,
                opcode,
                masked,
                claimed,
                form,
                mask,
                payload: if opcode == 8 { close } else { payload },
            },
        )
}

async fn ws_handshake(address: std::net::SocketAddr) -> Result<TcpStream, TestCaseError> {
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream
        .write_all(
            b"GET /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
              Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        )
        .await
        .unwrap();
    // Read the 101 head byte by byte, so no frame after it is swallowed.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let read = tokio::time::timeout(DEADLINE, stream.read(&mut byte)).await;
        match read {
            Ok(Ok(1)) => head.push(byte[0]),
            other => {
                return Err(TestCaseError::fail(format!(
                    "the handshake did not complete: {other:?} after {head:?}"
                )));
            }
        }
    }
    prop_assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    Ok(stream)
}

#[test]
fn any_websocket_frames_end_the_connection_and_the_listener_keeps_serving() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message as Wire;

    let echo = ws::link("/echo");
    let server = listening([echo.on_connection(|connection| async move {
        while let Some(message) = connection.client.recv().await {
            connection.client.send(message);
        }
    })]);
    let address = address(&server);
    let ws_url = format!("ws://{address}/echo");
    let strategy = (
        proptest::collection::vec(frame(), 1..5),
        proptest::collection::vec(any::<u8>(), 0..16),
        prop_oneof![3 => Just(None), 1 => (0.0..1.0f64).prop_map(Some)],
    );
    check(
        "websocket_frames",
        512,
        strategy,
        |(frames, trailing, truncate)| {
            let mut bytes = Vec::new();
            for frame in &frames {
                frame.encode(&mut bytes);
            }
            bytes.extend_from_slice(&trailing);
            if let Some(fraction) = truncate {
                bytes.truncate((bytes.len() as f64 * fraction) as usize);
            }
            runtime().block_on(async {
                let mut stream = ws_handshake(address).await?;
                let _ = tokio::time::timeout(DEADLINE, async {
                    stream.write_all(&bytes).await?;
                    stream.shutdown().await
                })
                .await;
                // Everything sent and half-closed: the server must end the
                // connection (after a close frame or not).
                let ended = read_until_closed(&mut stream, DEADLINE).await;
                prop_assert!(
                    !matches!(ended, Ended::StillOpen(_)),
                    "the connection stayed open: {:?}",
                    ended
                );
                // A new client is served.
                let (mut socket, _) = tokio::time::timeout(
                    DEADLINE,
                    tokio_tungstenite::connect_async(ws_url.as_str()),
                )
                .await
                .map_err(|_| TestCaseError::fail("no handshake for the next client"))?
                .map_err(|error| {
                    TestCaseError::fail(format!("the next client was refused: {error}"))
                })?;
                socket.send(Wire::text("still here")).await.unwrap();
                let echoed = tokio::time::timeout(DEADLINE, socket.next())
                    .await
                    .map_err(|_| TestCaseError::fail("no echo for the next client"))?;
                prop_assert!(
                    matches!(&echoed, Some(Ok(Wire::Text(text))) if text.as_str() == "still here"),
                    "{:?}",
                    echoed
                );
                assert_no_listener_panics()
            })
        },
    );
}
