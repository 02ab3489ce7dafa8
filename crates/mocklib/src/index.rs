//! The handler index: which handlers of a chunk of the handler list could
//! possibly match a request, without asking each of them. It sits with the
//! handler list, above the namespaces: handlers describe themselves with a
//! namespace-neutral [`IndexHint`](crate::handler::IndexHint).
//!
//! Every handler declares an [`IndexHint`]: "ask me always" (regex and
//! closure predicates, GraphQL handlers without an exact operation name),
//! an exact GraphQL operation name (with its endpoint, if scoped by a link),
//! or the literal
//! text every URL it matches starts with — `scheme://host[:port]` plus the
//! path up to the first parameter or wildcard when the origin is literal, or
//! the path prefix alone. The index keeps those prefixes in two byte tries;
//! a lookup walks the request's own key down each trie (one step per byte)
//! and collects the handlers met on the way, keeping those whose method (if
//! they are limited to one) is the request's. The candidates are then tried in
//! list order, so the first handler to respond is the same one a plain scan
//! would find — the index only skips handlers that cannot match.
//!
//! With the `graphql` feature, GraphQL handlers with an exact operation name
//! are grouped by endpoint and
//! keyed by name; the request's operation names come from the lookup's
//! once-per-request parse, asked for only when a group's endpoint matches (a
//! handler whose endpoint does not match never parses either). An invalid
//! document or an anonymous operation makes every named handler a candidate,
//! so the one warning such a request gets is printed exactly as before.
//!
//! Keys are lowercased: path and host matching is case-insensitive, and
//! percent-encoded text compares equal whatever the case of its hex digits.

#[cfg(feature = "graphql")]
use std::{collections::HashMap, sync::Arc};

use url::Url;

use crate::handler::{Handler, IndexHint};
#[cfg(feature = "graphql")]
use crate::handler::{OperationSource, Operations};
#[cfg(feature = "graphql")]
use crate::matching::Predicate;

/// Exact-name GraphQL handlers of one endpoint (handlers of one link share
/// their endpoint), so the endpoint is checked once.
#[cfg(feature = "graphql")]
struct OperationGroup {
    endpoint: Option<Arc<Predicate>>,
    by_name: HashMap<String, Vec<u32>>,
    all: Vec<u32>,
}

/// The lookup keys of one request, computed once per request, and only
/// when a chunk has an index to look them up in (a short handler list has
/// none, and then the request costs no key at all).
pub(crate) struct RequestKeys<'a> {
    method: &'a http::Method,
    url: &'a Url,
    /// Lowercased `scheme://host[:port]` + path, and where the path starts.
    origin_and_path: std::cell::OnceCell<(String, usize)>,
}

impl<'a> RequestKeys<'a> {
    pub(crate) fn new(method: &'a http::Method, url: &'a Url) -> Self {
        RequestKeys {
            method,
            url,
            origin_and_path: std::cell::OnceCell::new(),
        }
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
            let origin = self.url.origin().ascii_serialization();
            let mut origin_and_path = String::with_capacity(origin.len() + self.url.path().len());
            origin_and_path.push_str(&origin);
            origin_and_path.push_str(self.url.path());
            origin_and_path.make_ascii_lowercase();
            (origin_and_path, origin.len())
        })
    }
}

/// Below this many handlers a chunk is scanned: building and walking tries
/// costs more than asking a few handlers.
pub(crate) const MIN_INDEXED: usize = 16;

/// The index of one immutable chunk of handlers.
pub(crate) struct ChunkIndex {
    by_origin_and_path: Trie,
    by_path: Trie,
    always: Vec<u32>,
    #[cfg(feature = "graphql")]
    operations: Vec<OperationGroup>,
    /// The method each handler is limited to (`None`: any), by position.
    methods: Vec<Option<http::Method>>,
}

impl ChunkIndex {
    pub(crate) fn build(handlers: &[Handler]) -> Self {
        let mut index = ChunkIndex {
            by_origin_and_path: Trie::new(),
            by_path: Trie::new(),
            always: Vec::new(),
            #[cfg(feature = "graphql")]
            operations: Vec::new(),
            methods: handlers
                .iter()
                .map(|h| h.logic().method().cloned())
                .collect(),
        };
        for (position, handler) in handlers.iter().enumerate() {
            let position = u32::try_from(position).expect("a chunk holds fewer than 2^32 handlers");
            match handler.logic().index_hint() {
                IndexHint::Always => index.always.push(position),
                IndexHint::Prefix {
                    origin: Some(origin),
                    path,
                } => {
                    index
                        .by_origin_and_path
                        .insert(origin.bytes().chain(path.bytes()), position);
                }
                IndexHint::Prefix { origin: None, path } => {
                    index.by_path.insert(path.bytes(), position)
                }
                #[cfg(feature = "graphql")]
                IndexHint::Operation { name, endpoint } => {
                    index.add_operation(name, endpoint, position)
                }
            }
        }
        index
    }

    #[cfg(feature = "graphql")]
    fn add_operation(&mut self, name: String, endpoint: Option<Arc<Predicate>>, position: u32) {
        let same = |group: &OperationGroup| match (&group.endpoint, &endpoint) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        let group = match self.operations.iter().position(same) {
            Some(found) => &mut self.operations[found],
            None => {
                self.operations.push(OperationGroup {
                    endpoint,
                    by_name: HashMap::new(),
                    all: Vec::new(),
                });
                self.operations.last_mut().expect("just pushed")
            }
        };
        group.by_name.entry(name).or_default().push(position);
        group.all.push(position);
    }

    /// Positions (in the chunk) of the handlers that may match, in list order.
    pub(crate) fn candidates(
        &self,
        keys: &RequestKeys<'_>,
        #[cfg(feature = "graphql")] source: &dyn OperationSource,
        out: &mut Vec<u32>,
    ) {
        out.clear();
        out.extend_from_slice(&self.always);
        self.by_origin_and_path
            .walk(keys.origin_and_path().as_bytes(), out);
        self.by_path.walk(keys.path().as_bytes(), out);
        #[cfg(feature = "graphql")]
        self.operation_candidates(source, out);
        out.retain(|&p| {
            self.methods[p as usize]
                .as_ref()
                .is_none_or(|m| m == keys.method)
        });
        out.sort_unstable();
        // A batch may name one operation twice.
        out.dedup();
    }

    /// Adds the exact-name GraphQL handlers the request's operations may
    /// match (the GraphQL lane).
    #[cfg(feature = "graphql")]
    fn operation_candidates(&self, source: &dyn OperationSource, out: &mut Vec<u32>) {
        for group in &self.operations {
            // A handler whose endpoint does not match never parses the
            // request: neither does the index on its behalf.
            if group
                .endpoint
                .as_ref()
                .is_some_and(|endpoint| !source.endpoint_applies(endpoint))
            {
                continue;
            }
            match source.operations() {
                Operations::NotGraphql => {}
                Operations::AskEveryone => out.extend_from_slice(&group.all),
                Operations::Named(names) => {
                    for name in names {
                        out.extend_from_slice(
                            group.by_name.get(name).map_or(&[][..], Vec::as_slice),
                        );
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
    fn walk(&self, key: &[u8], out: &mut Vec<u32>) {
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
        let mut found = Vec::new();
        trie.walk(b"/posts/1", &mut found);
        found.sort_unstable();
        assert_eq!(found, [0, 1, 2, 3, 4]);
        found.clear();
        trie.walk(b"/posts/x", &mut found);
        found.sort_unstable();
        assert_eq!(found, [0, 1, 2, 3, 4, 6], "keys are lowercased on insert");
    }
}
