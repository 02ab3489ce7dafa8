//! The live page of `mocklib serve` (`/__mocklib/`) in headless Chromium,
//! driven over WebDriver by chromedriver as crates/browser-tests drives the
//! example app: the built command as a child process, requests sent by the
//! test on plain TCP, the page's DOM read back.
//!
//! Needs `chromium` and `chromedriver` (`./scripts/test` installs them).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

// The browser tests' WebDriver client and plain HTTP/1.1 (this repository
// only: the package leaves tests/ out).
#[path = "../../../browser-tests/tests/webdriver/mod.rs"]
mod webdriver;
use webdriver::{Browser, Driver, http};

use crate::common::Serve;

/// A handler close to `GET /hello`: another method.
const HANDLERS: &str = "- method: POST\n  path: /hello\n  json: {greeting: hi}\n";

/// Opens the live page at `url` and waits until its stream is connected and
/// it lists the handler file's entry.
fn open_live(page: &webdriver::Session, url: &str) {
    page.navigate(url);
    page.wait_for(
        "the page to connect to its event stream",
        "return document.body.dataset.state === 'live'",
    );
    page.wait_for(
        "the handler file's entry in the list",
        "return [...document.querySelectorAll('#handlers li')]
            .some((li) => li.dataset.handler === 'POST /hello')",
    );
}

#[test]
fn a_request_shows_on_the_live_page_within_a_second_and_becomes_a_handler() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("handlers.yaml"), HANDLERS).unwrap();
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let driver = Driver::start(Browser::Chromium);
    let page = driver.new_session();
    open_live(&page, &format!("{}/__mocklib/", serve.url()));

    // An unhandled request appears within a second, with the handler
    // closest to it and why that one did not match.
    let hello = format!("{}/hello", serve.url());
    let sent = Instant::now();
    let (status, _) = http("GET", &hello, &[], "");
    // Unhandled, and addressed to the server itself: nothing to pass it to.
    assert_eq!(status, 502);
    let entry = "#journal li[data-method='GET'][data-answer='unhandled']";
    let closest = page.wait_for(
        "the request on the page",
        &format!(r#"return document.querySelector("{entry} .closest")?.innerText ?? null"#),
    );
    let shown_after = sent.elapsed();
    println!("GET /hello shown on the page {shown_after:?} after it was sent");
    assert!(
        shown_after < Duration::from_secs(1),
        "shown after {shown_after:?}"
    );
    let closest = closest.as_str().unwrap();
    assert!(closest.contains("POST /hello"), "{closest}");
    assert!(
        closest.contains("method: expected POST, received GET"),
        "{closest}"
    );

    // Turned into a handler, with clicks: the YAML shown, then Add.
    page.click(&format!("{entry} summary"));
    let yaml = page.execute(&format!(
        r#"return document.querySelector("{entry} .yaml").textContent"#
    ));
    assert_eq!(
        yaml,
        "- method: \"GET\"\n  path: \"/hello\"\n  status: 200\n  json: {}\n"
    );
    page.click(&format!("{entry} button.add"));
    page.wait_for(
        "the added handler in the list",
        "return [...document.querySelectorAll('#handlers li')]
            .some((li) => li.dataset.handler === 'GET /hello'
                && li.textContent.includes('added at runtime'))",
    );

    // The next identical request is mocked by it, and shows so.
    assert_eq!(http("GET", &hello, &[], ""), (200, "{}".to_owned()));
    let answered = page.wait_for(
        "the mocked request on the page",
        r##"return document.querySelector("#journal li[data-method='GET'][data-answer='mocked'] .by")
            ?.textContent ?? null"##,
    );
    assert_eq!(answered, "by GET /hello");

    // The YAML the page writes reads back as written: quotes, newlines,
    // U+2028, YAML's and mocklib patterns' special characters.
    let tricky = json!({ "k: \"v\" #": ["it's", null, 1.5, true, "a\nb\u{2028}"], "": {} });
    let yaml = page.execute_async(
        "const [json, done] = arguments;
         import('/__mocklib/page.js').then((page) => {
             const entry = page.handlerFor({
                 url: location.origin + '/odd:path*(1)', method: 'PUT', headers: {}, answer: 'unhandled',
             });
             done(page.toYaml([{ ...entry, json }]));
         })",
        &tricky,
    );
    let yaml = yaml.as_str().unwrap();
    let handlers = format!("{}/__mocklib/handlers", serve.url());
    let (status, text) = http(
        "POST",
        &handlers,
        &[("content-type", "application/yaml")],
        yaml,
    );
    assert_eq!(status, 201, "{text}{yaml}");
    let (status, body) = http("PUT", &format!("{}/odd:path*(1)", serve.url()), &[], "");
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), tricky);
    page.close();
}

/// With `--admin-token`, the page opened as `/__mocklib/#token=TOKEN`
/// sends it: its stream (in the query, as `EventSource` cannot send a
/// header) and its requests to the admin API (as a bearer token) work.
#[test]
fn the_page_sends_the_token_it_was_opened_with() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("handlers.yaml"), HANDLERS).unwrap();
    let serve = Serve::start(
        dir.path(),
        &["--handlers", "handlers.yaml", "--admin-token", "t0k/en"],
    );
    let driver = Driver::start(Browser::Chromium);
    let page = driver.new_session();
    open_live(&page, &format!("{}/__mocklib/#token=t0k%2Fen", serve.url()));
    page.close();
}

/// A scope has its page (on its own origin, or under the server's as
/// `scopes/ID/`) showing its handlers and its requests only; the server's
/// page lists the open scopes and never shows their requests.
#[test]
fn a_scope_has_its_own_page_and_the_server_page_lists_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("handlers.yaml"), HANDLERS).unwrap();
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let (status, body) = http(
        "POST",
        &format!("{}/__mocklib/scopes", serve.url()),
        &[],
        "",
    );
    assert_eq!(status, 201, "{body}");
    let scope: Value = serde_json::from_str(&body).unwrap();
    let (id, scope_url) = (
        scope["id"].as_u64().unwrap(),
        scope["url"].as_str().unwrap(),
    );
    let (status, _) = http(
        "POST",
        &format!("{scope_url}/__mocklib/handlers"),
        &[("content-type", "application/yaml")],
        "- path: /only-in-the-scope\n  body: scoped\n",
    );
    assert_eq!(status, 201);

    let driver = Driver::start(Browser::Chromium);
    let server_page = driver.new_session();
    server_page.navigate(&format!("{}/__mocklib/", serve.url()));
    server_page.wait_for(
        "the scope listed on the server's page",
        &format!("return document.querySelector(\"#scopes li[data-scope='{id}']\") !== null"),
    );
    let scope_page = driver.new_session();
    scope_page.navigate(&format!("{}/__mocklib/scopes/{id}/", serve.url()));
    scope_page.wait_for(
        "the scope's page to connect",
        "return document.body.dataset.state === 'live'",
    );
    scope_page.wait_for(
        "the scope's own handler in its list",
        "return [...document.querySelectorAll('#handlers li')]
            .some((li) => li.dataset.handler === 'ALL /only-in-the-scope')",
    );
    assert_eq!(
        http("GET", &format!("{scope_url}/only-in-the-scope"), &[], ""),
        (200, "scoped".to_owned())
    );
    scope_page.wait_for(
        "the scope's request on its page",
        "return document.querySelector(\"#journal li[data-answer='mocked']\") !== null",
    );
    // The server's page saw none of it.
    server_page.wait_for(
        "the server's page to be live",
        "return document.body.dataset.state === 'live'",
    );
    let shown = server_page.execute("return document.querySelectorAll('#journal li').length");
    assert_eq!(shown, 0);
    let listed = server_page.execute(
        "return [...document.querySelectorAll('#handlers li')].some((li) => li.dataset.handler === 'ALL /only-in-the-scope')",
    );
    assert_eq!(listed, false);
    scope_page.close();
    server_page.close();
}
