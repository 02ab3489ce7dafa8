//! The part of [`Server::env`](crate::node::Server::env) for clients that
//! ignore the usual proxy and CA-bundle variables: Node.js before 22.21/24.5,
//! GnuTLS wget and the JVM. Each gets a file in the server's private
//! directory (next to the CA bundle) and a variable pointing at it.

use std::io::{self, Write};
use std::path::Path;

use url::Url;

/// Routes Node's `http`/`https` modules and `fetch` through the proxy
/// variables on versions that ignore them (see the file's header).
const NODE_PRELOAD: &str = include_str!("node_preload.js");

/// Not a secret: the trust store holds public certificates only, and Java
/// checks the file's integrity with it.
const TRUST_STORE_PASSWORD: &str = "mocklib";

/// Writes (once per directory) the files these clients need and returns the
/// variables that point them there. `bundle` is the PEM CA bundle; `jvm_proxy`
/// is the listener origin the JVM is pointed at: the JDK sends a proxy
/// credential only when challenged, and only to an `Authenticator` the
/// program installs, so a boundary reaches the JVM as a port of its own
/// ([`Server::url`](crate::node::Server::url)) rather than as a credential.
pub(crate) fn write(
    dir: &Path,
    bundle: &Path,
    jvm_proxy: &Url,
) -> io::Result<Vec<(String, String)>> {
    let mut env = node(dir)?;
    env.extend(wget(dir, bundle)?);
    env.extend(jvm(dir, bundle, jvm_proxy)?);
    Ok(env)
}

/// `NODE_USE_ENV_PROXY=1` for Node 22.21+/24.5+, and the preload for older
/// versions, appended to this process's `NODE_OPTIONS`.
fn node(dir: &Path) -> io::Result<Vec<(String, String)>> {
    let preload = dir.join("node-proxy-preload.js");
    write_once(&preload, || Ok(NODE_PRELOAD.as_bytes().to_vec()))?;
    let require = format!("--require {}", node_quote(&preload.display().to_string()));
    Ok(vec![
        ("NODE_USE_ENV_PROXY".to_owned(), "1".to_owned()),
        (
            "NODE_OPTIONS".to_owned(),
            append_to_parent("NODE_OPTIONS", &require),
        ),
    ])
}

/// Debian's wget (GnuTLS) ignores `SSL_CERT_FILE`; it reads the proxy
/// variables (credential included) itself, so its rc file names the bundle
/// only. `WGETRC` replaces `~/.wgetrc` (`/etc/wgetrc` is still read).
fn wget(dir: &Path, bundle: &Path) -> io::Result<Vec<(String, String)>> {
    let rc = dir.join("wgetrc");
    write_once(&rc, || {
        Ok(format!("ca_certificate = {}\nuse_proxy = on\n", bundle.display()).into_bytes())
    })?;
    Ok(vec![("WGETRC".to_owned(), rc.display().to_string())])
}

/// `JAVA_TOOL_OPTIONS`: the proxy for `HttpClient` and `HttpURLConnection`
/// (no host excluded, like `NO_PROXY` cleared) and a JKS trust store with
/// the bundle's certificates, appended to this process's options.
fn jvm(dir: &Path, bundle: &Path, proxy: &Url) -> io::Result<Vec<(String, String)>> {
    let store = dir.join("truststore.jks");
    write_once(&store, || jks_trust_store(bundle))?;
    let host = proxy.host_str().expect("the listener's origin has a host");
    let port = proxy
        .port_or_known_default()
        .expect("the listener's origin has a port");
    let mut options = Vec::new();
    for scheme in ["http", "https"] {
        options.push(format!("-D{scheme}.proxyHost={host}"));
        options.push(format!("-D{scheme}.proxyPort={port}"));
    }
    options.push("-Dhttp.nonProxyHosts=".to_owned());
    options.push(jvm_quote(&format!(
        "-Djavax.net.ssl.trustStore={}",
        store.display()
    ))?);
    options.push("-Djavax.net.ssl.trustStoreType=JKS".to_owned());
    options.push(format!(
        "-Djavax.net.ssl.trustStorePassword={TRUST_STORE_PASSWORD}"
    ));
    Ok(vec![(
        "JAVA_TOOL_OPTIONS".to_owned(),
        append_to_parent("JAVA_TOOL_OPTIONS", &options.join(" ")),
    )])
}

/// This process's value of `name` followed by `ours`, so options the parent
/// set still reach the child (ours come last and win where both set one).
fn append_to_parent(name: &str, ours: &str) -> String {
    match std::env::var(name) {
        Ok(parent) if !parent.trim().is_empty() => format!("{parent} {ours}"),
        Ok(_) | Err(std::env::VarError::NotPresent) => ours.to_owned(),
        Err(std::env::VarError::NotUnicode(_)) => {
            crate::support::log::warn(&format!(
                "{name} of this process is not UTF-8: the child process gets mocklib's options only"
            ));
            ours.to_owned()
        }
    }
}

/// A `NODE_OPTIONS` argument: Node splits on spaces outside double quotes,
/// and a backslash escapes the next character inside them.
fn node_quote(value: &str) -> String {
    let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
    format!("\"{escaped}\"")
}

/// A `JAVA_TOOL_OPTIONS` argument: the JVM splits on white space outside
/// single or double quotes and has no escapes.
fn jvm_quote(value: &str) -> io::Result<String> {
    if !value.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
        Ok(value.to_owned())
    } else if !value.contains('"') {
        Ok(format!("\"{value}\""))
    } else if !value.contains('\'') {
        Ok(format!("'{value}'"))
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("JAVA_TOOL_OPTIONS cannot quote a path with both kinds of quotes: {value}"),
        ))
    }
}

/// Writes `path` unless it exists, through a temporary file renamed into
/// place so a concurrent reader never sees half a file.
fn write_once(path: &Path, contents: impl FnOnce() -> io::Result<Vec<u8>>) -> io::Result<()> {
    if path.exists() {
        return Ok(());
    }
    // A name of this call's own: the directory is private to this server,
    // so the process id and a counter cannot collide.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let unique = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".{}-{unique}.tmp", std::process::id()));
    let temporary = std::path::PathBuf::from(temporary);
    let written = std::fs::File::create(&temporary)
        .and_then(|mut file| file.write_all(&contents()?))
        .and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// A Java KeyStore (JKS) of trusted-certificate entries: every certificate of
/// the PEM `bundle`. JKS rather than PKCS#12: no ASN.1, encryption or MAC to
/// write, and every JDK reads it when told `trustStoreType=JKS`.
fn jks_trust_store(bundle: &Path) -> io::Result<Vec<u8>> {
    use rustls_pki_types::pem::PemObject;
    let certificates = rustls_pki_types::CertificateDer::pem_file_iter(bundle)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error.to_string()))?;
    let created_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
        });
    let count = u32::try_from(certificates.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "too many certificates"))?;
    let mut store = Vec::new();
    store.extend_from_slice(&0xFEED_FEED_u32.to_be_bytes());
    store.extend_from_slice(&2_u32.to_be_bytes());
    store.extend_from_slice(&count.to_be_bytes());
    for (index, certificate) in certificates.iter().enumerate() {
        store.extend_from_slice(&2_u32.to_be_bytes()); // a trusted certificate
        java_utf(&mut store, &format!("mocklib-{index}"));
        store.extend_from_slice(&created_ms.to_be_bytes());
        java_utf(&mut store, "X.509");
        let der: &[u8] = certificate.as_ref();
        let length = u32::try_from(der.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "certificate too large"))?;
        store.extend_from_slice(&length.to_be_bytes());
        store.extend_from_slice(der);
    }
    let digest = jks_digest(&store, TRUST_STORE_PASSWORD);
    store.extend_from_slice(&digest);
    Ok(store)
}

/// JKS integrity check: SHA-1 over the password as UTF-16BE, the words
/// "Mighty Aphrodite", then the store.
fn jks_digest(store: &[u8], password: &str) -> [u8; 20] {
    let password: Vec<u8> = password.encode_utf16().flat_map(u16::to_be_bytes).collect();
    super::crypto::sha1(&[&password, b"Mighty Aphrodite", store])
}

/// `DataOutputStream.writeUTF` for ASCII: a big-endian length, then the bytes.
fn java_utf(out: &mut Vec<u8>, ascii: &str) {
    let length = u16::try_from(ascii.len()).expect("aliases and type names are short");
    out.extend_from_slice(&length.to_be_bytes());
    out.extend_from_slice(ascii.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_options_quote_spaces_quotes_and_backslashes() {
        assert_eq!(node_quote("/tmp/a b/p.js"), r#""/tmp/a b/p.js""#);
        assert_eq!(node_quote(r#"/tmp/a"b\c"#), r#""/tmp/a\"b\\c""#);
    }

    #[test]
    fn jvm_options_quote_with_the_quote_the_value_lacks() {
        assert_eq!(jvm_quote("-Dx=/tmp/a").unwrap(), "-Dx=/tmp/a");
        assert_eq!(jvm_quote("-Dx=/tmp/a b").unwrap(), r#""-Dx=/tmp/a b""#);
        assert_eq!(jvm_quote(r#"-Dx=/tmp/a"b"#).unwrap(), r#"'-Dx=/tmp/a"b'"#);
        assert!(jvm_quote(r#"-Dx=/tmp/a"b'c"#).is_err());
    }

    #[test]
    fn jks_digest_matches_a_known_store() {
        // An empty store written by `keytool` (JDK 17) with password "changeit":
        // magic, version 2, no entries, then the digest.
        let header = [0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2, 0, 0, 0, 0];
        let digest = jks_digest(&header, "changeit");
        assert_eq!(to_hex(&digest), EMPTY_CHANGEIT_DIGEST);
    }

    const EMPTY_CHANGEIT_DIGEST: &str = "e2686e45fb43dfa4d992dd41ceb6b21c6330d792";

    fn to_hex(bytes: &[u8]) -> String {
        bytes.iter().map(|byte| format!("{byte:02x}")).collect()
    }
}
