//! The live page of `mocklib serve`, at `/__mocklib/` on the listener's own
//! origin, and the event stream it reads.
//!
//! Why: someone whose test suite (in any language) gets an unexpected
//! answer wants to see what the server received and why no handler took
//! it, and to mock it on the spot, without writing code against the admin
//! API. The page shows the handlers, the journal as it grows, each
//! unhandled request with the handlers closest to it and how it differs
//! from each, and turns a request into a handler-file entry (YAML to copy,
//! or added through `POST /__mocklib/handlers`).
//!
//! The page is three static files (`page/`), embedded in the binary: no
//! JavaScript build step, nothing fetched from elsewhere, so it works
//! offline and `cargo install` ships it. The admin API's handler answers
//! for it (after checking the origin and the token), so every state has
//! its page: `/__mocklib/` for the server's own list, a scope's own
//! `{url}/__mocklib/` or `/__mocklib/scopes/{id}/` for the scope's.
//!
//! `GET /__mocklib/events` (`text/event-stream`) sends the journal so far,
//! or what came after the `Last-Event-ID` of a page reconnecting, then each
//! new entry as it is recorded:
//! - `entry`: the entry as `GET /__mocklib/requests` shows it, plus its
//!   `sequence` and, for an unhandled request, `closest`: the handlers
//!   closest to it now, `[{handler, differences}]` (the unhandled
//!   warning's "Did you mean").
//! - `cleared`: the journal was cleared; what came before is gone.
//!
//! The `/__mocklib/` requests are left out, as the journal endpoint leaves
//! them out.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mocklib::events::ListenerId;
use mocklib::node::Server;
use mocklib::sse::Event;
use mocklib::{
    Handler, HttpResponse, events::Events, journal::AnswerSummary, journal::RecordedRequest,
};
use url::Url;

use super::origin::{PREFIX, is_admin_request, own_url};
use super::scopes::ScopeState;

const INDEX_HTML: &str = include_str!("../../page/index.html");
const PAGE_JS: &str = include_str!("../../page/page.js");
const PAGE_CSS: &str = include_str!("../../page/page.css");

/// How long a stream stays silent before a keep-alive comment. A client
/// that went away is noticed when its connection is read or written; the
/// comment is that write for a quiet server (and keeps proxies from timing
/// the stream out).
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// How the journal endpoint shows an entry (`journal.rs`' `journal_entry`,
/// with the `--proto` descriptors of the moment).
pub(crate) type ShowEntry = Box<dyn Fn(&RecordedRequest) -> serde_json::Value + Send + Sync>;

/// The live page: its files and its event stream.
pub(crate) struct Page {
    feed: Arc<Feed>,
}

impl Page {
    pub(crate) fn new(server: &Server, show: ShowEntry) -> Self {
        Page {
            feed: Arc::new(Feed {
                server: server.clone(),
                show,
                instance: format!("{:x}", fastrand::u64(..)),
            }),
        }
    }

    /// The page (`""`) or one of its files, by its name under a state's
    /// `/__mocklib/`.
    pub(crate) fn file(resource: &str) -> Option<HttpResponse> {
        let (text, content_type) = match resource {
            "" => (INDEX_HTML, "text/html; charset=utf-8"),
            "page.js" => (PAGE_JS, "text/javascript; charset=utf-8"),
            "page.css" => (PAGE_CSS, "text/css; charset=utf-8"),
            _ => return None,
        };
        Some(
            HttpResponse::new(text)
                .header("content-type", content_type)
                // A new build of the command may serve other files.
                .header("cache-control", "no-cache"),
        )
    }

    /// The event stream of `state`'s journal, resuming after
    /// `last_event_id`.
    pub(crate) fn events(&self, last_event_id: Option<&str>, state: &ScopeState) -> HttpResponse {
        use futures_util::Stream;
        let mut stream = Box::pin(Arc::clone(&self.feed).stream(last_event_id));
        let (boundary, server) = (state.boundary.clone(), self.feed.server.clone());
        // Every poll reads the journal: in the state's scope, wherever the
        // body is polled.
        let scoped = futures_util::stream::poll_fn(move |cx| match &boundary {
            // An ended scope's stream ends (this clone does not keep it).
            Some(boundary) if boundary.is_ended() => std::task::Poll::Ready(None),
            Some(boundary) => boundary.in_scope(|| stream.as_mut().poll_next(cx)),
            None => server.at_root(|| stream.as_mut().poll_next(cx)),
        });
        HttpResponse::stream(scoped)
            .header("content-type", "text/event-stream")
            .header("cache-control", "no-cache")
    }
}

/// The handler that sends `/__mocklib` (no slash) to the page: the page's
/// relative links want the slash.
pub(crate) fn redirect(base_url: &Url) -> Handler {
    let bare = own_url(base_url, PREFIX.trim_end_matches('/'));
    mocklib::http::get(bare.as_str(), |args| {
        // The pattern tolerates a trailing slash: that one is the page's.
        (!args.request.url().path().ends_with('/'))
            .then(|| HttpResponse::empty().status(308).header("location", PREFIX))
    })
}

/// What the event streams read: the journal, turned into events.
struct Feed {
    server: Server,
    show: ShowEntry,
    /// Starts every event id: a page that reconnects to another run of the
    /// command (whose journal is numbered from 0 again) starts over.
    instance: String,
}

impl Feed {
    /// One client's stream, until it goes away: the front door then drops
    /// the body, and with it this stream and its life-cycle listener.
    fn stream(
        self: Arc<Self>,
        last_event_id: Option<&str>,
    ) -> impl futures_util::Stream<Item = Bytes> + Send + 'static {
        // New entries are noticed through life-cycle events rather than by
        // polling: every journal write is followed by `request:end` or
        // `response:mocked`, and the listener exists only while a page is
        // connected (a server nobody watches pays nothing per request).
        let wake = Arc::new(tokio::sync::Notify::new());
        let listening = {
            let wake = Arc::clone(&wake);
            // `notify_one` keeps a permit when the stream is busy sending:
            // an entry recorded meanwhile is not missed.
            Listening::on(self.server.events(), move || wake.notify_one())
        };
        let seen = resume_after(last_event_id, &self.instance);
        let mut first = Vec::new();
        if seen.is_none() && last_event_id.is_some() {
            // A page still showing another run's journal: it starts over.
            first.extend_from_slice(
                &Event::json(&serde_json::json!({}))
                    .event("cleared")
                    .to_bytes(),
            );
        }
        let state = (self, wake, listening, seen, first, true);
        futures_util::stream::unfold(
            state,
            |(feed, wake, listening, seen, mut chunk, first_round)| async move {
                if !first_round {
                    tokio::select! {
                        () = wake.notified() => {}
                        () = mocklib::delay(KEEP_ALIVE) => chunk.extend_from_slice(b": keep-alive\n\n"),
                    }
                }
                // Read in the scope this poll runs in: the state's.
                let (events, last) = feed.events_after(seen);
                for event in events {
                    chunk.extend_from_slice(&event.to_bytes());
                }
                Some((
                    Bytes::from(chunk),
                    (feed, wake, listening, last, Vec::new(), false),
                ))
            },
        )
    }

    /// The events for the journal's entries numbered after `seen` (all of
    /// them for `None`), and the last number read.
    fn events_after(&self, seen: Option<u64>) -> (Vec<Event>, Option<u64>) {
        // Only what is new: a page stays connected while a suite runs, and
        // copying the whole journal on every request cut `mocklib serve`'s
        // rate under load to a third.
        let fresh: Vec<RecordedRequest> = match seen {
            Some(seen) => self.server.requests_after(seen),
            None => self.server.requests(),
        };
        let last = fresh.last().map(|entry| entry.sequence()).or(seen);
        if fresh.is_empty() {
            return (Vec::new(), last);
        }
        // The handlers an unhandled request could have been meant for (none
        // are listed when every request was handled): not these.
        let any_unhandled = fresh
            .iter()
            .any(|entry| *entry.answer() == AnswerSummary::Unhandled);
        let handlers: Vec<Handler> = if any_unhandled {
            self.server
                .list_handlers()
                .into_iter()
                // Not the admin API's or the page's own.
                .filter(|handler| !handler.header().contains(PREFIX))
                .collect()
        } else {
            Vec::new()
        };
        let events = fresh
            .iter()
            .filter_map(|entry| {
                let id = format!("{}.{}", self.instance, entry.sequence());
                let event = if !is_admin_request(entry.url()) {
                    Event::json(&self.entry_json(entry, &handlers)).event("entry")
                } else if self.is_clearing(entry) {
                    Event::json(&serde_json::json!({ "sequence": entry.sequence() }))
                        .event("cleared")
                } else {
                    return None;
                };
                Some(event.id(id))
            })
            .collect();
        (events, last)
    }

    /// Whether `entry`, one of the listener's own requests, is the journal
    /// endpoint's `DELETE`: the journal keeps that request, recorded after
    /// it cleared the rest.
    fn is_clearing(&self, entry: &RecordedRequest) -> bool {
        entry.method() == "DELETE"
            && entry.url().path() == super::origin::JOURNAL_PATH
            && matches!(entry.answer(), AnswerSummary::Mocked(status) if status.is_success())
    }

    /// The journal endpoint's JSON for `entry`, with its `sequence` and,
    /// when no handler took it, the `handlers` closest to it and how it
    /// differs from each.
    fn entry_json(&self, entry: &RecordedRequest, handlers: &[Handler]) -> serde_json::Value {
        let mut json = (self.show)(entry);
        json["sequence"] = entry.sequence().into();
        if *entry.answer() == AnswerSummary::Unhandled {
            let closest: Vec<serde_json::Value> = entry
                .closest_handlers(handlers)
                .into_iter()
                .map(|(handler, differences)| {
                    serde_json::json!({ "handler": handler.header(), "differences": differences })
                })
                .collect();
            json["closest"] = closest.into();
        }
        json
    }
}

/// The number after which a stream resumes: from a `Last-Event-ID` this
/// run of the command gave (`INSTANCE.SEQUENCE`), else `None` (from the
/// start).
fn resume_after(last_event_id: Option<&str>, instance: &str) -> Option<u64> {
    let (from, sequence) = last_event_id?.split_once('.')?;
    if from != instance {
        return None;
    }
    sequence.parse().ok()
}

/// A life-cycle listener, removed when dropped.
struct Listening {
    events: Events,
    id: ListenerId,
}

impl Listening {
    /// Calls `wake` after every life-cycle event.
    fn on(events: &Events, wake: impl Fn() + Send + Sync + 'static) -> Self {
        let id = events.on_any(move |_| wake());
        Listening {
            events: events.clone(),
            id,
        }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.events.remove_listener(self.id);
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::time::Instant;

    use mocklib::node::setup_server;
    use mocklib::{Request, front_door::Outcome};

    use super::*;
    use crate::admin::origin::JOURNAL_PATH;

    /// A listening server with `handlers`, and a feed of its journal.
    fn server_with(handlers: Vec<Handler>) -> (Server, Url, Arc<Feed>) {
        let server = setup_server([]);
        server.listen();
        let base_url = server.url();
        let feed = Arc::new(Feed {
            server: server.clone(),
            show: show(),
            instance: "run".to_owned(),
        });
        server.reset_handlers_to(handlers);
        (server, base_url, feed)
    }

    /// Entries as the journal endpoint shows them (no `--proto` files).
    fn show() -> ShowEntry {
        Box::new(|entry| crate::admin::journal_entry(entry, None))
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// Resolves `method path` as a request to the listener's own origin.
    fn send(server: &Server, base_url: &Url, method: &str, path: &str) -> Outcome {
        let request = Request::new(method.parse().unwrap(), base_url.join(path).unwrap());
        runtime().block_on(server.handle(request, Some(base_url.clone())))
    }

    /// The events' types and data.
    fn read(events: &[Event]) -> Vec<(String, serde_json::Value)> {
        events
            .iter()
            .map(|event| {
                let kind = event.event_type().unwrap_or_default().to_owned();
                (kind, event.data_json().unwrap())
            })
            .collect()
    }

    #[test]
    fn a_stream_resumes_only_from_ids_of_this_run() {
        assert_eq!(resume_after(Some("run.7"), "run"), Some(7));
        assert_eq!(resume_after(Some("other.7"), "run"), None);
        assert_eq!(resume_after(Some("run.x"), "run"), None);
        assert_eq!(resume_after(Some("7"), "run"), None);
        assert_eq!(resume_after(None, "run"), None);
    }

    #[test]
    fn events_carry_new_entries_the_closest_handlers_and_no_own_request() {
        let (server, base_url, feed) = server_with(vec![mocklib::http::post("/hello", |_| {
            HttpResponse::json(&serde_json::json!({ "hi": 1 }))
        })]);
        assert!(matches!(
            send(&server, &base_url, "GET", "/hello"),
            Outcome::Passthrough(_)
        ));
        send(&server, &base_url, "GET", "/__mocklib/page.js");
        assert!(matches!(
            send(&server, &base_url, "POST", "/hello"),
            Outcome::Mocked(_)
        ));

        let (events, last) = feed.events_after(None);
        assert_eq!(last, Some(2));
        let ids: Vec<_> = events
            .iter()
            .map(|event| event.event_id().unwrap())
            .collect();
        assert_eq!(ids, ["run.0", "run.2"]);
        let [(kind, unhandled), (_, mocked)] = read(&events).try_into().unwrap();
        assert_eq!(kind, "entry");
        assert_eq!(unhandled["answer"], "unhandled");
        assert_eq!(unhandled["url"], base_url.join("/hello").unwrap().as_str());
        assert_eq!(
            unhandled["closest"],
            serde_json::json!([{
                "handler": "POST /hello",
                "differences": ["method: expected POST, received GET"],
            }])
        );
        assert_eq!(mocked["answer"], "mocked");
        assert_eq!(mocked["sequence"], 2);
        assert_eq!(mocked["handler"], "POST /hello");
        assert!(mocked.get("closest").is_none());

        // Nothing new after the last one read; then only what came since.
        assert!(feed.events_after(last).0.is_empty());
        send(&server, &base_url, "DELETE", "/hello");
        let (events, last) = feed.events_after(last);
        assert_eq!(last, Some(3));
        assert_eq!(read(&events)[0].1["method"], "DELETE");
    }

    #[test]
    fn a_cleared_journal_is_said_by_the_clearing_request() {
        let (server, base_url, feed) = server_with(Vec::new());
        // The journal endpoint's DELETE, as serve.rs answers it.
        let clearing = server.clone();
        server.use_handlers([mocklib::http::delete(
            crate::admin::origin::own_url(&base_url, JOURNAL_PATH).as_str(),
            move |_| {
                clearing.clear_requests();
                HttpResponse::empty().status(204)
            },
        )]);
        send(&server, &base_url, "GET", "/one");
        let (_, seen) = feed.events_after(None);
        send(&server, &base_url, "DELETE", JOURNAL_PATH);
        send(&server, &base_url, "GET", "/two");

        let (events, _) = feed.events_after(seen);
        let read = read(&events);
        let kinds: Vec<&str> = read.iter().map(|(kind, _)| kind.as_str()).collect();
        assert_eq!(kinds, ["cleared", "entry"]);
        assert_eq!(read[1].1["url"], base_url.join("/two").unwrap().as_str());
        // A page connecting later sees the same: cleared, then what came since.
        assert_eq!(feed.events_after(None).0.len(), 2);
    }

    #[test]
    fn the_page_and_its_files_are_served_and_the_bare_path_redirects() {
        let (server, base_url, _) = server_with(Vec::new());
        server.reset_handlers_to([redirect(&base_url)]);
        let Outcome::Mocked(moved) = send(&server, &base_url, "GET", "/__mocklib") else {
            panic!("GET /__mocklib is not answered");
        };
        assert_eq!(moved.status(), 308);
        assert_eq!(moved.headers()["location"], PREFIX);
        // With the slash, the redirect lets it through (to the admin API).
        assert!(!matches!(
            send(&server, &base_url, "GET", PREFIX),
            Outcome::Mocked(_)
        ));
        let page = Page::file("").unwrap();
        assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
        assert_eq!(page.body().as_bytes().unwrap(), INDEX_HTML);
        // Everything the page links to is served, with its type; the links
        // are relative, so a scope's page gets its scope's files.
        for (link, content_type, text) in [
            ("page.js", "text/javascript; charset=utf-8", PAGE_JS),
            ("page.css", "text/css; charset=utf-8", PAGE_CSS),
        ] {
            assert!(INDEX_HTML.contains(&format!("\"{link}\"")), "{link}");
            let file = Page::file(link).unwrap();
            assert_eq!(file.headers()["content-type"], content_type);
            assert_eq!(file.body().as_bytes().unwrap(), text);
        }
        assert!(Page::file("events").is_none());
    }

    #[test]
    fn a_stream_ends_when_its_client_goes_away() {
        let (server, base_url, _) = server_with(Vec::new());
        let page = Arc::new(Page::new(&server, show()));
        let feed = Arc::clone(&page.feed);
        let streaming = Arc::clone(&page);
        server.use_handlers([mocklib::http::get("/__mocklib/events", move |_| {
            streaming.events(None, &ScopeState::default())
        })]);
        let idle = Arc::strong_count(&feed);
        let mut client =
            std::net::TcpStream::connect(base_url.socket_addrs(|| None).unwrap()[0]).unwrap();
        write!(
            client,
            "GET /__mocklib/events HTTP/1.1\r\nhost: {}\r\n\r\n",
            base_url.authority()
        )
        .unwrap();
        let mut head = [0; 512];
        let read = client.read(&mut head).unwrap();
        let head = String::from_utf8_lossy(&head[..read]);
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert!(head.contains("text/event-stream"), "{head}");
        // The stream holds the feed while it runs.
        eventually(|| Arc::strong_count(&feed) == idle + 1);
        drop(client);
        eventually(|| Arc::strong_count(&feed) == idle);
    }

    /// Waits up to 5 s for `done`.
    fn eventually(mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !done() {
            assert!(Instant::now() < deadline, "not within 5 s");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
