//! "Did you mean …": the handlers closest to an unhandled request.

use crate::handler::Handler;
use crate::request::Request;

const MAX_SUGGESTIONS: usize = 4;

/// Up to four handlers whose method and predicate are close to the request,
/// closest first.
pub(crate) fn closest_handlers<'a>(
    request: &Request,
    handlers: impl Iterator<Item = &'a Handler>,
) -> Vec<&'a Handler> {
    let url = request.url();
    let path = url.path();
    let clean_url = format!("{}{}", url.origin().ascii_serialization(), path);
    let mut scored: Vec<(usize, &Handler)> = handlers
        .filter_map(|handler| {
            let text = handler.logic().suggestion_text()?;
            let target = if text.starts_with('/') {
                path
            } else {
                clean_url.as_str()
            };
            let distance = levenshtein(&target.to_ascii_lowercase(), &text.to_ascii_lowercase());
            let method_penalty = match handler.logic().method() {
                Some(method) if method != request.method() => 1,
                _ => 0,
            };
            // Allow about one edit per four characters, at least two.
            let allowed = (text.len() / 4).max(2);
            (distance <= allowed).then_some((distance * 2 + method_penalty, handler))
        })
        .collect();
    scored.sort_by_key(|(score, _)| *score);
    scored.dedup_by(|a, b| a.1.header() == b.1.header());
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, h)| h)
        .collect()
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HttpResponse, http};

    #[test]
    fn distance() {
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
    }

    #[test]
    fn suggests_typos_and_other_methods() {
        let handlers = [
            http::get("/users", |_| HttpResponse::empty()),
            http::post("/user", |_| HttpResponse::empty()),
            http::get("/completely/different", |_| HttpResponse::empty()),
        ];
        let request = Request::new(
            ::http::Method::GET,
            "http://localhost/user".parse().unwrap(),
        );
        let found: Vec<_> = closest_handlers(&request, handlers.iter())
            .iter()
            .map(|h| h.header())
            .collect();
        // The same path with another method is the likeliest mistake.
        assert_eq!(found, ["POST /user", "GET /users"]);
    }
}
