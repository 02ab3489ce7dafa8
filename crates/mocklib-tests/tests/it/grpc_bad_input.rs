//! Requests that are not valid calls of a gRPC method, sent over real
//! sockets to the listener (h2c on the base URL): each is answered with the
//! status a gRPC server gives it, and a message saying why. Most bodies are
//! written by hand (a tonic client cannot send them), so the calls go
//! through a plain HTTP/2 client (hyper) and read the status as a gRPC
//! client does: from the trailers, or from the headers of a trailers-only
//! answer. The last test is a tonic client through the HTTPS proxy.

use std::time::Duration;

use crate::common;
use crate::greeter::{HelloReply, HelloRequest};
use bytes::{BufMut, Bytes, BytesMut};
use http::StatusCode;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use mocklib::grpc::{self, Code, ResolverArgs, Status};
use mocklib::node::{Server, setup_server};

const SAY_HELLO: &str = "/helloworld.Greeter/SayHello";
const LOTS_OF_REPLIES: &str = "/helloworld.Greeter/LotsOfReplies";
const LOTS_OF_GREETINGS: &str = "/helloworld.Greeter/LotsOfGreetings";
const GUARD: Duration = Duration::from_secs(10);

/// gRPC's default limit on a message, which mocklib applies too.
const MAX_MESSAGE: usize = 4 * 1024 * 1024;

/// SayHello (unary), LotsOfReplies (server streaming: one request, one
/// reply per letter of the name) and LotsOfGreetings (client streaming).
fn greeter() -> Vec<mocklib::Handler> {
    vec![
        grpc::unary(
            "helloworld.Greeter/SayHello",
            |args: ResolverArgs<HelloRequest>| {
                if args.message.name.is_empty() {
                    return Err(Status::new(Code::InvalidArgument, "a name, please"));
                }
                Ok(HelloReply {
                    message: format!("Hello {}!", args.message.name),
                })
            },
        ),
        grpc::server_streaming(
            "helloworld.Greeter/LotsOfReplies",
            |args: ResolverArgs<HelloRequest>| {
                let replies: Vec<Result<HelloReply, Status>> = args
                    .message
                    .name
                    .chars()
                    .map(|letter| {
                        Ok(HelloReply {
                            message: letter.to_string(),
                        })
                    })
                    .collect();
                Ok(futures_util::stream::iter(replies))
            },
        ),
        grpc::client_streaming(
            "helloworld.Greeter/LotsOfGreetings",
            |args: ResolverArgs<grpc::Messages<HelloRequest>>| async move {
                use futures_util::StreamExt;
                let requests: Vec<Result<HelloRequest, Status>> = args.message.collect().await;
                let mut names = Vec::new();
                for request in requests {
                    names.push(request?.name);
                }
                Ok(HelloReply {
                    message: format!("Hello {}!", names.join(" and ")),
                })
            },
        ),
    ]
}

/// One length-prefixed message: the compressed flag, four bytes of length
/// (big-endian), then `message`.
fn frame(compressed: u8, message: &[u8]) -> Vec<u8> {
    let mut framed = BytesMut::with_capacity(5 + message.len());
    framed.put_u8(compressed);
    framed.put_u32(u32::try_from(message.len()).unwrap());
    framed.put_slice(message);
    framed.to_vec()
}

fn hello(name: &str) -> Vec<u8> {
    frame(
        0,
        &prost::Message::encode_to_vec(&HelloRequest { name: name.into() }),
    )
}

type H2Client = Client<HttpConnector, Full<Bytes>>;

/// A plain HTTP/2 client (prior knowledge: h2c), as a gRPC client connects.
fn h2c() -> H2Client {
    Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http()
}

/// How a call ended, as a gRPC client reads it.
#[derive(Debug)]
struct Ended {
    http: StatusCode,
    content_type: Option<String>,
    /// The status code: from the trailers, or from the headers of a
    /// trailers-only answer (no body, the status in the headers).
    code: Option<i32>,
    /// `grpc-message`, percent-decoded.
    message: String,
    /// `grpc-accept-encoding`, wherever the status was.
    accept_encoding: Option<String>,
    body: Bytes,
}

impl Ended {
    fn assert_status(&self, code: Code, says: &str) {
        assert_eq!(self.http, StatusCode::OK, "{self:?}");
        assert_eq!(self.code, Some(code.as_i32()), "{self:?}");
        assert!(
            self.message.contains(says),
            "the message says why ({says:?}): {self:?}"
        );
    }
}

/// POSTs `body` to `path` on the listener (h2c), with gRPC's headers
/// (content type `application/grpc` unless `headers` names another), and
/// reads the whole answer, trailers included. Never hangs: a call that
/// does not end within [`GUARD`] fails the test.
async fn raw_call(
    client: &H2Client,
    server: &Server,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Ended {
    let uri = format!("{}{}", server.url().as_str().trim_end_matches('/'), path);
    let mut request = http::Request::post(uri)
        .header("te", "trailers")
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    for (name, value) in headers {
        request.headers_mut().insert(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    if !request.headers().contains_key("content-type") {
        request.headers_mut().insert(
            "content-type",
            http::HeaderValue::from_static("application/grpc"),
        );
    }
    tokio::time::timeout(GUARD, async {
        let response = client.request(request).await.expect("the call is answered");
        let (parts, body) = response.into_parts();
        let collected = body.collect().await.expect("the answer's body ends");
        let trailers = collected.trailers().cloned();
        let body = collected.to_bytes();
        // Trailers-only: the status is in the headers, and there are no
        // trailers. Otherwise it is in the trailers.
        let status_in = match &trailers {
            Some(trailers) if trailers.contains_key("grpc-status") => trailers,
            _ => &parts.headers,
        };
        let text = |name: &str| {
            status_in
                .get(name)
                .map(|value| value.to_str().unwrap().to_owned())
        };
        Ended {
            http: parts.status,
            content_type: parts
                .headers
                .get("content-type")
                .map(|value| value.to_str().unwrap().to_owned()),
            code: text("grpc-status").map(|code| code.parse().unwrap()),
            message: percent_decode(&text("grpc-message").unwrap_or_default()),
            accept_encoding: text("grpc-accept-encoding"),
            body,
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the call of {path} hung (no answer within {GUARD:?})"))
}

/// `grpc-message` is percent-encoded (gRPC over HTTP/2).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                i += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(decoded).unwrap()
}

/// A valid SayHello on the same client: the bad call before it broke
/// neither the connection nor the server.
async fn still_serves(client: &H2Client, server: &Server) {
    let ended = raw_call(client, server, SAY_HELLO, &[], hello("again")).await;
    assert_eq!(ended.code, Some(0), "{ended:?}");
    let reply: HelloReply = prost::Message::decode(&ended.body[5..]).unwrap();
    assert_eq!(reply.message, "Hello again!");
}

#[tokio::test]
async fn a_frame_shorter_than_its_length_prefix_is_internal() {
    let server = setup_server(greeter());
    server.listen();
    let client = h2c();

    // The prefix promises 10 bytes; 3 follow, then the stream ends.
    let mut body = frame(0, b"0123456789");
    body.truncate(5 + 3);
    raw_call(&client, &server, SAY_HELLO, &[], body)
        .await
        .assert_status(Code::Internal, "says 10 bytes but 3 follow");

    // Not even a whole prefix.
    raw_call(&client, &server, SAY_HELLO, &[], vec![0, 0, 0])
        .await
        .assert_status(Code::Internal, "fewer than 5 bytes of prefix");

    // A good message, then a cut one: the call fails all the same.
    let mut body = hello("Kate");
    body.extend_from_slice(&frame(0, b"0123456789")[..7]);
    raw_call(&client, &server, SAY_HELLO, &[], body)
        .await
        .assert_status(Code::Internal, "says 10 bytes but 2 follow");

    still_serves(&client, &server).await;
}

#[tokio::test]
async fn a_compressed_flag_other_than_0_or_1_is_internal() {
    let server = setup_server(greeter());
    server.listen();
    let client = h2c();
    let message = prost::Message::encode_to_vec(&HelloRequest { name: "x".into() });
    for (path, flag) in [(SAY_HELLO, 2), (SAY_HELLO, 0xff), (LOTS_OF_REPLIES, 7)] {
        raw_call(&client, &server, path, &[], frame(flag, &message))
            .await
            .assert_status(
                Code::Internal,
                &format!("a message frame with compressed flag {flag}"),
            );
    }
    still_serves(&client, &server).await;
}

#[tokio::test]
async fn a_compressed_message_without_grpc_encoding_is_internal() {
    // Flag 1 says "compressed with the grpc-encoding", and there is none:
    // a protocol error, not an unsupported compression.
    let server = setup_server(greeter());
    server.listen();
    let client = h2c();
    let message = prost::Message::encode_to_vec(&HelloRequest { name: "x".into() });
    for headers in [&[][..], &[("grpc-encoding", "identity")][..]] {
        raw_call(&client, &server, SAY_HELLO, headers, frame(1, &message))
            .await
            .assert_status(Code::Internal, "a compressed message without grpc-encoding");
    }
    still_serves(&client, &server).await;
}

#[tokio::test]
async fn a_gzip_message_is_unimplemented_and_names_what_mocklib_reads() {
    let server = setup_server(greeter());
    server.listen();
    let client = h2c();
    // gzip's magic number, as a gzip-compressed message starts.
    let gzipped = frame(1, b"\x1f\x8b\x08\0\0\0\0\0\0\xff");
    for path in [SAY_HELLO, LOTS_OF_REPLIES, LOTS_OF_GREETINGS] {
        let ended = raw_call(
            &client,
            &server,
            path,
            &[("grpc-encoding", "gzip")],
            gzipped.clone(),
        )
        .await;
        ended.assert_status(
            Code::Unimplemented,
            "mocklib reads identity-encoded messages only, not grpc-encoding gzip",
        );
        // gRPC's compression spec: the server names what it accepts.
        assert_eq!(
            ended.accept_encoding.as_deref(),
            Some("identity"),
            "{path}: {ended:?}"
        );
    }
    still_serves(&client, &server).await;
}

#[tokio::test]
async fn an_unknown_grpc_encoding_is_unimplemented_and_named() {
    let server = setup_server(greeter());
    server.listen();
    let client = h2c();
    // Even with the message itself uncompressed (flag 0): the call
    // declares an encoding mocklib cannot read.
    for (flag, encoding) in [(1, "snappy-x"), (0, "zstd")] {
        let body = frame(flag, b"\x0a\x01x");
        let ended = raw_call(
            &client,
            &server,
            SAY_HELLO,
            &[("grpc-encoding", encoding)],
            body,
        )
        .await;
        ended.assert_status(Code::Unimplemented, &format!("grpc-encoding {encoding}"));
        assert_eq!(ended.accept_encoding.as_deref(), Some("identity"));
    }
    still_serves(&client, &server).await;
}

#[tokio::test]
async fn a_unary_method_takes_exactly_one_message() {
    // gRPC's status codes: a request cardinality violation (a method that
    // takes exactly one request got some other number) is UNIMPLEMENTED.
    let server = setup_server(greeter());
    server.listen();
    let client = h2c();
    for path in [SAY_HELLO, LOTS_OF_REPLIES] {
        let mut two = hello("Kate");
        two.extend_from_slice(&hello("Kim"));
        raw_call(&client, &server, path, &[], two)
            .await
            .assert_status(Code::Unimplemented, "sent more than one message");

        raw_call(&client, &server, path, &[], Vec::new())
            .await
            .assert_status(Code::Unimplemented, "sent no message");
    }
    // A client-streaming method takes any number, none included.
    let mut three = hello("Kate");
    three.extend_from_slice(&hello("Kim"));
    three.extend_from_slice(&hello("Lin"));
    let ended = raw_call(&client, &server, LOTS_OF_GREETINGS, &[], three).await;
    assert_eq!(ended.code, Some(0), "{ended:?}");
    let reply: HelloReply = prost::Message::decode(&ended.body[5..]).unwrap();
    assert_eq!(reply.message, "Hello Kate and Kim and Lin!");
    still_serves(&client, &server).await;
}

#[tokio::test]
async fn a_message_over_the_limit_is_resource_exhausted() {
    let server = setup_server(greeter());
    server.listen();
    let client = h2c();

    // Just a prefix announcing 1 GiB, and a few bytes of it.
    let mut body = vec![0];
    body.extend_from_slice(&(1u32 << 30).to_be_bytes());
    body.extend_from_slice(b"\x0a\x05Kate");
    raw_call(&client, &server, SAY_HELLO, &[], body)
        .await
        .assert_status(
            Code::ResourceExhausted,
            &format!("a message of 1073741824 bytes, over the limit of {MAX_MESSAGE}"),
        );

    // One byte over the limit, sent whole.
    let name = "x".repeat(MAX_MESSAGE);
    let whole = hello(&name);
    let length = whole.len() - 5;
    assert!(length > MAX_MESSAGE);
    raw_call(&client, &server, SAY_HELLO, &[], whole)
        .await
        .assert_status(
            Code::ResourceExhausted,
            &format!("a message of {length} bytes, over the limit"),
        );

    // Exactly at the limit is a message like any other.
    let name = "x".repeat(MAX_MESSAGE - 5);
    let at_limit = hello(&name);
    assert_eq!(at_limit.len() - 5, MAX_MESSAGE);
    let ended = raw_call(&client, &server, SAY_HELLO, &[], at_limit).await;
    assert_eq!(ended.code, Some(0), "{:?}", ended.message);

    still_serves(&client, &server).await;
}

#[tokio::test]
async fn a_post_of_another_content_type_to_a_grpc_method_is_415() {
    // gRPC over HTTP/2: a server answers a request whose content type is
    // not gRPC's with 415 Unsupported Media Type. JSON is Connect's, which
    // a handler without a JSON codec refuses the same way.
    let server = setup_server(greeter());
    server.listen();
    let client = h2c();
    for content_type in ["application/json", "text/plain", "application/xml"] {
        let ended = raw_call(
            &client,
            &server,
            SAY_HELLO,
            &[("content-type", content_type)],
            br#"{"name":"Kate"}"#.to_vec(),
        )
        .await;
        assert_eq!(
            ended.http,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{content_type}: {ended:?}"
        );
        assert!(
            ended
                .content_type
                .as_deref()
                .is_some_and(|value| value.starts_with("text/plain")),
            "{ended:?}"
        );
        let text = String::from_utf8_lossy(&ended.body);
        assert!(
            text.contains("application/grpc") && text.contains(content_type),
            "says what a gRPC method takes and what it got: {text}"
        );
        assert_eq!(ended.code, None, "not a gRPC answer: {ended:?}");
    }
    still_serves(&client, &server).await;
}

/// A call no handler answers, sent to the listener's own base URL under
/// the default strategy (nothing real behind it), as a gRPC client reads
/// it on the wire: HTTP 200, `application/grpc`, trailers-only (no body,
/// the status in the headers), `UNIMPLEMENTED` with a percent-encoded
/// message naming the method. A request of another content type to the
/// same path keeps its HTTP answer (a plain-text 502).
#[tokio::test]
async fn an_unhandled_call_to_the_listener_itself_is_a_trailers_only_unimplemented() {
    let server = setup_server(greeter());
    server.listen();
    let client = h2c();
    let ended = raw_call(
        &client,
        &server,
        "/helloworld.Greeter/SayGoodbye",
        &[],
        hello("Bo"),
    )
    .await;
    ended.assert_status(
        Code::Unimplemented,
        "no handler answered the call /helloworld.Greeter/SayGoodbye and it is addressed to this mocklib listener itself",
    );
    assert_eq!(
        ended.content_type.as_deref(),
        Some("application/grpc"),
        "{ended:?}"
    );
    assert!(ended.body.is_empty(), "trailers-only: {ended:?}");

    let plain = raw_call(
        &client,
        &server,
        "/helloworld.Greeter/SayGoodbye",
        &[("content-type", "application/json")],
        b"{}".to_vec(),
    )
    .await;
    assert_eq!(plain.http, StatusCode::BAD_GATEWAY, "{plain:?}");
    assert_eq!(plain.code, None, "not a gRPC answer: {plain:?}");
    still_serves(&client, &server).await;
}

/// tonic's own channel to a host that does not exist, through the
/// listener's HTTPS proxy (`common::tonic_through_proxy`).
#[tokio::test]
async fn tonic_reaches_a_handler_through_the_https_proxy() {
    let server = setup_server(greeter());
    server.listen();
    let channel = tokio::time::timeout(
        GUARD,
        common::tonic_through_proxy(&server, "greeter.example"),
    )
    .await
    .expect("connecting through the proxy hung")
    .expect("the tunnel opens and TLS with the server's CA succeeds");
    let mut grpc = tonic::client::Grpc::new(channel);

    let say_hello = |grpc: &mut tonic::client::Grpc<tonic::transport::Channel>, name: &str| {
        let mut grpc = grpc.clone();
        let request = tonic::Request::new(HelloRequest { name: name.into() });
        async move {
            tokio::time::timeout(GUARD, async move {
                grpc.ready().await.unwrap();
                grpc.unary::<_, HelloReply, _>(
                    request,
                    http::uri::PathAndQuery::from_static(SAY_HELLO),
                    tonic_prost::ProstCodec::default(),
                )
                .await
            })
            .await
            .expect("the call through the tunnel hung")
        }
    };
    let reply = say_hello(&mut grpc, "Ada").await.unwrap();
    assert_eq!(reply.get_ref().message, "Hello Ada!");
    let status = say_hello(&mut grpc, "").await.unwrap_err();
    assert_eq!(
        (status.code(), status.message()),
        (tonic::Code::InvalidArgument, "a name, please")
    );

    let journal = server.requests();
    assert_eq!(journal.len(), 2);
    assert_eq!(
        journal[0].url().as_str(),
        "https://greeter.example/helloworld.Greeter/SayHello",
        "the call reached the handlers as a call of the real host"
    );
    assert_eq!(journal[0].request().version(), http::Version::HTTP_2);
}
