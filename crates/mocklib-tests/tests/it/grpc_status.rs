//! Every answer to a gRPC call is a gRPC status (issue 41): each path where
//! mocklib answers a call itself, not from a handler — a call no handler
//! answers under each strategy (over h2c on the base URL, through the
//! HTTPS proxy, in process), a real server that cannot be reached, a call
//! that loops back, the credential of an ended boundary, a strict contract
//! — walked with tonic's generated client. Each must read a `Status` with
//! the code mocklib chose and a message naming the method: a plain-text
//! answer would read as a message frame ("protocol error: received message
//! with invalid compression flag: 109", the `m` of "mocklib").

use std::time::Duration;

use mocklib::grpc::{self, ResolverArgs};
use mocklib::node::{Server, setup_server};
use mocklib::{ListenOptions, UnhandledRequest};
use tonic::Code;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

mod helloworld {
    tonic::include_proto!("helloworld");
}

use helloworld::greeter_client::GreeterClient;
use helloworld::{HelloReply, HelloRequest};

const GUARD: Duration = Duration::from_secs(10);

/// The method no handler of these tests answers.
const SPELL_HELLO: &str = "/helloworld.Greeter/SpellHello";

/// SayHello answered; SpellHello, GreetAll and Chat left unhandled.
fn say_hello_only() -> Server {
    setup_server([grpc::unary(
        "helloworld.Greeter/SayHello",
        |args: ResolverArgs<HelloRequest>| {
            Ok(HelloReply {
                message: format!("Hello {}!", args.message.name),
            })
        },
    )])
}

fn request(name: &str) -> tonic::Request<HelloRequest> {
    tonic::Request::new(HelloRequest { name: name.into() })
}

/// A channel to the base URL (h2c).
async fn base_url_client(server: &Server) -> GreeterClient<Channel> {
    let channel = Endpoint::from_shared(server.url().to_string())
        .unwrap()
        .connect()
        .await
        .unwrap();
    GreeterClient::new(channel)
}

/// A channel through the HTTPS proxy: a `CONNECT` tunnel to `authority`,
/// then TLS trusting the server's CA (ALPN h2).
async fn https_proxy_client(server: &Server, authority: String) -> GreeterClient<Channel> {
    let host = authority.rsplit_once(':').unwrap().0.to_owned();
    let tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(server.ca_certificate_pem()))
        .domain_name(host);
    let authority: &'static str = Box::leak(authority.into_boxed_str());
    let channel = Endpoint::from_shared(format!("https://{authority}"))
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect_with_connector(test_support::tunnel_connector(
            server.proxy_url(),
            authority,
        ))
        .await
        .unwrap();
    GreeterClient::new(channel)
}

/// SpellHello (server streaming), which no handler answers: the status the
/// call ends with (a trailers-only answer fails the call itself; any other
/// answer, its stream).
async fn spell_hello<T>(
    client: &mut GreeterClient<T>,
    request: tonic::Request<HelloRequest>,
) -> tonic::Status
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    T::ResponseBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error:
        Into<Box<dyn std::error::Error + Send + Sync>> + Send,
{
    let ended = tokio::time::timeout(GUARD, async {
        let mut replies = client.spell_hello(request).await?.into_inner();
        replies.message().await
    });
    match ended.await.expect("the call hung") {
        Ok(reply) => panic!("a call no handler answers got {reply:?}"),
        Err(status) => status,
    }
}

/// `status` has `code`, and a message naming the method and saying `why`.
fn assert_status(status: &tonic::Status, code: Code, why: &str) {
    assert_eq!(status.code(), code, "{status:?}");
    assert!(
        status.message().contains(SPELL_HELLO) && status.message().contains(why),
        "names {SPELL_HELLO} and says {why:?}: {:?}",
        status.message()
    );
}

/// The connection still serves: the status ended one call, not the channel.
async fn still_serves<T>(client: &mut GreeterClient<T>)
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    T::ResponseBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error:
        Into<Box<dyn std::error::Error + Send + Sync>> + Send,
{
    let reply = tokio::time::timeout(GUARD, client.say_hello(request("Kate")))
        .await
        .expect("the call hung")
        .unwrap();
    assert_eq!(reply.get_ref().message, "Hello Kate!");
}

/// The defect of issue 41: under `warn` (the default) and `bypass`, a call
/// to the base URL was passed through to the listener itself and answered
/// a plain-text 502. Nothing real is behind the base URL, so the server the
/// client called does not serve the method: `UNIMPLEMENTED`, as under
/// `error` and `strict`, and as when the strategy's callback panics.
#[tokio::test]
async fn an_unhandled_call_to_the_base_url_is_unimplemented_under_every_strategy() {
    let itself = "addressed to this mocklib listener itself";
    let strategies = [
        (UnhandledRequest::Warn, itself),
        (UnhandledRequest::Bypass, itself),
        (UnhandledRequest::custom(|_| {}), itself),
        (
            UnhandledRequest::Error,
            "Did you mean to request \"grpc helloworld.Greeter/SayHello\"",
        ),
        (
            UnhandledRequest::Strict,
            "without a matching request handler",
        ),
        (
            UnhandledRequest::custom(|_| panic!("refused by the test")),
            "callback panicked",
        ),
    ];
    for (strategy, why) in strategies {
        let named = format!("{strategy:?}");
        let server = say_hello_only();
        server.listen_with(ListenOptions::new().on_unhandled_request(strategy));
        let mut client = base_url_client(&server).await;
        let status = spell_hello(&mut client, request("Bo")).await;
        assert_eq!(status.code(), Code::Unimplemented, "{named}: {status:?}");
        assert_status(&status, Code::Unimplemented, why);
        still_serves(&mut client).await;
        if named == "Strict" {
            let report = server.verify().unwrap_err().to_string();
            assert!(report.contains(SPELL_HELLO), "{report}");
        }
    }
}

/// In process through the tower front door: `service()` has nothing
/// behind it, so under `warn` the call is `UNIMPLEMENTED` too (not the
/// service's error, which tonic reads as `UNKNOWN`); under `error` the
/// engine's `UNIMPLEMENTED`.
#[tokio::test]
async fn an_unhandled_call_in_process_is_unimplemented() {
    for (strategy, why) in [
        (UnhandledRequest::Warn, "nothing is behind this service"),
        (
            UnhandledRequest::Error,
            "without a matching request handler",
        ),
    ] {
        let server = say_hello_only();
        server.listen_with(ListenOptions::new().on_unhandled_request(strategy));
        let origin = "http://greeter.internal".parse().unwrap();
        let mut client = GreeterClient::with_origin(server.service(), origin);
        let status = spell_hello(&mut client, request("Bo")).await;
        assert_status(&status, Code::Unimplemented, why);
        still_serves(&mut client).await;
    }
}

/// Through the HTTPS proxy (`CONNECT`, TLS): a host where nothing listens
/// is `UNAVAILABLE` with the upstream's error under `warn`, `UNIMPLEMENTED`
/// under `error`; the listener's own address is `UNIMPLEMENTED` (nothing
/// real behind it).
#[tokio::test]
async fn an_unhandled_call_through_the_https_proxy_is_unavailable_or_unimplemented() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();

    let warn = say_hello_only();
    warn.listen();
    let mut client = https_proxy_client(&warn, format!("localhost:{closed}")).await;
    let status = spell_hello(&mut client, request("Bo")).await;
    assert_status(&status, Code::Unavailable, "could not perform the call");
    assert!(status.message().contains("refused"), "{status:?}");
    still_serves(&mut client).await;

    let own = format!("localhost:{}", warn.url().port().unwrap());
    let mut client = https_proxy_client(&warn, own).await;
    let status = spell_hello(&mut client, request("Bo")).await;
    assert_status(
        &status,
        Code::Unimplemented,
        "addressed to this mocklib listener itself",
    );
    still_serves(&mut client).await;

    let error = say_hello_only();
    error.listen_with(ListenOptions::new().on_unhandled_request(UnhandledRequest::Error));
    let mut client = https_proxy_client(&error, format!("localhost:{closed}")).await;
    let status = spell_hello(&mut client, request("Bo")).await;
    assert_status(
        &status,
        Code::Unimplemented,
        "without a matching request handler",
    );
    still_serves(&mut client).await;
}

/// A channel to the listener as an h2c forward proxy: every connection
/// goes to `proxy`, and the calls carry the real server's authority.
async fn h2c_proxy_client(proxy: &url::Url, real: &str) -> GreeterClient<Channel> {
    let address = format!("{}:{}", proxy.host_str().unwrap(), proxy.port().unwrap());
    let connector = tower::service_fn(move |_: http::Uri| {
        let address = address.clone();
        async move {
            Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(
                tokio::net::TcpStream::connect(address).await?,
            ))
        }
    });
    let channel = Endpoint::from_shared(format!("http://{real}"))
        .unwrap()
        .connect_with_connector(connector)
        .await
        .unwrap();
    GreeterClient::new(channel)
}

/// A real server that cannot be reached (nothing listens on its port),
/// through the h2c proxy: `UNAVAILABLE`, naming the method and the error.
#[tokio::test]
async fn a_call_to_a_real_server_that_is_down_is_unavailable() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let server = say_hello_only();
    server.listen_with(ListenOptions::new().on_unhandled_request(UnhandledRequest::Bypass));
    let mut client = h2c_proxy_client(&server.proxy_url(), &closed.to_string()).await;
    let status = spell_hello(&mut client, request("Bo")).await;
    assert_status(&status, Code::Unavailable, "could not perform the call");
    assert!(status.message().contains("refused"), "{status:?}");
}

/// A call that already passed through this listener (its `Via` names it:
/// a name of the listener its address check cannot know) would loop if
/// performed: `UNAVAILABLE`, where an HTTP request gets `508`.
#[tokio::test]
async fn a_call_that_comes_back_through_the_listener_is_unavailable() {
    let server = say_hello_only();
    server.listen();
    let mut client = base_url_client(&server).await;
    let mut call = request("Bo");
    let via = format!(
        "1.1 mocklib-{}-{}",
        std::process::id(),
        server.url().port().unwrap()
    );
    call.metadata_mut().insert("via", via.parse().unwrap());
    let status = spell_hello(&mut client, call).await;
    assert_status(
        &status,
        Code::Unavailable,
        "already passed through this listener",
    );
    still_serves(&mut client).await;
}

/// `username:password` as HTTP Basic credentials (RFC 7617).
fn basic(username: &str, password: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes = format!("{username}:{password}").into_bytes();
    let mut encoded = String::new();
    for chunk in bytes.chunks(3) {
        let group = u32::from(chunk[0]) << 16
            | u32::from(*chunk.get(1).unwrap_or(&0)) << 8
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for index in 0..4 {
            if index <= chunk.len() {
                encoded.push(ALPHABET[(group >> (18 - 6 * index) & 63) as usize] as char);
            } else {
                encoded.push('=');
            }
        }
    }
    format!("Basic {encoded}")
}

/// The proxy credential of a boundary that has ended (a `mocklib serve`
/// scope, say): `UNAUTHENTICATED` saying so, where an HTTP request gets
/// `407`. The call goes through the h2c proxy with the credential, as a
/// client configured with the stale proxy URL sends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_with_the_credential_of_an_ended_boundary_is_unauthenticated() {
    let server = say_hello_only();
    server.listen();
    let stale = server
        .in_boundary({
            let server = server.clone();
            async move { server.proxy_url() }
        })
        .await;
    assert_eq!(stale.username(), "mocklib");
    let mut client = h2c_proxy_client(&stale, "greeter.example.com").await;
    let mut call = request("Bo");
    let credential = basic(stale.username(), stale.password().unwrap());
    call.metadata_mut()
        .insert("proxy-authorization", credential.parse().unwrap());
    let status = spell_hello(&mut client, call).await;
    assert_status(
        &status,
        Code::Unauthenticated,
        "names a boundary that has ended",
    );
}

/// A contract that every answer breaks.
struct NothingPasses;

impl mocklib::contract::Contract for NothingPasses {
    fn name(&self) -> &str {
        "nothing passes"
    }

    fn check(&self, answered: &mocklib::contract::Answered<'_>) -> Vec<mocklib::contract::Finding> {
        vec![mocklib::contract::Finding::new(
            "/status",
            "no answer at all",
            answered.status.as_str(),
        )]
    }
}

/// A strict contract replaces a mocked answer that breaks it with a `500`
/// listing the findings; a call gets `INTERNAL` with the first finding.
#[tokio::test]
async fn a_call_whose_answer_breaks_a_strict_contract_is_internal() {
    let server = say_hello_only();
    server.attach_contract_strict(NothingPasses);
    server.listen();
    let mut client = base_url_client(&server).await;
    let status = tokio::time::timeout(GUARD, client.say_hello(request("Kate")))
        .await
        .expect("the call hung")
        .unwrap_err();
    assert_eq!(status.code(), Code::Internal, "{status:?}");
    assert!(
        status.message().contains("/helloworld.Greeter/SayHello")
            && status.message().contains("breaks the contract")
            && status.message().contains("no answer at all"),
        "{status:?}"
    );
}
