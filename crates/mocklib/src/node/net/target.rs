//! Where a request is aimed: how its connection reached the listener
//! ([`Entry`]), and the URL and base URL that makes of its request target
//! and `Host` header.

use std::sync::Arc;

use http::Version;
use http::uri::Authority;
use url::Url;

use super::Shared;
use crate::engine::list::Scope;
use crate::message::request::{Target, is_plain_target, url_under};

/// How a connection reached the listener, which decides the request URLs
/// and the scope.
#[derive(Clone)]
pub(super) enum Entry {
    /// Straight to the listener: origin-form (base URL mode), absolute-form
    /// (forward proxy) or `CONNECT`. `scope` is set on a boundary's own port.
    Direct { scope: Option<Arc<Scope>> },
    /// Inside a `CONNECT host:port` tunnel: requests carry only a path, so
    /// the URL is rebuilt from the tunnel's authority; the scope is the one
    /// the `CONNECT` named.
    Tunnel {
        scheme: &'static str,
        authority: Authority,
        /// `scheme://authority/`, parsed once for the tunnel's requests.
        origin: Option<Arc<Url>>,
        scope: Option<Arc<Scope>>,
    },
}

impl Entry {
    pub(super) fn tunnel(
        scheme: &'static str,
        authority: Authority,
        scope: Option<Arc<Scope>>,
    ) -> Self {
        let origin = Url::parse(&format!("{scheme}://{authority}/")).ok();
        Entry::Tunnel {
            scheme,
            authority,
            origin: origin.map(Arc::new),
            scope,
        }
    }
}

/// Where a request goes, and the base URL of its relative handlers. A
/// plain target under the listener's own origin stays a target (its URL is
/// parsed only if something reads it, see [`Target`]). `own_host`: the
/// request has one `Host` header, naming the listener exactly as its URL does.
pub(super) fn request_url(
    shared: &Shared,
    entry: &Entry,
    parts: &http::request::Parts,
    own_host: bool,
) -> Result<(Target, Option<Arc<Url>>), String> {
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    if path == "*" {
        return Err("mocklib: asterisk-form requests (`OPTIONS *`) are not supported\n".to_owned());
    }
    let parse = |text: String| {
        Url::parse(&text)
            .map_err(|e| format!("mocklib: cannot read the request target {text:?}: {e}\n"))
    };
    match entry {
        Entry::Tunnel {
            origin: Some(origin),
            ..
        } => Ok((target_under(origin, parts, path), None)),
        Entry::Tunnel {
            scheme, authority, ..
        } => Ok((
            Target::Url(parse(format!("{scheme}://{authority}{path}"))?),
            None,
        )),
        // Absolute form over HTTP/1: a forward-proxy request. (HTTP/2 always
        // carries scheme and authority, so it cannot mean "proxy" here.)
        Entry::Direct { .. } if parts.uri.scheme().is_some() && parts.version < Version::HTTP_2 => {
            Ok((Target::Url(parse(parts.uri.to_string())?), None))
        }
        // Addressed to the listener itself, whatever name the client used for
        // it, so that name's origin is the base URL.
        // The usual case, read without parsing: the Host header is exactly
        // the listener's own `127.0.0.1:<port>`.
        Entry::Direct { .. } if parts.uri.authority().is_none() && own_host => Ok((
            target_under(&shared.origin, parts, path),
            Some(shared.origin.clone()),
        )),
        // So is HTTP/2's `:authority` (every HTTP/2 request has one).
        Entry::Direct { .. }
            if parts
                .uri
                .authority()
                .is_some_and(|authority| authority.as_str() == &*shared.authority) =>
        {
            Ok((
                target_under(&shared.origin, parts, path),
                Some(shared.origin.clone()),
            ))
        }
        Entry::Direct { .. } => {
            let authority = match parts.uri.authority() {
                Some(authority) => authority.clone(),
                None => host_authority(shared, parts)?,
            };
            if is_own_origin(&shared.origin, &authority) {
                return Ok((
                    target_under(&shared.origin, parts, path),
                    Some(shared.origin.clone()),
                ));
            }
            let url = parse(format!("http://{authority}{path}"))?;
            // The origin, without parsing a second URL (this is per request).
            let mut base = url.clone();
            base.set_path("/");
            base.set_query(None);
            Ok((Target::Url(url), Some(Arc::new(base))))
        }
    }
}

/// Whether `authority` is written exactly as the listener's own origin
/// (`127.0.0.1:<port>`, what `server.url()` gives).
fn is_own_origin(origin: &Url, authority: &Authority) -> bool {
    Some(authority.host()) == origin.host_str() && authority.port_u16() == origin.port()
}

/// A request target under `origin` (the listener's own, or a tunnel's):
/// kept as it is when plain, else its URL.
fn target_under(origin: &Arc<Url>, parts: &http::request::Parts, path: &str) -> Target {
    match parts.uri.path_and_query() {
        Some(target) if is_plain_target(path) => Target::Under(Arc::clone(origin), target.clone()),
        _ => Target::Url(url_under(origin, path)),
    }
}

/// The authority named by the `Host` header, which must be a single valid
/// `host[:port]` (RFC 9112 §3.2); HTTP/1.0 may omit it.
fn host_authority(shared: &Shared, parts: &http::request::Parts) -> Result<Authority, String> {
    let mut hosts = parts.headers.get_all(http::header::HOST).iter();
    let host = match (hosts.next(), hosts.next()) {
        (None, _) if parts.version < Version::HTTP_11 => return Ok(own_authority(shared)),
        (None, _) => return Err("mocklib: the request has no Host header\n".to_owned()),
        (Some(_), Some(_)) => {
            return Err("mocklib: the request has more than one Host header\n".to_owned());
        }
        (Some(host), None) => host,
    };
    let invalid = || format!("mocklib: the Host header {host:?} is not a valid host[:port]\n");
    let authority: Authority = host
        .to_str()
        .ok()
        .and_then(|h| h.parse().ok())
        .ok_or_else(invalid)?;
    if authority.as_str().contains('@') || authority.host().is_empty() {
        return Err(invalid());
    }
    Ok(authority)
}

fn own_authority(shared: &Shared) -> Authority {
    shared
        .address
        .to_string()
        .parse()
        .expect("a socket address is a valid authority")
}

/// Whether this listener's own `Via` entry is among the request's.
pub(super) fn came_through(shared: &Shared, headers: &http::HeaderMap) -> bool {
    let own = shared.via.as_bytes();
    // Whole entries only: `mocklib-1-80` must not match `mocklib-1-8080`.
    headers
        .get_all(http::header::VIA)
        .iter()
        .flat_map(|value| value.as_bytes().split(|&byte| byte == b','))
        .any(|entry| entry.trim_ascii() == own)
}

/// Whether `url` points at this listener (performing it would loop).
pub(super) fn is_own_address(shared: &Shared, url: &Url) -> bool {
    // The host first: it rules out nearly every request without a lock.
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback() || ip.is_unspecified(),
        Some(url::Host::Ipv6(ip)) => match ip.to_ipv4_mapped() {
            Some(ip) => ip.is_loopback() || ip.is_unspecified(),
            None => ip.is_loopback() || ip.is_unspecified(),
        },
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    loopback
        && url
            .port_or_known_default()
            .is_some_and(|port| port == shared.address.port() || shared.scopes.is_scope_port(port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_origins_are_told_by_their_text() {
        let origin = Url::parse("http://127.0.0.1:4321/").unwrap();
        let authority: Authority = "127.0.0.1:4321".parse().unwrap();
        assert!(is_own_origin(&origin, &authority));
        for other in [
            "localhost:4321",
            "127.0.0.1:4322",
            "127.0.0.1",
            "127.000.0.1:4321",
        ] {
            let authority: Authority = other.parse().unwrap();
            assert!(!is_own_origin(&origin, &authority), "{other}");
        }
    }
}
