//! gRPC handlers answering a real tonic client over the listener (h2c on
//! the base URL).

use std::time::Duration;

use crate::greeter::{HelloReply, HelloRequest};
use http::uri::PathAndQuery;
use mocklib::grpc::{self, Code, ResolverArgs, Status};
use mocklib::node::{Server, setup_server};
use mocklib::{ListenOptions, UnhandledRequest, journal::AnswerSummary};

/// Not a `HelloRequest`: field 1 is a number where a string is expected.
#[derive(Clone, PartialEq, prost::Message)]
struct NotAHelloRequest {
    #[prost(uint64, tag = "1")]
    name: u64,
}

const SAY_HELLO: &str = "/helloworld.Greeter/SayHello";
const GUARD: Duration = Duration::from_secs(10);

async fn client(server: &Server) -> tonic::client::Grpc<tonic::transport::Channel> {
    let channel = tonic::transport::Endpoint::from_shared(server.url().to_string())
        .unwrap()
        .connect()
        .await
        .unwrap();
    tonic::client::Grpc::new(channel)
}

async fn call<Req, Reply>(
    grpc: &mut tonic::client::Grpc<tonic::transport::Channel>,
    path: &'static str,
    request: Req,
) -> Result<tonic::Response<Reply>, tonic::Status>
where
    Req: prost::Message + Send + Sync + 'static,
    Reply: prost::Message + Default + Send + Sync + 'static,
{
    tokio::time::timeout(GUARD, async {
        grpc.ready().await.unwrap();
        grpc.unary(
            tonic::Request::new(request),
            PathAndQuery::from_static(path),
            tonic_prost::ProstCodec::default(),
        )
        .await
    })
    .await
    .expect("the call hung")
}

/// SayHello with `name`: the reply's message, or the status.
async fn say_hello<S>(
    grpc: &mut tonic::client::Grpc<S>,
    name: &str,
) -> Result<String, tonic::Status>
where
    S: tonic::client::GrpcService<tonic::body::Body>,
    S::ResponseBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    <S::ResponseBody as http_body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    tokio::time::timeout(GUARD, async {
        grpc.ready()
            .await
            .map_err(|e| tonic::Status::unknown(e.into().to_string()))?;
        let request = tonic::Request::new(HelloRequest {
            name: name.to_owned(),
        });
        let reply: tonic::Response<HelloReply> = grpc
            .unary(
                request,
                PathAndQuery::from_static(SAY_HELLO),
                tonic_prost::ProstCodec::default(),
            )
            .await?;
        Ok(reply.into_inner().message)
    })
    .await
    .expect("the call hung")
}

fn greeter() -> mocklib::Handler {
    grpc::unary(
        "helloworld.Greeter/SayHello",
        |args: ResolverArgs<HelloRequest>| {
            if args.message.name.is_empty() {
                return Err(Status::new(Code::InvalidArgument, "a name, please")
                    .with_metadata("x-hint", "set name"));
            }
            Ok(HelloReply {
                message: format!("Hello {}!", args.message.name),
            })
        },
    )
}

#[tokio::test]
async fn a_unary_call_is_answered_over_h2c_and_journaled() {
    let server = setup_server([greeter()]);
    server.listen();
    let mut grpc = client(&server).await;

    assert_eq!(say_hello(&mut grpc, "Kate").await.unwrap(), "Hello Kate!");

    let journal = server.requests();
    assert_eq!(journal.len(), 1);
    assert_eq!(journal[0].url().path(), SAY_HELLO);
    assert_eq!(
        journal[0]
            .handler()
            .map(|h| h.header().to_owned())
            .as_deref(),
        Some("grpc helloworld.Greeter/SayHello")
    );
    assert_eq!(
        *journal[0].answer(),
        AnswerSummary::Mocked(http::StatusCode::OK)
    );
}

#[tokio::test]
async fn a_status_reaches_the_client_with_its_message_and_metadata() {
    let server = setup_server([greeter()]);
    server.listen();
    let mut grpc = client(&server).await;
    let status = call::<_, HelloReply>(&mut grpc, SAY_HELLO, HelloRequest::default())
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert_eq!(status.message(), "a name, please");
    assert_eq!(status.metadata().get("x-hint").unwrap(), "set name");
}

#[tokio::test]
async fn none_falls_through_and_use_handlers_overrides_per_test() {
    let server = setup_server([
        grpc::unary(
            "helloworld.Greeter/SayHello",
            |args: ResolverArgs<HelloRequest>| {
                if args.message.name == "skip" {
                    return None;
                }
                Some(Ok(HelloReply {
                    message: "first".into(),
                }))
            },
        ),
        greeter(),
    ]);
    server.listen();
    let mut grpc = client(&server).await;
    assert_eq!(say_hello(&mut grpc, "skip").await.unwrap(), "Hello skip!");
    assert_eq!(say_hello(&mut grpc, "Kim").await.unwrap(), "first");

    server.use_handlers([grpc::unary(
        "helloworld.Greeter/SayHello",
        |_: ResolverArgs<HelloRequest>| async {
            Ok(HelloReply {
                message: "overridden".into(),
            })
        },
    )
    .once()]);
    assert_eq!(say_hello(&mut grpc, "x").await.unwrap(), "overridden");
    assert_eq!(
        say_hello(&mut grpc, "x").await.unwrap(),
        "first",
        "the once-handler is used up"
    );
}

#[tokio::test]
async fn a_message_that_does_not_decode_is_internal_and_says_why() {
    let server = setup_server([greeter()]);
    server.listen();
    let mut grpc = client(&server).await;
    let status = call::<_, HelloReply>(&mut grpc, SAY_HELLO, NotAHelloRequest { name: 7 })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Internal);
    assert!(
        status.message().contains("does not decode as HelloRequest"),
        "{}",
        status.message()
    );
    // The server keeps serving.
    assert_eq!(say_hello(&mut grpc, "again").await.unwrap(), "Hello again!");
}

#[tokio::test]
async fn the_deadline_and_metadata_reach_the_resolver() {
    let server = setup_server([grpc::unary(
        "helloworld.Greeter/SayHello",
        |args: ResolverArgs<HelloRequest>| {
            Ok(HelloReply {
                message: format!(
                    "{:?} {}",
                    args.deadline,
                    args.metadata
                        .get("x-tenant")
                        .map_or("-", |v| v.to_str().unwrap())
                ),
            })
        },
    )]);
    server.listen();
    let mut grpc = client(&server).await;
    let mut request = tonic::Request::new(HelloRequest { name: "x".into() });
    request.set_timeout(Duration::from_millis(1500));
    request
        .metadata_mut()
        .insert("x-tenant", "acme".parse().unwrap());
    grpc.ready().await.unwrap();
    let reply: tonic::Response<HelloReply> = grpc
        .unary(
            request,
            PathAndQuery::from_static(SAY_HELLO),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .unwrap();
    assert_eq!(reply.get_ref().message, "Some(1.5s) acme");
}

#[tokio::test]
async fn an_invalid_method_name_is_refused_at_creation() {
    for method in ["SayHello", "helloworld.Greeter/", "/a/b/c", "a b/c"] {
        let error = grpc::try_unary(method, |_: ResolverArgs<HelloRequest>| {
            Ok::<HelloReply, Status>(HelloReply::default())
        })
        .unwrap_err();
        assert!(
            error.to_string().contains("package.Service/Method"),
            "{method}: {error}"
        );
    }
    // A call of a method no handler answers, with the `error` strategy.
    let server = setup_server([greeter()]);
    server.listen_with(ListenOptions::new().on_unhandled_request(UnhandledRequest::Error));
    let mut grpc = client(&server).await;
    let status = call::<_, HelloReply>(
        &mut grpc,
        "/helloworld.Greeter/SayGoodbye",
        HelloRequest::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unimplemented, "{status:?}");
    assert!(
        status.message().contains("/helloworld.Greeter/SayGoodbye")
            && status
                .message()
                .contains("grpc helloworld.Greeter/SayHello"),
        "names the call and the closest handler: {}",
        status.message()
    );
    assert!(
        status.message().contains("body: streamed as it arrives"),
        "{}",
        status.message()
    );
}

/// In process, no socket: a tonic client over the tower front door (a
/// generated client takes any such service:
/// `GreeterClient::with_origin(server.service(), origin)`; the origin names
/// the service, as a channel's URL would).
#[tokio::test]
async fn a_client_over_the_tower_service_reaches_the_handlers_without_a_socket() {
    let server = setup_server([greeter()]);
    server.listen();
    let origin = "http://greeter.internal".parse().unwrap();
    let mut grpc = tonic::client::Grpc::with_origin(server.service(), origin);
    grpc.ready().await.unwrap();
    let reply: tonic::Response<HelloReply> = grpc
        .unary(
            tonic::Request::new(HelloRequest { name: "Lin".into() }),
            PathAndQuery::from_static(SAY_HELLO),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .unwrap();
    assert_eq!(reply.get_ref().message, "Hello Lin!");
    grpc.ready().await.unwrap();
    let status = grpc
        .unary::<_, HelloReply, _>(
            tonic::Request::new(HelloRequest::default()),
            PathAndQuery::from_static(SAY_HELLO),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
}

#[derive(Clone, PartialEq, prost::Message)]
struct Number {
    #[prost(int64, tag = "1")]
    value: i64,
}

const COUNT: &str = "/numbers.Counter/Count";
const SUM: &str = "/numbers.Counter/Sum";
const DOUBLE: &str = "/numbers.Counter/Double";

fn counter() -> Vec<mocklib::Handler> {
    use futures_util::StreamExt;
    vec![
        // Counts up to the request's value, failing at 13 if asked to go past it.
        grpc::server_streaming("numbers.Counter/Count", |args: ResolverArgs<Number>| {
            let up_to = args.message.value;
            Ok(futures_util::stream::iter(1..=up_to).map(|value| {
                if value == 13 {
                    Err(Status::new(Code::OutOfRange, "13 is unlucky"))
                } else {
                    Ok(Number { value })
                }
            }))
        }),
        grpc::client_streaming(
            "numbers.Counter/Sum",
            |args: ResolverArgs<grpc::Messages<Number>>| async move {
                let numbers: Vec<Result<Number, Status>> = args.message.collect().await;
                let mut sum = 0;
                for number in numbers {
                    sum += number?.value;
                }
                Ok(Number { value: sum })
            },
        ),
        grpc::bidi_streaming(
            "numbers.Counter/Double",
            |args: ResolverArgs<grpc::Messages<Number>>| {
                Ok(args
                    .message
                    .map(|number| number.map(|n| Number { value: n.value * 2 })))
            },
        ),
    ]
}

async fn streamed_replies(
    response: Result<tonic::Response<tonic::codec::Streaming<Number>>, tonic::Status>,
) -> (Vec<i64>, Option<tonic::Status>) {
    let mut stream = response.unwrap().into_inner();
    let mut values = Vec::new();
    loop {
        match tokio::time::timeout(GUARD, stream.message())
            .await
            .expect("the stream hung")
        {
            Ok(Some(number)) => values.push(number.value),
            Ok(None) => return (values, None),
            Err(status) => return (values, Some(status)),
        }
    }
}

#[tokio::test]
async fn a_server_stream_sends_every_reply_then_its_status() {
    let server = setup_server(counter());
    server.listen();
    let mut grpc = client(&server).await;
    {
        grpc.ready().await.unwrap();
        let response = grpc
            .server_streaming(
                tonic::Request::new(Number { value: 5 }),
                PathAndQuery::from_static(COUNT),
                tonic_prost::ProstCodec::default(),
            )
            .await;
        let (values, status) = streamed_replies(response).await;
        assert_eq!(values, [1, 2, 3, 4, 5]);
        assert!(status.is_none(), "{status:?}");

        grpc.ready().await.unwrap();
        let response = grpc
            .server_streaming(
                tonic::Request::new(Number { value: 20 }),
                PathAndQuery::from_static(COUNT),
                tonic_prost::ProstCodec::default(),
            )
            .await;
        let (values, status) = streamed_replies(response).await;
        assert_eq!(
            values,
            (1..=12).collect::<Vec<_>>(),
            "every reply before the error"
        );
        let status = status.expect("the stream ends with the resolver's status");
        assert_eq!(
            (status.code(), status.message()),
            (tonic::Code::OutOfRange, "13 is unlucky")
        );
    }
}

#[tokio::test]
async fn a_server_stream_in_process_over_the_tower_service() {
    let server = setup_server(counter());
    server.listen();
    let origin = "http://numbers.internal".parse().unwrap();
    let mut grpc = tonic::client::Grpc::with_origin(server.service(), origin);
    grpc.ready().await.unwrap();
    let response = grpc
        .server_streaming(
            tonic::Request::new(Number { value: 14 }),
            PathAndQuery::from_static(COUNT),
            tonic_prost::ProstCodec::default(),
        )
        .await;
    let (values, status) = streamed_replies(response).await;
    assert_eq!(values.len(), 12);
    assert_eq!(status.unwrap().code(), tonic::Code::OutOfRange);
}

#[tokio::test]
async fn client_and_bidirectional_streams_get_every_message() {
    let server = setup_server(counter());
    server.listen();
    let mut grpc = client(&server).await;
    let numbers = || futures_util::stream::iter([3, 4, 5].map(|value| Number { value }));

    grpc.ready().await.unwrap();
    let sum: tonic::Response<Number> = grpc
        .client_streaming(
            tonic::Request::new(numbers()),
            PathAndQuery::from_static(SUM),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .unwrap();
    assert_eq!(sum.get_ref().value, 12);

    grpc.ready().await.unwrap();
    let response = grpc
        .streaming(
            tonic::Request::new(numbers()),
            PathAndQuery::from_static(DOUBLE),
            tonic_prost::ProstCodec::default(),
        )
        .await;
    let (values, status) = streamed_replies(response).await;
    assert_eq!(values, [6, 8, 10]);
    assert!(status.is_none(), "{status:?}");
}

/// A Python `grpcio` client in a child process, given only `server.env()`:
/// it reaches `greeter.example.com:443` through the HTTPS proxy (`CONNECT`,
/// TLS with the server's CA, HTTP/2 by ALPN). The messages are written by
/// hand (field 1, a string) so the script needs no generated code.
#[tokio::test]
async fn a_grpcio_child_process_reaches_the_handlers_through_the_https_proxy() {
    const SCRIPT: &str = r#"
import sys, grpc
name = b"Ada"
request = b"\x0a" + bytes([len(name)]) + name
channel = grpc.secure_channel("greeter.example.com:443", grpc.ssl_channel_credentials())
say_hello = channel.unary_unary("/helloworld.Greeter/SayHello")
reply = say_hello(request, timeout=10)
print(reply[2:].decode())
try:
    say_hello(b"", timeout=10)
except grpc.RpcError as error:
    print(error.code().name, error.details())
"#;
    let server = setup_server([greeter()]);
    server.listen();
    let env = server.env();
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("python3")
            .args(["-c", SCRIPT])
            .envs(env)
            .output()
            .expect("python3 runs (scripts/test installs grpcio: python3 -m pip install grpcio)")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stdout, "Hello Ada!\nINVALID_ARGUMENT a name, please\n",
        "{stderr}"
    );
    let journal = server.requests();
    assert_eq!(
        journal[0].url().as_str(),
        "https://greeter.example.com/helloworld.Greeter/SayHello"
    );
}

fn slow_greeter(finalized: std::sync::Arc<std::sync::atomic::AtomicBool>) -> mocklib::Handler {
    grpc::unary(
        "helloworld.Greeter/SayHello",
        move |args: ResolverArgs<HelloRequest>| {
            let finalized = finalized.clone();
            args.finalize(move || finalized.store(true, std::sync::atomic::Ordering::SeqCst));
            async move {
                mocklib::delay(Duration::from_secs(30)).await;
                Ok(HelloReply::default())
            }
        },
    )
}

async fn eventually(flag: &std::sync::atomic::AtomicBool) -> bool {
    for _ in 0..100 {
        if flag.load(std::sync::atomic::Ordering::SeqCst) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn a_resolver_past_the_deadline_ends_the_call_with_deadline_exceeded() {
    let finalized = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let server = setup_server([slow_greeter(finalized.clone())]);
    server.listen();
    // In process: tonic's channel would also time the call itself and end
    // it at the client first, as `Cancelled`; here only mocklib does.
    let origin = "http://greeter.internal".parse().unwrap();
    let mut grpc = tonic::client::Grpc::with_origin(server.service(), origin);
    let mut request = tonic::Request::new(HelloRequest { name: "x".into() });
    request
        .metadata_mut()
        .insert("grpc-timeout", "200m".parse().unwrap());
    grpc.ready().await.unwrap();
    let started = std::time::Instant::now();
    let status = tokio::time::timeout(
        GUARD,
        grpc.unary::<_, HelloReply, _>(
            request,
            PathAndQuery::from_static(SAY_HELLO),
            tonic_prost::ProstCodec::default(),
        ),
    )
    .await
    .expect("the deadline ends the call")
    .unwrap_err();
    assert_eq!(status.code(), tonic::Code::DeadlineExceeded, "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "ended at the deadline, not the delay"
    );
    assert!(
        eventually(&finalized).await,
        "the dropped resolver's cleanup ran"
    );
}

#[tokio::test]
async fn a_client_that_cancels_drops_the_resolver() {
    let finalized = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let server = setup_server([slow_greeter(finalized.clone())]);
    server.listen();
    let mut grpc = client(&server).await;
    grpc.ready().await.unwrap();
    let call = grpc.unary::<_, HelloReply, _>(
        tonic::Request::new(HelloRequest { name: "x".into() }),
        PathAndQuery::from_static(SAY_HELLO),
        tonic_prost::ProstCodec::default(),
    );
    // The client gives up (drops the call): the stream is reset.
    assert!(
        tokio::time::timeout(Duration::from_millis(200), call)
            .await
            .is_err()
    );
    assert!(
        eventually(&finalized).await,
        "the resolver was dropped and its cleanup ran"
    );
}

/// A real gRPC server on loopback (tonic, h2c), answering SayHello with
/// "Hello from the real server".
async fn real_greeter() -> std::net::SocketAddr {
    #[derive(Clone)]
    struct Real;
    impl tonic::server::UnaryService<HelloRequest> for Real {
        type Response = HelloReply;
        type Future = std::pin::Pin<
            Box<
                dyn std::future::Future<Output = Result<tonic::Response<HelloReply>, tonic::Status>>
                    + Send,
            >,
        >;
        fn call(&mut self, request: tonic::Request<HelloRequest>) -> Self::Future {
            let name = request.into_inner().name;
            Box::pin(async move {
                if name == "fail" {
                    return Err(tonic::Status::not_found("the real server knows no fail"));
                }
                Ok(tonic::Response::new(HelloReply {
                    message: format!("Hello {name} from the real server"),
                }))
            })
        }
    }
    serve_h2c(|request| async move {
        let mut grpc = tonic::server::Grpc::new(
            tonic_prost::ProstCodec::<HelloReply, HelloRequest>::default(),
        );
        grpc.unary(Real, request).await
    })
    .await
}

/// A real gRPC server on loopback (hyper, h2c only) answering each request
/// with `answer`.
async fn serve_h2c<F, A>(answer: F) -> std::net::SocketAddr
where
    F: Fn(http::Request<tonic::body::Body>) -> A + Clone + Send + Sync + 'static,
    A: std::future::Future<Output = http::Response<tonic::body::Body>> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let answer = answer.clone();
            let service =
                hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
                    let answered = answer(request.map(tonic::body::Body::new));
                    async move { Ok::<_, std::convert::Infallible>(answered.await) }
                });
            tokio::spawn(
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .http2_only()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .into_owned(),
            );
        }
    });
    address
}

#[tokio::test]
async fn an_unhandled_call_goes_to_the_real_server_over_http2() {
    let real = real_greeter().await;
    let server = setup_server([grpc::unary(
        "helloworld.Greeter/SayHello",
        |args: ResolverArgs<HelloRequest>| {
            if args.message.name == "mocked" {
                Some(Ok(HelloReply {
                    message: "mocked".into(),
                }))
            } else {
                None
            }
        },
    )]);
    server.listen_with(ListenOptions::new().on_unhandled_request(UnhandledRequest::Bypass));
    // The client talks to the real server's address through the proxy: a
    // call no handler answers is performed there for real (h2c).
    let proxy = server.proxy_url();
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{real}"))
        .unwrap()
        .connect_with_connector(proxy_connector(proxy))
        .await
        .unwrap();
    let mut grpc = tonic::client::Grpc::new(channel);
    assert_eq!(
        say_hello(&mut grpc, "Bo").await.unwrap(),
        "Hello Bo from the real server"
    );
    assert_eq!(say_hello(&mut grpc, "mocked").await.unwrap(), "mocked");
    let status = call::<_, HelloReply>(
        &mut grpc,
        SAY_HELLO,
        HelloRequest {
            name: "fail".into(),
        },
    )
    .await
    .unwrap_err();
    assert_eq!(
        (status.code(), status.message()),
        (tonic::Code::NotFound, "the real server knows no fail")
    );
}

/// A connector that opens every connection to the listener, which then
/// sees absolute-form HTTP/2 requests (`:authority` the real server): the
/// listener as an h2c forward proxy.
fn proxy_connector(
    proxy: url::Url,
) -> impl tower::Service<
    http::Uri,
    Response = hyper_util::rt::TokioIo<tokio::net::TcpStream>,
    Error = std::io::Error,
    Future = impl Send,
> + Clone {
    tower::service_fn(move |_uri: http::Uri| {
        let proxy = proxy.clone();
        async move {
            let address = format!("{}:{}", proxy.host_str().unwrap(), proxy.port().unwrap());
            Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(
                tokio::net::TcpStream::connect(address).await?,
            ))
        }
    })
}

#[tokio::test]
async fn a_call_the_real_server_cannot_take_ends_with_unavailable() {
    // A port nobody listens on: the real call is refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let server = setup_server([]);
    server.listen_with(ListenOptions::new().on_unhandled_request(UnhandledRequest::Bypass));
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{closed}"))
        .unwrap()
        .connect_with_connector(proxy_connector(server.proxy_url()))
        .await
        .unwrap();
    let mut grpc = tonic::client::Grpc::new(channel);
    let status = call::<_, HelloReply>(&mut grpc, SAY_HELLO, HelloRequest::default())
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
    assert!(
        status
            .message()
            .contains("could not perform the call /helloworld.Greeter/SayHello for real"),
        "{}",
        status.message()
    );
}

/// A client that sends 1, 2, 3 one at a time, each only once the reply to
/// the one before has arrived, on numbers.Counter/Double: against a server
/// that reads the whole request before answering, it waits forever.
async fn ping_pong<S>(grpc: &mut tonic::client::Grpc<S>) -> Result<Vec<i64>, tonic::Status>
where
    S: tonic::client::GrpcService<tonic::body::Body>,
    S::ResponseBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    <S::ResponseBody as http_body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (sender, receiver) = tokio::sync::mpsc::channel::<Number>(1);
    let outgoing = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|number| (number, receiver))
    });
    sender.send(Number { value: 1 }).await.unwrap();
    tokio::time::timeout(GUARD, async {
        grpc.ready().await.map_err(|e| e.into()).unwrap();
        let mut replies = grpc
            .streaming(
                tonic::Request::new(outgoing),
                PathAndQuery::from_static(DOUBLE),
                tonic_prost::ProstCodec::<Number, Number>::default(),
            )
            .await?
            .into_inner();
        let mut values = Vec::new();
        let mut sender = Some(sender);
        loop {
            match replies.message().await {
                Ok(Some(reply)) => {
                    values.push(reply.value);
                    // The next number only now, or none after the third.
                    match values.len() {
                        n @ 1..=2 => sender
                            .as_ref()
                            .unwrap()
                            .send(Number {
                                value: n as i64 + 1,
                            })
                            .await
                            .unwrap(),
                        _ => drop(sender.take()),
                    }
                }
                Ok(None) => return Ok(values),
                Err(status) => return Err(status),
            }
        }
    })
    .await
    .expect("the bidirectional call hung: were the messages read as they came?")
}

#[tokio::test]
async fn a_bidirectional_call_answers_each_message_before_the_next_is_sent() {
    let server = setup_server(counter());
    server.listen();

    // Over the listener (h2c).
    let mut grpc = client(&server).await;
    assert_eq!(ping_pong(&mut grpc).await.unwrap(), [2, 4, 6]);

    // In process, through the tower front door.
    let origin = "http://counter.internal".parse().unwrap();
    let mut grpc = tonic::client::Grpc::with_origin(server.service(), origin);
    assert_eq!(ping_pong(&mut grpc).await.unwrap(), [2, 4, 6]);
    assert_eq!(server.requests().len(), 2);
}

/// A real gRPC server on loopback (tonic, h2c) whose numbers.Counter/Double
/// answers each number, times ten, as it arrives.
async fn real_counter() -> std::net::SocketAddr {
    use futures_util::StreamExt;
    #[derive(Clone)]
    struct Real;
    type Replies =
        std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<Number, tonic::Status>> + Send>>;
    impl tonic::server::StreamingService<Number> for Real {
        type Response = Number;
        type ResponseStream = Replies;
        type Future = std::pin::Pin<
            Box<
                dyn std::future::Future<Output = Result<tonic::Response<Replies>, tonic::Status>>
                    + Send,
            >,
        >;
        fn call(&mut self, request: tonic::Request<tonic::Streaming<Number>>) -> Self::Future {
            let numbers = request.into_inner();
            let replies: Replies = Box::pin(numbers.map(|number| {
                number.map(|n| Number {
                    value: n.value * 10,
                })
            }));
            Box::pin(async move { Ok(tonic::Response::new(replies)) })
        }
    }
    serve_h2c(|request| async move {
        let mut grpc =
            tonic::server::Grpc::new(tonic_prost::ProstCodec::<Number, Number>::default());
        grpc.streaming(Real, request).await
    })
    .await
}

#[tokio::test]
async fn an_unhandled_bidirectional_call_streams_both_ways_with_the_real_server() {
    let real = real_counter().await;
    let server = setup_server([]);
    server.listen_with(ListenOptions::new().on_unhandled_request(UnhandledRequest::Bypass));
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{real}"))
        .unwrap()
        .connect_with_connector(proxy_connector(server.proxy_url()))
        .await
        .unwrap();
    let mut grpc = tonic::client::Grpc::new(channel);
    // Each number reaches the real server, and its reply the client, while
    // the call goes on.
    assert_eq!(ping_pong(&mut grpc).await.unwrap(), [10, 20, 30]);
}

#[tokio::test]
async fn the_journal_shows_every_message_both_ways_and_the_status() {
    use mocklib::{grpc::CallRecord, journal::RecordedRequest};
    let server = setup_server(counter());
    server.listen();
    let mut grpc = client(&server).await;
    assert_eq!(ping_pong(&mut grpc).await.unwrap(), [2, 4, 6]);
    // A server stream that ends with a status after twelve replies.
    grpc.ready().await.unwrap();
    let response = grpc
        .server_streaming(
            tonic::Request::new(Number { value: 20 }),
            PathAndQuery::from_static(COUNT),
            tonic_prost::ProstCodec::default(),
        )
        .await;
    let (values, status) = streamed_replies(response).await;
    assert_eq!(values.len(), 12);
    assert_eq!(status.unwrap().code(), tonic::Code::OutOfRange);

    let journal = server.requests();
    let calls: Vec<&CallRecord> = journal
        .iter()
        .filter_map(RecordedRequest::grpc_call)
        .collect();
    assert_eq!(calls.len(), 2, "{journal:?}");

    let bidi = calls[0];
    assert_eq!(bidi.method(), DOUBLE);
    let shown = |messages: Vec<mocklib::grpc::RecordedMessage>| {
        messages.iter().map(|m| m.text()).collect::<Vec<_>>()
    };
    assert_eq!(
        shown(bidi.requests()),
        [
            "Number { value: 1 }",
            "Number { value: 2 }",
            "Number { value: 3 }"
        ]
    );
    assert_eq!(
        shown(bidi.replies()),
        [
            "Number { value: 2 }",
            "Number { value: 4 }",
            "Number { value: 6 }"
        ]
    );
    assert_eq!(bidi.status().map(|s| s.code()), Some(Code::Ok));
    // The bytes are the protobuf encoding: field 1, varint 2.
    assert_eq!(&bidi.replies()[0].bytes()[..], [0x08, 0x02]);

    let count = calls[1];
    assert_eq!(shown(count.requests()), ["Number { value: 20 }"]);
    assert_eq!(count.replies_sent(), 12);
    assert_eq!(count.replies()[11].text(), "Number { value: 12 }");
    let status = count.status().unwrap();
    assert_eq!(
        (status.code(), status.message()),
        (Code::OutOfRange, "13 is unlucky")
    );
}

#[tokio::test]
async fn a_resolver_that_panics_answers_internal_naming_the_panic() {
    let server = setup_server([grpc::unary(
        "numbers.Counter/Count",
        |_: ResolverArgs<Number>| -> Result<Number, Status> { panic!("the handler has a bug") },
    )]);
    server.listen();
    let mut grpc = client(&server).await;
    for _ in 0..2 {
        // Twice on one connection: the listener keeps serving it.
        let status = call::<_, Number>(&mut grpc, COUNT, Number { value: 1 })
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::Internal, "{status:?}");
        assert!(
            status.message().contains("the handler has a bug"),
            "{status:?}"
        );
    }
    // In process too (the tower front door).
    let mut in_process = tonic::client::Grpc::with_origin(
        server.service(),
        "http://numbers.internal".parse().unwrap(),
    );
    in_process.ready().await.unwrap();
    let status = in_process
        .unary::<_, Number, _>(
            tonic::Request::new(Number { value: 1 }),
            PathAndQuery::from_static(COUNT),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Internal, "{status:?}");
}

#[tokio::test]
async fn a_reply_stream_that_panics_ends_with_internal_after_its_replies() {
    use futures_util::StreamExt;
    let server = setup_server([grpc::server_streaming(
        "numbers.Counter/Count",
        |_: ResolverArgs<Number>| {
            Ok(futures_util::stream::iter(1..).map(|value| {
                assert!(value < 3, "the handler's stream has a bug");
                Ok(Number { value })
            }))
        },
    )]);
    server.listen();
    let mut grpc = client(&server).await;
    for _ in 0..2 {
        // Twice on one connection: the listener keeps serving it.
        grpc.ready().await.unwrap();
        let response = grpc
            .server_streaming(
                tonic::Request::new(Number { value: 0 }),
                PathAndQuery::from_static(COUNT),
                tonic_prost::ProstCodec::default(),
            )
            .await;
        let (values, status) = streamed_replies(response).await;
        assert_eq!(values, [1, 2]);
        let status = status.expect("a status after the replies");
        assert_eq!(status.code(), tonic::Code::Internal);
        assert!(
            status
                .message()
                .contains("reply stream panicked: the handler's stream has a bug"),
            "{status:?}"
        );
    }
}

#[tokio::test]
async fn the_journal_keeps_large_messages_up_to_its_byte_limit_and_counts_the_rest() {
    use mocklib::grpc::MAX_RECORDED_BYTES;
    #[derive(Clone, PartialEq, prost::Message)]
    struct Chunk {
        #[prost(bytes = "vec", tag = "1")]
        data: Vec<u8>,
    }
    // A file sent in chunks of 300 KB: all ten reach the client, the
    // journal keeps the first three (900 KB, within 1 MiB) and counts ten.
    let size = 300_000;
    let server = setup_server([grpc::server_streaming(
        "files.Files/Download",
        move |_: ResolverArgs<Chunk>| {
            Ok(futures_util::stream::iter((0..10u8).map(move |index| {
                Ok(Chunk {
                    data: vec![index; size],
                })
            })))
        },
    )]);
    server.listen();
    let mut grpc = client(&server).await;
    grpc.ready().await.unwrap();
    let mut replies = grpc
        .server_streaming::<_, Chunk, _>(
            tonic::Request::new(Chunk::default()),
            PathAndQuery::from_static("/files.Files/Download"),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .unwrap()
        .into_inner();
    let mut received = Vec::new();
    while let Some(chunk) = tokio::time::timeout(GUARD, replies.message())
        .await
        .expect("the stream hung")
        .unwrap()
    {
        received.push(chunk.data);
    }
    assert_eq!(received.len(), 10);
    assert!(
        received
            .iter()
            .enumerate()
            .all(|(i, data)| data.len() == size && data[0] == i as u8)
    );

    let [request] = server.requests().try_into().unwrap();
    let call = request.grpc_call().unwrap();
    assert_eq!(call.replies_sent(), 10);
    let kept = call.replies();
    assert_eq!(kept.len(), MAX_RECORDED_BYTES / (size + 4));
    for (index, reply) in kept.iter().enumerate() {
        let chunk: Chunk = prost::Message::decode(&reply.bytes()[..]).unwrap();
        assert_eq!((chunk.data.len(), chunk.data[0]), (size, index as u8));
    }
    assert_eq!(call.status().unwrap().code(), Code::Ok);
}

/// A channel to the real server at `real`, through `server`'s listener as
/// an h2c forward proxy.
async fn through_proxy(
    server: &Server,
    real: std::net::SocketAddr,
) -> tonic::client::Grpc<tonic::transport::Channel> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{real}"))
        .unwrap()
        .connect_with_connector(proxy_connector(server.proxy_url()))
        .await
        .unwrap();
    tonic::client::Grpc::new(channel)
}

#[tokio::test]
async fn a_resolver_alters_the_real_reply_and_passes_the_real_status_on() {
    let real = real_greeter().await;
    let server = setup_server([grpc::unary(
        "helloworld.Greeter/SayHello",
        |args: ResolverArgs<HelloRequest>| async move {
            let mut reply: HelloReply = args.real_reply().await?;
            reply.message.push_str(" (altered)");
            Ok(reply)
        },
    )]);
    server.listen();
    let mut grpc = through_proxy(&server, real).await;
    assert_eq!(
        say_hello(&mut grpc, "Bo").await.unwrap(),
        "Hello Bo from the real server (altered)"
    );
    let status = say_hello(&mut grpc, "fail").await.unwrap_err();
    assert_eq!(
        (status.code(), status.message()),
        (tonic::Code::NotFound, "the real server knows no fail")
    );
}

#[tokio::test]
async fn a_resolver_alters_each_real_reply_of_a_bidirectional_call_as_it_comes() {
    use futures_util::StreamExt;
    let real = real_counter().await;
    let server = setup_server([grpc::bidi_streaming(
        "numbers.Counter/Double",
        |args: ResolverArgs<grpc::Messages<Number>>| async move {
            let replies = args.real_replies::<Number>().await?;
            Ok(replies.map(|number| number.map(|n| Number { value: n.value + 1 })))
        },
    )]);
    server.listen();
    let mut grpc = through_proxy(&server, real).await;
    // The real server multiplies by ten; each reply, altered, reaches the
    // client before it sends the next number.
    assert_eq!(ping_pong(&mut grpc).await.unwrap(), [11, 21, 31]);
}

#[tokio::test]
async fn a_real_call_that_cannot_be_made_is_unavailable_for_the_resolver() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let server = setup_server([grpc::unary(
        "helloworld.Greeter/SayHello",
        |args: ResolverArgs<HelloRequest>| async move { args.real_reply::<HelloReply>().await },
    )]);
    server.listen();
    let mut grpc = through_proxy(&server, closed).await;
    let status = say_hello(&mut grpc, "Bo").await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
    assert!(
        status.message().contains("bypass()"),
        "{}",
        status.message()
    );
}
