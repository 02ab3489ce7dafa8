//! gRPC-Web and Connect calls answered by the same `grpc` handlers a tonic
//! test uses: tonic-web's client (what a Rust app in the browser speaks)
//! in process and over the listener, gRPC-Web's text form, CORS, Connect's
//! unary (protobuf, JSON, GET) and streaming forms with reqwest, bad input
//! in each protocol's error form, and a call no handler answers passed to
//! a real tonic-web server.

use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use mocklib::Handler;
use mocklib::grpc::{self, Code, JsonCodec, Protocol, ResolverArgs, Status};
use mocklib::node::{Server, setup_server};
use mocklib::{ListenOptions, UnhandledRequest};
use prost::Message;

mod helloworld {
    tonic::include_proto!("helloworld");
}

use helloworld::greeter_client::GreeterClient;
use helloworld::greeter_server::{Greeter, GreeterServer};
use helloworld::{HelloReply, HelloRequest};

const GUARD: Duration = Duration::from_secs(10);
const SAY_HELLO: &str = "helloworld.Greeter/SayHello";

fn reply(message: impl Into<String>) -> HelloReply {
    HelloReply {
        message: message.into(),
    }
}

/// SayHello (an empty name is `INVALID_ARGUMENT`, "Nobody" is `NOT_FOUND`
/// with trailing metadata) and SpellHello (one reply per letter; a `!` in
/// the name fails the stream after the letters before it).
fn handlers() -> Vec<Handler> {
    vec![
        grpc::unary(SAY_HELLO, |args: ResolverArgs<HelloRequest>| {
            match args.message.name.as_str() {
                "" => Err(Status::new(Code::InvalidArgument, "a name, please")),
                "Nobody" => Err(Status::new(Code::NotFound, "no one by that name")
                    .with_metadata("x-looked-in", "the directory")),
                name => Ok(reply(format!("Hello {name}!"))),
            }
        }),
        grpc::server_streaming(
            "helloworld.Greeter/SpellHello",
            |args: ResolverArgs<HelloRequest>| {
                let letters: Vec<_> = args
                    .message
                    .name
                    .chars()
                    .map(|c| {
                        if c == '!' {
                            Err(Status::new(Code::Aborted, "no letter for !"))
                        } else {
                            Ok(reply(c))
                        }
                    })
                    .collect();
                Ok(futures_util::stream::iter(letters))
            },
        ),
    ]
}

fn listening(handlers: Vec<Handler>) -> Server {
    let server = setup_server(handlers);
    server.listen_with(ListenOptions::new().on_unhandled_request(UnhandledRequest::Error));
    server
}

type WebClient = GreeterClient<
    tonic_web::GrpcWebClientService<
        hyper_util::client::legacy::Client<
            hyper_util::client::legacy::connect::HttpConnector,
            tonic_web::GrpcWebCall<tonic::body::Body>,
        >,
    >,
>;

/// tonic-web's client over HTTP/1.1 to `origin`, as a Rust app in the
/// browser (or a test of one) calls a gRPC-Web server.
fn web_client(origin: &str) -> WebClient {
    let http = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http();
    let service = tonic_web::GrpcWebClientLayer::new().layer(http);
    GreeterClient::with_origin(service, origin.parse().unwrap())
}

use tower::Layer as _;

fn hello(name: &str) -> HelloRequest {
    HelloRequest { name: name.into() }
}

/// The unary and streaming calls a gRPC-Web client makes, checked.
async fn web_calls<T>(client: &mut GreeterClient<T>)
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    T::ResponseBody: http_body::Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error:
        Into<Box<dyn std::error::Error + Send + Sync>> + Send,
{
    tokio::time::timeout(GUARD, async {
        let hello_kate = client.say_hello(hello("Kate")).await.unwrap();
        assert_eq!(hello_kate.get_ref().message, "Hello Kate!");

        let refused = client.say_hello(hello("")).await.unwrap_err();
        assert_eq!(refused.code(), tonic::Code::InvalidArgument);
        assert_eq!(refused.message(), "a name, please");

        let missing = client.say_hello(hello("Nobody")).await.unwrap_err();
        assert_eq!(missing.code(), tonic::Code::NotFound);
        assert_eq!(
            missing.metadata().get("x-looked-in").unwrap(),
            "the directory"
        );

        let mut letters = client.spell_hello(hello("Bo")).await.unwrap().into_inner();
        let mut spelled = String::new();
        while let Some(letter) = letters.message().await.unwrap() {
            spelled.push_str(&letter.message);
        }
        assert_eq!(spelled, "Bo");

        let mut failing = client.spell_hello(hello("Hi!")).await.unwrap().into_inner();
        assert_eq!(failing.message().await.unwrap().unwrap().message, "H");
        assert_eq!(failing.message().await.unwrap().unwrap().message, "i");
        let failed = failing.message().await.unwrap_err();
        assert_eq!(failed.code(), tonic::Code::Aborted);
    })
    .await
    .expect("a call hung");
}

#[tokio::test]
async fn a_tonic_web_client_is_answered_by_the_grpc_handlers_over_the_listener() {
    let server = listening(handlers());
    let mut client = web_client(server.url().as_str());
    web_calls(&mut client).await;
    let journal = server.requests();
    assert_eq!(journal.len(), 5);
    for entry in &journal {
        assert_eq!(entry.headers()["content-type"], "application/grpc-web");
        let call = entry.grpc_call().expect("a call record");
        assert_eq!(call.protocol(), Protocol::GrpcWeb);
    }
    let kate = journal[0].grpc_call().unwrap();
    assert_eq!(kate.method(), "/helloworld.Greeter/SayHello");
    assert_eq!(kate.status().unwrap().code(), Code::Ok);
    assert!(format!("{:?}", kate.requests()[0]).contains("Kate"));
}

#[tokio::test]
async fn a_tonic_web_client_is_answered_in_process_through_the_tower_service() {
    let server = setup_server(handlers());
    server.listen();
    let service = tonic_web::GrpcWebClientLayer::new().layer(server.service());
    let mut client =
        GreeterClient::with_origin(service, "http://greeter.internal".parse().unwrap());
    web_calls(&mut client).await;
    assert_eq!(server.requests().len(), 5);
}

#[tokio::test]
async fn a_mounted_tonic_server_answers_grpc_web_calls_too() {
    let server = listening(vec![grpc::service(
        "helloworld.Greeter",
        GreeterServer::new(Hello("Fake hello")),
    )]);
    let mut client = web_client(server.url().as_str());
    let answer = client.say_hello(hello("Kate")).await.unwrap();
    assert_eq!(answer.get_ref().message, "Fake hello Kate");
    let refused = client.spell_hello(hello("Kate")).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unimplemented);
}

/// A tonic server's Greeter: SayHello answers "`prefix` NAME", the other
/// methods `UNIMPLEMENTED`.
struct Hello(&'static str);

#[tonic::async_trait]
impl Greeter for Hello {
    async fn say_hello(
        &self,
        request: tonic::Request<HelloRequest>,
    ) -> Result<tonic::Response<HelloReply>, tonic::Status> {
        Ok(tonic::Response::new(reply(format!(
            "{} {}",
            self.0,
            request.into_inner().name
        ))))
    }
    type SpellHelloStream = futures_util::stream::Empty<Result<HelloReply, tonic::Status>>;
    async fn spell_hello(
        &self,
        _: tonic::Request<HelloRequest>,
    ) -> Result<tonic::Response<Self::SpellHelloStream>, tonic::Status> {
        Err(tonic::Status::unimplemented("not in this server"))
    }
    async fn greet_all(
        &self,
        _: tonic::Request<tonic::Streaming<HelloRequest>>,
    ) -> Result<tonic::Response<HelloReply>, tonic::Status> {
        Err(tonic::Status::unimplemented("not in this server"))
    }
    type ChatStream = futures_util::stream::Empty<Result<HelloReply, tonic::Status>>;
    async fn chat(
        &self,
        _: tonic::Request<tonic::Streaming<HelloRequest>>,
    ) -> Result<tonic::Response<Self::ChatStream>, tonic::Status> {
        Err(tonic::Status::unimplemented("not in this server"))
    }
}

/// `message` in gRPC's (and gRPC-Web's, and Connect's) envelope.
fn framed(flags: u8, message: &[u8]) -> Bytes {
    let mut out = BytesMut::new();
    out.put_u8(flags);
    out.put_u32(message.len() as u32);
    out.put_slice(message);
    out.freeze()
}

/// The envelopes of `body`: (flags, payload).
fn envelopes(mut body: Bytes) -> Vec<(u8, Bytes)> {
    let mut all = Vec::new();
    while body.remaining() >= 5 {
        let flags = body.get_u8();
        let length = body.get_u32() as usize;
        all.push((flags, body.split_to(length)));
    }
    assert!(body.is_empty(), "a truncated envelope");
    all
}

/// A POST of `body` with `content_type`, from a client that uses no proxy.
async fn post(
    url: impl reqwest::IntoUrl,
    content_type: &str,
    body: impl Into<reqwest::Body>,
) -> reqwest::Response {
    http()
        .post(url)
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap()
}

fn http() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

fn base64(data: &[u8]) -> String {
    // The test's own encoder, not mocklib's.
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn unbase64(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    for group in text.as_bytes().chunks(4) {
        let values: Vec<u32> = group
            .iter()
            .take_while(|b| **b != b'=')
            .map(|b| ALPHABET.iter().position(|a| a == b).expect("base64") as u32)
            .collect();
        let n = values
            .iter()
            .enumerate()
            .fold(0, |n, (i, v)| n | (v << (18 - 6 * i)));
        out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8][..values.len() - 1]);
    }
    out
}

/// gRPC-Web's trailer frame as a map.
fn web_trailers(block: &[u8]) -> Vec<(String, String)> {
    std::str::from_utf8(block)
        .unwrap()
        .split("\r\n")
        .filter(|line| !line.is_empty())
        .map(|line| {
            let (name, value) = line.split_once(':').unwrap();
            (name.to_owned(), value.trim().to_owned())
        })
        .collect()
}

#[tokio::test]
async fn the_text_form_is_base64_both_ways_with_the_status_in_the_last_frame() {
    let server = listening(handlers());
    let url = server.url().join(SAY_HELLO).unwrap();
    let body = base64(&framed(0, &hello("Kate").encode_to_vec()));
    let answer = http()
        .post(url.clone())
        .header("content-type", "application/grpc-web-text")
        .header("x-grpc-web", "1")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(
        answer.headers()["content-type"],
        "application/grpc-web-text+proto"
    );
    let decoded = unbase64(&answer.text().await.unwrap());
    let frames = envelopes(decoded.into());
    assert_eq!(frames.len(), 2, "{frames:?}");
    assert_eq!(frames[0].0, 0);
    assert_eq!(
        HelloReply::decode(frames[0].1.clone()).unwrap().message,
        "Hello Kate!"
    );
    assert_eq!(frames[1].0, 0x80);
    assert!(web_trailers(&frames[1].1).contains(&("grpc-status".into(), "0".into())));

    // Base64 that does not decode: the gRPC-Web status says so.
    let broken = post(url, "application/grpc-web-text", "not base64!").await;
    assert_eq!(broken.status(), 200);
    assert_eq!(broken.headers()["grpc-status"], "13");
    assert!(
        broken.headers()["grpc-message"]
            .to_str()
            .unwrap()
            .contains("not base64"),
        "{:?}",
        broken.headers()
    );
}

#[tokio::test]
async fn a_browser_call_gets_its_preflight_and_cors_headers() {
    let server = listening(handlers());
    let url = server.url().join(SAY_HELLO).unwrap();
    let preflight = http()
        .request(reqwest::Method::OPTIONS, url.clone())
        .header("origin", "http://app.test")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type,x-grpc-web,x-user-agent",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), 204);
    let headers = preflight.headers();
    assert_eq!(headers["access-control-allow-origin"], "http://app.test");
    assert_eq!(headers["access-control-allow-methods"], "POST");
    assert_eq!(
        headers["access-control-allow-headers"],
        "content-type,x-grpc-web,x-user-agent"
    );

    let call = http()
        .post(url)
        .header("origin", "http://app.test")
        .header("content-type", "application/grpc-web+proto")
        .body(framed(0, &hello("Nobody").encode_to_vec()))
        .send()
        .await
        .unwrap();
    let headers = call.headers().clone();
    assert_eq!(headers["access-control-allow-origin"], "http://app.test");
    let exposed = headers["access-control-expose-headers"].to_str().unwrap();
    assert!(
        exposed.contains("grpc-status") && exposed.contains("grpc-message"),
        "{exposed}"
    );
    // An error of a unary method: trailers-only, the status in the headers.
    assert_eq!(headers["grpc-status"], "5");
}

#[tokio::test]
async fn a_truncated_envelope_and_a_wrong_content_type_get_their_protocols_answers() {
    let server = listening(handlers());
    let url = server.url().join(SAY_HELLO).unwrap();
    let mut truncated = framed(0, &hello("Kate").encode_to_vec()).to_vec();
    truncated.truncate(truncated.len() - 2);
    let answer = post(url.clone(), "application/grpc-web+proto", truncated.clone()).await;
    assert_eq!(answer.status(), 200);
    assert_eq!(
        answer.headers()["content-type"],
        "application/grpc-web+proto"
    );
    assert_eq!(
        answer.headers()["grpc-status"],
        "13",
        "{:?}",
        answer.headers()
    );

    let answer = post(url.clone(), "application/connect+proto", truncated).await;
    assert_eq!(answer.status(), 200);
    assert_eq!(
        answer.headers()["content-type"],
        "application/connect+proto"
    );
    let end = envelopes(answer.bytes().await.unwrap());
    assert_eq!(end.len(), 1);
    assert_eq!(end[0].0, 0x02);
    let end: serde_json::Value = serde_json::from_slice(&end[0].1).unwrap();
    assert_eq!(end["error"]["code"], "internal", "{end}");

    let answer = post(url, "text/plain", "hello").await;
    assert_eq!(answer.status(), 415);
    assert!(
        answer
            .text()
            .await
            .unwrap()
            .contains("application/grpc-web")
    );
}

#[tokio::test]
async fn connect_unary_calls_in_protobuf_are_answered_bare_and_errors_as_json() {
    let server = listening(handlers());
    let url = server.url().join(SAY_HELLO).unwrap();
    let answer = http()
        .post(url.clone())
        .header("content-type", "application/proto")
        .header("connect-protocol-version", "1")
        .body(hello("Kate").encode_to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["content-type"], "application/proto");
    let message = HelloReply::decode(answer.bytes().await.unwrap()).unwrap();
    assert_eq!(message.message, "Hello Kate!");

    let missing = http()
        .post(url.clone())
        .header("content-type", "application/proto")
        .header("connect-protocol-version", "1")
        .body(hello("Nobody").encode_to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(missing.headers()["content-type"], "application/json");
    assert_eq!(missing.headers()["trailer-x-looked-in"], "the directory");
    let error: serde_json::Value = missing.json().await.unwrap();
    assert_eq!(
        error,
        serde_json::json!({"code": "not_found", "message": "no one by that name"})
    );

    // A GET of an idempotent method: the message in the query.
    let mut get = url.clone();
    get.query_pairs_mut()
        .append_pair("connect", "v1")
        .append_pair("encoding", "proto")
        .append_pair("base64", "1")
        .append_pair(
            "message",
            base64(&hello("Getty").encode_to_vec()).trim_end_matches('='),
        );
    let answer = http().get(get).send().await.unwrap();
    assert_eq!(answer.status(), 200);
    let message = HelloReply::decode(answer.bytes().await.unwrap()).unwrap();
    assert_eq!(message.message, "Hello Getty!");

    // JSON without a codec: 415, naming what the method takes.
    let json = post(url, "application/json", r#"{"name":"Kate"}"#).await;
    assert_eq!(json.status(), 415);
    assert!(
        json.headers()["accept-post"]
            .to_str()
            .unwrap()
            .contains("application/proto")
    );

    let journal = server.requests();
    let protocols: Vec<_> = journal
        .iter()
        .filter_map(|entry| entry.grpc_call().map(|call| call.protocol()))
        .collect();
    assert_eq!(protocols, [Protocol::Connect; 3]);
}

/// HelloRequest and HelloReply in JSON, as a codec made from descriptors
/// would convert them (`{"name": …}`, `{"message": …}`).
struct HelloJson;

impl JsonCodec for HelloJson {
    fn request_from_json(&self, method: &str, json: &[u8]) -> Result<Vec<u8>, String> {
        assert!(method.starts_with("/helloworld.Greeter/"), "{method}");
        let value: serde_json::Value = serde_json::from_slice(json).map_err(|e| e.to_string())?;
        let name = value["name"].as_str().ok_or("no name")?;
        Ok(hello(name).encode_to_vec())
    }

    fn reply_to_json(&self, _: &str, message: &[u8]) -> Result<Vec<u8>, String> {
        let reply = HelloReply::decode(message).map_err(|e| e.to_string())?;
        Ok(serde_json::to_vec(&serde_json::json!({ "message": reply.message })).unwrap())
    }
}

#[tokio::test]
async fn connect_json_calls_are_converted_by_the_handlers_codec() {
    let server = listening(
        handlers()
            .into_iter()
            .map(|handler| grpc::with_json(HelloJson, handler))
            .collect(),
    );
    let url = server.url().join(SAY_HELLO).unwrap();
    // As `curl -H 'content-type: application/json' -d '{"name":"Kate"}'` sends it.
    let answer = post(url.clone(), "application/json", r#"{"name":"Kate"}"#).await;
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["content-type"], "application/json");
    assert_eq!(
        answer.json::<serde_json::Value>().await.unwrap(),
        serde_json::json!({"message": "Hello Kate!"})
    );

    let invalid = post(url.clone(), "application/json", r#"{"nom":"Kate"}"#).await;
    assert_eq!(invalid.status(), 400);
    let error: serde_json::Value = invalid.json().await.unwrap();
    assert_eq!(error["code"], "invalid_argument");

    // Streaming in JSON: each reply converted, then the end of the stream.
    let stream = post(
        server.url().join("helloworld.Greeter/SpellHello").unwrap(),
        "application/connect+json",
        framed(0, br#"{"name":"Bo!"}"#),
    )
    .await;
    assert_eq!(stream.headers()["content-type"], "application/connect+json");
    let messages = envelopes(stream.bytes().await.unwrap());
    let shown: Vec<(u8, String)> = messages
        .iter()
        .map(|(flags, payload)| (*flags, String::from_utf8(payload.to_vec()).unwrap()))
        .collect();
    assert_eq!(shown[0], (0, r#"{"message":"B"}"#.to_owned()));
    assert_eq!(shown[1], (0, r#"{"message":"o"}"#.to_owned()));
    assert_eq!(shown[2].0, 2);
    let end: serde_json::Value = serde_json::from_str(&shown[2].1).unwrap();
    assert_eq!(end["error"]["code"], "aborted");
    assert_eq!(shown.len(), 3);
}

#[tokio::test]
async fn a_connect_stream_ends_with_an_empty_end_of_stream_message() {
    let server = listening(handlers());
    let answer = http()
        .post(server.url().join("helloworld.Greeter/SpellHello").unwrap())
        .header("content-type", "application/connect+proto")
        .header("connect-protocol-version", "1")
        .body(framed(0, &hello("Bo").encode_to_vec()))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let messages = envelopes(answer.bytes().await.unwrap());
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(
        HelloReply::decode(messages[0].1.clone()).unwrap().message,
        "B"
    );
    assert_eq!(
        HelloReply::decode(messages[1].1.clone()).unwrap().message,
        "o"
    );
    assert_eq!(messages[2], (2, Bytes::from_static(b"{}")));
}

#[tokio::test]
async fn unhandled_calls_get_each_protocols_error_naming_the_method() {
    let server = listening(handlers());
    let url = server.url().join("helloworld.Greeter/Missing").unwrap();
    let web = http()
        .post(url.clone())
        .header("origin", "http://app.test")
        .header("content-type", "application/grpc-web+proto")
        .body(framed(0, b""))
        .send()
        .await
        .unwrap();
    assert_eq!(web.status(), 200);
    assert_eq!(web.headers()["content-type"], "application/grpc-web+proto");
    assert_eq!(web.headers()["grpc-status"], "12");
    assert_eq!(
        web.headers()["access-control-allow-origin"],
        "http://app.test"
    );
    assert!(
        web.headers()["grpc-message"]
            .to_str()
            .unwrap()
            .contains("/helloworld.Greeter/Missing")
    );

    let connect = http()
        .post(url)
        .header("content-type", "application/json")
        .header("connect-protocol-version", "1")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(connect.status(), 501);
    let error: serde_json::Value = connect.json().await.unwrap();
    assert_eq!(error["code"], "unimplemented");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("/helloworld.Greeter/Missing")
    );
}

#[tokio::test]
async fn an_unhandled_grpc_web_call_passes_through_to_a_real_tonic_web_server() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let real = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(
        tonic::transport::Server::builder()
            .accept_http1(true)
            .layer(tonic_web::GrpcWebLayer::new())
            .add_service(GreeterServer::new(Hello("Real hello")))
            .serve_with_incoming(tokio_stream_of(listener)),
    );
    // SpellHello is mocked; SayHello is not, and goes to the real server.
    let server = setup_server(handlers().split_off(1));
    server.listen_with(ListenOptions::new().on_unhandled_request(UnhandledRequest::Bypass));
    let through = reqwest::Client::builder()
        .proxy(reqwest::Proxy::http(server.url().as_str()).unwrap())
        .build()
        .unwrap();
    let answer = through
        .post(format!("{real}/{SAY_HELLO}"))
        .header("content-type", "application/grpc-web+proto")
        .header("x-grpc-web", "1")
        .body(framed(0, &hello("Kate").encode_to_vec()))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let frames = envelopes(answer.bytes().await.unwrap());
    assert_eq!(
        HelloReply::decode(frames[0].1.clone()).unwrap().message,
        "Real hello Kate"
    );
    assert_eq!(frames.last().unwrap().0, 0x80);
    let journal = server.requests();
    assert_eq!(journal.len(), 1);
    assert!(
        journal[0].grpc_call().is_none(),
        "performed for real, not by a handler"
    );

    let mocked = through
        .post(format!("{real}/helloworld.Greeter/SpellHello"))
        .header("content-type", "application/grpc-web+proto")
        .body(framed(0, &hello("Ab").encode_to_vec()))
        .send()
        .await
        .unwrap();
    let frames = envelopes(mocked.bytes().await.unwrap());
    assert_eq!(frames.len(), 3, "two letters, then the trailers");
}

/// A tokio listener as the stream of connections tonic serves.
fn tokio_stream_of(
    listener: tokio::net::TcpListener,
) -> impl futures_util::Stream<Item = std::io::Result<tokio::net::TcpStream>> {
    futures_util::stream::unfold(listener, |listener| async move {
        let accepted = listener.accept().await.map(|(stream, _)| stream);
        Some((accepted, listener))
    })
}

#[tokio::test]
async fn verify_once_and_boundaries_count_the_three_protocols_alike() {
    let server = setup_server(Vec::<Handler>::new());
    server.listen_with(ListenOptions::new().on_unhandled_request(UnhandledRequest::Error));
    // Three calls expected, one per protocol.
    server.use_handlers([grpc::unary(SAY_HELLO, |args: ResolverArgs<HelloRequest>| {
        Ok(reply(format!("Hello {}!", args.message.name)))
    })
    .times(3)]);
    let url = server.url().join(SAY_HELLO).unwrap();
    let channel = tonic::transport::Endpoint::from_shared(server.url().to_string())
        .unwrap()
        .connect()
        .await
        .unwrap();
    GreeterClient::new(channel)
        .say_hello(hello("Grpc"))
        .await
        .unwrap();
    web_client(server.url().as_str())
        .say_hello(hello("Web"))
        .await
        .unwrap();
    let connect = post(
        url.clone(),
        "application/proto",
        hello("Connect").encode_to_vec(),
    )
    .await;
    assert_eq!(connect.status(), 200);
    server.verify().unwrap();
    let protocols: Vec<_> = server
        .requests()
        .iter()
        .map(|entry| entry.grpc_call().unwrap().protocol())
        .collect();
    assert_eq!(
        protocols,
        [Protocol::Grpc, Protocol::GrpcWeb, Protocol::Connect]
    );

    // A boundary's `once` override answers one Connect call, then the
    // outer handler answers again; outside, the override is gone.
    let inside = server.boundary(|server: Server| async move {
        server.use_handlers([grpc::unary(SAY_HELLO, |_: ResolverArgs<HelloRequest>| {
            Err::<HelloReply, _>(Status::new(Code::Unavailable, "down once"))
        })
        .once()]);
        let call = |url: url::Url| async move {
            post(url, "application/proto", hello("Kate").encode_to_vec())
                .await
                .status()
        };
        let url = server.url().join(SAY_HELLO).unwrap();
        assert_eq!(call(url.clone()).await, 503, "the override, once");
        assert_eq!(call(url).await, 200, "then the outer handler");
    });
    inside(server.clone()).await;
    let mut client = web_client(server.url().as_str());
    assert_eq!(
        client
            .say_hello(hello("Kate"))
            .await
            .unwrap()
            .get_ref()
            .message,
        "Hello Kate!"
    );
}

#[tokio::test]
async fn grpc_web_calls_arrive_over_h2c_and_through_the_https_proxy_too() {
    let server = listening(handlers());
    let call = framed(0, &hello("Kate").encode_to_vec());
    // HTTP/2 with prior knowledge to the base URL (h2c).
    let h2 = reqwest::Client::builder()
        .no_proxy()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let answer = h2
        .post(server.url().join(SAY_HELLO).unwrap())
        .header("content-type", "application/grpc-web+proto")
        .body(call.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.version(), reqwest::Version::HTTP_2);
    let frames = envelopes(answer.bytes().await.unwrap());
    assert_eq!(
        HelloReply::decode(frames[0].1.clone()).unwrap().message,
        "Hello Kate!"
    );
    assert_eq!(frames[1].0, 0x80);
    // To a real host through the HTTPS proxy (the server's CA).
    let answer = server
        .reqwest_client()
        .post(format!("https://greeter.example/{SAY_HELLO}"))
        .header("content-type", "application/grpc-web+proto")
        .body(call)
        .send()
        .await
        .unwrap();
    let frames = envelopes(answer.bytes().await.unwrap());
    assert_eq!(
        HelloReply::decode(frames[0].1.clone()).unwrap().message,
        "Hello Kate!"
    );
    assert!(web_trailers(&frames[1].1).contains(&("grpc-status".into(), "0".into())));
    let journal = server.requests();
    assert_eq!(
        journal[1].url().as_str(),
        "https://greeter.example/helloworld.Greeter/SayHello"
    );
    assert!(
        journal
            .iter()
            .all(|entry| entry.grpc_call().unwrap().protocol() == Protocol::GrpcWeb)
    );
}
