//! A gRPC service mocked for a tonic client: unary and server-streaming
//! methods, answered in process (no socket) and over the listener (h2c).
//!
//! `cargo run -p mocklib-tests --features grpc --example grpc`
//!
//! A generated client (`GreeterClient::new(channel)`) is used the same way;
//! this example calls the methods through `tonic::client::Grpc` so that it
//! needs no code generation.

use std::error::Error;

use futures_util::StreamExt;
use http::uri::PathAndQuery;
use mocklib::grpc::{self, Code, ResolverArgs, Status};
use mocklib::node::setup_server;

#[derive(Clone, PartialEq, prost::Message)]
struct HelloRequest {
    #[prost(string, tag = "1")]
    name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct HelloReply {
    #[prost(string, tag = "1")]
    message: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error + Send + Sync>> {
    let server = setup_server([
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
            "helloworld.Greeter/SayHelloStream",
            |args: ResolverArgs<HelloRequest>| {
                let name = args.message.name;
                Ok(
                    futures_util::stream::iter(["Hello", "Hi", "Hey"]).map(move |greeting| {
                        Ok(HelloReply {
                            message: format!("{greeting} {name}"),
                        })
                    }),
                )
            },
        ),
    ]);
    server.listen();

    // In process: the tower front door is a service tonic's client takes.
    let origin = "http://greeter.internal".parse()?;
    let mut in_process = tonic::client::Grpc::with_origin(server.service(), origin);
    in_process.ready().await?;
    let reply = in_process
        .unary::<_, HelloReply, _>(
            tonic::Request::new(HelloRequest { name: "Ada".into() }),
            PathAndQuery::from_static("/helloworld.Greeter/SayHello"),
            tonic_prost::ProstCodec::default(),
        )
        .await?;
    println!("in process: {}", reply.get_ref().message);
    assert_eq!(reply.get_ref().message, "Hello Ada!");

    // Over the listener (h2c), as a channel to a real server.
    let channel = tonic::transport::Endpoint::from_shared(server.url().to_string())?
        .connect()
        .await?;
    let mut over_h2c = tonic::client::Grpc::new(channel);
    over_h2c.ready().await?;
    let mut replies = over_h2c
        .server_streaming::<_, HelloReply, _>(
            tonic::Request::new(HelloRequest {
                name: "Grace".into(),
            }),
            PathAndQuery::from_static("/helloworld.Greeter/SayHelloStream"),
            tonic_prost::ProstCodec::default(),
        )
        .await?
        .into_inner();
    let mut messages = Vec::new();
    while let Some(reply) = replies.message().await? {
        println!("streamed: {}", reply.message);
        messages.push(reply.message);
    }
    assert_eq!(messages, ["Hello Grace", "Hi Grace", "Hey Grace"]);

    over_h2c.ready().await?;
    let status = over_h2c
        .unary::<_, HelloReply, _>(
            tonic::Request::new(HelloRequest::default()),
            PathAndQuery::from_static("/helloworld.Greeter/SayHello"),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .unwrap_err();
    println!("status: {:?} {}", status.code(), status.message());
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    server.close();
    Ok(())
}
