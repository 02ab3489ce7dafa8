//! `mocklib serve`'s scopes (issue 24): boundaries for other processes,
//! opened, used, verified and ended through the admin API by curl and
//! Python, as test suites in other languages use them.

use crate::common::*;

use std::process::Command;

use serde_json::{Value, json};

/// Two scopes with conflicting mocks, and the server's own list: each
/// answers from its own handlers through its port and its proxy, keeps
/// its own journal and verifies its own counts; neither reaches the
/// other's state; an ended scope's port and credential stop working.
#[test]
fn scopes_isolate_handlers_journals_and_expectations() {
    let dir = with_handler_file(
        "- path: /user\n  body: from the file\n- path: https://api.example.com/profile\n  body: file api\n",
    );
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let base = serve.url();
    let (a, b) = (open_scope(&serve), open_scope(&serve));
    let (a_url, b_url) = (text(&a, "url"), text(&b, "url"));
    assert_ne!(a_url, b_url);
    assert_eq!(a["env"]["MOCKLIB_URL"], a["url"]);
    assert!(text(&a, "proxy_url").contains("@127.0.0.1:"), "{a}");

    // A's handlers through its own origin; B's through the server's,
    // addressed as scopes/{id}.
    let (status, body) = post_yaml(
        &format!("{}/handlers", text(&a, "admin_url")),
        "- path: /user\n  body: A\n  times: 1\n- path: https://api.example.com/profile\n  body: A api\n",
    );
    assert_eq!((status, body.as_str()), (201, r#"{"added":2}"#));
    let b_admin = format!("{base}/__mocklib/scopes/{}", b["id"]);
    let (status, _) = post_yaml(
        &format!("{b_admin}/handlers"),
        "- path: /user\n  body: B\n  times: 2\n",
    );
    assert_eq!(status, 201);

    assert_eq!(get(&format!("{a_url}/user")), (200, "A".to_owned()));
    assert_eq!(get(&format!("{b_url}/user")), (200, "B".to_owned()));
    assert_eq!(
        get(&format!("{base}/user")),
        (200, "from the file".to_owned())
    );
    // HTTPS through each scope's proxy, with its environment as a child
    // process gets it: A's override, and B on the files' handler.
    assert_eq!(
        call(Some(&a["env"]), &["https://api.example.com/profile"]),
        (200, "A api".to_owned())
    );
    assert_eq!(
        call(Some(&b["env"]), &["https://api.example.com/profile"]),
        (200, "file api".to_owned())
    );

    // The lists: what each added first, then the files'.
    let listed = get_json(&format!("{}/handlers", text(&a, "admin_url")));
    let runtime: Vec<bool> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["added_at_runtime"] == true)
        .collect();
    assert_eq!(runtime, [true, true, false, false], "{listed}");
    let root_list = get_json(&format!("{base}/__mocklib/handlers"));
    assert_eq!(root_list.as_array().unwrap().len(), 2, "{root_list}");

    // Journals: each its own requests, none of the admin API's.
    let urls = |journal: Value| -> Vec<String> {
        journal
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| entry["url"].as_str().unwrap().to_owned())
            .collect()
    };
    let a_journal = urls(get_json(&format!("{}/requests", text(&a, "admin_url"))));
    assert_eq!(
        a_journal,
        [
            format!("{a_url}/user"),
            "https://api.example.com/profile".to_owned()
        ]
    );
    let b_journal = urls(get_json(&format!("{b_admin}/requests")));
    assert_eq!(
        b_journal,
        [
            format!("{b_url}/user"),
            "https://api.example.com/profile".to_owned()
        ]
    );
    assert_eq!(
        urls(get_json(&format!("{base}/__mocklib/requests"))),
        [format!("{base}/user")]
    );

    // Verification per scope, as a report and as data.
    assert_eq!(
        get_json(&format!("{}/verify", text(&a, "admin_url"))),
        json!({ "ok": true })
    );
    let (status, body) = get(&format!("{b_admin}/verify"));
    assert_eq!(status, 422, "{body}");
    let report: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        report["unmet"],
        json!([{ "handler": "ALL /user", "expected": "exactly 2", "at_least": 2, "at_most": 2, "received": 1 }])
    );
    assert!(text(&report, "report").contains("ALL /user"), "{report}");
    assert_eq!(
        get_json(&format!("{base}/__mocklib/verify")),
        json!({ "ok": true })
    );

    // A scope reaches its own state only.
    let (status, body) = get(&format!(
        "{}/scopes/{}/requests",
        text(&a, "admin_url"),
        b["id"]
    ));
    assert_eq!(status, 403, "{body}");
    assert_eq!(get(&format!("{}/scopes", text(&a, "admin_url"))).0, 403);

    // Ended: gone from the list, its port closes, its credential is refused.
    assert_eq!(delete(&format!("{base}/__mocklib/scopes/{}", a["id"])), 204);
    let open: Vec<Value> = get_json(&format!("{base}/__mocklib/scopes"))
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].clone())
        .collect();
    assert_eq!(open, [b["id"].clone()]);
    eventually("the ended scope's port to close", || {
        (Command::new("curl")
            .args(["--silent", "--max-time", "5", &format!("{a_url}/user")])
            .status()
            .unwrap()
            .code()
            == Some(7))
        .then_some(())
    });
    let (status, body) = call(
        None,
        &[
            "--proxy",
            text(&a, "proxy_url"),
            "http://api.example.com/user",
        ],
    );
    assert_eq!(status, 407, "{body}");
    // B is untouched.
    assert_eq!(get(&format!("{b_url}/user")), (200, "B".to_owned()));
}

/// `PUT handlers` replaces a scope's whole list (MSW's
/// `resetHandlers(...handlers)`), `DELETE` goes back to the files'; a
/// reload of the files reaches every scope that did not replace its list,
/// keeping what each added ahead.
#[test]
fn a_scope_replaces_or_resets_its_list_and_reloads_reach_it() {
    let dir = with_handler_file("- path: /user\n  body: v1\n- path: /other\n  body: other\n");
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let (kept, replaced) = (open_scope(&serve), open_scope(&serve));
    let (status, body) = call(
        None,
        &[
            "-X",
            "PUT",
            "--data-binary",
            r#"[{"path": "/user", "body": "only this"}]"#,
            &format!("{}/handlers", text(&replaced, "admin_url")),
        ],
    );
    assert_eq!((status, body.as_str()), (200, r#"{"handlers":1}"#));
    assert_eq!(
        get(&format!("{}/user", text(&replaced, "url"))),
        (200, "only this".to_owned())
    );
    assert_ne!(get(&format!("{}/other", text(&replaced, "url"))).0, 200);
    assert_eq!(
        post_yaml(
            &format!("{}/handlers", text(&kept, "admin_url")),
            "- path: /added\n  body: added\n"
        )
        .0,
        201
    );

    std::fs::write(
        dir.path().join("handlers.yaml"),
        "- path: /user\n  body: v2\n",
    )
    .unwrap();
    eventually("the reload", || {
        (get(&format!("{}/user", serve.url())).1 == "v2").then_some(())
    });
    assert_eq!(
        get(&format!("{}/user", text(&kept, "url"))),
        (200, "v2".to_owned())
    );
    assert_eq!(
        get(&format!("{}/added", text(&kept, "url"))),
        (200, "added".to_owned())
    );
    assert_eq!(
        get(&format!("{}/user", text(&replaced, "url"))),
        (200, "only this".to_owned())
    );

    assert_eq!(
        delete(&format!("{}/handlers", text(&replaced, "admin_url"))),
        204
    );
    assert_eq!(
        get(&format!("{}/user", text(&replaced, "url"))),
        (200, "v2".to_owned())
    );
}

/// A scope whose owner disappears is ended: one held by a request ends
/// when that request's client goes; one nobody asks about for the idle
/// timeout ends then; a held one outlives the timeout.
#[test]
fn a_scope_ends_when_its_holder_goes_or_it_sits_idle() {
    let dir = with_handler_file("[]");
    let serve = Serve::start(
        dir.path(),
        &["--handlers", "handlers.yaml", "--scope-idle-timeout", "1"],
    );
    let (held, idle) = (open_scope(&serve), open_scope(&serve));
    let mut holder = Command::new("curl")
        .args([
            "--silent",
            "--no-buffer",
            &format!("{}/hold", text(&held, "admin_url")),
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let ids = || -> Vec<u64> {
        get_json(&format!("{}/__mocklib/scopes", serve.url()))
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_u64().unwrap())
            .collect()
    };
    let held_id = held["id"].as_u64().unwrap();
    eventually("the idle scope to end", || {
        (ids() == [held_id]).then_some(())
    });
    assert!(
        serve
            .stderr()
            .contains(&format!("scope {} ended: idle for 1s", idle["id"])),
        "{}",
        serve.stderr()
    );
    // Held for twice the timeout, still there.
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(ids(), [held_id]);
    holder.kill().unwrap();
    holder.wait().unwrap();
    eventually("the held scope to end with its holder", || {
        ids().is_empty().then_some(())
    });
}

/// What the admin API refuses: another host's `/__mocklib/` (through the
/// proxy, or by a `Host` header naming another name, as a page that
/// rebinds its name to loopback would send), a request without the token,
/// an oversized payload; and what it names in a bad one.
#[test]
fn the_admin_api_answers_only_its_own_origin_with_the_token() {
    let dir = with_handler_file(
        "- path: https://api.example.com/__mocklib/handlers\n  body: the API's own\n",
    );
    let serve = Serve::start(
        dir.path(),
        &["--handlers", "handlers.yaml", "--admin-token", "s3cret"],
    );
    let admin = format!("{}/__mocklib/handlers", serve.url());
    let bearer = "authorization: Bearer s3cret";

    let (status, body) = get(&admin);
    assert_eq!(status, 401, "{body}");
    assert_eq!(
        call(None, &["-H", "authorization: Bearer wrong", &admin]).0,
        401
    );
    let (status, body) = call(None, &["-H", bearer, &admin]);
    assert_eq!(status, 200, "{body}");

    // Another host's path is that host's: here, its handler answers.
    let (status, body) = call(
        Some(
            &json!({ "HTTPS_PROXY": serve.variables["HTTPS_PROXY"], "CURL_CA_BUNDLE": serve.variables["CURL_CA_BUNDLE"] }),
        ),
        &["-H", bearer, "https://api.example.com/__mocklib/handlers"],
    );
    assert_eq!((status, body.as_str()), (200, "the API's own"));
    // A rebound name at the listener's address: not the admin API.
    let port = serve.url().rsplit(':').next().unwrap().to_owned();
    let (status, body) = call(
        None,
        &[
            "-H",
            bearer,
            "-H",
            &format!("host: attacker.example:{port}"),
            &admin,
        ],
    );
    assert_ne!(status, 200, "{body}");
    assert!(!body.contains("added_at_runtime"), "{body}");

    // The live page's files are open (a browser loads them without a
    // header); its stream needs the token, in the query for EventSource.
    let page = format!("{}/__mocklib/", serve.url());
    assert_eq!(get(&page).0, 200);
    assert_eq!(get(&format!("{page}events")).0, 401);
    let (status, _) = call(
        None,
        &["--max-time", "1", &format!("{page}events?token=s3cret")],
    );
    assert_eq!(status, 200);

    // Oversized: 413 before anything is parsed.
    let big = dir.path().join("big.json");
    std::fs::write(&big, vec![b' '; 5 << 20]).unwrap();
    let (status, body) = call(
        None,
        &[
            "-H",
            bearer,
            "-X",
            "POST",
            "--data-binary",
            &format!("@{}", big.display()),
            &admin,
        ],
    );
    assert_eq!(status, 413, "{body}");

    // Mocked traffic needs no token.
    assert_eq!(call(Some(&json!({ "HTTPS_PROXY": serve.variables["HTTPS_PROXY"], "CURL_CA_BUNDLE": serve.variables["CURL_CA_BUNDLE"] })), &["https://api.example.com/__mocklib/handlers"]).1, "the API's own");
}

/// A bad payload is a `400` whose JSON names the field by its JSON
/// pointer, as well as in words; nothing of it is added.
#[test]
fn a_bad_payload_is_refused_with_the_json_pointer_of_the_field() {
    let dir = with_handler_file("[]");
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let admin = format!("{}/__mocklib/handlers", serve.url());
    for (payload, pointer, says) in [
        (
            r#"[{"path": "/x", "staus": 200}]"#,
            "/0/staus",
            "unknown field `staus`",
        ),
        (
            r#"[{"path": "/x"}, {"path": "/y", "status": "abc"}]"#,
            "/1/status",
            "entry 2 (ALL /y): status: invalid type",
        ),
        (
            r#"[{"path": "/x", "sequence": [{"status": 99}]}]"#,
            "/0/sequence/0/status",
            "invalid status 99",
        ),
        (
            r#"[{"path": "/x", "match": {"headers": {"a": 1}}}]"#,
            "/0/match/headers/a",
            "match.headers.a: invalid type",
        ),
        (
            r#"[{"path": "/x", "headers": {"bad name": "v"}}]"#,
            "/0/headers",
            "invalid header",
        ),
        (r#"{"path": "/x"}"#, "", "expected a list of handlers"),
    ] {
        let (status, body) = call(None, &["-X", "POST", "--data-binary", payload, &admin]);
        assert_eq!(status, 400, "{payload}: {body}");
        let refused: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(refused["pointer"], pointer, "{payload}: {body}");
        assert!(text(&refused, "error").contains(says), "{payload}: {body}");
    }
    assert_eq!(get_json(&admin), json!([]));
}

/// Whatever a client sends the admin API — bytes that are not UTF-8, JSON
/// and YAML nested past the parsers' limits, a YAML alias bomb, numbers
/// that do not fit, odd paths, methods and indexes — it answers each with
/// a status, keeps serving, and nothing panics.
#[test]
fn hostile_admin_requests_are_answered_and_nothing_panics() {
    let dir = with_handler_file("- path: /user\n  body: fine\n");
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let base = serve.url();
    let admin = format!("{base}/__mocklib");
    // Nine levels of nine aliases: 9^9 strings if expanded.
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
    for level in 1..9 {
        let below = format!("*a{}", level - 1);
        bomb.push_str(&format!(
            "a{level}: &a{level} [{}]\n",
            [below.as_str(); 9].join(", ")
        ));
    }
    let bomb = format!(
        "- path: /bomb\n  json:\n    {}",
        bomb.replace('\n', "\n    ")
    );
    let not_utf8 = dir.path().join("not-utf8.bin");
    std::fs::write(&not_utf8, [0xff, 0xfe, b'[', 0xc3, 0x28, b']']).unwrap();
    let not_utf8 = format!("@{}", not_utf8.display());
    let deep_json = "[".repeat(100_000);
    let deep_yaml = "- ".repeat(50_000) + "x";
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "POST",
            format!("{admin}/handlers"),
            vec![
                "-H",
                "content-type: application/yaml",
                "--data-binary",
                &bomb,
            ],
        ),
        (
            "POST",
            format!("{admin}/handlers"),
            vec!["--data-binary", &deep_json],
        ),
        (
            "POST",
            format!("{admin}/handlers"),
            vec![
                "-H",
                "content-type: application/yaml",
                "--data-binary",
                &deep_yaml,
            ],
        ),
        (
            "POST",
            format!("{admin}/handlers"),
            vec!["--data-binary", &not_utf8],
        ),
        (
            "POST",
            format!("{admin}/handlers"),
            vec!["--data-binary", r#"[{"path": "/x", "status": 1e400}]"#],
        ),
        (
            "POST",
            format!("{admin}/handlers"),
            vec![
                "--data-binary",
                r#"[{"path": "/x", "delay_ms": 18446744073709551616}]"#,
            ],
        ),
        (
            "POST",
            format!("{admin}/handlers"),
            vec![
                "--data-binary",
                r#"[{"path": "/x", "times": {"at_least": 5, "at_most": 1}}]"#,
            ],
        ),
        (
            "POST",
            format!("{admin}/handlers"),
            vec!["--data-binary", r#"[{"path": "(((("}]"#],
        ),
        (
            "POST",
            format!("{admin}/handlers"),
            vec![
                "--data-binary",
                r#"[{"path": "/x", "match": {"json_path": {"$$[": 1}}}]"#,
            ],
        ),
        (
            "POST",
            format!("{admin}/handlers"),
            vec![
                "--data-binary",
                r#"[{"path": "/x", "template": true, "body": "{{ unclosed"}]"#,
            ],
        ),
        (
            "PUT",
            format!("{admin}/handlers"),
            vec!["--data-binary", "null"],
        ),
        (
            "DELETE",
            format!("{admin}/handlers/99999999999999999999999"),
            vec![],
        ),
        ("DELETE", format!("{admin}/handlers/-1"), vec![]),
        ("GET", format!("{admin}/scopes/%2e%2e/handlers"), vec![]),
        ("GET", format!("{admin}/scopes/1/scopes/2/handlers"), vec![]),
        (
            "GET",
            format!("{admin}/scopes/18446744073709551616"),
            vec![],
        ),
        (
            "POST",
            format!("{admin}/record"),
            vec!["--data-binary", r#"{"path": "/"}"#],
        ),
        (
            "POST",
            format!("{admin}/record"),
            vec!["--data-binary", r#"{"path": 7, "mode": "sometimes"}"#],
        ),
        ("GET", format!("{admin}/requests?url=((("), vec![]),
        ("GET", format!("{admin}/requests?method=%00"), vec![]),
        ("PATCH", format!("{admin}/verify"), vec![]),
        ("GET", format!("{admin}/hold"), vec![]),
        ("GET", format!("{admin}/%ff%fe"), vec![]),
        ("OPTIONS", format!("{admin}/"), vec![]),
    ];
    for (method, url, extra) in &cases {
        let mut args = vec!["-X", method];
        args.extend(extra.iter().copied());
        args.push(url);
        let (status, body) = call(None, &args);
        assert!(
            (200..600).contains(&status),
            "{method} {url}: no answer ({status}) {body}"
        );
    }
    // Still serving, and the bad payloads added nothing.
    assert_eq!(get(&format!("{base}/user")), (200, "fine".to_owned()));
    assert_eq!(
        get_json(&format!("{admin}/handlers"))
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let stderr = serve.stderr();
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A server whose files answer `/who`, `https://api.example.com/who` and
/// `http://plain.example.com/who` with `root`, and a scope of it whose
/// handlers answer them with `scope`: the scope's description.
fn root_and_scope_answering_who() -> (tempfile::TempDir, Serve, Value) {
    let who = |body: &str| {
        format!(
            "- path: /who\n  body: {body}\n- path: https://api.example.com/who\n  body: {body}\n\
             - path: http://plain.example.com/who\n  body: {body}\n"
        )
    };
    let dir = with_handler_file(&who("root"));
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let scope = open_scope(&serve);
    let (status, body) = post_yaml(
        &format!("{}/handlers", text(&scope, "admin_url")),
        &who("scope"),
    );
    assert_eq!(status, 201, "{body}");
    (dir, serve, scope)
}

/// What a client got after the scope was deleted: never an answer of the
/// scope's handlers, nor of the root's.
fn assert_answered_by_neither(what: &str, outcome: &str) {
    assert!(
        !outcome.starts_with("200"),
        "{what}: answered by a handler after the scope was deleted: {outcome}"
    );
}

/// A request on a connection kept from before the delete: the listener
/// closed it (the client sees an error, or retries on a new connection,
/// which is refused), or, if it arrived first, answered `410` naming the
/// ended boundary.
fn assert_held_connection_refused(what: &str, outcome: &str) {
    assert_answered_by_neither(what, outcome);
    assert!(
        (outcome.starts_with("410 ") && outcome.contains("has ended"))
            || outcome.starts_with("error: "),
        "{what}: {outcome}"
    );
}

const PYTHON_KEPT_SESSIONS: &str = r#"
import json, sys
import requests

server, scope = sys.argv[1], json.loads(sys.argv[2])
ca = scope["env"]["REQUESTS_CA_BUNDLE"]
proxies = {"http": scope["proxy_url"], "https": scope["proxy_url"]}


def session(proxied):
    s = requests.Session()
    s.trust_env = False
    if proxied:
        s.proxies = proxies
        s.verify = ca
    return s


def outcome(send):
    try:
        r = send()
        return f"{r.status_code} {r.text.strip()}"
    except requests.exceptions.RequestException as e:
        return f"error: {type(e).__name__}: {e}"


# Kept alive: to the scope's port; an HTTPS tunnel made with its credential;
# the server's proxy port, to which each request names the scope.
direct, tunnel, proxy = session(False), session(True), session(True)
calls = {
    "direct": lambda s: s.get(scope["url"] + "/who", timeout=10),
    "tunnel": lambda s: s.get("https://api.example.com/who", timeout=10),
    "proxy": lambda s: s.get("http://plain.example.com/who", timeout=10),
}
kept = {"direct": direct, "tunnel": tunnel, "proxy": proxy}
printed = {"before " + name: outcome(lambda: call(kept[name])) for name, call in calls.items()}
# The README's fixture: its admin session keeps a connection to the scope's
# port (here, the one `direct` holds) while it deletes the scope.
deleted = session(False).delete(f"{server}/__mocklib/scopes/{scope['id']}")
printed["delete"] = str(deleted.status_code)
for name, call in calls.items():
    printed["kept " + name] = outcome(lambda: call(kept[name]))
    printed["new " + name] = outcome(lambda: call(session(name != "direct")))
print(json.dumps(printed))
"#;

/// Issue 39: deleting a scope ends it whatever Python `requests` sessions
/// keep open. Kept-alive connections to its port and HTTPS tunnels made
/// with its credential get none of its handlers' answers (nor the
/// root's); its port refuses new connections and its credential is
/// refused with `407` at once, also on a proxy connection kept to the
/// server's own port.
#[test]
fn a_deleted_scope_answers_nothing_python_sessions_kept_open() {
    let (_dir, serve, scope) = root_and_scope_answering_who();
    let printed = python(
        &serve,
        PYTHON_KEPT_SESSIONS,
        &[serve.url(), &scope.to_string()],
    );
    let printed: Value = serde_json::from_str(&printed).unwrap();
    let outcome = |key: &str| text(&printed, key).to_owned();
    for name in ["direct", "tunnel", "proxy"] {
        assert_eq!(outcome(&format!("before {name}")), "200 scope", "{printed}");
    }
    assert_eq!(outcome("delete"), "204");
    assert_held_connection_refused("kept direct", &outcome("kept direct"));
    assert_held_connection_refused("kept tunnel", &outcome("kept tunnel"));
    // The proxy connection is the server's, not the scope's: it stays, and
    // the credential each request carries is refused.
    let kept_proxy = outcome("kept proxy");
    assert!(
        kept_proxy.starts_with("407 ") && kept_proxy.contains("has ended"),
        "{kept_proxy}"
    );
    let new_direct = outcome("new direct");
    assert!(
        new_direct.starts_with("error: ConnectionError") && new_direct.contains("refused"),
        "{new_direct}"
    );
    let new_tunnel = outcome("new tunnel");
    assert!(
        new_tunnel.starts_with("error: ProxyError") && new_tunnel.contains("407"),
        "{new_tunnel}"
    );
    assert!(outcome("new proxy").starts_with("407 "), "{printed}");
    // Still serving everyone else.
    assert_eq!(
        get(&format!("{}/who", serve.url())),
        (200, "root".to_owned())
    );
}

const GO_KEPT_CLIENTS: &str = r#"package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

type scope struct {
	ID       int               `json:"id"`
	URL      string            `json:"url"`
	ProxyURL string            `json:"proxy_url"`
	Env      map[string]string `json:"env"`
}

func main() {
	server := os.Args[1]
	var s scope
	if err := json.Unmarshal([]byte(os.Args[2]), &s); err != nil {
		panic(err)
	}
	proxy, _ := url.Parse(s.ProxyURL)
	bundle, err := os.ReadFile(s.Env["SSL_CERT_FILE"])
	if err != nil {
		panic(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(bundle)
	// Each keeps its idle connections (90 s, Go's default): to the scope's
	// port; an HTTP/2 connection inside a tunnel made with its credential;
	// the server's proxy port, to which each request names the scope.
	client := func(proxied bool) *http.Client {
		transport := &http.Transport{IdleConnTimeout: 90 * time.Second}
		if proxied {
			transport.Proxy = http.ProxyURL(proxy)
			transport.TLSClientConfig = &tls.Config{RootCAs: roots}
			transport.ForceAttemptHTTP2 = true
		}
		return &http.Client{Transport: transport, Timeout: 10 * time.Second}
	}
	outcome := func(c *http.Client, target string) string {
		response, err := c.Get(target)
		if err != nil {
			return "error: " + err.Error()
		}
		defer response.Body.Close()
		body, _ := io.ReadAll(response.Body)
		return fmt.Sprintf("%d %s %s", response.StatusCode, strings.TrimSpace(string(body)), response.Proto)
	}
	targets := map[string]string{
		"direct": s.URL + "/who",
		"tunnel": "https://api.example.com/who",
		"proxy":  "http://plain.example.com/who",
	}
	kept := map[string]*http.Client{"direct": client(false), "tunnel": client(true), "proxy": client(true)}
	printed := map[string]string{}
	for name, target := range targets {
		printed["before "+name] = outcome(kept[name], target)
	}
	end, _ := http.NewRequest("DELETE", fmt.Sprintf("%s/__mocklib/scopes/%d", server, s.ID), nil)
	deleted, err := client(false).Do(end)
	if err != nil {
		panic(err)
	}
	printed["delete"] = fmt.Sprint(deleted.StatusCode)
	for name, target := range targets {
		printed["kept "+name] = outcome(kept[name], target)
		printed["new "+name] = outcome(client(name != "direct"), target)
	}
	out, _ := json.Marshal(printed)
	fmt.Println(string(out))
}
"#;

/// Issue 39 with Go's `net/http`, whose transports keep idle connections
/// for 90 s: after the delete, neither the kept HTTP/1.1 connection to the
/// scope's port nor the kept HTTP/2 connection inside a tunnel made with
/// its credential reaches its handlers (or the root's); new connections
/// are refused, and its credential too (`407`), also on a proxy
/// connection kept to the server's own port.
#[test]
fn a_deleted_scope_answers_nothing_go_clients_keep_idle() {
    let (_dir, serve, scope) = root_and_scope_answering_who();
    let program = tempfile::tempdir().unwrap();
    let main = program.path().join("main.go");
    std::fs::write(&main, GO_KEPT_CLIENTS).unwrap();
    let output = Command::new("go")
        .arg("run")
        .arg(&main)
        .args([serve.url(), &scope.to_string()])
        .env("GOFLAGS", "-mod=mod")
        .env("GOPROXY", "off")
        .current_dir(program.path())
        .output()
        .expect("go runs (Debian: golang-go)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let outcome = |key: &str| text(&printed, key).to_owned();
    assert_eq!(outcome("before direct"), "200 scope HTTP/1.1", "{printed}");
    assert_eq!(outcome("before tunnel"), "200 scope HTTP/2.0", "{printed}");
    assert_eq!(outcome("before proxy"), "200 scope HTTP/1.1", "{printed}");
    assert_eq!(outcome("delete"), "204");
    assert_held_connection_refused("kept direct", &outcome("kept direct"));
    assert_held_connection_refused("kept tunnel", &outcome("kept tunnel"));
    let kept_proxy = outcome("kept proxy");
    assert!(
        kept_proxy.starts_with("407 ") && kept_proxy.contains("has ended"),
        "{kept_proxy}"
    );
    let new_direct = outcome("new direct");
    assert!(new_direct.contains("connection refused"), "{new_direct}");
    let new_tunnel = outcome("new tunnel");
    assert!(
        new_tunnel.starts_with("error: ") && new_tunnel.contains("Proxy Authentication Required"),
        "{new_tunnel}"
    );
    assert!(outcome("new proxy").starts_with("407 "), "{printed}");
}

/// Issue 39 over HTTP/2 with prior knowledge, one connection held by hand
/// (hyper's client): a stream of the scope still open when it is deleted
/// (its `hold`) ends, a new request on the connection reaches no handler,
/// and the port refuses a new connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_scope_ends_the_http2_streams_and_connection_a_client_holds() {
    use http_body_util::{BodyExt, Empty};
    use hyper_util::rt::{TokioExecutor, TokioIo};

    let (_dir, serve, scope) = tokio::task::block_in_place(root_and_scope_answering_who);
    let scope_url = text(&scope, "url").to_owned();
    let address = scope_url.trim_start_matches("http://").to_owned();
    let tcp = tokio::net::TcpStream::connect(&address).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .unwrap();
    tokio::spawn(connection);
    let get = |path: &str| {
        http::Request::get(format!("{scope_url}{path}"))
            .body(Empty::<bytes::Bytes>::new())
            .unwrap()
    };
    let who = sender.send_request(get("/who")).await.unwrap();
    assert_eq!(who.version(), http::Version::HTTP_2);
    let body = who.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "scope");
    let held = sender.send_request(get("/__mocklib/hold")).await.unwrap();
    assert_eq!(held.status(), 200);
    let mut held = held.into_body();
    let beat = held.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(beat, "held\n");

    let deleted = tokio::task::block_in_place(|| {
        delete(&format!("{}/__mocklib/scopes/{}", serve.url(), scope["id"]))
    });
    assert_eq!(deleted, 204);
    // The port is closed before the delete is answered.
    assert!(tokio::net::TcpStream::connect(&address).await.is_err());
    // The hold, which beats every second for as long as it is open, ends
    // (reset) rather than beating on.
    let ended = tokio::time::timeout(std::time::Duration::from_secs(3), async {
        loop {
            match held.frame().await {
                Some(Ok(_)) => continue,
                Some(Err(error)) => break format!("reset: {error}"),
                None => break "ended".to_owned(),
            }
        }
    })
    .await
    .expect("the hold of a deleted scope ends");
    assert!(!ended.is_empty());
    // Another request on the connection: refused (the listener sent
    // GOAWAY), or answered 410 if it got there first.
    match sender.send_request(get("/who")).await {
        Err(_) => {}
        Ok(response) => {
            let status = response.status();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            let body = String::from_utf8_lossy(&body);
            assert_held_connection_refused(
                "the held HTTP/2 connection",
                &format!("{status} {body}"),
            );
        }
    }
}

/// `scenarios` (issue 40): a scope's scenario states, read and set through
/// the admin API, kept apart from the server's own, and reset with the
/// scope's handlers.
#[test]
fn scenario_states_are_read_set_and_reset_per_scope() {
    let dir = with_handler_file("- path: /user\n  body: John\n");
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let scope = open_scope(&serve);
    let states = format!("{}/__mocklib/scenarios", text(&scope, "url"));
    let put = |url: &str, body: &str| {
        call(
            None,
            &[
                "-X",
                "PUT",
                "-H",
                "content-type: application/json",
                "-d",
                body,
                url,
            ],
        )
    };
    assert_eq!(get_json(&states), json!([]));
    let (status, body) = put(
        &states,
        r#"[{"scenario": "checkout", "state": "paid"}, {"scenario": "order", "key": "7", "state": "shipped"}]"#,
    );
    assert_eq!(status, 204, "{body}");
    assert_eq!(
        get_json(&states),
        json!([
            {"scenario": "checkout", "key": "", "state": "paid"},
            {"scenario": "order", "key": "7", "state": "shipped"},
        ])
    );
    // The same resource on the server's origin, and the server's own apart.
    let id = scope["id"].as_i64().unwrap();
    let on_server = format!("{}/__mocklib/scopes/{id}/scenarios", serve.url());
    assert_eq!(get_json(&on_server).as_array().unwrap().len(), 2);
    assert_eq!(
        get_json(&format!("{}/__mocklib/scenarios", serve.url())),
        json!([])
    );
    // A bad list says what it wants.
    let (status, body) = put(&states, r#"[{"scenario": "checkout"}]"#);
    assert_eq!(status, 400);
    assert!(body.contains("give a JSON list of"), "{body}");
    // A reset of the scope's handlers resets its scenarios.
    assert_eq!(
        delete(&format!("{}/__mocklib/handlers", text(&scope, "url"))),
        204
    );
    assert_eq!(get_json(&states), json!([]));
    put(&states, r#"[{"scenario": "checkout", "state": "paid"}]"#);
    assert_eq!(delete(&states), 204);
    assert_eq!(get_json(&states), json!([]));
}
