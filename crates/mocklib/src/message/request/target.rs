//! A request's URL, built only when asked for when the listener can tell
//! what it is without the URL parser.
//!
//! In base URL mode every request is `http://127.0.0.1:<port>` plus the
//! request target. Parsing that target into a [`Url`] is a good part of what
//! the listener spends on a request, and a handler of a relative pattern
//! needs no more than the origin and the path. When the target holds only
//! characters the URL parser copies unchanged and no dot segment, its path
//! *is* the URL's path: such a request keeps the origin and the target, and
//! parses the URL once something reads it ([`crate::Request::url`]).

use std::sync::{Arc, OnceLock};

use http::uri::PathAndQuery;
use url::Url;

/// Where a request goes: a URL, or a target under an origin.
#[cfg_attr(any(not(feature = "net"), target_arch = "wasm32"), allow(dead_code))] // the listener's
#[derive(Clone, Debug)]
pub(crate) enum Target {
    Url(Url),
    /// A request target [`is_plain`] under an origin (`http://host:port/`).
    Under(Arc<Url>, PathAndQuery),
}

impl Target {
    /// The URL (parsed now, for a target under an origin).
    #[cfg_attr(any(not(feature = "net"), target_arch = "wasm32"), allow(dead_code))] // the listener's
    pub(crate) fn into_url(self) -> Url {
        match self {
            Target::Url(url) => url,
            Target::Under(origin, target) => under(&origin, target.as_str()),
        }
    }
}

/// A request's URL, parsed when first read (see the module docs).
#[derive(Clone, Debug)]
pub(crate) enum RequestUrl {
    Parsed(Url),
    Under {
        origin: Arc<Url>,
        target: PathAndQuery,
        parsed: OnceLock<Url>,
    },
}

impl RequestUrl {
    pub(crate) fn new(target: Target) -> Self {
        match target {
            Target::Url(url) => RequestUrl::Parsed(url),
            Target::Under(origin, target) => RequestUrl::Under {
                origin,
                target,
                parsed: OnceLock::new(),
            },
        }
    }

    pub(crate) fn get(&self) -> &Url {
        match self {
            RequestUrl::Parsed(url) => url,
            RequestUrl::Under {
                origin,
                target,
                parsed,
            } => parsed.get_or_init(|| under(origin, target.as_str())),
        }
    }

    /// The origin and path, without parsing a URL for them.
    pub(crate) fn parts(&self) -> UrlParts<'_> {
        match self {
            RequestUrl::Under {
                origin,
                target,
                parsed,
            } if parsed.get().is_none() => UrlParts::Under {
                origin,
                path: target.path(),
                url: self,
            },
            _ => UrlParts::Parsed(self.get()),
        }
    }
}

/// What matching reads of a request's URL: its origin (read its scheme,
/// host and port only: its path is not the request's) and its path, and
/// the whole URL when a predicate needs more.
#[derive(Clone, Copy)]
pub(crate) enum UrlParts<'a> {
    Parsed(&'a Url),
    Under {
        origin: &'a Url,
        path: &'a str,
        url: &'a RequestUrl,
    },
}

impl<'a> UrlParts<'a> {
    /// A URL with the request's scheme, host and port (not its path).
    pub(crate) fn origin(&self) -> &'a Url {
        match *self {
            UrlParts::Parsed(url) => url,
            UrlParts::Under { origin, .. } => origin,
        }
    }

    /// The URL's path, as the URL parser writes it.
    pub(crate) fn path(&self) -> &'a str {
        match *self {
            UrlParts::Parsed(url) => url.path(),
            UrlParts::Under { path, .. } => path,
        }
    }

    /// When the URL is not parsed yet: the text of its origin
    /// (`scheme://host:port`) and its path, which together are its clean
    /// URL (no credentials, query or fragment).
    pub(crate) fn unparsed(&self) -> Option<(&'a str, &'a str)> {
        match *self {
            UrlParts::Parsed(_) => None,
            UrlParts::Under { origin, path, .. } => {
                Some((&origin[..url::Position::BeforePath], path))
            }
        }
    }

    /// The whole URL (parsed now if it was not).
    pub(crate) fn url(&self) -> &'a Url {
        match *self {
            UrlParts::Parsed(url) => url,
            UrlParts::Under { url, .. } => url.get(),
        }
    }
}

impl<'a> From<&'a Url> for UrlParts<'a> {
    fn from(url: &'a Url) -> Self {
        UrlParts::Parsed(url)
    }
}

/// `origin` with the request target's path and query: what parsing
/// `http://<origin><path_and_query>` gives (the same parser steps for the
/// path and the query), without parsing the host again.
pub(crate) fn under(origin: &Url, path_and_query: &str) -> Url {
    let (path, query) = match path_and_query.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (path_and_query, None),
    };
    let mut url = origin.clone();
    url.set_path(path);
    url.set_query(query);
    url
}

/// Whether the URL parser would copy this origin-form target unchanged
/// into an `http` URL: a path of characters it leaves alone without any
/// `.` or `..` segment (written plainly or percent-encoded: a `.` right
/// after a `/`, or any `%2e`, is refused here, however harmless), and a
/// query of characters it leaves alone. A refused target is parsed.
#[cfg_attr(any(not(feature = "net"), target_arch = "wasm32"), allow(dead_code))] // the listener's
pub(crate) fn is_plain(target: &str) -> bool {
    // One pass (this runs for every request in base URL mode).
    let bytes = target.as_bytes();
    if bytes.first() != Some(&b'/') {
        return false;
    }
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        if byte == b'?' {
            break;
        }
        let next = bytes.get(at + 1).copied();
        let dot_segment = (byte == b'/' && next == Some(b'.'))
            || (byte == b'%'
                && next == Some(b'2')
                && bytes
                    .get(at + 2)
                    .is_some_and(|b| b.eq_ignore_ascii_case(&b'e')));
        if dot_segment || !plain_in_path(byte) {
            return false;
        }
        at += 1;
    }
    bytes
        .get(at + 1..)
        .is_none_or(|query| query.iter().all(|&byte| plain_in_query(byte)))
}

/// Left as it is in an `http` URL's path (RFC 3986's `pchar` and `/`).
fn plain_in_path(byte: u8) -> bool {
    PLAIN[usize::from(byte)] & IN_PATH != 0
}

/// Left as it is in an `http` URL's query (`'` is encoded there).
fn plain_in_query(byte: u8) -> bool {
    PLAIN[usize::from(byte)] & IN_QUERY != 0
}

const IN_PATH: u8 = 1;
const IN_QUERY: u8 = 2;

/// Per byte: whether it is plain in a path, in a query (a table: this runs
/// over every byte of every request target).
static PLAIN: [u8; 256] = plain_table();

const fn plain_table() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        if b.is_ascii_alphanumeric() {
            table[byte] = IN_PATH | IN_QUERY;
        }
        byte += 1;
    }
    let path = b"-._~!$&'()*+,;=:@/%";
    let mut at = 0;
    while at < path.len() {
        table[path[at] as usize] |= IN_PATH;
        at += 1;
    }
    let query = b"-._~!$&()*+,;=:@/?%";
    let mut at = 0;
    while at < query.len() {
        table[query[at] as usize] |= IN_QUERY;
        at += 1;
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Building a request's URL from the origin gives what parsing its text
    /// does; a target called plain is the URL's path and query as written.
    #[test]
    fn urls_under_the_origin_equal_parsed_ones() {
        let origin = Url::parse("http://127.0.0.1:4321/").unwrap();
        for target in [
            "/",
            "/user",
            "/a/../b",
            "/a/./b/",
            "/a/%2e%2E/b",
            "/.well-known/x",
            "//x//y",
            "/a%2Fb",
            "/%7E/%F0%9F%A6%80",
            "/a?b=c&d",
            "/a?",
            "/a??b",
            "/a?b='c'&d=\"e\"",
            "/a/b;c=d/e",
            "/a b",
            "/a|b{c}`d",
            "/a?b c",
            "/users/7/orders?limit=10&sort=-date",
            "/a/b.json",
            "/a/..",
            "/a/.",
            "/a%2e/b",
            "/~x/(y)/*z*,@:!$;=+",
        ] {
            let parsed = Url::parse(&format!("http://127.0.0.1:4321{target}")).unwrap();
            assert_eq!(under(&origin, target), parsed, "{target}");
            if is_plain(target) {
                let (path, query) = target
                    .split_once('?')
                    .map_or((target, None), |(p, q)| (p, Some(q)));
                assert_eq!(parsed.path(), path, "{target}");
                assert_eq!(parsed.query(), query, "{target}");
            }
        }
        for plain in [
            "/",
            "/user",
            "/a/b.json",
            "/users/7/orders?limit=10&sort=-date",
        ] {
            assert!(is_plain(plain), "{plain}");
        }
        for not in [
            "/a/../b",
            "/.well-known/x",
            "/a%2e/b",
            "/a b",
            "/a?b='c'",
            "*",
            "",
            "/a|b",
        ] {
            assert!(!is_plain(not), "{not}");
        }
    }

    /// Any target hyper lets through: when called plain, the parsed URL's
    /// path and query are the target's own.
    #[test]
    fn plain_targets_are_what_the_parser_writes() {
        let origin = Url::parse("http://127.0.0.1:4321/").unwrap();
        let alphabet = b"/a.%2eE?'=&|";
        // Every target of up to five characters over the alphabet.
        let mut frontier = vec![String::from("/")];
        let mut targets = frontier.clone();
        for _ in 0..4 {
            frontier = frontier
                .iter()
                .flat_map(|t| alphabet.iter().map(move |&b| format!("{t}{}", b as char)))
                .collect();
            targets.extend(frontier.iter().cloned());
        }
        let mut plain = 0;
        for target in targets.iter().filter(|t| is_plain(t)) {
            plain += 1;
            let url = under(&origin, target);
            let written = match url.query() {
                Some(query) => format!("{}?{query}", url.path()),
                None => url.path().to_owned(),
            };
            assert_eq!(&written, target);
        }
        assert!(plain > 1_000, "{plain} plain targets tried");
    }
}
