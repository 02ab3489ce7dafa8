//! The gRPC servers the grpc bench times and `scripts/bench-counted-grpc`
//! counts (feature `grpc`): mocklib's listener with three echo handlers
//! (unary, a 10,000-reply server stream, bidirectional), and a bare tonic
//! server (hyper-util's HTTP/2 server with `tonic::server::Grpc`) answering
//! the same methods with the same bytes; and the tonic client calls both
//! make (`tonic::client::Grpc`, what generated clients wrap).

use std::convert::Infallible;
use std::pin::Pin;
use std::time::{Duration, Instant};

use futures_util::Stream;
use http::uri::PathAndQuery;
use mocklib::grpc::{self, ResolverArgs};

use crate::announce::announce_and_wait;

/// The message both ways: 32 bytes of payload.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Msg {
    #[prost(bytes = "vec", tag = "1")]
    pub payload: Vec<u8>,
}

/// Replies of one server-streaming call.
pub const STREAMED: usize = 10_000;
/// The unary method's path.
pub const UNARY: &str = "/bench.Echo/Unary";
const STREAM: &str = "/bench.Echo/Stream";
const BIDI: &str = "/bench.Echo/Bidi";

/// The 32-byte message.
pub fn payload() -> Msg {
    Msg {
        payload: vec![7; 32],
    }
}

/// The server `name` (`grpc-mocklib`: the listener; `grpc-bare`: the bare
/// server on a 2-worker runtime of its own, as the listener's) alone,
/// until stdin closes.
pub fn serve(name: &str) {
    if name == "grpc-mocklib" || name == "grpc-mocklib-nojournal" {
        let server = mocklib::node::setup_server(echo_handlers());
        if name == "grpc-mocklib-nojournal" {
            server.listen_with(mocklib::node::ListenOptions::new().journal_capacity(0));
        } else {
            server.listen();
        }
        announce_and_wait(server.url().as_str().trim_end_matches('/'));
        server.close();
    } else {
        let runtime = runtime();
        let url = runtime.block_on(bare_server());
        announce_and_wait(&url);
        runtime.shutdown_background();
    }
}

/// A client `mode` of the counted runs against `url`, `count` times on
/// one connection: `grpc-client` unary calls, `grpc-client-bidi` messages
/// echoed one by one in one call, `grpc-client-stream` server-streaming
/// calls. Returns how many it made.
pub fn client(mode: &str, url: &str, count: usize) -> usize {
    runtime().block_on(async {
        let mut grpc = channel(url).await;
        match mode {
            "grpc-client" => {
                for _ in 0..count {
                    unary(&mut grpc).await;
                }
                count
            }
            // `bidi_echo` makes one round trip more than the times it returns.
            "grpc-client-bidi" => bidi_echo(&mut grpc, count - 1).await.len() + 1,
            _ => {
                for _ in 0..count {
                    stream_rate(&mut grpc).await;
                }
                count
            }
        }
    })
}

/// A tokio multi-thread runtime with 2 workers, as the listener's.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

type ReplyStream = Pin<Box<dyn Stream<Item = Result<Msg, tonic::Status>> + Send>>;

/// The bare server's methods: each message back as it came.
#[derive(Clone)]
pub struct Bare;

impl tonic::server::UnaryService<Msg> for Bare {
    type Response = Msg;
    type Future = std::future::Ready<Result<tonic::Response<Msg>, tonic::Status>>;
    fn call(&mut self, request: tonic::Request<Msg>) -> Self::Future {
        std::future::ready(Ok(tonic::Response::new(request.into_inner())))
    }
}

impl tonic::server::ServerStreamingService<Msg> for Bare {
    type Response = Msg;
    type ResponseStream = ReplyStream;
    type Future = std::future::Ready<Result<tonic::Response<ReplyStream>, tonic::Status>>;
    fn call(&mut self, _request: tonic::Request<Msg>) -> Self::Future {
        let replies: ReplyStream = Box::pin(futures_util::stream::iter(
            (0..STREAMED).map(|_| Ok(payload())),
        ));
        std::future::ready(Ok(tonic::Response::new(replies)))
    }
}

impl tonic::server::StreamingService<Msg> for Bare {
    type Response = Msg;
    type ResponseStream = tonic::Streaming<Msg>;
    type Future = std::future::Ready<Result<tonic::Response<Self::ResponseStream>, tonic::Status>>;
    fn call(&mut self, request: tonic::Request<tonic::Streaming<Msg>>) -> Self::Future {
        // Each message back as it arrives.
        std::future::ready(Ok(tonic::Response::new(request.into_inner())))
    }
}

/// A bare tonic server (h2c) serving the three methods.
pub async fn bare_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            // As tonic's `Server::builder()` does (and mocklib's listener):
            // without it, Nagle's algorithm holds a small write back until
            // the client's delayed ACK, stalling a call for ~40 ms.
            stream.set_nodelay(true).unwrap();
            let service = hyper::service::service_fn(
                |request: http::Request<hyper::body::Incoming>| async move {
                    let path = request.uri().path().to_owned();
                    let request = request.map(tonic::body::Body::new);
                    let mut grpc =
                        tonic::server::Grpc::new(tonic_prost::ProstCodec::<Msg, Msg>::default());
                    let response = match path.as_str() {
                        STREAM => grpc.server_streaming(Bare, request).await,
                        BIDI => grpc.streaming(Bare, request).await,
                        _ => grpc.unary(Bare, request).await,
                    };
                    Ok::<_, Infallible>(response)
                },
            );
            tokio::spawn(
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .http2_only()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .into_owned(),
            );
        }
    });
    format!("http://{address}")
}

/// A tonic client connected to `url`.
pub async fn channel(url: &str) -> tonic::client::Grpc<tonic::transport::Channel> {
    let channel = tonic::transport::Endpoint::from_shared(url.to_owned())
        .unwrap()
        .connect()
        .await
        .unwrap();
    tonic::client::Grpc::new(channel)
}

/// One unary call of the 32-byte message: its round trip.
pub async fn unary<S>(grpc: &mut tonic::client::Grpc<S>) -> Duration
where
    S: tonic::client::GrpcService<tonic::body::Body>,
    S::ResponseBody: hyper::body::Body<Data = bytes::Bytes> + Send + 'static,
    <S::ResponseBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let started = Instant::now();
    grpc.ready().await.map_err(Into::into).unwrap();
    let reply: tonic::Response<Msg> = grpc
        .unary(
            tonic::Request::new(payload()),
            PathAndQuery::from_static(UNARY),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .unwrap();
    assert_eq!(reply.get_ref().payload.len(), 32);
    started.elapsed()
}

/// Messages per second of one 10,000-message server stream.
pub async fn stream_rate(grpc: &mut tonic::client::Grpc<tonic::transport::Channel>) -> f64 {
    let started = Instant::now();
    grpc.ready().await.unwrap();
    let mut replies = grpc
        .server_streaming::<_, Msg, _>(
            tonic::Request::new(payload()),
            PathAndQuery::from_static(STREAM),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .unwrap()
        .into_inner();
    let mut count = 0;
    while let Some(reply) = replies.message().await.unwrap() {
        assert_eq!(reply.payload.len(), 32);
        count += 1;
    }
    assert_eq!(count, STREAMED);
    STREAMED as f64 / started.elapsed().as_secs_f64()
}

/// One bidirectional call of ping-pong round trips (send a message, wait
/// for its echo, send the next): the time of each of `count` round trips
/// after the first, which also opens the call.
pub async fn bidi_echo<S>(grpc: &mut tonic::client::Grpc<S>, count: usize) -> Vec<Duration>
where
    S: tonic::client::GrpcService<tonic::body::Body>,
    S::ResponseBody: hyper::body::Body<Data = bytes::Bytes> + Send + 'static,
    <S::ResponseBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (sender, receiver) = tokio::sync::mpsc::channel::<Msg>(1);
    let outgoing = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|message| (message, receiver))
    });
    let mut round_trips = Vec::with_capacity(count);
    // The first message is queued before the call opens; its round trip,
    // which includes opening the call, is left out below.
    let mut started = Instant::now();
    sender.send(payload()).await.unwrap();
    grpc.ready().await.map_err(Into::into).unwrap();
    let mut replies = grpc
        .streaming(
            tonic::Request::new(outgoing),
            PathAndQuery::from_static(BIDI),
            tonic_prost::ProstCodec::<Msg, Msg>::default(),
        )
        .await
        .unwrap()
        .into_inner();
    loop {
        let reply = replies.message().await.unwrap().expect("an echo");
        round_trips.push(started.elapsed());
        assert_eq!(reply.payload.len(), 32);
        if round_trips.len() == count + 1 {
            break;
        }
        started = Instant::now();
        sender.send(payload()).await.unwrap();
    }
    drop(sender);
    assert!(replies.message().await.unwrap().is_none());
    round_trips.remove(0);
    round_trips
}

/// mocklib's handlers for the three methods.
pub fn echo_handlers() -> Vec<mocklib::Handler> {
    vec![
        grpc::unary("bench.Echo/Unary", |args: ResolverArgs<Msg>| {
            Ok(args.message)
        }),
        grpc::server_streaming("bench.Echo/Stream", |_: ResolverArgs<Msg>| {
            Ok(futures_util::stream::iter(
                (0..STREAMED).map(|_| Ok(payload())),
            ))
        }),
        grpc::bidi_streaming(
            "bench.Echo/Bidi",
            |args: ResolverArgs<grpc::Messages<Msg>>| Ok(args.message),
        ),
    ]
}
