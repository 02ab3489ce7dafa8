//! "Did you mean …": the handlers closest to an unhandled request.

use crate::handling::handler::Handler;
use crate::message::request::Request;

const MAX_SUGGESTIONS: usize = 4;

/// Up to four handlers whose method and predicate are close to the request,
/// closest first.
pub(crate) fn closest_handlers<'a>(
    request: &Request,
    handlers: impl Iterator<Item = &'a Handler>,
) -> Vec<&'a Handler> {
    let mut scored: Vec<(usize, &Handler)> = handlers
        .filter_map(|handler| Some((distance(handler, request)?, handler)))
        .collect();
    scored.sort_by_key(|(score, _)| *score);
    scored.dedup_by(|a, b| a.1.header() == b.1.header());
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, h)| h)
        .collect()
}

/// Up to three of `requests` close to what `handler` matches, closest
/// first: the likely typos behind an expectation that was not met.
pub(crate) fn closest_requests<'a>(
    handler: &Handler,
    requests: impl Iterator<Item = &'a Request>,
) -> Vec<&'a Request> {
    let mut scored: Vec<(usize, &Request)> = requests
        .filter_map(|request| Some((distance(handler, request)?, request)))
        .collect();
    // Stable: equally close requests stay in arrival order.
    scored.sort_by_key(|(score, _)| *score);
    scored.dedup_by(|a, b| a.1.method() == b.1.method() && a.1.url() == b.1.url());
    scored.into_iter().take(3).map(|(_, r)| r).collect()
}

/// How far `request` is from what `handler` matches (edits to the URL or
/// path, twice, plus one for another method); `None` when too far to be a
/// likely mistake or the handler has no URL to compare.
fn distance(handler: &Handler, request: &Request) -> Option<usize> {
    let text = handler.kind().suggestion_text()?;
    let target = comparable_url(request, text);
    let instantiated = with_params_from(text, &target);
    let distance = levenshtein(
        &target.to_ascii_lowercase(),
        &instantiated.to_ascii_lowercase(),
    );
    let method_penalty = match handler.kind().method() {
        Some(method) if method != request.method() => 1,
        _ => 0,
    };
    // Allow about one edit per four characters, at least two.
    let allowed = (text.len() / 4).max(2);
    (distance <= allowed).then_some(distance * 2 + method_penalty)
}

/// The part of the request's URL a handler's predicate text compares with:
/// the path for a relative predicate, origin and path otherwise.
pub(crate) fn comparable_url(request: &Request, predicate_text: &str) -> String {
    let url = request.url();
    if predicate_text.starts_with('/') {
        url.path().to_owned()
    } else {
        format!("{}{}", url.origin().ascii_serialization(), url.path())
    }
}

/// `pattern` with each `:param` or `*` segment replaced by the target's
/// segment at the same place, so a parameter costs no edits: `/users/:id`
/// against `/user/42` reads `/users/42`, one edit away.
fn with_params_from(pattern: &str, target: &str) -> String {
    let targets: Vec<&str> = target.split('/').collect();
    pattern
        .split('/')
        .enumerate()
        .map(|(index, segment)| {
            let is_param = segment.starts_with(':') || segment == "*";
            match targets.get(index) {
                Some(actual) if is_param => *actual,
                _ => segment,
            }
        })
        .collect::<Vec<_>>()
        .join("/")
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
    use crate::{HttpResponse, namespace::http};

    #[test]
    fn parameters_cost_no_edits() {
        assert_eq!(with_params_from("/users/:id", "/user/42"), "/users/42");
        assert_eq!(with_params_from("/files/*", "/file/a.txt"), "/files/a.txt");
        assert_eq!(with_params_from("/a/:b/:c", "/a"), "/a/:b/:c");
    }

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
