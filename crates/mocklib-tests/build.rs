//! Generates the tonic client and server of protos/helloworld.proto for the
//! gRPC tests (feature `grpc`), as a user's build would: protox compiles the
//! file in Rust (no `protoc` to install), tonic-prost-build writes the code.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo::rerun-if-changed=protos");
    #[cfg(feature = "grpc")]
    {
        let descriptors = protox::compile(["helloworld.proto"], ["protos"])?;
        tonic_prost_build::configure()
            .build_client(true)
            .build_server(true)
            .compile_fds(descriptors)?;
    }
    Ok(())
}
