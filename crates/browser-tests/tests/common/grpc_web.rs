//! gRPC-Web and Connect calls of a Rust app in the page, answered by
//! `grpc` handlers running in the page: tonic's client over
//! `tonic-web-wasm-client` (its fetch goes through the worker or the
//! patch), and Connect's unary form over plain `fetch`.

use bytes::Bytes;
use mocklib::browser::Mode;
use mocklib::grpc::{self, Code, ResolverArgs, Status};
use mocklib::{Handler, UnhandledRequest};
use prost::Message as _;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::{origin, quiet, within_hang_guard};

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

/// tonic's client for the page's origin, over gRPC-Web (fetch).
fn client() -> tonic::client::Grpc<tonic_web_wasm_client::Client> {
    tonic::client::Grpc::new(tonic_web_wasm_client::Client::new(origin()))
}

async fn say_hello(name: &str) -> Result<HelloReply, tonic::Status> {
    let mut grpc = client();
    grpc.ready()
        .await
        .map_err(|error| tonic::Status::unknown(error.to_string()))?;
    let codec = tonic_prost::ProstCodec::<HelloRequest, HelloReply>::default();
    let path = http::uri::PathAndQuery::from_static("/helloworld.Greeter/SayHello");
    let request = tonic::Request::new(HelloRequest { name: name.into() });
    Ok(grpc.unary(request, path, codec).await?.into_inner())
}

async fn spell_hello(name: &str) -> Result<Vec<String>, tonic::Status> {
    let mut grpc = client();
    grpc.ready()
        .await
        .map_err(|error| tonic::Status::unknown(error.to_string()))?;
    let codec = tonic_prost::ProstCodec::<HelloRequest, HelloReply>::default();
    let path = http::uri::PathAndQuery::from_static("/helloworld.Greeter/SpellHello");
    let request = tonic::Request::new(HelloRequest { name: name.into() });
    let mut replies = grpc
        .server_streaming(request, path, codec)
        .await?
        .into_inner();
    let mut letters = Vec::new();
    while let Some(reply) = replies.message().await? {
        letters.push(reply.message);
    }
    Ok(letters)
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

/// tonic over `tonic-web-wasm-client` gets the mocked replies, the stream
/// and the status; the journal says the calls came in as gRPC-Web.
pub async fn tonic_web_wasm_client_calls_are_answered(mode: Mode) {
    let worker = mocklib::browser::setup_worker(greeter());
    let options = quiet(mode).on_unhandled_request(UnhandledRequest::Error);
    assert_eq!(worker.start_with(options).await, Ok(mode));

    let reply = within_hang_guard("SayHello", say_hello("Kate"))
        .await
        .expect("the mocked reply");
    assert_eq!(reply.message, "Hello Kate!");
    let refused = within_hang_guard("SayHello", say_hello(""))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert_eq!(refused.message(), "a name, please");
    assert_eq!(
        within_hang_guard("SpellHello", spell_hello("Bo"))
            .await
            .unwrap(),
        ["B", "o"]
    );

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
    let (status, content_type, body) = within_hang_guard(
        "a Connect call",
        post_bytes(&url, "application/proto", &kate),
    )
    .await;
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
