//! TLS on loopback for the library's tests (feature `tls`): an HTTPS
//! upstream with a test CA of its own, a client trusting a given CA, and
//! `CONNECT` tunnels through a proxy, as clients configured with an HTTPS
//! proxy open them. rustls on ring, chosen per config: no process-wide
//! provider is installed (the tests' binaries hold ring and aws-lc-rs, as a
//! user's may).

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A `CONNECT` tunnel to `authority` through the proxy at `proxy`.
pub async fn tunnel(proxy: SocketAddr, authority: &str) -> TcpStream {
    let mut tcp = TcpStream::connect(proxy).await.unwrap();
    let connect = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n");
    tcp.write_all(connect.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            tcp.read_exact(&mut byte),
        );
        read.await.expect("no hang").unwrap();
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    tcp
}

/// A connector that opens every connection as a `CONNECT` tunnel to
/// `authority` through the proxy at `proxy`, as a client configured with an
/// HTTPS proxy does; the client then speaks TLS inside it. For tonic's
/// `Endpoint::connect_with_connector` (which applies its `tls_config` to
/// the connector's streams) and hyper-util's client.
pub fn tunnel_connector(
    proxy: url::Url,
    authority: impl Into<String>,
) -> impl tower::Service<
    http::Uri,
    Response = hyper_util::rt::TokioIo<TcpStream>,
    Error = std::io::Error,
    Future = impl Send,
> + Clone {
    let proxy = proxy.socket_addrs(|| None).unwrap()[0];
    let authority: String = authority.into();
    tower::service_fn(move |_uri: http::Uri| {
        let authority = authority.clone();
        async move {
            Ok(hyper_util::rt::TokioIo::new(
                tunnel(proxy, &authority).await,
            ))
        }
    })
}

/// TLS to `host` over `tcp`, trusting the certificate authority `ca_pem`.
pub async fn tls_client(
    ca_pem: &str,
    host: &'static str,
    tcp: TcpStream,
) -> tokio_rustls::client::TlsStream<TcpStream> {
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    let ca = rustls_pki_types::CertificateDer::from_pem_slice(ca_pem.as_bytes()).unwrap();
    roots.add(ca).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let name = rustls_pki_types::ServerName::try_from(host).unwrap();
    connector.connect(name, tcp).await.unwrap()
}

/// A real HTTPS server for `app` on loopback (`localhost`), with a
/// certificate from a test CA of its own; returns its port and that CA's
/// PEM. It serves for the rest of the test's runtime.
pub async fn spawn_tls_upstream(app: axum::Router) -> (u16, String) {
    let (port, ca, _task) = spawn_stoppable_tls_upstream(app).await;
    (port, ca)
}

/// [`spawn_tls_upstream`], with the task to abort to take the server away.
pub async fn spawn_stoppable_tls_upstream(
    app: axum::Router,
) -> (u16, String, tokio::task::JoinHandle<()>) {
    let (mut config, ca) = localhost_tls_config();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (acceptor, app) = (acceptor.clone(), app.clone());
            // In the set: aborting the server ends its connections too.
            connections.spawn(async move {
                let Ok(tls) = acceptor.accept(stream).await else {
                    return;
                };
                let service = hyper_util::service::TowerToHyperService::new(app);
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                .await;
            });
        }
    });
    (port, ca, task)
}

/// A server config for `localhost` with a certificate from a test CA of
/// its own (rustls on ring, no ALPN), and that CA's PEM for the client to
/// trust.
pub fn localhost_tls_config() -> (rustls::ServerConfig, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "upstream test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &ca, &ca_key)
        .unwrap();
    let key = rustls_pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone()], key)
        .unwrap();
    (config, ca.pem())
}
