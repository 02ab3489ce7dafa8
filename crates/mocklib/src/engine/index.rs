//! The handler index: which handlers of a chunk of the handler list could
//! possibly match a request, without asking each of them. It sits with the
//! handler list, above the namespaces: handlers describe themselves with a
//! namespace-neutral [`IndexHint`](crate::handler::IndexHint).
//!
//! Every handler declares an [`IndexHint`]: "ask me always" (regex and
//! closure predicates, GraphQL handlers without an exact operation name),
//! a key under a [`KeySource`] (GraphQL: an exact operation name at an
//! endpoint), or the literal text every URL it matches starts with —
//! `scheme://host[:port]` plus the path up to the first parameter or
//! wildcard when the origin is literal, or the path prefix alone. The index
//! keeps those prefixes in two byte tries; a lookup walks the request's own
//! key down each trie (one step per byte) and collects the handlers met on
//! the way, keeping those whose method (if they are limited to one) is the
//! request's. The candidates are then tried in list order, so the first
//! handler to respond is the same one a plain scan would find — the index
//! only skips handlers that cannot match.
//!
//! Keyed handlers are grouped by their source (one `Arc`) and by key; the
//! source is asked for the request's keys once per group, and may answer
//! "unknown" (every handler of the group is a candidate) or "not applicable"
//! (none is). GraphQL's source answers from the lookup's once-per-request
//! parse, and only parses when its endpoint matches.
//!
//! Keys are lowercased: path and host matching is case-insensitive, and
//! percent-encoded text compares equal whatever the case of its hex digits.

use std::collections::HashMap;
use std::sync::Arc;

use crate::handling::handler::{Handler, Hint, KeySource, Keys, MatchContext};
use crate::message::request::UrlParts;

/// The keyed handlers of one source (handlers of one GraphQL link share
/// theirs), so the source is asked once.
struct KeyGroup {
    source: Arc<dyn KeySource>,
    by_key: HashMap<String, Vec<u32>>,
    all: Vec<u32>,
}

/// The lookup keys of one request, computed once per request, and only
/// when a chunk has an index to look them up in (a short handler list has
/// none, and then the request costs no key at all).
pub(crate) struct RequestKeys<'a> {
    method: &'a http::Method,
    url: UrlParts<'a>,
    /// Lowercased `scheme://host[:port]` + path, and where the path starts.
    origin_and_path: std::cell::OnceCell<(String, usize)>,
}

impl<'a> RequestKeys<'a> {
    pub(crate) fn new(method: &'a http::Method, url: impl Into<UrlParts<'a>>) -> Self {
        RequestKeys {
            method,
            url: url.into(),
            origin_and_path: std::cell::OnceCell::new(),
        }
    }

    /// The request's path as it came (not lowercased).
    pub(crate) fn raw_path(&self) -> &'a str {
        self.url.path()
    }

    fn origin_and_path(&self) -> &str {
        &self.origin_and_path_start().0
    }

    /// Lowercased path; a suffix of `origin_and_path`.
    fn path(&self) -> &str {
        let (origin_and_path, start) = self.origin_and_path_start();
        &origin_and_path[*start..]
    }

    fn origin_and_path_start(&self) -> &(String, usize) {
        self.origin_and_path.get_or_init(|| {
            let origin = self.url.origin().origin().ascii_serialization();
            let path = self.url.path();
            let mut origin_and_path = String::with_capacity(origin.len() + path.len());
            origin_and_path.push_str(&origin);
            origin_and_path.push_str(path);
            origin_and_path.make_ascii_lowercase();
            (origin_and_path, origin.len())
        })
    }
}

/// Below this many handlers a chunk is scanned: building and walking tries
/// costs more than asking a few handlers.
pub(crate) const MIN_INDEXED: usize = 16;

/// Positions of candidate handlers in a chunk, kept inline while few.
pub(crate) type Positions = smallvec::SmallVec<[u32; 16]>;

/// The index of one immutable chunk of handlers.
pub(crate) struct ChunkIndex {
    by_origin_and_path: Trie,
    by_path: Trie,
    always: Vec<u32>,
    keyed: Vec<KeyGroup>,
    /// The method each handler is limited to (`None`: any), by position.
    methods: Vec<Option<http::Method>>,
}

impl ChunkIndex {
    pub(crate) fn build(handlers: &[Handler]) -> Self {
        let mut index = ChunkIndex {
            by_origin_and_path: Trie::new(),
            by_path: Trie::new(),
            always: Vec::new(),
            keyed: Vec::new(),
            methods: handlers
                .iter()
                .map(|h| h.kind().method().cloned())
                .collect(),
        };
        for (position, handler) in handlers.iter().enumerate() {
            let position = u32::try_from(position).expect("a chunk holds fewer than 2^32 handlers");
            match handler.kind().index_hint().0 {
                Hint::Always => index.always.push(position),
                Hint::Prefix {
                    origin: Some(origin),
                    path,
                } => {
                    index
                        .by_origin_and_path
                        .insert(origin.bytes().chain(path.bytes()), position);
                }
                Hint::Prefix { origin: None, path } => index.by_path.insert(path.bytes(), position),
                Hint::Key { source, key } => index.add_keyed(source, key, position),
            }
        }
        index
    }

    fn add_keyed(&mut self, source: Arc<dyn KeySource>, key: String, position: u32) {
        // The data pointer alone: two vtables of one type may differ.
        let same =
            |group: &KeyGroup| std::ptr::addr_eq(Arc::as_ptr(&group.source), Arc::as_ptr(&source));
        let group = match self.keyed.iter().position(same) {
            Some(found) => &mut self.keyed[found],
            None => {
                self.keyed.push(KeyGroup {
                    source,
                    by_key: HashMap::new(),
                    all: Vec::new(),
                });
                self.keyed.last_mut().expect("just pushed")
            }
        };
        group.by_key.entry(key).or_default().push(position);
        group.all.push(position);
    }

    /// Positions (in the chunk) of the handlers that may match, in list order.
    pub(crate) fn candidates(
        &self,
        keys: &RequestKeys<'_>,
        context: &MatchContext<'_>,
        out: &mut Positions,
    ) {
        out.clear();
        out.extend_from_slice(&self.always);
        self.by_origin_and_path
            .walk(keys.origin_and_path().as_bytes(), out);
        self.by_path.walk(keys.path().as_bytes(), out);
        self.keyed_candidates(context, out);
        out.retain(|p| {
            self.methods[*p as usize]
                .as_ref()
                .is_none_or(|m| m == keys.method)
        });
        out.sort_unstable();
        // A request may have one key twice (a GraphQL batch naming one operation twice).
        out.dedup();
    }

    /// Adds the keyed handlers the request's keys may match.
    fn keyed_candidates(&self, context: &MatchContext<'_>, out: &mut Positions) {
        for group in &self.keyed {
            match group.source.keys(context) {
                Keys::NotApplicable => {}
                Keys::Unknown => out.extend_from_slice(&group.all),
                Keys::Named(keys) => {
                    for key in keys {
                        out.extend_from_slice(group.by_key.get(key).map_or(&[][..], Vec::as_slice));
                    }
                }
            }
        }
    }
}

/// A byte trie whose nodes hold the handlers whose prefix ends there.
struct Trie {
    nodes: Vec<Node>,
}

#[derive(Default)]
struct Node {
    /// Sorted by byte, for a binary search.
    children: Vec<(u8, u32)>,
    handlers: Vec<u32>,
}

impl Trie {
    fn new() -> Self {
        Trie {
            nodes: vec![Node::default()],
        }
    }

    fn insert(&mut self, key: impl Iterator<Item = u8>, position: u32) {
        let mut node = 0usize;
        for byte in key.map(|b| b.to_ascii_lowercase()) {
            node = match self.nodes[node]
                .children
                .binary_search_by_key(&byte, |(b, _)| *b)
            {
                Ok(found) => self.nodes[node].children[found].1 as usize,
                Err(slot) => {
                    let next = u32::try_from(self.nodes.len()).expect("fewer than 2^32 trie nodes");
                    self.nodes.push(Node::default());
                    self.nodes[node].children.insert(slot, (byte, next));
                    next as usize
                }
            };
        }
        self.nodes[node].handlers.push(position);
    }

    /// Adds the handlers of every node on `key`'s path: those whose prefix
    /// is a prefix of `key`.
    fn walk(&self, key: &[u8], out: &mut Positions) {
        let mut node = &self.nodes[0];
        out.extend_from_slice(&node.handlers);
        for byte in key {
            match node.children.binary_search_by_key(byte, |(b, _)| *b) {
                Ok(found) => node = &self.nodes[node.children[found].1 as usize],
                Err(_) => return,
            }
            out.extend_from_slice(&node.handlers);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trie_finds_every_prefix_of_the_key_and_nothing_else() {
        let mut trie = Trie::new();
        for (position, prefix) in ["", "/", "/posts", "/posts/", "/post", "/users", "/POSTS/x"]
            .iter()
            .enumerate()
        {
            trie.insert(prefix.bytes(), position as u32);
        }
        let mut found = Positions::new();
        trie.walk(b"/posts/1", &mut found);
        found.sort_unstable();
        assert_eq!(found[..], [0, 1, 2, 3, 4]);
        found.clear();
        trie.walk(b"/posts/x", &mut found);
        found.sort_unstable();
        assert_eq!(
            found[..],
            [0, 1, 2, 3, 4, 6],
            "keys are lowercased on insert"
        );
    }
}
