//! gRPC-Web and Connect calls from the page, answered by `grpc` handlers
//! running in the page (both modes' test files run these): gRPC-Web's
//! frames and Connect's unary form over the page's `fetch`, as
//! `tonic-web-wasm-client` and Connect-ES send them (tonic over
//! `tonic-web-wasm-client` itself runs in examples/leptos-app, tested end
//! to end in tests/leptos_app.rs). A test binary of their own: inside the
//! modes' large binaries, Chromium stalled at load in one run of two.

use bytes::Bytes;
use mocklib::browser::Mode;
use mocklib::grpc::{self, Code, ResolverArgs, Status};
use mocklib::{Handler, UnhandledRequest};
use prost::Message as _;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use mocklib::browser::StartOptions;

/// The page's origin.
fn origin() -> String {
    web_sys::window().unwrap().location().origin().unwrap()
}

/// Start options for `mode`, without the start banner.
fn quiet(mode: Mode) -> StartOptions {
    StartOptions::new().mode(mode).quiet(true)
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct HelloRequest {
    #[prost(string, tag = "1")]
    pub name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct HelloReply {
    #[prost(string, tag = "1")]
    pub message: String,
}

/// SayHello (an empty name is `INVALID_ARGUMENT`) and SpellHello (one
/// reply per letter).
pub fn greeter() -> Vec<Handler> {
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
            "helloworld.Greeter/SpellHello",
            |args: ResolverArgs<HelloRequest>| {
                let letters: Vec<Result<HelloReply, Status>> = args
                    .message
                    .name
                    .chars()
                    .map(|c| {
                        Ok(HelloReply {
                            message: c.to_string(),
                        })
                    })
                    .collect();
                Ok(futures_util::stream::iter(letters))
            },
        ),
    ]
}

#[wasm_bindgen(inline_js = r#"
export function postBytes(url, contentType, bytes) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': contentType, 'connect-protocol-version': '1' },
    body: bytes,
  }).then(async (r) => [r.status, r.headers.get('content-type'), new Uint8Array(await r.arrayBuffer())]);
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = postBytes)]
    fn post_bytes_promise(url: &str, content_type: &str, bytes: &[u8]) -> js_sys::Promise;
}

/// A POST of `bytes` from the page's `fetch`: status, content type, body.
async fn post_bytes(url: &str, content_type: &str, bytes: &[u8]) -> (u16, String, Bytes) {
    let value = JsFuture::from(post_bytes_promise(url, content_type, bytes))
        .await
        .expect("fetch rejected");
    let parts = js_sys::Array::from(&value);
    (
        parts.get(0).as_f64().unwrap() as u16,
        parts.get(1).as_string().unwrap_or_default(),
        Bytes::from(js_sys::Uint8Array::new(&parts.get(2)).to_vec()),
    )
}

/// `message` framed as gRPC and gRPC-Web frame it.
fn framed(message: &impl prost::Message) -> Vec<u8> {
    let body = message.encode_to_vec();
    let mut framed = vec![0];
    framed.extend_from_slice(&(body.len() as u32).to_be_bytes());
    framed.extend_from_slice(&body);
    framed
}

/// The frames of a gRPC-Web body: (flags, payload).
fn frames(mut body: &[u8]) -> Vec<(u8, Bytes)> {
    let mut all = Vec::new();
    while body.len() >= 5 {
        let length = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        all.push((body[0], Bytes::copy_from_slice(&body[5..5 + length])));
        body = &body[5 + length..];
    }
    all
}

/// gRPC-Web calls from the page's `fetch` get the mocked reply and its
/// status frame, a stream's replies, an error's status; the journal says
/// they came in as gRPC-Web.
pub async fn grpc_web_calls_are_answered(mode: Mode) {
    let worker = mocklib::browser::setup_worker(greeter());
    let options = quiet(mode).on_unhandled_request(UnhandledRequest::Error);
    assert_eq!(worker.start_with(options).await, Ok(mode));
    let web = "application/grpc-web+proto";
    let say_hello = format!("{}/helloworld.Greeter/SayHello", origin());
    let kate = framed(&HelloRequest {
        name: "Kate".into(),
    });
    let (status, content_type, body) = post_bytes(&say_hello, web, &kate).await;
    assert_eq!((status, content_type.as_str()), (200, web));
    let replies = frames(&body);
    assert_eq!(replies.len(), 2, "{replies:?}");
    assert_eq!(
        HelloReply::decode(replies[0].1.clone()).unwrap().message,
        "Hello Kate!"
    );
    assert_eq!(replies[1].0, 0x80, "the status frame");
    let status_frame = std::str::from_utf8(&replies[1].1).unwrap();
    assert!(status_frame.contains("grpc-status:0"), "{status_frame}");

    let nobody = framed(&HelloRequest::default());
    let (status, _, body) = post_bytes(&say_hello, web, &nobody).await;
    // An error of a unary call: trailers-only (the status in the headers).
    assert_eq!((status, body.len()), (200, 0));

    let spell = format!("{}/helloworld.Greeter/SpellHello", origin());
    let (_, _, body) = post_bytes(&spell, web, &kate).await;
    let letters: Vec<String> = frames(&body)
        .into_iter()
        .filter(|(flags, _)| *flags == 0)
        .map(|(_, message)| HelloReply::decode(message).unwrap().message)
        .collect();
    assert_eq!(letters, ["K", "a", "t", "e"]);

    let journal = worker.requests();
    assert_eq!(journal.len(), 3);
    for entry in &journal {
        let call = entry.grpc_call().expect("a call record");
        assert_eq!(call.protocol(), grpc::Protocol::GrpcWeb);
    }
    worker.stop();
}

/// Connect's unary form in protobuf from the page's `fetch`: the reply
/// bare, an error as Connect's JSON with its HTTP status.
pub async fn connect_calls_are_answered(mode: Mode) {
    let worker = mocklib::browser::setup_worker(greeter());
    assert_eq!(worker.start_with(quiet(mode)).await, Ok(mode));
    let url = format!("{}/helloworld.Greeter/SayHello", origin());
    let kate = HelloRequest {
        name: "Kate".into(),
    }
    .encode_to_vec();
    let (status, content_type, body) = post_bytes(&url, "application/proto", &kate).await;
    assert_eq!((status, content_type.as_str()), (200, "application/proto"));
    assert_eq!(HelloReply::decode(body).unwrap().message, "Hello Kate!");

    let nobody = HelloRequest::default().encode_to_vec();
    let (status, content_type, body) = post_bytes(&url, "application/proto", &nobody).await;
    assert_eq!((status, content_type.as_str()), (400, "application/json"));
    let error: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        error,
        serde_json::json!({"code": "invalid_argument", "message": "a name, please"})
    );
    let journal = worker.requests();
    assert_eq!(
        journal[0].grpc_call().unwrap().protocol(),
        grpc::Protocol::Connect
    );
    worker.stop();
}
