//! `mocklib serve`'s scopes (issue 24): boundaries for other processes,
//! opened, used, verified and ended through the admin API by curl and
//! Python, as test suites in other languages use them.

use crate::common::*;

use std::process::Command;

use serde_json::{Value, json};

/// Runs curl with `args`, adding `-w '\n%{http_code}'`; the status and the
/// body. `env`: a scope's environment for curl (its proxy, its CA bundle).
fn call(env: Option<&Value>, args: &[&str]) -> (u16, String) {
    let mut command = Command::new("curl");
    command.args([
        "--silent",
        "--show-error",
        "--max-time",
        "20",
        "-w",
        "\n%{http_code}",
    ]);
    if let Some(env) = env {
        for (name, value) in env.as_object().expect("env is an object") {
            command.env(name, value.as_str().expect("env values are strings"));
        }
    }
    let output = command.args(args).output().expect("curl runs");
    let printed = String::from_utf8(output.stdout).expect("curl printed text");
    let (body, status) = printed.rsplit_once('\n').expect("the status line");
    (status.parse().unwrap_or(0), body.to_owned())
}

fn get(url: &str) -> (u16, String) {
    call(None, &[url])
}

fn get_json(url: &str) -> Value {
    let (status, body) = get(url);
    assert_eq!(status, 200, "GET {url}: {body}");
    serde_json::from_str(&body).unwrap()
}

fn post_yaml(url: &str, yaml: &str) -> (u16, String) {
    call(
        None,
        &[
            "-X",
            "POST",
            "-H",
            "content-type: application/yaml",
            "--data-binary",
            yaml,
            url,
        ],
    )
}

fn delete(url: &str) -> u16 {
    call(None, &["-X", "DELETE", url]).0
}

/// Opens a scope; its description (`id`, `url`, `proxy_url`, `env`).
fn open_scope(serve: &Serve) -> Value {
    let (status, body) = call(
        None,
        &["-X", "POST", &format!("{}/__mocklib/scopes", serve.url())],
    );
    assert_eq!(status, 201, "{body}");
    serde_json::from_str(&body).unwrap()
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} in {value}"))
}

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
