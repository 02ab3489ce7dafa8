//! TLS termination for HTTPS tunnels: an in-memory certificate authority that
//! mints a leaf certificate for whichever host a client tunnels to.
//!
//! # Why a certificate authority at all
//!
//! A client that talks HTTPS through mocklib's proxy first sends
//! `CONNECT api.example.com:443` and then starts a TLS handshake *inside* the
//! tunnel, expecting to reach the real `api.example.com`. To read (and mock)
//! the requests, mocklib has to be the TLS server at the other end, and the
//! client only finishes the handshake if it is shown a certificate for
//! `api.example.com` that chains up to something it trusts. The hosts are not
//! known in advance, so mocklib cannot ship fixed certificates: instead each
//! mocklib server owns a small certificate authority (CA), the test trusts that
//! CA (mocklib hands out [`CertificateAuthority::certificate_pem`]), and the CA
//! signs a certificate for each host the moment a client first asks for it.
//!
//! # Why in memory, and one per server
//!
//! The CA's private key can vouch for *any* host name, so it must never
//! outlive the test that trusted it. It is generated fresh in memory for every
//! mocklib server and never written anywhere: nothing on disk could be stolen
//! or reused, and two servers (or two test runs) never trust each other's
//! certificates. Generating an ECDSA P-256 key takes well under a millisecond,
//! so there is nothing worth caching across runs.
//!
//! # Which host the certificate names
//!
//! The TLS ClientHello normally carries the host name in its SNI (Server Name
//! Indication) extension, and that is what the client will check the
//! certificate against, so SNI decides. Clients never send SNI for IP
//! addresses (`https://127.0.0.1/`), and some old or minimal clients send none
//! at all; for those the host of the `CONNECT` request is the only hint left,
//! so the certificate falls back to it (as an IP address SAN when it is an IP).
//!
//! # Cost
//!
//! Each leaf is minted once per host and CA and then cached, so a test suite
//! that makes a thousand requests to one API signs one certificate. A
//! [`ServerConfig`] is built per [`CertificateAuthority::acceptor`] call (that
//! is, per tunnel): it is a handful of small allocations, and building it per
//! tunnel lets the resolver know that tunnel's `CONNECT` host without any
//! shared mutable state. The one fallible part (checking the protocol
//! versions against the crypto provider) is done once, in
//! [`CertificateAuthority::generate`], so that `acceptor` cannot fail.

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustls::ServerConfig;
use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert, WantsServerCert};
use rustls::sign::CertifiedKey;
use rustls_pki_types::{CertificateDer, DnsName, PrivateKeyDer, PrivatePkcs8KeyDer};

use super::x509::{self, Host, Issuer, KeyPair, Kind, Template};

/// ALPN protocols offered to clients, in order of preference: HTTP/2 first,
/// because the listener speaks both and h2 multiplexes a client's requests
/// over one tunnel.
const ALPN_PROTOCOLS: [&[u8]; 2] = [b"h2", b"http/1.1"];

const DAY: Duration = Duration::from_secs(24 * 60 * 60);
/// Certificates start being valid a day in the past so that a client whose
/// clock runs a little behind (or a VM that just resumed) still accepts them.
const BACKDATE: Duration = DAY;
const CA_LIFETIME: Duration = Duration::from_secs(10 * 365 * 24 * 60 * 60);
/// Kept under the 398 days that some platforms (Apple's, notably) allow for a
/// server certificate, even counting the backdated day.
const LEAF_LIFETIME: Duration = Duration::from_secs(365 * 24 * 60 * 60);
/// X.520 limits a common name to 64 characters; longer DNS names (up to 253)
/// go in the SAN only, which is the part clients check anyway.
const MAX_COMMON_NAME: usize = 64;

/// Something went wrong creating the CA, a leaf certificate or a TLS config.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum TlsError {
    /// The host cannot be put in a certificate: it is neither a DNS name nor
    /// an IP address (e.g. it contains a space, or is a wildcard).
    #[error(
        "`{host}` is neither a valid DNS name nor an IP address, so no certificate can name it"
    )]
    InvalidHost {
        /// The host as it was asked for.
        host: String,
    },
    /// The crypto library could not generate a key or sign a certificate.
    #[error(
        "could not create the {what}: the {} crypto library failed",
        super::crypto::PROVIDER_NAME
    )]
    Certificate {
        /// Which key or certificate was being made.
        what: String,
    },
    /// rustls rejected a key or the TLS configuration.
    #[error("rustls rejected the {what}: {source}")]
    Rustls {
        /// What rustls was given.
        what: String,
        /// rustls's error.
        source: rustls::Error,
    },
    /// The operating system's random number generator failed.
    #[error("the system random number generator failed while making the {what}")]
    Random {
        /// What the random bytes were for.
        what: &'static str,
    },
    /// The system clock is before 1970, so no validity period can be computed.
    #[error("the system clock is set before 1970; cannot date certificates")]
    Clock,
}

/// A certificate authority that exists only in memory, for one mocklib server.
///
/// It signs a leaf certificate for each host that clients tunnel to (see the
/// module docs for why) and caches it, so the second handshake for a host
/// signs nothing. Share it as an `Arc`: [`acceptor`](Self::acceptor) takes
/// `self: &Arc<Self>` because every TLS config it builds keeps the CA alive.
pub(crate) struct CertificateAuthority {
    /// The CA's private key. Never serialized: dropping the CA drops the
    /// only copy.
    key: KeyPair,
    /// The CA's subject in DER: the issuer of every leaf.
    name: Vec<u8>,
    certificate_pem: String,
    common_name: String,
    provider: Arc<CryptoProvider>,
    /// A server config builder with the protocol versions already validated
    /// against `provider`, so that [`acceptor`](Self::acceptor) is infallible.
    server_config: rustls::ConfigBuilder<ServerConfig, WantsServerCert>,
    /// Leaf certificates by canonical host (lowercase DNS name, or the IP
    /// address as `IpAddr` displays it). Unbounded: a test talks to a handful
    /// of hosts, and the map dies with the server.
    leaves: Mutex<HashMap<String, Arc<CertifiedKey>>>,
}

impl fmt::Debug for CertificateAuthority {
    // Hand-written so that neither the private key nor a lock ends up in logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CertificateAuthority")
            .field("common_name", &self.common_name)
            .finish_non_exhaustive()
    }
}

impl CertificateAuthority {
    /// A fresh CA: an ECDSA P-256 key generated in memory (never written
    /// anywhere) and a self-signed CA certificate named
    /// `mocklib CA <random hex>`, valid from yesterday for about ten years.
    ///
    /// The random suffix tells apart the CAs of different servers when a
    /// person looks at a certificate chain or a trust store.
    pub(crate) fn generate() -> Result<Self, TlsError> {
        // Always name the provider explicitly: mocklib's dependency tree may
        // compile in more than one rustls provider, and then the provider-less
        // builders panic instead of guessing.
        let provider = super::crypto::provider();

        let common_name = format!(
            "mocklib CA {}",
            hex(&random_bytes::<8>(&provider, "CA name")?)
        );
        let key = generate_key("CA key")?;
        let name = x509::name(Some(&common_name));
        let template = template(&provider, &name, CA_LIFETIME, Kind::Authority)?;
        let issuer = Issuer {
            name: &name,
            key: &key,
        };
        let certificate = sign(&template, &key, &issuer, "CA certificate")?;
        let certificate_pem = super::pem_encode(&certificate);

        let server_config = ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|source| TlsError::Rustls {
                what: format!(
                    "protocol versions for the {} crypto provider",
                    super::crypto::PROVIDER_NAME
                ),
                source,
            })?
            // mocklib impersonates servers to its own test clients; it has no
            // reason to ask them for certificates.
            .with_no_client_auth();

        tracing::debug!(ca = %common_name, "generated an in-memory certificate authority");
        Ok(Self {
            key,
            name,
            certificate_pem,
            common_name,
            provider,
            server_config,
            leaves: Mutex::new(HashMap::new()),
        })
    }

    /// The CA certificate in PEM form, for clients to add to their trust store
    /// (`-----BEGIN CERTIFICATE-----` …).
    pub(crate) fn certificate_pem(&self) -> &str {
        &self.certificate_pem
    }

    /// The CA certificate in DER form, e.g. for a rustls `RootCertStore`.
    #[cfg(test)] // only the tests need the DER form
    pub(crate) fn certificate_der(&self) -> CertificateDer<'static> {
        use rustls_pki_types::pem::PemObject;
        CertificateDer::from_pem_slice(self.certificate_pem.as_bytes())
            .expect("the CA's own PEM parses")
    }

    /// A TLS acceptor for a tunnel opened with `CONNECT <connect_host>:<port>`.
    ///
    /// The certificate is chosen during the handshake: by the ClientHello's SNI
    /// when there is one (it is the name the client will verify), otherwise by
    /// `connect_host`, which may be an IP address (bracketed IPv6 such as
    /// `[::1]` is accepted) and then yields an IP address SAN. A host that is
    /// neither a DNS name nor an IP makes the handshake fail with an alert,
    /// logged as a warning.
    ///
    /// ALPN offers `h2` then `http/1.1`; a client that offers no ALPN gets
    /// none, and should then be spoken to in HTTP/1.1.
    ///
    /// The `ServerConfig` is built anew on each call (it is cheap); the
    /// certificates it serves are cached in `self` and shared between calls.
    pub(crate) fn acceptor(self: &Arc<Self>, connect_host: &str) -> tokio_rustls::TlsAcceptor {
        let resolver = LeafResolver {
            ca: Arc::clone(self),
            connect_host: connect_host.to_owned(),
        };
        let mut config = self
            .server_config
            .clone()
            .with_cert_resolver(Arc::new(resolver));
        config.alpn_protocols = ALPN_PROTOCOLS.iter().map(|p| p.to_vec()).collect();
        tokio_rustls::TlsAcceptor::from(Arc::new(config))
    }

    /// The leaf for `host`, from the cache or minted now.
    fn leaf_for(&self, host: &str) -> Result<Arc<CertifiedKey>, TlsError> {
        let name = LeafName::parse(host)?;
        let cache_key = name.to_string();
        // The map is only ever changed by a single `insert`, so it is
        // consistent even if some thread panicked while holding the lock.
        let mut leaves = self.leaves.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(leaf) = leaves.get(&cache_key) {
            return Ok(Arc::clone(leaf));
        }
        // Minting under the lock makes concurrent first handshakes for one
        // host share one certificate. It serializes minting across hosts, but
        // that takes about a millisecond and happens once per host.
        let leaf = Arc::new(self.mint(&name)?);
        leaves.insert(cache_key, Arc::clone(&leaf));
        Ok(leaf)
    }

    /// Generates a key and signs a certificate naming exactly `name` (never a
    /// wildcard), valid from yesterday for about a year.
    fn mint(&self, name: &LeafName) -> Result<CertifiedKey, TlsError> {
        let subject = name.to_string();
        let key = generate_key(&format!("key for {subject}"))?;
        // Clients match the SAN; the CN is only there for people reading the
        // certificate, and must fit X.520's length limit.
        let common_name = (subject.len() <= MAX_COMMON_NAME).then_some(subject.as_str());
        let host = match name {
            LeafName::Dns(dns) => Host::Dns(dns),
            LeafName::Ip(ip) => Host::Ip(*ip),
        };
        let leaf_name = x509::name(common_name);
        let template = template(&self.provider, &leaf_name, LEAF_LIFETIME, Kind::Leaf(host))?;
        let issuer = Issuer {
            name: &self.name,
            key: &self.key,
        };
        let certificate = sign(
            &template,
            &key,
            &issuer,
            &format!("certificate for {subject}"),
        )?;

        let key_der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.pkcs8_der().to_vec()));
        let signing_key = self
            .provider
            .key_provider
            .load_private_key(key_der)
            .map_err(|source| TlsError::Rustls {
                what: format!("private key for {subject}"),
                source,
            })?;
        tracing::debug!(host = %subject, ca = %self.common_name, "minted a leaf certificate");
        // The chain is the leaf alone: the client trusts the CA directly, so
        // sending the CA certificate too would only add bytes.
        Ok(CertifiedKey::new(vec![certificate], signing_key))
    }
}

/// Picks the leaf certificate while the handshake is under way, when the SNI
/// is known.
#[derive(Debug)]
struct LeafResolver {
    ca: Arc<CertificateAuthority>,
    connect_host: String,
}

impl ResolvesServerCert for LeafResolver {
    fn resolve(&self, client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        // SNI is what the client will verify the certificate against, so it
        // wins; `CONNECT`'s host covers IP addresses and clients without SNI.
        let host = client_hello.server_name().unwrap_or(&self.connect_host);
        match self.ca.leaf_for(host) {
            Ok(leaf) => Some(leaf),
            Err(error) => {
                // Returning None makes rustls abort the handshake with an
                // alert; the warning says why.
                tracing::warn!(
                    host,
                    connect_host = %self.connect_host,
                    %error,
                    "no TLS certificate for this tunnel; failing the handshake"
                );
                None
            }
        }
    }
}

/// A host in canonical form, as a leaf certificate names it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LeafName {
    /// A lowercase DNS name without a trailing dot.
    Dns(String),
    Ip(IpAddr),
}

impl LeafName {
    fn parse(host: &str) -> Result<Self, TlsError> {
        // `http::uri::Authority::host` keeps IPv6 brackets: `[::1]`.
        let unbracketed = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        if let Ok(ip) = unbracketed.parse::<IpAddr>() {
            return Ok(Self::Ip(ip));
        }
        // DNS names compare case-insensitively and `example.com.` is the same
        // host as `example.com`: one certificate serves all spellings.
        let name = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
        // rustls-pki-types' validation is the one clients apply: letters,
        // digits, `-`, `_`, no empty labels, no wildcards.
        match DnsName::try_from(name.as_str()) {
            Ok(_) => Ok(Self::Dns(name)),
            Err(_) => Err(TlsError::InvalidHost {
                host: host.to_owned(),
            }),
        }
    }
}

impl fmt::Display for LeafName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Dns(name) => f.write_str(name),
            Self::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

fn generate_key(what: &str) -> Result<KeyPair, TlsError> {
    KeyPair::generate().map_err(|x509::CryptoFailure| TlsError::Certificate {
        what: what.to_owned(),
    })
}

fn sign(
    template: &Template<'_>,
    key: &KeyPair,
    issuer: &Issuer<'_>,
    what: &str,
) -> Result<CertificateDer<'static>, TlsError> {
    match x509::certificate(template, key, issuer) {
        Ok(der) => Ok(CertificateDer::from(der)),
        Err(x509::CryptoFailure) => Err(TlsError::Certificate {
            what: what.to_owned(),
        }),
    }
}

/// A random serial, valid from a day ago until `lifetime` from now.
fn template<'a>(
    provider: &CryptoProvider,
    subject: &'a [u8],
    lifetime: Duration,
    kind: Kind<'a>,
) -> Result<Template<'a>, TlsError> {
    let now = SystemTime::now();
    if now < UNIX_EPOCH {
        return Err(TlsError::Clock);
    }
    // Serials must be unique per issuer; random ones also keep clients that
    // cache certificates by issuer and serial (e.g. Firefox) from confusing
    // the leaves of two mocklib runs.
    let serial = random_bytes::<16>(provider, "certificate serial number")?;
    Ok(Template {
        serial,
        subject,
        not_before: now - BACKDATE,
        not_after: now + lifetime,
        kind,
    })
}

fn random_bytes<const N: usize>(
    provider: &CryptoProvider,
    what: &'static str,
) -> Result<[u8; N], TlsError> {
    let mut bytes = [0; N];
    provider
        .secure_random
        .fill(&mut bytes)
        .map_err(|_| TlsError::Random { what })?;
    Ok(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rustls::pki_types::ServerName;
    use rustls::{ClientConfig, RootCertStore};
    use rustls_pki_types::CertificateDer;
    use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
    use tokio_rustls::TlsConnector;

    use super::*;

    /// What a finished handshake showed, seen from both ends.
    #[derive(Debug)]
    struct Handshake {
        /// The leaf certificate the client was shown (and verified).
        leaf: CertificateDer<'static>,
        client_alpn: Option<Vec<u8>>,
        server_alpn: Option<Vec<u8>>,
        /// The SNI the server received.
        server_sni: Option<String>,
    }

    fn provider() -> Arc<CryptoProvider> {
        Arc::new(rustls::crypto::aws_lc_rs::default_provider())
    }

    fn roots(cas: &[&CertificateAuthority]) -> RootCertStore {
        let mut roots = RootCertStore::empty();
        for ca in cas {
            roots.add(ca.certificate_der()).unwrap();
        }
        roots
    }

    fn client(roots: RootCertStore, alpn: &[&[u8]]) -> Arc<ClientConfig> {
        let mut config = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Arc::new(config)
    }

    fn trusting(ca: &CertificateAuthority) -> Arc<ClientConfig> {
        client(roots(&[ca]), &[])
    }

    fn dns(name: &str) -> ServerName<'static> {
        ServerName::try_from(name.to_owned()).unwrap()
    }

    fn new_ca() -> Arc<CertificateAuthority> {
        Arc::new(CertificateAuthority::generate().unwrap())
    }

    /// Runs a client and a server handshake against each other over `client_io`
    /// and `server_io`, then echoes one message through the tunnel to show it is
    /// usable. `Err` carries the client's error (a failed server makes the
    /// client fail too, since it answers with an alert or hangs up).
    async fn handshake_over<C, S>(
        acceptor: tokio_rustls::TlsAcceptor,
        config: Arc<ClientConfig>,
        name: ServerName<'static>,
        client_io: C,
        server_io: S,
    ) -> Result<Handshake, String>
    where
        C: AsyncRead + AsyncWrite + Unpin + Send + 'static,
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let server = tokio::spawn(async move {
            let mut tls = acceptor
                .accept(server_io)
                .await
                .map_err(|e| e.to_string())?;
            let (_, connection) = tls.get_ref();
            let alpn = connection.alpn_protocol().map(<[u8]>::to_vec);
            let sni = connection.server_name().map(str::to_owned);
            let mut buf = [0; 4];
            tls.read_exact(&mut buf).await.map_err(|e| e.to_string())?;
            tls.write_all(&buf).await.map_err(|e| e.to_string())?;
            tls.flush().await.map_err(|e| e.to_string())?;
            Ok::<_, String>((alpn, sni))
        });
        let client = async move {
            let mut tls = TlsConnector::from(config)
                .connect(name, client_io)
                .await
                .map_err(|e| e.to_string())?;
            let (_, connection) = tls.get_ref();
            let leaf = connection.peer_certificates().unwrap()[0].clone();
            let alpn = connection.alpn_protocol().map(<[u8]>::to_vec);
            tls.write_all(b"ping").await.map_err(|e| e.to_string())?;
            tls.flush().await.map_err(|e| e.to_string())?;
            let mut echo = [0; 4];
            tls.read_exact(&mut echo).await.map_err(|e| e.to_string())?;
            assert_eq!(&echo, b"ping");
            Ok::<_, String>((leaf, alpn))
        };
        let outcome = tokio::time::timeout(Duration::from_secs(10), async {
            let client = client.await;
            let server = server.await.expect("server task panicked");
            (client, server)
        })
        .await
        .expect("handshake hung");
        let (leaf, client_alpn) = outcome.0?;
        let (server_alpn, server_sni) = outcome.1.expect("client succeeded but server failed");
        Ok(Handshake {
            leaf,
            client_alpn,
            server_alpn,
            server_sni,
        })
    }

    async fn handshake(
        acceptor: tokio_rustls::TlsAcceptor,
        config: Arc<ClientConfig>,
        name: ServerName<'static>,
    ) -> Result<Handshake, String> {
        let (client_io, server_io) = tokio::io::duplex(64 * 1024);
        handshake_over(acceptor, config, name, client_io, server_io).await
    }

    fn contains(haystack: &[u8], needle: &[u8]) -> bool {
        haystack.windows(needle.len()).any(|w| w == needle)
    }

    fn cached(ca: &CertificateAuthority) -> Vec<String> {
        let mut hosts: Vec<_> = ca.leaves.lock().unwrap().keys().cloned().collect();
        hosts.sort();
        hosts
    }

    #[test]
    fn is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<CertificateAuthority>();
        assert_send_sync::<TlsError>();
    }

    #[tokio::test]
    async fn sni_names_the_certificate() {
        let ca = new_ca();
        let done = handshake(
            ca.acceptor("api.example.com"),
            trusting(&ca),
            dns("api.example.com"),
        )
        .await
        .unwrap();
        // The handshake itself is the proof: webpki accepted the leaf for
        // `api.example.com` with our CA as the only root. The bytes check that
        // the name really is in the certificate, not matched some other way.
        assert!(contains(&done.leaf, b"api.example.com"));
        assert_eq!(done.server_sni.as_deref(), Some("api.example.com"));
        assert_eq!(cached(&ca), ["api.example.com"]);
    }

    #[tokio::test]
    async fn sni_wins_over_connect_host() {
        let ca = new_ca();
        let done = handshake(
            ca.acceptor("api.example.com"),
            trusting(&ca),
            dns("other.example.com"),
        )
        .await
        .unwrap();
        assert!(contains(&done.leaf, b"other.example.com"));
        assert!(!contains(&done.leaf, b"api.example.com"));
        assert_eq!(cached(&ca), ["other.example.com"]);
    }

    #[tokio::test]
    async fn ip_connect_host_gets_an_ip_san_over_tcp() {
        let ca = new_ca();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (client_io, accepted) =
            tokio::join!(tokio::net::TcpStream::connect(address), listener.accept());
        let name = ServerName::IpAddress(address.ip().into());
        let done = handshake_over(
            ca.acceptor("127.0.0.1"),
            trusting(&ca),
            name,
            client_io.unwrap(),
            accepted.unwrap().0,
        )
        .await
        .unwrap();
        // Clients send no SNI for IP addresses: the CONNECT host decided.
        assert_eq!(done.server_sni, None);
        assert!(contains(&done.leaf, &[127, 0, 0, 1]));
        assert_eq!(cached(&ca), ["127.0.0.1"]);
    }

    #[tokio::test]
    async fn bracketed_ipv6_connect_host_works() {
        let ca = new_ca();
        let name = ServerName::IpAddress("::1".parse::<IpAddr>().unwrap().into());
        handshake(ca.acceptor("[::1]"), trusting(&ca), name)
            .await
            .unwrap();
        assert_eq!(cached(&ca), ["::1"]);
    }

    #[tokio::test]
    async fn alpn_prefers_h2_then_http11_then_nothing() {
        let ca = new_ca();
        let both = client(roots(&[&ca]), &[b"h2", b"http/1.1"]);
        let done = handshake(ca.acceptor("a.test"), both, dns("a.test"))
            .await
            .unwrap();
        assert_eq!(done.client_alpn.as_deref(), Some(&b"h2"[..]));
        assert_eq!(done.server_alpn.as_deref(), Some(&b"h2"[..]));

        // The server's preference decides even if the client lists h2 last.
        let reversed = client(roots(&[&ca]), &[b"http/1.1", b"h2"]);
        let done = handshake(ca.acceptor("a.test"), reversed, dns("a.test"))
            .await
            .unwrap();
        assert_eq!(done.client_alpn.as_deref(), Some(&b"h2"[..]));

        let http11 = client(roots(&[&ca]), &[b"http/1.1"]);
        let done = handshake(ca.acceptor("a.test"), http11, dns("a.test"))
            .await
            .unwrap();
        assert_eq!(done.client_alpn.as_deref(), Some(&b"http/1.1"[..]));
        assert_eq!(done.server_alpn.as_deref(), Some(&b"http/1.1"[..]));

        let none = client(roots(&[&ca]), &[]);
        let done = handshake(ca.acceptor("a.test"), none, dns("a.test"))
            .await
            .unwrap();
        assert_eq!(done.client_alpn, None);
        assert_eq!(done.server_alpn, None);
    }

    #[tokio::test]
    async fn leaves_are_cached_per_host() {
        let ca = new_ca();
        let first = handshake(
            ca.acceptor("api.example.com"),
            trusting(&ca),
            dns("api.example.com"),
        )
        .await
        .unwrap();
        // A different spelling of the same host, through a new acceptor.
        let second = handshake(
            ca.acceptor("API.Example.COM."),
            trusting(&ca),
            dns("api.example.com"),
        )
        .await
        .unwrap();
        assert_eq!(first.leaf, second.leaf);
        assert_eq!(cached(&ca), ["api.example.com"]);

        let other = handshake(
            ca.acceptor("b.example.com"),
            trusting(&ca),
            dns("b.example.com"),
        )
        .await
        .unwrap();
        assert_ne!(first.leaf, other.leaf);
        assert_eq!(cached(&ca), ["api.example.com", "b.example.com"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_first_handshakes_share_one_leaf() {
        let ca = new_ca();
        let handshakes: Vec<_> = (0..8)
            .map(|_| {
                tokio::spawn(handshake(
                    ca.acceptor("busy.example.com"),
                    trusting(&ca),
                    dns("busy.example.com"),
                ))
            })
            .collect();
        let mut leaves = Vec::new();
        for handshake in handshakes {
            leaves.push(handshake.await.unwrap().unwrap().leaf);
        }
        assert!(leaves.windows(2).all(|pair| pair[0] == pair[1]));
        assert_eq!(cached(&ca), ["busy.example.com"]);
    }

    #[tokio::test]
    async fn untrusting_client_fails() {
        let ca = new_ca();
        let error = handshake(
            ca.acceptor("api.example.com"),
            client(RootCertStore::empty(), &[]),
            dns("api.example.com"),
        )
        .await
        .unwrap_err();
        assert!(error.contains("UnknownIssuer"), "{error}");
    }

    #[tokio::test]
    async fn cas_are_independent() {
        let a = new_ca();
        let b = new_ca();
        assert_ne!(a.certificate_der(), b.certificate_der());
        assert_ne!(a.common_name, b.common_name);
        let error = handshake(
            b.acceptor("api.example.com"),
            trusting(&a),
            dns("api.example.com"),
        )
        .await
        .unwrap_err();
        assert!(error.contains("UnknownIssuer"), "{error}");
        // And A's own leaves are still fine for a client trusting A.
        handshake(
            a.acceptor("api.example.com"),
            trusting(&a),
            dns("api.example.com"),
        )
        .await
        .unwrap();
    }

    #[tokio::test]
    async fn tls12_clients_are_served_too() {
        let ca = new_ca();
        let config = ClientConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS12])
            .unwrap()
            .with_root_certificates(roots(&[&ca]))
            .with_no_client_auth();
        handshake(
            ca.acceptor("old.example.com"),
            Arc::new(config),
            dns("old.example.com"),
        )
        .await
        .unwrap();
    }

    #[test]
    fn pem_holds_the_named_ca() {
        let ca = new_ca();
        let pem = ca.certificate_pem();
        assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
        assert!(contains(&ca.certificate_der(), ca.common_name.as_bytes()));
        assert!(ca.common_name.starts_with("mocklib CA "));
        // The Debug output must not leak the key.
        let debug = format!("{ca:?}");
        assert!(
            debug.contains(&ca.common_name) && !debug.contains("key"),
            "{debug}"
        );
    }

    #[tokio::test]
    async fn invalid_host_fails_the_handshake_cleanly() {
        let ca = new_ca();
        // An IP server name means no SNI, so the bad CONNECT host is all there is.
        let name = ServerName::IpAddress("127.0.0.1".parse::<IpAddr>().unwrap().into());
        let error = handshake(ca.acceptor("bad host"), trusting(&ca), name)
            .await
            .unwrap_err();
        // rustls answers the resolver's None with a fatal alert (`access_denied`
        // in 0.23), not a hang-up or a panic.
        assert!(error.contains("alert"), "{error}");
        assert!(cached(&ca).is_empty());

        // With SNI the bad CONNECT host does not matter.
        handshake(
            ca.acceptor("bad host"),
            trusting(&ca),
            dns("good.example.com"),
        )
        .await
        .unwrap();
    }

    #[test]
    fn host_parsing() {
        let dns = |s: &str| Ok::<_, ()>(LeafName::Dns(s.to_owned()));
        let parse = |s: &str| LeafName::parse(s).map_err(|_| ());
        assert_eq!(parse("API.Example.com"), dns("api.example.com"));
        assert_eq!(parse("example.com."), dns("example.com"));
        assert_eq!(parse("localhost"), dns("localhost"));
        assert_eq!(parse("127.0.0.1"), Ok(LeafName::Ip([127, 0, 0, 1].into())));
        assert_eq!(parse("[::1]"), Ok(LeafName::Ip("::1".parse().unwrap())));
        for bad in [
            "",
            "bad host",
            "*.example.com",
            "[example.com]",
            "a..b",
            "-a.com",
            "[::1",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be rejected");
        }
        let error = LeafName::parse("bad host").unwrap_err();
        assert!(error.to_string().contains("`bad host`"), "{error}");
    }

    /// OpenSSL's strict checks (`-x509_strict`, which Python 3.13 turns on)
    /// accept the CA and its leaves, for a DNS name and for an IP address.
    #[test]
    fn openssl_verifies_leaves_strictly() {
        let ca = new_ca();
        let dir = std::env::temp_dir().join(format!("mocklib-x509-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca_path = dir.join("ca.pem");
        std::fs::write(&ca_path, ca.certificate_pem()).unwrap();
        for (host, flag) in [
            ("api.example.com", "-verify_hostname"),
            ("127.0.0.1", "-verify_ip"),
        ] {
            let leaf = ca.leaf_for(host).unwrap();
            let leaf_path = dir.join(format!("{host}.pem"));
            std::fs::write(&leaf_path, super::super::pem_encode(&leaf.cert[0])).unwrap();
            let output = std::process::Command::new("openssl")
                .args([
                    "verify",
                    "-x509_strict",
                    "-purpose",
                    "sslserver",
                    flag,
                    host,
                    "-CAfile",
                ])
                .arg(&ca_path)
                .arg(&leaf_path)
                .output()
                .expect("the openssl command line runs");
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success() && stdout.trim_end().ends_with(": OK"),
                "{host}: {stdout}{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn long_dns_names_get_a_certificate_without_a_common_name() {
        fn occurrences(haystack: &[u8], needle: &[u8]) -> usize {
            haystack
                .windows(needle.len())
                .filter(|w| *w == needle)
                .count()
        }
        let ca = new_ca();
        // A short name is in the CN and the SAN…
        let short = ca.leaf_for("short.example.com").unwrap();
        assert_eq!(occurrences(&short.cert[0], b"short.example.com"), 2);
        // …a name too long for a CN only in the SAN.
        let host = format!("{}.example.com", "a".repeat(60));
        let long = ca.leaf_for(&host).unwrap();
        assert_eq!(occurrences(&long.cert[0], host.as_bytes()), 1);
    }
}
