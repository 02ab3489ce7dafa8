//! Boundaries and the handler list, end to end: every row of the spec's
//! transition table, the four rules for boundaries, the shape of the bounded
//! callable (an `FnOnce + Clone` callback, cloned per call), per-scope
//! `once`, carrying a scope into `tokio::spawn`, a real axum route wrapped in
//! a boundary, and standalone introspection.
//!
//! Every request is a real reqwest request through `server.middleware()` on a
//! multi-thread tokio runtime; URLs under `https://api.example.com` are mocked
//! and never leave the process. Each server listens with the "error"
//! unhandled-request strategy, so a request no handler matches fails at the
//! requester instead of reaching the network.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::common::TestClient;
use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use mocklib::node::{Server, setup_server};
use mocklib::{BoundaryExt, Handler, HttpResponse, http};
use test_support::spawn_upstream;
use tokio::sync::{Barrier, oneshot};

const USER: &str = "https://api.example.com/user";
const WHOAMI: &str = "https://api.example.com/whoami";
/// Two segments, so `P_PARAM` does not match it.
const OTHER: &str = "https://api.example.com/v2/other";

// Five predicates that all match `GET https://api.example.com/user` but print
// as different headers, so `list_handlers()` shows the order and a real
// request shows which handler answers first.
const P_RELATIVE: &str = "/user";
const P_ABSOLUTE: &str = "https://api.example.com/user";
const P_PARAM: &str = "https://api.example.com/:name";
const P_HOST: &str = "https://*.example.com/user";
const P_STAR: &str = "*/user";

fn h(predicate: &str) -> String {
    format!("GET {predicate}")
}

/// A GET handler answering 200 with `body` as text.
fn answer(predicate: &'static str, body: impl Into<String>) -> Handler {
    let body = body.into();
    http::get(predicate, move |_| HttpResponse::text(body.clone()))
}

/// The current scope's handler headers, in lookup order.
fn headers(server: &Server) -> Vec<String> {
    server
        .list_handlers()
        .iter()
        .map(|handler| handler.header().to_owned())
        .collect()
}

// ───────────────────────── 1. transition table ─────────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn use_handlers_at_the_root_prepends_in_argument_order_ahead_of_existing_handlers() {
    let server = setup_server([answer(P_RELATIVE, "initial")]);
    let client = TestClient::new(&server);
    assert_eq!(headers(&server), [h(P_RELATIVE)]);
    assert_eq!(client.get_text(USER).await, "initial");

    server.use_handlers([answer(P_ABSOLUTE, "first"), answer(P_PARAM, "second")]);
    assert_eq!(headers(&server), [h(P_ABSOLUTE), h(P_PARAM), h(P_RELATIVE)]);
    // The first argument is looked up first.
    assert_eq!(client.get_text(USER).await, "first");

    server.use_handlers([answer(P_HOST, "third")]);
    assert_eq!(
        headers(&server),
        [h(P_HOST), h(P_ABSOLUTE), h(P_PARAM), h(P_RELATIVE)]
    );
    assert_eq!(client.get_text(USER).await, "third");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn use_handlers_inside_a_boundary_prepends_to_that_boundary_only() {
    let server = setup_server([answer(P_RELATIVE, "initial")]);
    let client = TestClient::new(&server);
    server.use_handlers([answer(P_PARAM, "root runtime")]);

    let run = server.boundary({
        let server = server.clone();
        let client = client.clone();
        move || async move {
            server.use_handlers([answer(P_ABSOLUTE, "first"), answer(P_HOST, "second")]);
            assert_eq!(
                headers(&server),
                [h(P_ABSOLUTE), h(P_HOST), h(P_PARAM), h(P_RELATIVE)]
            );
            assert_eq!(client.get_text(USER).await, "first");

            server.use_handlers([answer(P_STAR, "third")]);
            assert_eq!(
                headers(&server),
                [
                    h(P_STAR),
                    h(P_ABSOLUTE),
                    h(P_HOST),
                    h(P_PARAM),
                    h(P_RELATIVE)
                ]
            );
            client.get_text(USER).await
        }
    });
    assert_eq!(run().await, "third");

    assert_eq!(headers(&server), [h(P_PARAM), h(P_RELATIVE)]);
    assert_eq!(client.get_text(USER).await, "root runtime");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reset_handlers_at_the_root_removes_only_runtime_handlers() {
    let server = setup_server([answer(P_RELATIVE, "initial"), answer(OTHER, "other")]);
    let client = TestClient::new(&server);
    server.use_handlers([answer(P_ABSOLUTE, "runtime 1")]);
    server.use_handlers([answer(P_PARAM, "runtime 2"), answer(P_HOST, "runtime 3")]);
    assert_eq!(client.get_text(USER).await, "runtime 2");

    server.reset_handlers();
    assert_eq!(headers(&server), [h(P_RELATIVE), h(OTHER)]);
    assert_eq!(client.get_text(USER).await, "initial");
    assert_eq!(client.get_text(OTHER).await, "other");

    // With no runtime handlers left it changes nothing.
    server.reset_handlers();
    assert_eq!(headers(&server), [h(P_RELATIVE), h(OTHER)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reset_handlers_inside_a_boundary_removes_only_what_that_boundary_added() {
    let server = setup_server([answer(P_RELATIVE, "initial")]);
    let client = TestClient::new(&server);
    server.use_handlers([answer(P_PARAM, "root runtime")]);

    let run = server.boundary({
        let server = server.clone();
        let client = client.clone();
        move || async move {
            server.use_handlers([answer(P_ABSOLUTE, "boundary 1")]);
            server.use_handlers([answer(P_HOST, "boundary 2")]);
            assert_eq!(client.get_text(USER).await, "boundary 2");

            server.reset_handlers();
            // The list the boundary started with, root runtime handler
            // included, is kept.
            assert_eq!(headers(&server), [h(P_PARAM), h(P_RELATIVE)]);
            client.get_text(USER).await
        }
    });
    assert_eq!(run().await, "root runtime");

    assert_eq!(headers(&server), [h(P_PARAM), h(P_RELATIVE)]);
    assert_eq!(client.get_text(USER).await, "root runtime");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reset_handlers_to_at_the_root_replaces_runtime_and_initial_handlers() {
    let server = setup_server([answer(P_RELATIVE, "initial"), answer(OTHER, "other")]);
    let client = TestClient::new(&server);
    server.use_handlers([answer(P_PARAM, "runtime")]);

    server.reset_handlers_to([answer(P_HOST, "next 1"), answer(P_ABSOLUTE, "next 2")]);
    assert_eq!(headers(&server), [h(P_HOST), h(P_ABSOLUTE)]);
    assert_eq!(client.get_text(USER).await, "next 1");
    // The previous initial handlers are gone too.
    client.get(OTHER).expect_unhandled().await;

    // `next` is the new initial list: a later reset goes back to it.
    server.use_handlers([answer(P_STAR, "later runtime")]);
    assert_eq!(client.get_text(USER).await, "later runtime");
    server.reset_handlers();
    assert_eq!(headers(&server), [h(P_HOST), h(P_ABSOLUTE)]);
    assert_eq!(client.get_text(USER).await, "next 1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reset_handlers_to_inside_a_boundary_replaces_the_list_for_that_boundary_only() {
    let server = setup_server([answer(P_RELATIVE, "initial"), answer(OTHER, "other")]);
    let client = TestClient::new(&server);
    server.use_handlers([answer(P_PARAM, "root runtime")]);

    let run = server.boundary({
        let server = server.clone();
        let client = client.clone();
        move || async move {
            server.use_handlers([answer(P_ABSOLUTE, "boundary runtime")]);
            server.reset_handlers_to([answer(P_HOST, "next")]);
            assert_eq!(headers(&server), [h(P_HOST)]);
            assert_eq!(client.get_text(USER).await, "next");
            client.get(OTHER).expect_unhandled().await;

            // `next` is this boundary's initial list now.
            server.use_handlers([answer(P_STAR, "later")]);
            server.reset_handlers();
            assert_eq!(headers(&server), [h(P_HOST)]);
            client.get_text(USER).await
        }
    });
    assert_eq!(run().await, "next");

    // Outside, runtime and initial handlers are unchanged.
    assert_eq!(headers(&server), [h(P_PARAM), h(P_RELATIVE), h(OTHER)]);
    assert_eq!(client.get_text(USER).await, "root runtime");
    assert_eq!(client.get_text(OTHER).await, "other");
    server.reset_handlers();
    assert_eq!(client.get_text(USER).await, "initial");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_boundary_starts_from_the_outer_list_when_the_returned_function_is_called() {
    let server = setup_server([answer(P_RELATIVE, "initial")]);
    let client = TestClient::new(&server);

    let run = server.boundary({
        let server = server.clone();
        let client = client.clone();
        move || async move { (headers(&server), client.get_text(USER).await) }
    });

    // Added after `boundary()` but before the call: the boundary sees it.
    server.use_handlers([answer(P_ABSOLUTE, "added between")]);
    let (inside, body) = run().await;
    assert_eq!(inside, [h(P_ABSOLUTE), h(P_RELATIVE)]);
    assert_eq!(body, "added between");

    // The call, not the first poll, is the moment: a handler added between
    // calling and awaiting is not seen.
    let pending = run();
    server.use_handlers([answer(P_HOST, "added after the call")]);
    let (inside, body) = pending.await;
    assert_eq!(inside, [h(P_ABSOLUTE), h(P_RELATIVE)]);
    assert_eq!(body, "added between");

    // A new call starts from the list as it is now.
    let (inside, body) = run().await;
    assert_eq!(inside, [h(P_HOST), h(P_ABSOLUTE), h(P_RELATIVE)]);
    assert_eq!(body, "added after the call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn outer_runtime_handlers_count_as_initial_inside_a_boundary() {
    let server = setup_server([answer(P_RELATIVE, "initial")]);
    let client = TestClient::new(&server);
    server.use_handlers([answer(P_ABSOLUTE, "root runtime")]);

    let run = server.boundary({
        let server = server.clone();
        let client = client.clone();
        move || async move {
            // Nothing was added in this boundary: reset keeps everything.
            server.reset_handlers();
            (headers(&server), client.get_text(USER).await)
        }
    });
    let (inside, body) = run().await;
    assert_eq!(inside, [h(P_ABSOLUTE), h(P_RELATIVE)]);
    assert_eq!(body, "root runtime");

    // The root still knows its own runtime handler as runtime.
    server.reset_handlers();
    assert_eq!(headers(&server), [h(P_RELATIVE)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_nested_boundary_starts_from_the_full_state_of_the_enclosing_boundary() {
    let server = setup_server([answer(P_RELATIVE, "initial")]);
    let client = TestClient::new(&server);

    // Made at the root, called inside the outer boundary: it nests there.
    let inner = server.boundary({
        let server = server.clone();
        let client = client.clone();
        move || async move {
            let start = (headers(&server), client.get_text(USER).await);
            server.use_handlers([answer(P_HOST, "inner runtime")]);
            let overridden = client.get_text(USER).await;
            server.reset_handlers();
            let after_reset = (headers(&server), client.get_text(USER).await);
            (start, overridden, after_reset)
        }
    });

    let outer = server.boundary({
        let server = server.clone();
        let client = client.clone();
        move || async move {
            server.use_handlers([answer(P_ABSOLUTE, "outer runtime")]);
            let nested = inner().await;
            (nested, headers(&server), client.get_text(USER).await)
        }
    });

    let ((start, overridden, after_reset), outer_after, outer_body) = outer().await;
    let enclosing = vec![h(P_ABSOLUTE), h(P_RELATIVE)];
    assert_eq!(start, (enclosing.clone(), "outer runtime".to_owned()));
    assert_eq!(overridden, "inner runtime");
    // The enclosing boundary's runtime handler is an initial handler here.
    assert_eq!(after_reset, (enclosing.clone(), "outer runtime".to_owned()));
    assert_eq!(outer_after, enclosing);
    assert_eq!(outer_body, "outer runtime");

    assert_eq!(headers(&server), [h(P_RELATIVE)]);
    assert_eq!(client.get_text(USER).await, "initial");
}

// ───────────────────────── 2. rules for boundaries ─────────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rule_1_a_boundary_without_overrides_resolves_against_the_handlers_current_when_it_started()
{
    let server = setup_server([answer(P_RELATIVE, "initial")]);
    let client = TestClient::new(&server);
    server.use_handlers([answer(P_ABSOLUTE, "current at start")]);

    let (started_tx, started_rx) = oneshot::channel::<()>();
    let (changed_tx, changed_rx) = oneshot::channel::<()>();
    let run = server.boundary({
        let client = client.clone();
        move |started: oneshot::Sender<()>, changed: oneshot::Receiver<()>| async move {
            let before = client.get_text(USER).await;
            started.send(()).expect("test body waits");
            changed.await.expect("root changed");
            // The root was replaced meanwhile; this boundary still has
            // the list it started with.
            let after = client.get_text(USER).await;
            (before, after)
        }
    });
    let task = tokio::spawn(run(started_tx, changed_rx));

    started_rx.await.expect("boundary started");
    server.reset_handlers_to([answer(P_HOST, "replaced at the root")]);
    changed_tx.send(()).expect("boundary waits");

    let (before, after) = task.await.expect("boundary task");
    assert_eq!(before, "current at start");
    assert_eq!(after, "current at start");
    assert_eq!(client.get_text(USER).await, "replaced at the root");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rule_2_overrides_never_leak_out_of_a_boundary_during_or_after_it_without_a_reset() {
    let server = setup_server([answer(P_RELATIVE, "initial")]);
    let client = TestClient::new(&server);
    let root_before = headers(&server);

    let (added_tx, added_rx) = oneshot::channel::<()>();
    let (checked_tx, checked_rx) = oneshot::channel::<()>();
    let run = server.boundary({
        let server = server.clone();
        let client = client.clone();
        move |added: oneshot::Sender<()>, checked: oneshot::Receiver<()>| async move {
            server.use_handlers([
                answer(P_ABSOLUTE, "override"),
                answer("https://api.example.com/only-inside", "inside"),
            ]);
            added.send(()).expect("outside waits");
            checked.await.expect("outside checked");
            // Still overridden in here; and never reset.
            (
                client.get_text(USER).await,
                client.get_text("https://api.example.com/only-inside").await,
            )
        }
    });
    let task = tokio::spawn(run(added_tx, checked_rx));

    // While the boundary is running with its overrides in place.
    added_rx.await.expect("override added");
    assert_eq!(headers(&server), root_before);
    assert_eq!(client.get_text(USER).await, "initial");
    client
        .get("https://api.example.com/only-inside")
        .expect_unhandled()
        .await;
    checked_tx.send(()).expect("boundary waits");

    let inside = task.await.expect("boundary task");
    assert_eq!(inside, ("override".to_owned(), "inside".to_owned()));

    // After it, with no reset anywhere.
    assert_eq!(headers(&server), root_before);
    assert_eq!(client.get_text(USER).await, "initial");
    client
        .get("https://api.example.com/only-inside")
        .expect_unhandled()
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rule_3_after_a_reset_in_a_nested_boundary_the_enclosing_handlers_remain_as_its_initial_handlers()
 {
    let server = setup_server([answer(P_RELATIVE, "root initial")]);
    let client = TestClient::new(&server);
    server.use_handlers([answer(P_PARAM, "root runtime")]);

    let inner_server = server.clone();
    let inner_client = client.clone();
    let outer_server = server.clone();
    let outer_client = client.clone();
    let (nested, outer_after) = server
        .in_boundary(async move {
            outer_server.use_handlers([answer(P_ABSOLUTE, "outer override")]);
            let nested = outer_server
                .in_boundary(async move {
                    inner_server.use_handlers([
                        answer(P_HOST, "nested override"),
                        answer(P_STAR, "nested override 2"),
                    ]);
                    assert_eq!(inner_client.get_text(USER).await, "nested override");
                    inner_server.reset_handlers();
                    // Reset twice: still nothing below the enclosing state.
                    inner_server.reset_handlers();
                    (headers(&inner_server), inner_client.get_text(USER).await)
                })
                .await;
            let outer_after = (headers(&outer_server), outer_client.get_text(USER).await);
            (nested, outer_after)
        })
        .await;

    let enclosing = vec![h(P_ABSOLUTE), h(P_PARAM), h(P_RELATIVE)];
    assert_eq!(nested, (enclosing.clone(), "outer override".to_owned()));
    assert_eq!(outer_after, (enclosing, "outer override".to_owned()));
    assert_eq!(headers(&server), [h(P_PARAM), h(P_RELATIVE)]);
    assert_eq!(client.get_text(USER).await, "root runtime");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rule_4_concurrent_boundaries_never_see_each_others_overrides() {
    const BOUNDARIES: usize = 128;
    const REQUESTS: usize = 5;

    let server = setup_server([answer(WHOAMI, "root"), answer(P_RELATIVE, "initial")]);
    let client = TestClient::new(&server);
    let root_before = headers(&server);
    // Every boundary has its override in place before any of them requests.
    let barrier = Arc::new(Barrier::new(BOUNDARIES));

    let run = server.boundary({
        let server = server.clone();
        let client = client.clone();
        move |index: usize, barrier: Arc<Barrier>| async move {
            server.use_handlers([answer(WHOAMI, index.to_string())]);
            barrier.wait().await;
            let mut seen = Vec::with_capacity(REQUESTS);
            for _ in 0..REQUESTS {
                tokio::task::yield_now().await;
                seen.push(client.get_text(WHOAMI).await);
                tokio::task::yield_now().await;
                assert_eq!(server.list_handlers().len(), 3, "boundary {index}");
            }
            // Untouched handlers still answer from the starting list.
            seen.push(client.get_text(USER).await);
            seen
        }
    });

    let tasks: Vec<_> = (0..BOUNDARIES)
        .map(|index| (index, tokio::spawn(run(index, Arc::clone(&barrier)))))
        .collect();
    for (index, task) in tasks {
        let seen = task.await.expect("boundary task");
        let mut expected = vec![index.to_string(); REQUESTS];
        expected.push("initial".to_owned());
        assert_eq!(seen, expected, "boundary {index}");
    }

    assert_eq!(headers(&server), root_before);
    assert_eq!(client.get_text(WHOAMI).await, "root");
}

// ───────────────────────── 3. callable shape ─────────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_bounded_function_passes_zero_to_three_arguments_and_the_result_through_unchanged() {
    let server = setup_server([]);
    server.listen_with(common::error_on_unhandled());

    // 0 arguments, sync.
    let zero = server.boundary(|| 42_u64);
    assert_eq!(zero().into_inner(), 42);

    // 1 argument, async: the very same allocation comes back.
    let one = server.boundary(|shared: Arc<String>| async move { shared });
    let shared = Arc::new("payload".to_owned());
    let returned = one(Arc::clone(&shared)).await;
    assert!(Arc::ptr_eq(&shared, &returned));

    // 2 arguments, async, moved non-Clone values; an `Err` result passes
    // through as a value.
    struct NotClone(Vec<u8>);
    let two = server.boundary(|text: String, bytes: NotClone| async move {
        if bytes.0.is_empty() {
            Err(format!("{text}: empty"))
        } else {
            Ok((text, bytes.0))
        }
    });
    assert_eq!(
        two("a".to_owned(), NotClone(vec![1, 2, 3])).await,
        Ok(("a".to_owned(), vec![1, 2, 3]))
    );
    assert_eq!(
        two("b".to_owned(), NotClone(Vec::new())).await,
        Err("b: empty".to_owned())
    );

    // 3 arguments, sync: the value is reachable by `Deref` and `into_inner`.
    let three = server.boundary(|a: u8, b: &'static str, c: Option<char>| (a, b, c));
    let result = three(7, "seven", Some('7'));
    assert_eq!(result.0, 7);
    assert_eq!(result.into_inner(), (7, "seven", Some('7')));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sync_code_in_a_boundary_callback_sees_the_boundary_scope() {
    let server = setup_server([answer(P_RELATIVE, "initial")]);
    let client = TestClient::new(&server);

    let sync_run = server.boundary({
        let server = server.clone();
        move |predicate: &'static str| {
            server.use_handlers([answer(predicate, "sync override")]);
            headers(&server)
        }
    });
    assert_eq!(
        sync_run(P_ABSOLUTE).into_inner(),
        [h(P_ABSOLUTE), h(P_RELATIVE)]
    );
    assert_eq!(headers(&server), [h(P_RELATIVE)]);

    // A sync callback returning a future: the override added in the sync
    // part is seen by the request made in the async part.
    let mixed = server.boundary({
        let server = server.clone();
        let client = client.clone();
        move || {
            server.use_handlers([answer(P_HOST, "added synchronously")]);
            async move { client.get_text(USER).await }
        }
    });
    assert_eq!(mixed().await, "added synchronously");
    assert_eq!(headers(&server), [h(P_RELATIVE)]);
    assert_eq!(client.get_text(USER).await, "initial");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_call_of_a_bounded_function_gets_a_fresh_scope() {
    let server = setup_server([answer(P_RELATIVE, "initial")]);
    let client = TestClient::new(&server);

    let run = server.boundary({
        let server = server.clone();
        let client = client.clone();
        move |label: &'static str| async move {
            let start = headers(&server);
            server.use_handlers([answer(P_ABSOLUTE, label)]);
            (start, client.get_text(USER).await)
        }
    });
    assert_eq!(
        run("first").await,
        (vec![h(P_RELATIVE)], "first".to_owned())
    );
    // The second call does not start from the first call's overrides.
    assert_eq!(
        run("second").await,
        (vec![h(P_RELATIVE)], "second".to_owned())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_callback_that_consumes_its_captures_runs_as_a_fresh_clone_on_every_call() {
    /// Counts how often it is cloned.
    struct CountsClones(Arc<AtomicUsize>);
    impl Clone for CountsClones {
        fn clone(&self) -> Self {
            self.0.fetch_add(1, Ordering::SeqCst);
            CountsClones(Arc::clone(&self.0))
        }
    }

    let server = setup_server([answer(P_RELATIVE, "initial")]);
    let client = TestClient::new(&server);
    let clones = Arc::new(AtomicUsize::new(0));

    let run = server.boundary({
        let (server, client) = (server.clone(), client.clone());
        let overrides = vec![answer(P_ABSOLUTE, "override")];
        let counter = CountsClones(Arc::clone(&clones));
        // The body moves `overrides` into `use_handlers` and `counter` into
        // the future: only an `FnOnce` callback may do that.
        move |call: usize| async move {
            let _counter = counter;
            server.use_handlers(overrides);
            (call, headers(&server), client.get_text(USER).await)
        }
    });
    for call in 1..=3 {
        assert_eq!(
            run(call).await,
            (
                call,
                vec![h(P_ABSOLUTE), h(P_RELATIVE)],
                "override".to_owned()
            )
        );
        // One clone of the callback per call; the original stays intact.
        assert_eq!(clones.load(Ordering::SeqCst), call);
    }
    assert_eq!(headers(&server), [h(P_RELATIVE)]);
    assert_eq!(client.get_text(USER).await, "initial");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_panicking_sync_callback_leaves_the_caller_at_the_root_scope() {
    let server = setup_server([answer(P_RELATIVE, "initial")]);
    let client = TestClient::new(&server);

    let explode = server.boundary({
        let server = server.clone();
        move || {
            server.use_handlers([answer(P_ABSOLUTE, "from the panicking boundary")]);
            panic!("callback failed on purpose");
        }
    });
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = explode();
    }));
    assert!(outcome.is_err());

    // Same thread, right after the panic: the boundary was left.
    assert_eq!(headers(&server), [h(P_RELATIVE)]);
    assert_eq!(client.get_text(USER).await, "initial");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_boundary_of_one_server_leaves_another_servers_list_alone() {
    let first = setup_server([answer(P_RELATIVE, "first server")]);
    let second = setup_server([answer(P_RELATIVE, "second server")]);
    let first_client = TestClient::new(&first);
    let second_client = TestClient::new(&second);

    let run = first.boundary({
        let first = first.clone();
        let second = second.clone();
        let first_client = first_client.clone();
        let second_client = second_client.clone();
        move || async move {
            first.use_handlers([answer(P_ABSOLUTE, "first override")]);
            // Not in a boundary of `second`: this changes its root list.
            second.use_handlers([answer(P_ABSOLUTE, "second root runtime")]);
            (
                first_client.get_text(USER).await,
                second_client.get_text(USER).await,
            )
        }
    });
    assert_eq!(
        run().await,
        (
            "first override".to_owned(),
            "second root runtime".to_owned()
        )
    );
    assert_eq!(first_client.get_text(USER).await, "first server");
    assert_eq!(second_client.get_text(USER).await, "second root runtime");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_resolver_runs_in_the_scope_of_the_request_that_triggered_it() {
    // A stateful mock: logging in installs a handler for `/me`. The install
    // lands in the scope of the request that logged in.
    let server = setup_server([answer("https://api.example.com/me", "anonymous")]);
    server.use_handlers([http::post("https://api.example.com/login", {
        let server = server.clone();
        move |_| {
            let server = server.clone();
            async move {
                tokio::task::yield_now().await;
                server.use_handlers([answer("https://api.example.com/me", "logged in")]);
                HttpResponse::empty().status(204)
            }
        }
    })]);
    let client = TestClient::new(&server);
    let root_before = headers(&server);

    let run = server.boundary({
        let client = client.clone();
        move || async move {
            let before = client.get_text("https://api.example.com/me").await;
            let login = client.post("https://api.example.com/login").await.status();
            let after = client.get_text("https://api.example.com/me").await;
            (before, login, after)
        }
    });
    let (before, login, after) = run().await;
    assert_eq!(before, "anonymous");
    assert_eq!(login, 204);
    assert_eq!(after, "logged in");

    assert_eq!(headers(&server), root_before);
    assert_eq!(
        client.get_text("https://api.example.com/me").await,
        "anonymous"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_boundary_task_that_panics_leaves_no_scope_behind_on_the_worker_threads() {
    let server = setup_server([answer(P_RELATIVE, "root")]);
    let client = TestClient::new(&server);

    // A failing assertion inside a concurrent test body, say.
    let failing = server.boundary({
        let server = server.clone();
        move |index: usize| async move {
            server.use_handlers([answer(P_ABSOLUTE, "left behind?")]);
            tokio::task::yield_now().await;
            panic!("boundary {index} failed on purpose");
        }
    });
    let failures: Vec<_> = (0..8).map(|index| tokio::spawn(failing(index))).collect();
    for failure in failures {
        assert!(failure.await.expect_err("the task panicked").is_panic());
    }

    // Plenty of plain tasks, spread over every worker thread.
    let checks: Vec<_> = (0..64)
        .map(|_| {
            let server = server.clone();
            let client = client.clone();
            tokio::spawn(async move {
                tokio::task::yield_now().await;
                (headers(&server), client.get_text(USER).await)
            })
        })
        .collect();
    for check in checks {
        assert_eq!(
            check.await.expect("check task"),
            (vec![h(P_RELATIVE)], "root".to_owned())
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn server_handle_called_in_a_boundary_resolves_there_wherever_its_future_is_awaited() {
    let server = setup_server([answer(P_RELATIVE, "root")]);
    server.listen_with(common::error_on_unhandled());

    let run = server.boundary({
        let server = server.clone();
        move || {
            server.use_handlers([answer(P_ABSOLUTE, "boundary")]);
            let request =
                mocklib::Request::new(axum::http::Method::GET, url::Url::parse(USER).expect("url"));
            // Called here, awaited later in a plain task outside the boundary.
            // The future owns everything it needs: it outlives this closure.
            server.handle(request, None)
        }
    });
    let pending = run().into_inner();
    let outcome = tokio::spawn(pending).await.expect("handle task");
    match outcome {
        mocklib::front_door::Outcome::Mocked(response) => {
            assert_eq!(response.body().as_bytes().unwrap().as_ref(), b"boundary")
        }
        other => panic!("expected a mocked response, got {other:?}"),
    }
}

// ───────────────────────── 4. once is per scope ─────────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_once_handler_used_in_one_boundary_is_still_armed_in_another_and_at_the_root() {
    let server = setup_server([
        answer(P_ABSOLUTE, "once").once(),
        answer(P_RELATIVE, "fallback"),
    ]);
    let client = TestClient::new(&server);

    let run = server.boundary({
        let client = client.clone();
        move || async move { (client.get_text(USER).await, client.get_text(USER).await) }
    });
    let pair = ("once".to_owned(), "fallback".to_owned());
    assert_eq!(run().await, pair);
    assert_eq!(run().await, pair);
    assert_eq!(
        (client.get_text(USER).await, client.get_text(USER).await),
        pair
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_boundaries_each_get_the_first_answer_of_a_once_handler() {
    const BOUNDARIES: usize = 32;
    let server = setup_server([answer(WHOAMI, "once").once(), answer(WHOAMI, "fallback")]);
    let client = TestClient::new(&server);
    let barrier = Arc::new(Barrier::new(BOUNDARIES));

    let run = server.boundary({
        let client = client.clone();
        move |barrier: Arc<Barrier>| async move {
            barrier.wait().await;
            let first = client.get_text(WHOAMI).await;
            tokio::task::yield_now().await;
            let second = client.get_text(WHOAMI).await;
            (first, second)
        }
    });
    let tasks: Vec<_> = (0..BOUNDARIES)
        .map(|_| tokio::spawn(run(Arc::clone(&barrier))))
        .collect();
    for task in tasks {
        assert_eq!(
            task.await.expect("boundary task"),
            ("once".to_owned(), "fallback".to_owned())
        );
    }
    assert_eq!(client.get_text(WHOAMI).await, "once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn restore_handlers_inside_a_boundary_rearms_once_handlers_for_that_boundary_only() {
    let server = setup_server([
        answer(P_ABSOLUTE, "once").once(),
        answer(P_RELATIVE, "fallback"),
    ]);
    let client = TestClient::new(&server);
    assert_eq!(client.get_text(USER).await, "once");
    assert_eq!(client.get_text(USER).await, "fallback");

    let run = server.boundary({
        let server = server.clone();
        let client = client.clone();
        move || async move {
            // Starts from a copy of the root's record: already used here.
            let start = client.get_text(USER).await;
            server.restore_handlers();
            let rearmed = client.get_text(USER).await;
            let used_again = client.get_text(USER).await;
            (start, rearmed, used_again)
        }
    });
    assert_eq!(
        run().await,
        (
            "fallback".to_owned(),
            "once".to_owned(),
            "fallback".to_owned()
        )
    );

    // The root's once-handler stays used until the root restores it.
    assert_eq!(client.get_text(USER).await, "fallback");
    server.restore_handlers();
    assert_eq!(client.get_text(USER).await, "once");
    assert_eq!(client.get_text(USER).await, "fallback");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_once_handler_added_inside_a_boundary_is_used_up_only_there() {
    let server = setup_server([answer(P_RELATIVE, "fallback")]);
    let client = TestClient::new(&server);

    let inner_server = server.clone();
    let inner_client = client.clone();
    let inside = server
        .in_boundary(async move {
            inner_server.use_handlers([answer(P_ABSOLUTE, "boundary once").once()]);
            let first = inner_client.get_text(USER).await;
            let second = inner_client.get_text(USER).await;
            inner_server.restore_handlers();
            let third = inner_client.get_text(USER).await;
            [first, second, third]
        })
        .await;
    assert_eq!(inside, ["boundary once", "fallback", "boundary once"]);
    assert_eq!(headers(&server), [h(P_RELATIVE)]);
}

// ───────────────────────── 5. tokio::spawn ─────────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tokio_spawn_does_not_inherit_the_boundary_but_in_current_boundary_carries_it() {
    let server = setup_server([answer(P_RELATIVE, "root")]);
    let client = TestClient::new(&server);

    let run = server.boundary({
        let server = server.clone();
        let client = client.clone();
        move || async move {
            server.use_handlers([answer(P_ABSOLUTE, "boundary override")]);

            let plain = tokio::spawn({
                let server = server.clone();
                let client = client.clone();
                async move { (headers(&server), client.get_text(USER).await) }
            });
            let carried = tokio::spawn(
                {
                    let server = server.clone();
                    let client = client.clone();
                    async move {
                        tokio::task::yield_now().await;
                        (headers(&server), client.get_text(USER).await)
                    }
                }
                .in_current_boundary(),
            );
            (
                plain.await.expect("plain task"),
                carried.await.expect("carried task"),
            )
        }
    });
    let (plain, carried) = run().await;
    assert_eq!(plain, (vec![h(P_RELATIVE)], "root".to_owned()));
    assert_eq!(
        carried,
        (
            vec![h(P_ABSOLUTE), h(P_RELATIVE)],
            "boundary override".to_owned()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn in_current_boundary_carries_the_innermost_nested_boundary_and_changes_made_there() {
    let server = setup_server([answer(P_RELATIVE, "root")]);
    let client = TestClient::new(&server);

    let outer_server = server.clone();
    let outer_client = client.clone();
    let (spawned, after_spawned_change) = server
        .in_boundary(async move {
            outer_server.use_handlers([answer(P_ABSOLUTE, "outer")]);
            let inner_server = outer_server.clone();
            let inner_client = outer_client.clone();
            let spawned = outer_server
                .in_boundary(async move {
                    inner_server.use_handlers([answer(P_HOST, "inner")]);
                    let task_server = inner_server.clone();
                    let task_client = inner_client.clone();
                    let spawned = tokio::spawn(
                        async move {
                            let body = task_client.get_text(USER).await;
                            // A change made by the carried task lands in the
                            // carried boundary.
                            task_server.use_handlers([answer(P_STAR, "added by task")]);
                            body
                        }
                        .in_current_boundary(),
                    )
                    .await
                    .expect("carried task");
                    (spawned, inner_client.get_text(USER).await)
                })
                .await;
            // ...and not in the enclosing one.
            assert_eq!(outer_client.get_text(USER).await, "outer");
            spawned
        })
        .await;
    assert_eq!(spawned, "inner");
    assert_eq!(after_spawned_change, "added by task");
    assert_eq!(headers(&server), [h(P_RELATIVE)]);
}

// ───────────────────────── 6. axum route handler ─────────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_axum_route_wrapped_in_a_boundary_gives_each_incoming_request_its_own_overrides() {
    const REQUESTS: usize = 16;
    let server = setup_server([answer("https://api.example.com/greeting", "root greeting")]);
    let mocked = TestClient::new(&server);
    // All incoming requests hold their override at the same time.
    let barrier = Arc::new(Barrier::new(REQUESTS));

    // The callback takes axum's extractors and returns axum's response.
    let route = server.boundary({
        let server = server.clone();
        let mocked = mocked.clone();
        move |Path(name): Path<String>, request_headers: HeaderMap| async move {
            let tag = request_headers
                .get("x-tag")
                .and_then(|value| value.to_str().ok())
                .unwrap_or("no tag")
                .to_owned();
            let greeting = format!("hello {name} ({tag})");
            server.use_handlers([http::get("https://api.example.com/greeting", move |_| {
                HttpResponse::text(greeting.clone())
            })]);
            // A deadlock guard, not a timing assertion.
            tokio::time::timeout(std::time::Duration::from_secs(60), barrier.wait())
                .await
                .expect("every incoming request reached the barrier");
            tokio::task::yield_now().await;
            let body = mocked.get_text("https://api.example.com/greeting").await;
            let handlers = server.list_handlers().len().to_string();
            (StatusCode::CREATED, [("x-handlers", handlers)], body)
        }
    });
    // `route` is an `Arc<dyn Fn>`, which axum does not take as a handler
    // directly; a forwarding closure does.
    let app = Router::new().route(
        "/greet/{name}",
        axum::routing::get(move |path: Path<String>, request_headers: HeaderMap| {
            route(path, request_headers)
        }),
    );
    let address = spawn_upstream(app).await;

    let plain = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("plain client");
    let requests: Vec<_> = (0..REQUESTS)
        .map(|index| {
            let plain = plain.clone();
            tokio::spawn(async move {
                let response = plain
                    .get(format!("http://{address}/greet/user{index}"))
                    .header("x-tag", format!("tag{index}"))
                    .send()
                    .await
                    .expect("request to the axum app");
                let status = response.status();
                let handlers = response
                    .headers()
                    .get("x-handlers")
                    .and_then(|value| value.to_str().ok())
                    .map(str::to_owned);
                let body = response.text().await.expect("body");
                (index, status, handlers, body)
            })
        })
        .collect();
    for request in requests {
        let (index, status, handlers, body) = request.await.expect("request task");
        assert_eq!(status, 201);
        assert_eq!(handlers.as_deref(), Some("2"));
        assert_eq!(body, format!("hello user{index} (tag{index})"));
    }

    assert_eq!(server.list_handlers().len(), 1);
    assert_eq!(
        mocked.get_text("https://api.example.com/greeting").await,
        "root greeting"
    );
}

// ───────────────────────── 7. introspection ─────────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_catch_all_handler_in_a_boundary_observes_every_request_of_that_scope_only() {
    let upstream = spawn_upstream(Router::new().route(
        "/real",
        axum::routing::get(|| async { "from the real upstream" }),
    ))
    .await;

    let server = setup_server([
        answer(USER, "john"),
        http::post("https://api.example.com/posts", |_| {
            HttpResponse::empty().status(201)
        }),
    ]);
    // The harness's client uses no system proxy, so the one request that
    // reaches the real upstream gets there directly.
    let client = TestClient::new(&server);

    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    assert_eq!(client.get_text(USER).await, "john");

    let (started_tx, started_rx) = oneshot::channel::<()>();
    let (outside_done_tx, outside_done_rx) = oneshot::channel::<()>();
    let observe = server.boundary({
        let server = server.clone();
        let client = client.clone();
        let seen = Arc::clone(&seen);
        move |started: oneshot::Sender<()>, outside_done: oneshot::Receiver<()>| async move {
            server.use_handlers([http::all("*", move |args| {
                seen.lock().unwrap().push(format!(
                    "{} {}",
                    args.request.method(),
                    args.request.url()
                ));
            })]);
            started.send(()).expect("outside waits");
            // Requests made outside while this boundary observes.
            outside_done.await.expect("outside requests done");

            let user = client.get_text(format!("{USER}?page=2")).await;
            let created = client
                .post("https://api.example.com/posts")
                .body(r#"{"id":1}"#)
                .await
                .status();
            let real = client.get_text(format!("http://{upstream}/real")).await;
            let carried = tokio::spawn(
                {
                    let client = client.clone();
                    async move { client.get_text(USER).await }
                }
                .in_current_boundary(),
            )
            .await
            .expect("carried task");
            (user, created, real, carried)
        }
    });
    let task = tokio::spawn(observe(started_tx, outside_done_rx));

    started_rx.await.expect("observer installed");
    assert_eq!(client.get_text(USER).await, "john");
    let outside_post = client.post("https://api.example.com/posts").await;
    assert_eq!(outside_post.status(), 201);
    outside_done_tx.send(()).expect("boundary waits");

    let (user, created, real, carried) = task.await.expect("boundary task");
    // The real handlers (and the real upstream) still answered.
    assert_eq!(user, "john");
    assert_eq!(created, 201);
    assert_eq!(real, "from the real upstream");
    assert_eq!(carried, "john");

    assert_eq!(client.get_text(USER).await, "john");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            format!("GET {USER}?page=2"),
            "POST https://api.example.com/posts".to_owned(),
            format!("GET http://{upstream}/real"),
            format!("GET {USER}"),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_future_carried_from_the_root_stays_at_the_root_when_awaited_inside_a_boundary() {
    let server = setup_server([answer(P_ABSOLUTE, "root")]);
    let client = TestClient::new(&server);
    // Captured at the root: it must resolve against the root list...
    let carried = {
        let client = client.clone();
        async move { client.get_text(USER).await }.in_current_boundary()
    };
    // ...even when awaited inside a boundary that overrides the handler.
    let run = server.boundary({
        let server = server.clone();
        move || {
            server.use_handlers([answer(P_ABSOLUTE, "boundary")]);
            async {}
        }
    });
    let inside = server.boundary({
        let client = client.clone();
        let server = server.clone();
        move || {
            server.use_handlers([answer(P_ABSOLUTE, "boundary")]);
            async move { client.get_text(USER).await }
        }
    });
    assert_eq!(inside().await, "boundary");
    run().await;
    let awaited_inside = server.in_boundary({
        let server = server.clone();
        async move {
            server.use_handlers([answer(P_ABSOLUTE, "boundary")]);
            carried.await
        }
    });
    assert_eq!(awaited_inside.await, "root");
}
