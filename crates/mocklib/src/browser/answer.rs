//! One request through the engine, as both interception modes need it.

use std::cell::RefCell;
use std::sync::Arc;

use url::Url;

use super::convert::{BrowserRequest, MockedResponse, header_map, is_common_asset};
use crate::engine::{Engine, Outcome, Passthrough};

/// What the page does with an intercepted request.
pub(super) enum Answer {
    Mocked(MockedResponse),
    /// Perform it as it is (a passthrough or an unhandled request).
    Passthrough(Passthrough),
    /// Fail it: `fetch` rejects with a `TypeError`.
    NetworkError,
}

/// Resolves `request` with the worker's handlers. Relative predicates
/// (`/api/user`) match against the page's own location, as in a browser
/// every relative URL does.
pub(super) async fn answer(
    engine: &Arc<Engine>,
    request: &BrowserRequest,
    quiet: bool,
) -> Result<Answer, String> {
    let (method, url) = (&request.method, &request.url);
    let base_url = page_url(&request.page);
    let loaded_by_document = request.loaded_by_document;
    let request = request.to_core()?;
    let asset = loaded_by_document || is_common_asset(request.url());
    let outcome = if asset {
        engine.handle_asset(request, base_url).await
    } else {
        engine.handle(request, base_url).await
    };
    Ok(match outcome {
        Outcome::Mocked(response) => {
            // A streamed body stays a stream: each mode hands its chunks
            // on as they come (see `stream.rs`).
            let response = MockedResponse::new(response);
            if !quiet {
                crate::support::log::info(&format!(
                    "{method} {url} ({} {})",
                    response.status, response.status_text
                ));
            }
            Answer::Mocked(response)
        }
        Outcome::Passthrough(passthrough) => Answer::Passthrough(passthrough),
        Outcome::NetworkError(_) => Answer::NetworkError,
        // Only the page's `WebSocket` class opens WebSockets (`fetch` may
        // not even send `Upgrade`).
        #[cfg(feature = "ws")]
        Outcome::WebSocket(_) => {
            crate::support::log::error(&format!(
                "a WebSocket handler matched {method} {url}, but fetch cannot carry a WebSocket; \
                 open it with the page's WebSocket class"
            ));
            Answer::NetworkError
        }
    })
}

thread_local! {
    /// The page's URL, parsed: it rarely changes between requests, and a
    /// shared one costs a request no copy (measured in the page: copying
    /// it took some 15 µs of a Service Worker question, the code being cold
    /// after the hop).
    static PAGE_URL: RefCell<Option<Arc<Url>>> = const { RefCell::new(None) };
}

pub(super) fn page_url(href: &str) -> Option<Arc<Url>> {
    PAGE_URL.with(|cached| {
        let mut cached = cached.borrow_mut();
        if cached.as_ref().is_none_or(|url| url.as_str() != href) {
            *cached = Url::parse(href).ok().map(Arc::new);
        }
        cached.clone()
    })
}

/// Emits `response:bypass` for a real response the browser received.
pub(super) fn report_passthrough(
    passthrough: Passthrough,
    status: u16,
    headers: &[(String, String)],
) {
    let Ok(status) = http::StatusCode::from_u16(status) else {
        return;
    };
    passthrough.report_response(status, &header_map(headers));
}
