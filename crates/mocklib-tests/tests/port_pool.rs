//! The main port of a server that listens on "any port" is pooled: after
//! `close()` it answers `503` with an explanation (a gRPC call,
//! `UNAVAILABLE`), the next `listen()` takes it, and a keep-alive
//! connection to it reaches the new server. A port asked for by number is
//! really closed; tunnels end with their server.
//!
//! Its own test binary (not a module of tests/it), with one test: the pool
//! is per process, and any test listening beside it could take the pooled
//! port under its feet.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use mocklib::node::setup_server;
use mocklib::{HttpResponse, ListenOptions, http};

/// One keep-alive HTTP/1.1 connection.
struct Connection(BufReader<TcpStream>);

impl Connection {
    fn open(port: u16) -> Self {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Connection(BufReader::new(stream))
    }

    /// Sends `GET path` over this raw socket and returns the status and body
    /// of the answer.
    fn get_over_socket(&mut self, path: &str) -> (u16, String) {
        let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        self.0.get_mut().write_all(request.as_bytes()).unwrap();
        let mut status_line = String::new();
        self.0.read_line(&mut status_line).unwrap();
        let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.0.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap();
                }
            }
        }
        let mut body = vec![0; length];
        self.0.read_exact(&mut body).unwrap();
        (status, String::from_utf8(body).unwrap())
    }
}

fn server_answering(name: &'static str) -> mocklib::node::Server {
    setup_server([http::get("/who", move |_| HttpResponse::text(name))])
}

#[test]
fn ports_are_pooled_numbered_ports_closed_and_tunnels_end_with_their_server() {
    ports_are_pooled_and_keep_alive_connections_follow_the_port();
    a_grpc_call_between_two_servers_is_unavailable();
    a_tunnel_ends_with_its_server();
}

fn ports_are_pooled_and_keep_alive_connections_follow_the_port() {
    let first = server_answering("first");
    first.listen();
    let port = first.url().port().unwrap();
    let mut connection = Connection::open(port);
    assert_eq!(
        connection.get_over_socket("/who"),
        (200, "first".to_owned())
    );

    first.close();
    let (status, body) = connection.get_over_socket("/who");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("has closed"), "{body}");

    let second = server_answering("second");
    second.listen();
    assert_eq!(
        second.url().port(),
        Some(port),
        "the pooled port is lent again"
    );
    assert_eq!(
        connection.get_over_socket("/who"),
        (200, "second".to_owned())
    );
    second.close();

    // A port asked for by number is closed for real: it can be bound again.
    let numbered = server_answering("numbered");
    numbered.listen_with(ListenOptions::new().port(port_nobody_uses()));
    let number = numbered.url().port().unwrap();
    assert_eq!(Connection::open(number).get_over_socket("/who").0, 200);
    numbered.close();
    let rebound = (0..100).find_map(|_| {
        std::thread::sleep(Duration::from_millis(10));
        std::net::TcpListener::bind(("127.0.0.1", number)).ok()
    });
    assert!(
        rebound.is_some(),
        "port {number} is still held after close()"
    );
}

/// Any message: the calls here are answered by mocklib itself.
#[derive(Clone, PartialEq, prost::Message)]
struct Empty {}

/// A gRPC call with tonic over `channel`: the status it ends with.
async fn grpc_call(channel: tonic::transport::Channel) -> tonic::Status {
    let mut grpc = tonic::client::Grpc::new(channel);
    let call = async {
        grpc.ready().await.unwrap();
        grpc.unary::<Empty, Empty, _>(
            tonic::Request::new(Empty {}),
            ::http::uri::PathAndQuery::from_static("/helloworld.Greeter/SayHello"),
            tonic_prost::ProstCodec::default(),
        )
        .await
    };
    tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call hung")
        .expect_err("no handler answers it")
}

/// A gRPC client (tonic) keeping its connection to a pooled port between
/// two servers gets `UNAVAILABLE` saying why, not the 503's text read as a
/// message frame; without the `grpc` feature (this binary has only `net`).
fn a_grpc_call_between_two_servers_is_unavailable() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let first = setup_server([]);
        first.listen();
        let port = first.url().port().unwrap();
        let channel = tonic::transport::Endpoint::from_shared(first.url().to_string())
            .unwrap()
            .connect()
            .await
            .unwrap();
        // No handler, nothing real behind the base URL.
        let status = grpc_call(channel.clone()).await;
        assert_eq!(status.code(), tonic::Code::Unimplemented, "{status:?}");

        first.close();
        let status = grpc_call(channel.clone()).await;
        assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
        assert!(
            status.message().contains("/helloworld.Greeter/SayHello")
                && status.message().contains("has closed"),
            "{status:?}"
        );

        let second = setup_server([]);
        second.listen();
        assert_eq!(
            second.url().port(),
            Some(port),
            "the pooled port is lent again"
        );
        let status = grpc_call(channel).await;
        assert_eq!(status.code(), tonic::Code::Unimplemented, "{status:?}");
        second.close();
    });
}

fn a_tunnel_ends_with_its_server() {
    let server = server_answering("tunnelled");
    server.listen();
    let proxy = server.proxy_url().port().unwrap();
    let mut stream = TcpStream::connect(("127.0.0.1", proxy)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(b"CONNECT api.example.com:80 HTTP/1.1\r\nHost: api.example.com:80\r\n\r\n")
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    while line != "\r\n" {
        line.clear();
        reader.read_line(&mut line).unwrap();
    }
    server.close();
    // The tunnel's server is gone: the connection is closed, not lent on.
    let mut rest = Vec::new();
    let read = reader.read_to_end(&mut rest);
    let closed = match &read {
        Ok(0) => true,
        Err(error) => error.kind() == std::io::ErrorKind::ConnectionReset,
        Ok(_) => false,
    };
    assert!(closed, "the tunnel stayed open: {read:?} {rest:?}");
}

/// A free port number (bound and released at once).
fn port_nobody_uses() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
