//! The hand-written messages of the gRPC tests' greeter
//! (protos/helloworld.proto's `HelloRequest` and `HelloReply`, derived with
//! prost as a user without code generation writes them), shared by
//! grpc.rs and grpc_bad_input.rs. grpc_generated.rs uses tonic's generated
//! ones instead.

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
