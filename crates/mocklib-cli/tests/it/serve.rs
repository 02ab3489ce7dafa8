//! `mocklib serve` as a test suite in another language uses it: the built
//! command as a child process, driven by curl and Python's `requests`, and
//! the suites of examples/serve-* (pytest, node, go, grpcio) run as they are.

use crate::common::*;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

// The library's test fixtures, shared with its integration tests.
const HAR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../mocklib-tests/tests/fixtures/har/api.har"
);

const PYTHON_GET: &str = "import requests, sys\n\
                          response = requests.get(sys.argv[1], timeout=30)\n\
                          print(response.status_code, response.headers.get('content-type'), response.text, end='')";

const HANDLERS_YAML: &str = r#"
- method: GET
  path: /users/:id
  json: { id: 7, name: Kate }
  headers: { x-total-count: "1" }
- method: post
  path: https://api.example.com/posts
  status: 201
  body: created
- method: ALL
  path: https://api.example.com/greeting
  body_file: greeting.html
  delay_ms: 20
"#;

/// A folder with [`HANDLERS_YAML`] as handlers.yaml and its body file.
fn with_handlers_yaml() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("handlers.yaml"), HANDLERS_YAML).unwrap();
    std::fs::write(dir.path().join("greeting.html"), "<p>hello</p>").unwrap();
    dir
}

#[test]
fn answers_from_handler_and_har_files_through_the_base_url_and_the_proxy() {
    let dir = with_handlers_yaml();
    let serve = Serve::start(
        dir.path(),
        &[
            "--handlers",
            "handlers.yaml",
            "--har",
            HAR,
            "--ca-out",
            "ca.pem",
        ],
    );

    // Base URL: relative paths match the listener's own origin.
    let user = curl(&["--include", &format!("{}/users/7", serve.url())]);
    assert!(user.contains("x-total-count: 1"), "{user}");
    assert!(user.contains("content-type: application/json"), "{user}");
    assert!(user.ends_with(r#"{"id":7,"name":"Kate"}"#), "{user}");

    // Proxy and HTTPS through CONNECT, trusting the CA written by --ca-out.
    let ca = &serve.variables["MOCKLIB_CA_FILE"];
    assert!(Path::new(ca).is_absolute());
    let proxy = &serve.variables["MOCKLIB_PROXY_URL"];
    let posted = curl(&[
        "--proxy",
        proxy,
        "--cacert",
        ca,
        "--data",
        "x",
        "--write-out",
        " %{http_code}",
        "https://api.example.com/posts",
    ]);
    assert_eq!(posted, "created 201");
    // A relative path (`/users/:id`) matches on every host reached through
    // the proxy too, not only on the base URL.
    let user = curl(&[
        "--proxy",
        proxy,
        "--cacert",
        ca,
        "https://api.example.com/users/7",
    ]);
    assert_eq!(user, r#"{"id":7,"name":"Kate"}"#);
    let user = curl(&["--proxy", proxy, "http://users.internal/users/7"]);
    assert_eq!(user, r#"{"id":7,"name":"Kate"}"#);
    // `method: ALL` answers any method.
    let greeted = curl(&[
        "--proxy",
        proxy,
        "--cacert",
        ca,
        "--request",
        "PUT",
        "https://api.example.com/greeting",
    ]);
    assert_eq!(greeted, "<p>hello</p>");
    let replayed = curl(&[
        "--proxy",
        proxy,
        "--cacert",
        ca,
        "https://api.example.com/users?sort=name&page=2",
    ]);
    assert_eq!(replayed, r#"[{"name":"Kate"}]"#);

    // Python's requests with the printed environment: HTTPS and HTTP.
    assert_eq!(
        python(&serve, PYTHON_GET, &["https://api.example.com/greeting"]),
        "200 text/html <p>hello</p>"
    );
    let user = format!("{}/users/7", serve.url());
    assert_eq!(
        python(&serve, PYTHON_GET, &[&user]),
        r#"200 application/json {"id":7,"name":"Kate"}"#
    );
}

#[test]
fn answers_from_an_openapi_document() {
    let dir = tempfile::tempdir().unwrap();
    let petstore = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../mocklib-tests/tests/fixtures/openapi/petstore.yaml"
    );
    let serve = Serve::start(dir.path(), &["--openapi", petstore]);
    let proxy = &serve.variables["MOCKLIB_PROXY_URL"];
    let listed = curl(&[
        "--proxy",
        proxy,
        "--write-out",
        " %{http_code} %{content_type}",
        "http://petstore.swagger.io/v1/pets",
    ]);
    assert!(listed.ends_with(" 200 application/json"), "{listed}");
    // Prism's `Prefer` picks another documented response.
    let missing = curl(&[
        "--proxy",
        proxy,
        "--header",
        "Prefer: code=500",
        "--write-out",
        " %{http_code}",
        "http://petstore.swagger.io/v1/pets/1",
    ]);
    assert!(missing.ends_with(" 500"), "{missing}");
    drop(serve);

    // Dynamic answers for the whole document; `Prefer` passes through.
    let serve = Serve::start(dir.path(), &["--openapi", petstore, "--openapi-dynamic"]);
    let proxy = &serve.variables["MOCKLIB_PROXY_URL"];
    let pet = |prefer: &str| {
        curl(&[
            "--proxy",
            proxy,
            "--header",
            prefer,
            "--include",
            "http://petstore.swagger.io/v1/pets/1",
        ])
    };
    let seeded = pet("Prefer: seed=42");
    assert!(
        seeded.contains("preference-applied: dynamic=true, seed=42"),
        "{seeded}"
    );
    let body = |response: &str| {
        response
            .split("\r\n\r\n")
            .nth(1)
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(body(&seeded), body(&pet("Prefer: seed=42")));
    let fixed = pet("Prefer: dynamic=false");
    assert!(
        fixed.ends_with(r#"{"id":0,"name":"string","tag":"string"}"#),
        "{fixed}"
    );
    assert_ne!(body(&seeded), body(&fixed));
}

#[test]
fn the_env_file_can_be_sourced_by_a_shell() {
    let dir = with_handlers_yaml();
    let serve = Serve::start(
        dir.path(),
        &["--handlers", "handlers.yaml", "--env-out", "mocklib.env"],
    );
    let output = Command::new("sh")
        .arg("-c")
        .arg("set -a; . ./mocklib.env; set +a; curl --silent --show-error https://api.example.com/greeting")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "<p>hello</p>");
    drop(serve);
}

#[test]
fn edits_are_reloaded_and_a_broken_edit_keeps_the_previous_handlers() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("handlers.json");
    std::fs::write(&file, r#"[{"path": "/greeting", "body": "hello"}]"#).unwrap();
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.json"]);
    let url = format!("{}/greeting", serve.url());
    assert_eq!(curl(&[&url]), "hello");

    std::fs::write(
        &file,
        r#"[{"path": "/greeting", "body": "hello again", "status": 202}]"#,
    )
    .unwrap();
    eventually("the reload", || {
        let answer = curl(&["--write-out", " %{http_code}", &url]);
        (answer == "hello again 202").then_some(())
    });

    std::fs::write(&file, r#"[{"path": "/greeting", "staus": 500}]"#).unwrap();
    let stderr = eventually("the error message", || {
        let stderr = serve.stderr();
        stderr
            .contains("keeping the previous handlers")
            .then_some(stderr)
    });
    assert!(
        stderr.contains("handlers.json, entry 1 (ALL /greeting): unknown field `staus`"),
        "{stderr}"
    );
    assert_eq!(curl(&[&url]), "hello again");
}

#[test]
fn the_journal_endpoint_lists_the_requests_and_delete_clears_it() {
    let dir = with_handlers_yaml();
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let journal = format!("{}/__mocklib/requests", serve.url());
    // A Python test posting JSON, then asking what the server received.
    let script = "import requests, sys\n\
                  requests.post('https://api.example.com/posts', json={'title': 'hi'}, timeout=30)\n\
                  requests.post('https://api.example.com/posts', data=bytes([0xff, 0x00]), timeout=30)\n\
                  journal = requests.get(sys.argv[1], timeout=30).json()\n\
                  for entry in journal:\n    \
                      print(entry['method'], entry['url'], entry['handler'], entry['answer'], entry['status'], \
                            entry['headers'].get('content-type'), entry['body_encoding'], entry['body'])";
    let printed = python(&serve, script, &[&journal]);
    assert_eq!(
        printed,
        "POST https://api.example.com/posts POST https://api.example.com/posts mocked 201 \
         application/json utf8 {\"title\": \"hi\"}\n\
         POST https://api.example.com/posts POST https://api.example.com/posts mocked 201 \
         None base64 /wA=\n"
    );

    clear_journal(&journal);
    assert_eq!(curl(&[&journal]), "[]");
    let _ = curl(&[&format!("{}/users/1", serve.url())]);
    let entries: Vec<serde_json::Value> = serde_json::from_str(&curl(&[&journal])).unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["handler"], "GET /users/:id");
}

/// `DELETE`s the journal at `journal` (`/__mocklib/requests`), which must
/// answer 204.
fn clear_journal(journal: &str) {
    let deleted = curl(&[
        "--request",
        "DELETE",
        "--write-out",
        "%{http_code}",
        journal,
    ]);
    assert_eq!(deleted, "204");
}

/// The URLs of the journal at `journal`, oldest first.
fn journal_urls(journal: &str) -> Vec<String> {
    let entries: Vec<serde_json::Value> = serde_json::from_str(&curl(&[journal])).unwrap();
    entries
        .iter()
        .map(|entry| entry["url"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn polling_the_admin_api_keeps_the_requests_under_test_in_the_journal() {
    let dir = with_handlers_yaml();
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let journal = format!("{}/__mocklib/requests", serve.url());
    let user = format!("{}/users/1", serve.url());
    let _ = curl(&[&user]);
    // A test waiting for a request polls the journal: more often than the
    // journal keeps requests (1,000), over one connection.
    let polls = vec![journal.as_str(); 1_100];
    let _ = curl(&polls);
    assert_eq!(journal_urls(&journal), [user.as_str()]);

    // Clearing it is still told to the live page's stream: a page that
    // connects now reads "cleared", then what came after.
    clear_journal(&journal);
    let _ = curl(&[&format!("{}/users/2", serve.url())]);
    // The stream stays open: curl stops it after a second (exit 28).
    let output = Command::new("curl")
        .args(["--silent", "--no-buffer", "--max-time", "1"])
        .arg(format!("{}/__mocklib/events", serve.url()))
        .output()
        .unwrap();
    let events = String::from_utf8(output.stdout).unwrap();
    let cleared = events.find("event: cleared").expect(&events);
    let entry = events.find("event: entry").expect(&events);
    assert!(cleared < entry, "{events}");
    assert!(events.contains("/users/2"), "{events}");
    assert!(!events.contains("/users/1"), "{events}");
    assert!(!events.contains("/__mocklib/requests\""), "{events}");
}

#[test]
fn journal_capacity_keeps_the_newest_requests_and_zero_keeps_none() {
    let dir = with_handler_file("- path: /users/:id\n  times: 3\n  body: Kate\n");
    let serve = Serve::start(
        dir.path(),
        &["--handlers", "handlers.yaml", "--journal-capacity", "2"],
    );
    let journal = format!("{}/__mocklib/requests", serve.url());
    let users: Vec<String> = (1..=3)
        .map(|id| format!("{}/users/{id}", serve.url()))
        .collect();
    for user in &users {
        assert_eq!(curl(&[user]), "Kate");
    }
    assert_eq!(
        journal_urls(&journal),
        [users[1].as_str(), users[2].as_str()]
    );
    drop(serve);

    let serve = Serve::start(
        dir.path(),
        &["--handlers", "handlers.yaml", "--journal-capacity", "0"],
    );
    for id in 1..=3 {
        assert_eq!(curl(&[&format!("{}/users/{id}", serve.url())]), "Kate");
    }
    let journal = format!("{}/__mocklib/requests", serve.url());
    assert_eq!(curl(&[&journal]), "[]");
    // Without a journal the expected counts still hold.
    let verify = curl(&[
        "-w",
        " %{http_code}",
        &format!("{}/__mocklib/verify", serve.url()),
    ]);
    assert!(verify.ends_with(" 200"), "{verify}");

    // A wrong value is a usage error (exit 2), named.
    let refused = Command::new(env!("CARGO_BIN_EXE_mocklib"))
        .args(["serve", "--journal-capacity", "-1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("invalid --journal-capacity \"-1\" (a number of requests; 0 keeps none)"),
        "{stderr}"
    );
}

#[test]
fn record_writes_what_passes_through_and_replays_it_next_time() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let upstream = runtime.block_on(spawn_upstream(axum::Router::new().route(
        "/hello",
        axum::routing::get({
            let hits = Arc::clone(&hits);
            move || async move {
                hits.fetch_add(1, Ordering::SeqCst);
                "hello from upstream"
            }
        }),
    )));
    let dir = tempfile::tempdir().unwrap();
    let har = dir.path().join("recorded.har");
    let target = format!("http://{upstream}/hello");

    let serve = Serve::start(dir.path(), &["--record", "recorded.har"]);
    let proxy = serve.variables["MOCKLIB_PROXY_URL"].clone();
    assert_eq!(curl(&["--proxy", &proxy, &target]), "hello from upstream");
    let recorded = eventually("the recording", || {
        let text = std::fs::read_to_string(&har).ok()?;
        text.contains("hello from upstream").then_some(text)
    });
    let document: serde_json::Value = serde_json::from_str(&recorded).unwrap();
    assert_eq!(document["log"]["entries"][0]["request"]["url"], target);
    assert!(serve.terminate().success());

    // Mode `once` with the file present: replayed, upstream not asked,
    // and still replayed after the handler file next to it is reloaded.
    let handlers = dir.path().join("handlers.json");
    std::fs::write(&handlers, r#"[{"path": "/status", "body": "up"}]"#).unwrap();
    let serve = Serve::start(
        dir.path(),
        &["--record", "recorded.har", "--handlers", "handlers.json"],
    );
    let proxy = serve.variables["MOCKLIB_PROXY_URL"].clone();
    assert_eq!(curl(&["--proxy", &proxy, &target]), "hello from upstream");
    std::fs::write(&handlers, r#"[{"path": "/status", "body": "down"}]"#).unwrap();
    let status = format!("{}/status", serve.url());
    eventually("the reload", || (curl(&[&status]) == "down").then_some(()));
    assert_eq!(curl(&["--proxy", &proxy, &target]), "hello from upstream");
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[test]
fn a_bad_handler_file_fails_naming_the_file_and_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("handlers.yaml"),
        "- path: /ok\n  body: fine\n- method: GET\n  path: /users/:id\n  json: 1\n  body: two bodies\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_mocklib"))
        .args(["serve", "--handlers", "handlers.yaml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "handlers.yaml, entry 2 (GET /users/:id): give one of body, json and body_file"
        ),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());

    std::fs::write(dir.path().join("bad.yaml"), "- path: \"/users/:\"\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_mocklib"))
        .args(["serve", "--handlers", "bad.yaml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("bad.yaml, entry 1 (ALL /users/:)"),
        "{stderr}"
    );
}

#[test]
fn stops_on_sigterm_or_when_stdin_closes_and_removes_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(dir.path(), &[]);
    let bundle = PathBuf::from(&serve.variables["SSL_CERT_FILE"]);
    assert!(bundle.exists());
    assert!(serve.terminate().success());
    assert!(!bundle.exists(), "close() removes the CA bundle");

    let mut serve = Serve::start(dir.path(), &["--until-stdin-closes"]);
    serve.child.stdin.take().unwrap().write_all(b"").unwrap();
    // Dropped above: standard input is closed.
    assert!(serve.child.wait().unwrap().success());
}

#[test]
fn a_wrong_flag_prints_the_usage() {
    let output = Command::new(env!("CARGO_BIN_EXE_mocklib"))
        .args(["serve", "--hars", "x"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unknown argument \"--hars\""), "{stderr}");
    assert!(
        stderr.contains("usage: mocklib serve [options]"),
        "{stderr}"
    );
}

/// The fenced code blocks of this package's README, as (info string, body).
fn readme_blocks() -> Vec<(&'static str, String)> {
    let readme = include_str!("../../README.md");
    let mut blocks = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if let Some(tag) = line.strip_prefix("```") {
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            blocks.push((tag, body.join("\n") + "\n"));
        }
    }
    blocks
}

/// The README's code blocks tagged `lang`.
fn readme_blocks_of(lang: &str) -> Vec<String> {
    readme_blocks()
        .into_iter()
        .filter(|(tag, _)| *tag == lang)
        .map(|(_, body)| body)
        .collect()
}

/// A file of the repository, by its path from the repository's root.
fn repository_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// The `mocklib` command's folder first on the `PATH`, as after
/// `cargo install`.
fn path_with_mocklib() -> std::ffi::OsString {
    let bin = Path::new(env!("CARGO_BIN_EXE_mocklib")).parent().unwrap();
    let mut paths = vec![bin.to_owned()];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).unwrap()
}

/// A copy of the suite in `examples/{name}` in a temporary folder, where
/// it writes what it writes (mocklib.env, caches, generated stubs) without
/// touching the repository.
fn example_copy(name: &str) -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_name() == "node_modules" {
                continue; // a local npm install: the test makes its own
            }
            if entry.file_type().unwrap().is_dir() {
                std::fs::create_dir(&target).unwrap();
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), &target).unwrap();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    copy(&repository_file(&format!("examples/{name}")), dir.path());
    dir
}

/// Runs the example's `run.sh` in `dir` with its test command `suite`
/// swapped for `command` (`suite` itself to run it as it is).
fn run_example_script(dir: &Path, suite: &str, command: &str) -> std::process::Output {
    let path = dir.join("run.sh");
    let script = std::fs::read_to_string(&path).unwrap();
    assert!(script.contains(suite), "{script}");
    std::fs::write(&path, script.replace(suite, command)).unwrap();
    Command::new("sh")
        .arg("run.sh")
        .current_dir(dir)
        .env("PATH", path_with_mocklib())
        .output()
        .unwrap()
}

/// The test command of examples/serve-python/run.sh.
const PYTHON_SUITE: &str = "python3 -m pytest -n 8 tests";

#[test]
fn the_python_example_passes_with_eight_workers_in_scopes() {
    let dir = example_copy("serve-python");
    // Its script as it is: one server, `pytest -n 8` around it.
    let output = run_example_script(dir.path(), PYTHON_SUITE, PYTHON_SUITE);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Six tests and forty that each make fifty requests against a mock
    // that conflicts with every other's, on eight workers at once.
    assert!(stdout.contains("created: 8/8 workers"), "{stdout}");
    assert!(stdout.contains("46 passed"), "{stdout}");
}

#[test]
fn the_python_example_script_reaches_the_handlers() {
    let dir = example_copy("serve-python");
    let output = run_example_script(
        dir.path(),
        PYTHON_SUITE,
        "curl --silent --show-error https://api.example.com/users/7 > answer.json",
    );
    assert!(output.status.success(), "{output:?}");
    let answer = std::fs::read_to_string(dir.path().join("answer.json")).unwrap();
    assert_eq!(answer, r#"{"id":7,"name":"Kate"}"#);
    // Its curl lines: the matched report, the templated order, a todo
    // created and the list holding it; what the README says they print.
    let [printed] = &readme_blocks_of("text")[..] else {
        panic!("one text block in the README")
    };
    // (After the variables `mocklib serve` prints, up to an empty line.)
    let stdout = String::from_utf8_lossy(&output.stdout);
    let (_, curls) = stdout.split_once("\n\n").expect("the variables, then");
    assert_eq!(curls, printed);
    assert_eq!(printed.lines().count(), 4, "{printed}");
}

/// The Go example through its script: forty `t.Parallel()` tests, each
/// with a client of its own through its scope's proxy.
#[test]
fn the_go_example_passes_through_its_script() {
    let dir = example_copy("serve-go");
    let output = run_example_script(
        dir.path(),
        "go test ./...",
        "GOPROXY=off GOFLAGS=-mod=mod go test -count=1 -v ./... > go.out 2>&1",
    );
    let report = std::fs::read_to_string(dir.path().join("go.out")).unwrap_or_default();
    assert!(output.status.success(), "{output:?}\n{report}");
    assert_eq!(
        report
            .matches("--- PASS: TestParallelTestsSeeOnlyTheirOwnMocks/")
            .count(),
        40,
        "{report}"
    );
    assert!(
        report.contains("--- PASS: TestReadsAUser") && report.contains("\nok "),
        "{report}"
    );
}

#[test]
fn the_node_example_passes_through_its_script() {
    let dir = example_copy("serve-node");
    let output = run_example_script(
        dir.path(),
        "node --test tests/users.test.mjs",
        "node --test tests/users.test.mjs > node.out 2>&1",
    );
    let report = std::fs::read_to_string(dir.path().join("node.out")).unwrap_or_default();
    assert!(output.status.success(), "{output:?}\n{report}");
    assert!(
        report.contains("# pass 42") && report.contains("# fail 0"),
        "{report}"
    );
}

/// Each code block of the README whose first line names an example file
/// (`# examples/...`, `// examples/...`) is taken from that file: every
/// run of lines between the block's `...` elisions is in it, whole lines
/// as they are.
#[test]
fn the_readme_shows_the_example_files_as_they_are() {
    let mut checked = Vec::new();
    for (tag, block) in readme_blocks() {
        let mut lines = block.lines();
        let Some(path) = lines.next().and_then(|first| {
            first
                .strip_prefix("# ")
                .or_else(|| first.strip_prefix("// "))
                .filter(|path| path.starts_with("examples/"))
        }) else {
            continue;
        };
        let file = std::fs::read_to_string(repository_file(path))
            .unwrap_or_else(|error| panic!("README, ```{tag} block: {path}: {error}"));
        let file = format!("\n{file}");
        let mut piece = String::new();
        for line in lines.chain(["..."]) {
            if matches!(line.trim(), "..." | "# ..." | "// ...") {
                assert!(
                    piece.is_empty() || file.contains(&piece),
                    "README, ```{tag} block: not in {path} as it is:{piece}"
                );
                piece.clear();
            } else {
                piece.push('\n');
                piece.push_str(line);
            }
        }
        checked.push(path.to_owned());
    }
    assert!(checked.len() >= 9, "{checked:?}");
}

/// A folder with [`HELLOWORLD_PROTO`] as protos/helloworld.proto and
/// `handlers` as greeter.yaml.
fn with_helloworld(handlers: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("protos")).unwrap();
    std::fs::write(dir.path().join("protos/helloworld.proto"), HELLOWORLD_PROTO).unwrap();
    std::fs::write(dir.path().join("greeter.yaml"), handlers).unwrap();
    dir
}

/// `mocklib serve --proto protos/helloworld.proto --handlers greeter.yaml`
/// in a folder [`with_helloworld`] made; the folder lives as long as the
/// server is used.
fn serve_helloworld(handlers: &str) -> (tempfile::TempDir, Serve) {
    let dir = with_helloworld(handlers);
    let serve = Serve::start(
        dir.path(),
        &[
            "--proto",
            "protos/helloworld.proto",
            "--handlers",
            "greeter.yaml",
        ],
    );
    (dir, serve)
}

#[test]
fn the_grpc_example_passes_against_its_proto_and_handler_file() {
    let dir = example_copy("serve-grpc");
    // Its script's commands: the protoc line as it is, and the serve line
    // it has with these arguments.
    let script = std::fs::read_to_string(dir.path().join("run.sh")).unwrap();
    let protoc = script
        .lines()
        .find(|line| line.starts_with("python3 -m grpc_tools.protoc "))
        .expect("run.sh runs grpc_tools.protoc");
    let generated = Command::new("sh")
        .arg("-c")
        .arg(protoc)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        generated.status.success(),
        "{protoc} (scripts/test installs grpcio-tools: python3 -m pip install grpcio-tools): {}",
        String::from_utf8_lossy(&generated.stderr)
    );
    let args = [
        "--proto",
        "protos/helloworld.proto",
        "--handlers",
        "tests/greeter.yaml",
    ];
    assert!(
        script.contains(&format!("mocklib serve {} ", args.join(" "))),
        "{script}"
    );
    let serve = Serve::start(dir.path(), &args);

    // With the printed variables, as its script sets them.
    let output = Command::new("python3")
        .arg("tests/test_greeter.py")
        .current_dir(dir.path())
        .envs(serve.env())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}\nmocklib serve said: {}",
        String::from_utf8_lossy(&output.stderr),
        serve.stderr()
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "greeter: all passed\n"
    );
}

#[test]
fn the_grpc_example_answers_connect_es_clients_in_connect_and_grpc_web() {
    let dir = example_copy("serve-grpc");
    // Its script's npm line, from the registry (package.json pins the
    // Connect-ES versions).
    let script = std::fs::read_to_string(dir.path().join("run.sh")).unwrap();
    let install = script
        .lines()
        .map(str::trim)
        .find(|line| line.starts_with("npm install "))
        .expect("run.sh installs the Connect-ES packages")
        .trim_end_matches(" &&");
    let installed = Command::new("sh")
        .arg("-c")
        .arg(install)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        installed.status.success(),
        "{install}: {}",
        String::from_utf8_lossy(&installed.stderr)
    );
    let serve = Serve::start(
        dir.path(),
        &[
            "--proto",
            "protos/helloworld.proto",
            "--handlers",
            "tests/greeter.yaml",
        ],
    );
    assert!(
        script.contains("node --test tests/connect.test.mjs"),
        "{script}"
    );
    let output = Command::new("node")
        .args(["--test", "tests/connect.test.mjs"])
        .current_dir(dir.path())
        .envs(serve.env())
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && report.contains("# pass 16") && report.contains("# fail 0"),
        "{report}\n{}\nmocklib serve said: {}",
        String::from_utf8_lossy(&output.stderr),
        serve.stderr()
    );
    // The journal says which protocol each call came in on.
    let journal: Vec<serde_json::Value> =
        serde_json::from_str(&curl(&[&format!("{}/__mocklib/requests", serve.url())])).unwrap();
    let mut protocols: Vec<&str> = journal
        .iter()
        .filter_map(|entry| entry["grpc"]["protocol"].as_str())
        .collect();
    protocols.sort_unstable();
    protocols.dedup();
    assert_eq!(protocols, ["connect", "grpc-web"], "{journal:#?}");
}

#[test]
fn grpc_entries_that_do_not_fit_the_proto_fail_naming_the_file_and_the_entry() {
    let proto = ["--proto", "protos/helloworld.proto"];
    let cases: [(&str, &[&str], &str); 9] = [
        (
            "- grpc: helloworld.Greeter/SayHello\n  json: {message: Hi}\n- grpc: helloworld.Greeter/SayHi\n  json: {message: Hi}\n",
            &proto,
            "greeter.yaml, entry 2 (grpc helloworld.Greeter/SayHi): service helloworld.Greeter has no method SayHi (methods: SayHello, SpellHello, GreetAll, Chat)",
        ),
        (
            "- grpc: helloworld.Greeters/SayHello\n",
            &proto,
            "greeter.yaml, entry 1 (grpc helloworld.Greeters/SayHello): no service helloworld.Greeters in the .proto files (services: helloworld.Greeter)",
        ),
        (
            "- grpc: helloworld.Greeter/SayHello\n  json: {message: 5}\n",
            &proto,
            "greeter.yaml, entry 1 (grpc helloworld.Greeter/SayHello): json: not a helloworld.HelloReply: field `message`: invalid type: integer `5`, expected a string",
        ),
        (
            "- grpc: helloworld.Greeter/SpellHello\n  json: [{message: B}, {mesage: o}]\n",
            &proto,
            "greeter.yaml, entry 1 (grpc helloworld.Greeter/SpellHello): json, reply 2: not a helloworld.HelloReply: field `mesage`: unrecognized field name",
        ),
        (
            "- grpc: helloworld.Greeter/SayHello\n  json: [{message: B}, {message: o}]\n",
            &proto,
            "greeter.yaml, entry 1 (grpc helloworld.Greeter/SayHello): json is a list, but helloworld.Greeter/SayHello answers one helloworld.HelloReply (a list of replies needs a server-streaming or bidirectional method)",
        ),
        (
            "- grpc: helloworld.Greeter/SayHello\n  status: NOT_FOND\n",
            &proto,
            "greeter.yaml, entry 1 (grpc helloworld.Greeter/SayHello): unknown gRPC status \"NOT_FOND\" (a code name or number: OK, CANCELLED,",
        ),
        (
            "- grpc: helloworld.Greeter/SayHello\n  path: /greeting\n",
            &proto,
            "greeter.yaml, entry 1 (grpc helloworld.Greeter/SayHello): `path` is a field of HTTP entries",
        ),
        (
            // Once silently ignored: a grpc entry's replies are not templated.
            "- grpc: helloworld.Greeter/SayHello\n  template: true\n  json: {message: \"{{ request.params.id }}\"}\n",
            &proto,
            "greeter.yaml, entry 1 (grpc helloworld.Greeter/SayHello): `template` is a field of HTTP entries",
        ),
        (
            "- grpc: helloworld.Greeter/SayHello\n  json: {message: Hi}\n",
            &[],
            "greeter.yaml, entry 1 (grpc helloworld.Greeter/SayHello): no --proto file was given",
        ),
    ];
    for (handlers, args, expected) in cases {
        let dir = with_helloworld(handlers);
        let mut args = args.to_vec();
        args.extend(["--handlers", "greeter.yaml"]);
        let stderr = serve_fails(dir.path(), &args);
        assert!(stderr.contains(expected), "{handlers}\n{stderr}");
    }

    // A .proto file that does not compile: the file, line and column.
    let dir = with_helloworld("[]");
    let broken = HELLOWORLD_PROTO.replace("string name = 1;", "string name = 1");
    std::fs::write(dir.path().join("protos/helloworld.proto"), &broken).unwrap();
    // The error points at what follows the missing `;`: the `}` that
    // closes HelloRequest, on the line after it.
    let line = broken[..broken.find("string name = 1\n}").unwrap()]
        .lines()
        .count()
        + 1;
    let stderr = serve_fails(dir.path(), &proto);
    assert!(
        stderr.contains(&format!(
            "mocklib serve: could not compile the .proto files: helloworld.proto:{line}:1: expected ';'"
        )),
        "{stderr}"
    );
    let stderr = serve_fails(dir.path(), &["--proto", "protos/missing.proto"]);
    assert!(
        stderr.contains("could not read the .proto file protos/missing.proto"),
        "{stderr}"
    );
}

#[test]
fn the_journal_shows_grpc_calls_as_proto3_json() {
    let (_dir, serve) = serve_helloworld(
        "- grpc: helloworld.Greeter/SayHello\n  json: {message: Hello Kate!}\n\
         - grpc: helloworld.Greeter/GreetAll\n  status: NOT_FOUND\n  message: no such person\n\
         - grpc: helloworld.Greeter/SpellHello\n  json: [{message: K}, {message: a}]\n  status: ABORTED\n  message: out of letters\n\
         - path: /ping\n  body: pong\n",
    );
    // HelloRequest { name: "Kate" }; HelloReply { message: "Hello Kate!" }.
    let kate = r"b'\x0a\x04Kate'";
    assert_eq!(
        grpcio_call(&serve, "unary_unary", "/helloworld.Greeter/SayHello", kate),
        format!("0a0b{} OK", hex(b"Hello Kate!"))
    );
    // A length prefix of 9 before 2 bytes: not a HelloRequest.
    let broken = r"b'\x0a\x09Ka'";
    assert!(
        grpcio_call(
            &serve,
            "unary_unary",
            "/helloworld.Greeter/SayHello",
            broken
        )
        .ends_with(" OK")
    );
    assert_eq!(
        grpcio_call(
            &serve,
            "stream_unary",
            "/helloworld.Greeter/GreetAll",
            &format!(r"iter([{kate}, b'\x0a\x05Sarah'])"),
        ),
        "NOT_FOUND no such person"
    );
    // The replies, then the status.
    assert_eq!(
        grpcio_call(
            &serve,
            "unary_stream",
            "/helloworld.Greeter/SpellHello",
            kate
        ),
        "0a014b 0a0161 ABORTED out of letters"
    );
    assert_eq!(curl(&[&format!("{}/ping", serve.url())]), "pong");

    let journal: Vec<serde_json::Value> =
        serde_json::from_str(&curl(&[&format!("{}/__mocklib/requests", serve.url())])).unwrap();
    let [hello, broken, greet_all, spell, ping] = &journal[..] else {
        panic!("five requests: {journal:#?}")
    };
    assert_eq!(hello["handler"], "grpc helloworld.Greeter/SayHello");
    assert_eq!(
        hello["grpc"],
        serde_json::json!({
            "method": "helloworld.Greeter/SayHello",
            "protocol": "grpc",
            "requests": [{"name": "Kate"}],
            "replies": [{"message": "Hello Kate!"}],
            "requests_received": 1,
            "replies_sent": 1,
            "status": {"code": "OK", "message": ""},
        })
    );
    let [request] = &broken["grpc"]["requests"].as_array().unwrap()[..] else {
        panic!("{broken:#}")
    };
    assert_eq!(request["base64"], "CglLYQ==", "{broken:#}");
    let note = request["note"].as_str().unwrap();
    assert!(
        note.starts_with("does not decode as helloworld.HelloRequest: "),
        "{note}"
    );
    assert_eq!(
        greet_all["grpc"],
        serde_json::json!({
            "method": "helloworld.Greeter/GreetAll",
            "protocol": "grpc",
            "requests": [{"name": "Kate"}, {"name": "Sarah"}],
            "replies": [],
            "requests_received": 2,
            "replies_sent": 0,
            "status": {"code": "NOT_FOUND", "message": "no such person"},
        })
    );
    assert_eq!(
        spell["grpc"]["replies"],
        serde_json::json!([{"message": "K"}, {"message": "a"}])
    );
    assert_eq!(
        spell["grpc"]["status"],
        serde_json::json!({"code": "ABORTED", "message": "out of letters"})
    );
    assert_eq!(ping["grpc"], serde_json::Value::Null, "{ping:#}");
}

/// gRPC calls `mocklib serve` answers itself (issue 41), as Python's
/// grpcio reads them. A method no entry answers, on MOCKLIB_URL (h2c):
/// under the default strategy the call was passed through to the listener
/// itself and answered a plain-text 502, which grpcio read as a broken
/// message; now `UNIMPLEMENTED` naming the method, as under `--unhandled
/// error`. Through the proxy of a scope that has ended, the `CONNECT` is
/// refused (`407`) before any call is made, and grpcio reports that
/// itself: `UNAVAILABLE`, naming the 407.
#[test]
fn curl_calls_grpc_entries_in_connects_json_and_grpc_web_clients_reach_them_too() {
    let (_dir, serve) = serve_helloworld(
        "- grpc: helloworld.Greeter/SayHello\n  json: {message: Hello Kate!}\n\
         - grpc: helloworld.Greeter/GreetAll\n  status: NOT_FOUND\n  message: no such person\n\
         - grpc: helloworld.Greeter/SpellHello\n  json: [{message: K}, {message: a}]\n",
    );
    let say_hello = format!("{}/helloworld.Greeter/SayHello", serve.url());
    // The issue's own line: curl -H 'content-type: application/json' -d '{"name":"Kate"}'.
    let (status, body) = crate::common::call(
        None,
        &[
            "-H",
            "content-type: application/json",
            "-d",
            r#"{"name":"Kate"}"#,
            &say_hello,
        ],
    );
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"message":"Hello Kate!"}"#)
    );
    // JSON that does not fit HelloRequest: Connect's invalid_argument.
    let (status, body) = crate::common::call(
        None,
        &[
            "-H",
            "content-type: application/json",
            "-d",
            r#"{"nam":"Kate"}"#,
            &say_hello,
        ],
    );
    assert_eq!(status, 400, "{body}");
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["code"], "invalid_argument");
    assert!(
        error["message"].as_str().unwrap().contains("nam"),
        "{error}"
    );
    // A status entry: its Connect code and HTTP status.
    let (status, body) = crate::common::call(
        None,
        &[
            "-H",
            "content-type: application/json",
            "-H",
            "connect-protocol-version: 1",
            "-d",
            r#"{"name":"Kate"}"#,
            &format!("{}/helloworld.Greeter/GreetAll", serve.url()),
        ],
    );
    assert_eq!(status, 404, "{body}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&body).unwrap(),
        serde_json::json!({"code": "not_found", "message": "no such person"})
    );
    // A GET with the message in the query (Connect's idempotent form).
    let (status, body) = crate::common::call(
        None,
        &[&format!(
            "{say_hello}?connect=v1&encoding=json&message=%7B%22name%22%3A%22Kate%22%7D"
        )],
    );
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"message":"Hello Kate!"}"#)
    );
    // gRPC-Web's text form, as a browser's grpc-web client sends it:
    // HelloRequest{name: "Kate"} framed, in base64.
    let (status, body) = crate::common::call(
        None,
        &[
            "-H",
            "content-type: application/grpc-web-text",
            "-d",
            "AAAAAAYKBEthdGU=",
            &say_hello,
        ],
    );
    assert_eq!(status, 200, "{body}");
    // The reply frame and the trailer frame, in base64.
    assert!(body.starts_with("AAAAAA0KC0hlbGxvIEthdGUh"), "{body}");
    let journal: Vec<serde_json::Value> =
        serde_json::from_str(&curl(&[&format!("{}/__mocklib/requests", serve.url())])).unwrap();
    let protocols: Vec<_> = journal
        .iter()
        .map(|entry| entry["grpc"]["protocol"].as_str().unwrap_or("none"))
        .collect();
    // The JSON that did not convert never reached the handler's resolver
    // and has no call record.
    assert_eq!(
        protocols,
        ["connect", "none", "connect", "connect", "grpc-web-text"],
        "{journal:#?}"
    );
    assert_eq!(
        journal[0]["grpc"]["requests"],
        serde_json::json!([{"name": "Kate"}])
    );
    serve.terminate();
}

#[test]
fn grpc_calls_that_mocklib_serve_answers_itself_end_with_a_status() {
    let dir = with_helloworld("- grpc: helloworld.Greeter/SayHello\n  json: {message: Hi}\n");
    let kate = r"b'\x0a\x04Kate'";
    for (strategy, why) in [
        (None, "addressed to this mocklib listener itself"),
        (Some("error"), "without a matching request handler"),
    ] {
        let mut args = vec![
            "--proto",
            "protos/helloworld.proto",
            "--handlers",
            "greeter.yaml",
        ];
        args.extend(
            strategy
                .iter()
                .flat_map(|strategy| ["--unhandled", strategy]),
        );
        let serve = Serve::start(dir.path(), &args);
        for method in [
            "/helloworld.Greeter/SpellHello",
            "/helloworld.Greeter/NotInTheProto",
        ] {
            let ended = grpcio_call(&serve, "unary_stream", method, kate);
            assert!(
                ended.starts_with("UNIMPLEMENTED ")
                    && ended.contains(method)
                    && ended.contains(why),
                "{strategy:?}, {method}: {ended}"
            );
        }
        assert_eq!(
            grpcio_call(&serve, "unary_unary", "/helloworld.Greeter/SayHello", kate),
            format!("0a02{} OK", hex(b"Hi")),
            "the server goes on serving"
        );
    }

    let serve = Serve::start(
        dir.path(),
        &[
            "--proto",
            "protos/helloworld.proto",
            "--handlers",
            "greeter.yaml",
        ],
    );
    let admin = format!("{}/__mocklib/scopes", serve.url());
    let scope: serde_json::Value = serde_json::from_str(&curl(&["-X", "POST", &admin])).unwrap();
    // Through the scope's proxy (CONNECT, TLS with the server's CA), as a
    // test worker given the scope's `env` calls.
    let through_scope = || {
        let script = "import grpc\n\
                      channel = grpc.secure_channel('greeter.example.com:443', grpc.ssl_channel_credentials())\n\
                      try:\n    \
                          reply = channel.unary_unary('/helloworld.Greeter/SayHello')(b'\\x0a\\x04Kate', timeout=20)\n    \
                          print('OK', reply.hex(), end='')\n\
                      except grpc.RpcError as error:\n    \
                          print(error.code().name, error.details(), end='')\n";
        let mut command = Command::new("python3");
        command.arg("-c").arg(script);
        for (name, value) in scope["env"].as_object().unwrap() {
            command.env(name, value.as_str().unwrap());
        }
        let output = command.output().expect("python3 runs");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    assert_eq!(through_scope(), format!("OK 0a02{}", hex(b"Hi")));
    curl(&["-X", "DELETE", &format!("{admin}/{}", scope["id"])]);
    // Refused once the requests in flight in it are done.
    let ended = eventually("the ended scope's credential to be refused", || {
        let ended = through_scope();
        (!ended.starts_with("OK")).then_some(ended)
    });
    assert!(
        ended.starts_with("UNAVAILABLE ") && ended.contains("407"),
        "{ended}"
    );
}

#[test]
fn proto_files_and_their_imports_are_reloaded_and_a_broken_edit_keeps_the_handlers() {
    let dir = tempfile::tempdir().unwrap();
    let greeter = dir.path().join("greeter.proto");
    let replies = dir.path().join("replies.proto");
    let handlers = dir.path().join("handlers.yaml");
    let greeter_proto = "syntax = \"proto3\";\npackage helloworld;\nimport \"replies.proto\";\n\
                         service Greeter {\n  rpc SayHello (HelloRequest) returns (HelloReply);\n}\n\
                         message HelloRequest {\n  string name = 1;\n}\n";
    std::fs::write(&greeter, greeter_proto).unwrap();
    std::fs::write(
        &replies,
        "syntax = \"proto3\";\npackage helloworld;\nmessage HelloReply {\n  string message = 1;\n}\n",
    )
    .unwrap();
    std::fs::write(
        &handlers,
        "- grpc: helloworld.Greeter/SayHello\n  json: {message: Hello}\n",
    )
    .unwrap();
    let serve = Serve::start(
        dir.path(),
        &["--proto", "greeter.proto", "--handlers", "handlers.yaml"],
    );
    let say_hello = || grpcio_say_hello_to_kate(&serve);
    let replied = |text: &str| format!("0a{:02x}{} OK", text.len(), hex(text.as_bytes()));
    assert_eq!(say_hello(), replied("Hello"));

    // The imported file changes: the handler file no longer fits it.
    std::fs::write(
        &replies,
        "syntax = \"proto3\";\npackage helloworld;\nmessage HelloReply {\n  string text = 1;\n}\n",
    )
    .unwrap();
    let stderr = eventually("the error message", || {
        let stderr = serve.stderr();
        stderr
            .contains("keeping the previous handlers")
            .then_some(stderr)
    });
    assert!(
        stderr.contains(
            "handlers.yaml, entry 1 (grpc helloworld.Greeter/SayHello): json: not a helloworld.HelloReply: field `message`"
        ),
        "{stderr}"
    );
    assert_eq!(say_hello(), replied("Hello"));

    std::fs::write(
        &handlers,
        "- grpc: helloworld.Greeter/SayHello\n  json: {text: Hi}\n",
    )
    .unwrap();
    eventually("the reload", || {
        (say_hello() == replied("Hi")).then_some(())
    });

    // A .proto file that does not compile keeps the handlers too.
    std::fs::write(&greeter, greeter_proto.replace("service", "servic")).unwrap();
    let stderr = eventually("the compile error", || {
        let stderr = serve.stderr();
        stderr
            .contains("could not compile the .proto files: greeter.proto:")
            .then_some(stderr)
    });
    assert!(
        stderr.contains("; keeping the previous handlers"),
        "{stderr}"
    );
    assert_eq!(say_hello(), replied("Hi"));
}

/// `bytes` in lower-case hex, as Python's `bytes.hex()` prints them.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// gRPC server reflection, as a tool with no generated code uses it:
/// grpcio's reflection client lists the services, builds the message
/// types from the descriptors it is sent, and calls a method with them.
#[test]
fn reflection_lets_a_client_without_generated_code_list_and_call_the_services() {
    let (_dir, serve) = serve_helloworld(
        "- grpc: helloworld.Greeter/SayHello\n  json: { message: Hello from the file }\n",
    );
    let script = "import os, grpc\n\
        from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase\n\
        from google.protobuf.descriptor_pool import DescriptorPool\n\
        from google.protobuf import message_factory\n\
        channel = grpc.insecure_channel(os.environ['MOCKLIB_URL'].removeprefix('http://'))\n\
        database = ProtoReflectionDescriptorDatabase(channel)\n\
        services = sorted(database.get_services())\n\
        method = DescriptorPool(database).FindMethodByName('helloworld.Greeter.SayHello')\n\
        Request = message_factory.GetMessageClass(method.input_type)\n\
        Reply = message_factory.GetMessageClass(method.output_type)\n\
        say = channel.unary_unary('/helloworld.Greeter/SayHello', request_serializer=Request.SerializeToString, response_deserializer=Reply.FromString)\n\
        reply = say(Request(name='Kate'), timeout=20)\n\
        print(' '.join(services), '|', reply.message, end='')\n";
    assert_eq!(
        python(&serve, script, &[]),
        "grpc.reflection.v1.ServerReflection grpc.reflection.v1alpha.ServerReflection \
         helloworld.Greeter | Hello from the file"
    );
}

/// Server reflection over gRPC-Web and a Connect stream: a browser's or a
/// Connect client's tool lists the services from the same handlers a gRPC
/// client reaches (one request, then the answers: the half-duplex exchange
/// both protocols carry over HTTP/1.1).
#[test]
fn reflection_answers_grpc_web_and_connect_streams_too() {
    let (dir, serve) =
        serve_helloworld("- grpc: helloworld.Greeter/SayHello\n  json: { message: Hi }\n");
    // One frame: ServerReflectionRequest { list_services: "" } (field 7).
    let request = dir.path().join("list-services.bin");
    std::fs::write(&request, [0, 0, 0, 0, 2, 0x3a, 0]).unwrap();
    let url = format!(
        "{}/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        serve.url()
    );
    for (content_type, last) in [
        // Connect's end of stream: flag 0x02, a JSON object without error.
        ("application/connect+proto", (0x02, b"{}".to_vec())),
        // gRPC-Web's trailers: flag 0x80, the status as a header block.
        (
            "application/grpc-web+proto",
            (0x80, b"grpc-status:0\r\n".to_vec()),
        ),
    ] {
        let output = Command::new("curl")
            .args(["--silent", "--show-error", "--max-time", "20", "-H"])
            .arg(format!("content-type: {content_type}"))
            .arg("--data-binary")
            .arg(format!("@{}", request.display()))
            .arg(&url)
            .output()
            .expect("curl runs");
        let frames = envelopes(&output.stdout);
        assert_eq!(frames.len(), 2, "{content_type}: {:?}", output);
        assert_eq!(frames[0].0, 0, "{content_type}: a message first");
        let reply = String::from_utf8_lossy(&frames[0].1);
        for service in [
            "helloworld.Greeter",
            "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection",
        ] {
            assert!(reply.contains(service), "{content_type}: {reply:?}");
        }
        assert_eq!(frames[1], last, "{content_type}");
    }
}

/// The envelopes of a gRPC-Web or Connect body: (flags, payload) each.
fn envelopes(mut body: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut frames = Vec::new();
    while body.len() >= 5 {
        let length = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        assert!(body.len() >= 5 + length, "a truncated envelope: {body:?}");
        frames.push((body[0], body[5..5 + length].to_vec()));
        body = &body[5 + length..];
    }
    assert!(body.is_empty(), "bytes after the last envelope: {body:?}");
    frames
}

/// `match:` in a handler file: the same declarative matchers as
/// `Handler::when`, with the unhandled warning naming what failed.
#[test]
fn match_conditions_in_a_handler_file_choose_the_entry_and_explain_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("handlers.yaml"),
        r#"
- method: POST
  path: /users
  match:
    headers: { x-api-key: secret }
    json: { role: admin }
  status: 201
  body: admin created
- method: GET
  path: /users
  match:
    query: { page: "2" }
    bearer: t0ken
  body: page 2
"#,
    )
    .unwrap();
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let users = format!("{}/users", serve.url().trim_end_matches('/'));
    let created = curl(&[
        "-w",
        " %{http_code}",
        "-X",
        "POST",
        "-H",
        "x-api-key: secret",
        "-H",
        "content-type: application/json",
        "-d",
        r#"{"name":"Kate","role":"admin"}"#,
        &users,
    ]);
    assert_eq!(created, "admin created 201");
    let page = curl(&[
        "-H",
        "Authorization: Bearer t0ken",
        &format!("{users}?page=2"),
    ]);
    assert_eq!(page, "page 2");
    // A miss: unhandled (502: nothing real behind the listener), and the
    // warning says which condition failed and what the request had.
    let missed = curl(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "-X",
        "POST",
        "-H",
        "x-api-key: wrong",
        "-d",
        r#"{"role":"admin"}"#,
        &users,
    ]);
    assert_eq!(missed, "502");
    let said = eventually("the warning", || {
        let stderr = serve.stderr();
        stderr.contains("✗ header \"x-api-key\"").then_some(stderr)
    });
    assert!(
        said.contains(r#"✗ header "x-api-key": expected "secret", received "wrong""#),
        "{said}"
    );
}

#[test]
fn a_bad_match_block_fails_the_load_naming_the_file_the_entry_and_the_field() {
    for (block, says) in [
        ("match: { header: { a: b } }", "unknown field `header`"),
        (
            "match: { json_path: { user.name: Kate } }",
            "starts with `$`",
        ),
        (
            "match: { headers_matching: { accept: \"(\" } }",
            "not a regular expression",
        ),
    ] {
        let stderr = load_error(&format!("- path: /users\n  {block}\n  body: x\n"));
        assert!(
            stderr.contains("handlers.yaml, entry 1 (ALL /users)") && stderr.contains(says),
            "{block}: {stderr}"
        );
    }
}

/// `template: true`: the body, `json`'s strings, header values and the
/// status rendered per request from what it carried.
#[test]
fn templated_entries_answer_from_the_request() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("handlers.yaml"),
        r#"
- method: GET
  path: /users/:id
  template: true
  headers: { x-request-id: "{{ uuid() }}" }
  json: { id: "{{ request.params.id }}", page: "{{ request.query.page }}", agent: "{{ request.headers['user-agent'] }}", at: "{{ now() }}" }
- method: POST
  path: /greetings
  template: true
  status: "{{ 201 if request.json.name else 400 }}"
  body: "Hello {{ request.json.name }}"
- method: GET
  path: /broken
  template: true
  body: "{{ random(5, 1) }}"
"#,
    )
    .unwrap();
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let base = serve.url().trim_end_matches('/').to_owned();
    let user = curl(&["-i", "-A", "curl-test", &format!("{base}/users/7?page=2")]);
    let (head, body) = user.split_once("\r\n\r\n").unwrap();
    let json: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(json["id"], "7");
    assert_eq!(json["page"], "2");
    assert_eq!(json["agent"], "curl-test");
    assert!(json["at"].as_str().unwrap().ends_with('Z'), "{json}");
    let request_id = head
        .lines()
        .find_map(|line| line.strip_prefix("x-request-id: "))
        .expect("a templated header");
    assert_eq!(request_id.len(), 36, "{request_id}");
    assert!(head.contains("content-type: application/json"), "{head}");

    let post = |data: &str| {
        curl(&[
            "-w",
            " %{http_code}",
            "-H",
            "content-type: application/json",
            "-d",
            data,
            &format!("{base}/greetings"),
        ])
    };
    assert_eq!(post(r#"{"name":"Kate"}"#), "Hello Kate 201");
    assert_eq!(post("{}"), "Hello  400");
    // A template that fails when rendered: a 500 saying which and why.
    let broken = curl(&["-w", " %{http_code}", &format!("{base}/broken")]);
    assert!(broken.ends_with(" 500"), "{broken}");
    assert!(
        broken.contains("the template of body failed") && broken.contains("min is above max"),
        "{broken}"
    );
}

#[test]
fn a_template_that_does_not_compile_fails_the_load_naming_the_field() {
    let stderr =
        load_error("- path: /users\n  template: true\n  json: { name: \"{{ unclosed\" }\n");
    assert!(
        stderr.contains("handlers.yaml, entry 1 (ALL /users): json.name: not a template"),
        "{stderr}"
    );
}

/// `fake()` in templates (issue 40): the same request gets the same
/// people, another request others, `seed=` ties them to a value of the
/// request, and a misspelt kind fails the load naming entry and field.
#[test]
fn fake_data_is_the_same_for_the_same_request_and_names_a_misspelt_kind() {
    let dir = with_handler_file(
        r#"
- method: GET
  path: /users/:id
  template: true
  json:
    id: "{{ request.params.id }}"
    name: "{{ fake('name.full') }}"
    email: "{{ fake('internet.email') }}"
    city: "{{ fake('address.city', locale='fr_fr') }}"
    same_whatever_the_query: "{{ fake('uuid', seed=request.params.id) }}"
    fresh: "{{ fake('uuid', random=true) }}"
"#,
    );
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let base = serve.url().trim_end_matches('/').to_owned();
    let get = |path: &str| -> serde_json::Value {
        serde_json::from_str(&curl(&[&format!("{base}{path}")])).unwrap()
    };
    let (first, again, other) = (get("/users/7"), get("/users/7"), get("/users/8"));
    for field in ["name", "email", "city", "same_whatever_the_query"] {
        assert_eq!(first[field], again[field], "{field}: {first} {again}");
        assert_ne!(first[field], other[field], "{field}: {first} {other}");
    }
    assert!(first["email"].as_str().unwrap().contains('@'), "{first}");
    assert_ne!(first["fresh"], again["fresh"]);
    let paged = get("/users/7?page=2");
    assert_ne!(paged["name"], first["name"], "the URL seeds by default");
    assert_eq!(
        paged["same_whatever_the_query"],
        first["same_whatever_the_query"]
    );

    let stderr = load_error(
        "- path: /users\n  template: true\n  json: { name: \"{{ fake('name.frist') }}\" }\n",
    );
    assert!(
        stderr.contains(
            "handlers.yaml, entry 1 (ALL /users): json.name: fake(\"name.frist\"): no such kind; known: name.first"
        ),
        "{stderr}"
    );
}

/// Issue 27, "nothing lost on a crash": a recording process killed with
/// SIGKILL at a pseudo-random moment while 1,000 exchanges run at once
/// leaves a HAR file that parses (writes are atomic renames), holds only
/// exchanges that happened, and holds every exchange whose client had its
/// whole answer a margin before the kill (the write of an exchange follows
/// its last byte). Four rounds, each killed after a different number of
/// answers.
#[test]
fn a_recording_killed_at_random_moments_keeps_a_valid_har_with_what_completed() {
    use std::time::{Duration, Instant};
    const CALLS: u32 = 1_000;
    const MARGIN: Duration = Duration::from_millis(50);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let upstream = runtime.block_on(spawn_upstream(axum::Router::new().route(
        "/item/{n}",
        axum::routing::get(
            |axum::extract::Path(n): axum::extract::Path<u32>| async move { format!("item {n}") },
        ),
    )));
    // A fixed sequence of kill points (xorshift): reproducible.
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for round in 0..4 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let kill_after = 50 + (seed % 700) as usize;
        let dir = tempfile::tempdir().unwrap();
        let mut serve = Serve::start(dir.path(), &["--record", "rec.har", "--record-mode", "all"]);
        let proxy = serve.variables["MOCKLIB_PROXY_URL"]
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned();
        let completed = Arc::new(std::sync::Mutex::new(Vec::<(u32, Instant)>::new()));
        runtime.block_on(async {
            for n in 0..CALLS {
                let (proxy, completed) = (proxy.clone(), Arc::clone(&completed));
                tokio::spawn(async move {
                    use tokio::io::{AsyncReadExt, AsyncWriteExt};
                    let Ok(mut tcp) = tokio::net::TcpStream::connect(&proxy).await else {
                        return;
                    };
                    let head = format!(
                        "GET http://{upstream}/item/{n} HTTP/1.1\r\nHost: {upstream}\r\nConnection: close\r\n\r\n"
                    );
                    if tcp.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    let mut answer = Vec::new();
                    let _ = tcp.read_to_end(&mut answer).await;
                    if String::from_utf8_lossy(&answer).ends_with(&format!("item {n}")) {
                        completed.lock().unwrap().push((n, Instant::now()));
                    }
                });
            }
            let deadline = Instant::now() + Duration::from_secs(60);
            while completed.lock().unwrap().len() < kill_after {
                assert!(Instant::now() < deadline, "round {round}: the exchanges hung");
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        });
        let killed_at = Instant::now();
        serve.child.kill().unwrap(); // SIGKILL
        serve.child.wait().unwrap();

        let text = std::fs::read_to_string(dir.path().join("rec.har"))
            .unwrap_or_else(|error| panic!("round {round}: no HAR file after the kill: {error}"));
        let har: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|error| panic!("round {round}: the HAR does not parse: {error}"));
        let recorded: std::collections::BTreeSet<u32> = har["log"]["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|entry| {
                let url = entry["request"]["url"].as_str().unwrap();
                let n = url
                    .strip_prefix(&format!("http://{upstream}/item/"))
                    .unwrap_or_else(|| panic!("round {round}: an entry nobody asked for: {url}"));
                n.parse().unwrap()
            })
            .collect();
        let settled: Vec<u32> = completed
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, at)| *at + MARGIN < killed_at)
            .map(|(n, _)| *n)
            .collect();
        // A write the kill interrupted may leave its temporary file; never more.
        let leftovers = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|entry| {
                entry
                    .as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count();
        assert!(
            leftovers <= 1,
            "round {round}: {leftovers} temporary files left"
        );
        let lost: Vec<&u32> = settled.iter().filter(|n| !recorded.contains(n)).collect();
        assert!(
            lost.is_empty(),
            "round {round} (killed after {kill_after} answers): {} exchanges answered over {MARGIN:?} \
             before the kill are missing from the HAR ({} recorded): {lost:?}",
            lost.len(),
            recorded.len()
        );
        eprintln!(
            "round {round}: killed after {} answers, {} recorded, {} settled before the margin",
            completed.lock().unwrap().len(),
            recorded.len(),
            settled.len()
        );
    }
}

/// Issue 27: a handler file written in pieces (an editor that truncates,
/// writes part, pauses, writes the rest) is never loaded half-way: while it
/// is rewritten twenty times, every request is answered by the whole old
/// file or the whole new one.
#[test]
fn a_handler_file_written_in_pieces_is_never_loaded_half_way() {
    use std::time::Duration;
    let version = |v: u32| {
        format!("- path: /a\n  body: a{v}\n- path: /b\n  body: b{v}\n- path: /c\n  body: c{v}\n")
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("handlers.yaml");
    std::fs::write(&file, version(0)).unwrap();
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let base = serve.url().trim_end_matches('/').to_owned();
    let writer = std::thread::spawn(move || {
        for v in 1..=20 {
            let text = version(v);
            let (first, rest) = text.split_at(text.len() / 2);
            let mut handle = std::fs::File::create(&file).unwrap(); // truncates
            handle.write_all(first.as_bytes()).unwrap();
            handle.flush().unwrap();
            std::thread::sleep(Duration::from_millis(50));
            handle.write_all(rest.as_bytes()).unwrap();
            drop(handle);
            std::thread::sleep(Duration::from_millis(250));
        }
    });
    let mut seen = std::collections::BTreeSet::new();
    while !writer.is_finished() {
        // One request for the last entry: a file read half-way lacks it.
        let answer = curl(&["-w", " %{http_code}", &format!("{base}/c")]);
        assert!(
            answer.starts_with('c') && answer.ends_with(" 200"),
            "answered from a half-written file: {answer}\n{}",
            serve.stderr()
        );
        seen.insert(answer);
    }
    writer.join().unwrap();
    // The rewrites were loaded, not ignored.
    eventually("the last version", || {
        (curl(&[&format!("{base}/c")]) == "c20").then_some(())
    });
    assert!(
        seen.len() > 2,
        "few versions were seen while writing: {seen:?}"
    );
}

/// A Python `requests` suite's CRUD cycle against a resource entry (through
/// the HTTPS proxy); prints one line per step.
const PYTHON_CRUD: &str = r#"
import requests, sys
books = sys.argv[1]
listed = requests.get(books, timeout=30)
print("list", listed.status_code, [book["title"] for book in listed.json()])
created = requests.post(books, json={"title": "Emma"}, timeout=30)
book = created.json()
location = created.headers["Location"]
assert location == books + "/" + book["isbn"], (location, book)
print("create", created.status_code, book["title"], len(book["isbn"]))
print("get", requests.get(location, timeout=30).json() == book)
patched = requests.patch(location, json={"year": 1815}, timeout=30)
print("patch", patched.status_code, patched.json()["year"])
replaced = requests.put(location, json={"title": "Emma."}, timeout=30)
print("put", replaced.status_code, sorted(replaced.json()))
taken = requests.post(books, json={"isbn": book["isbn"]}, timeout=30)
print("conflict", taken.status_code, taken.json()["error"])
bad = requests.post(books, data="{oops", headers={"content-type": "application/json"}, timeout=30)
print("bad", bad.status_code, bad.json()["message"].split(":")[0])
deleted = requests.delete(location, timeout=30)
print("delete", deleted.status_code, deleted.json()["title"])
gone = requests.get(location, timeout=30)
print("gone", gone.status_code, gone.json()["error"])
"#;

/// The issue's "a handler file alone can mock a CRUD API": `resource`
/// entries, seeded inline and from a file, driven by curl (base URL) and
/// Python's `requests` (HTTPS proxy); the collection is the server's, and
/// a reload starts it over from the seed.
#[test]
fn a_resource_entry_alone_mocks_a_crud_api_for_curl_and_python() {
    let dir = tempfile::tempdir().unwrap();
    let handlers = r#"
- resource: /users
  seed:
    - { id: 1, name: Kate }
    - { id: 2, name: Sarah }
- resource: https://api.example.com/books
  id_field: isbn
  seed_file: data/books.json
"#;
    std::fs::write(dir.path().join("handlers.yaml"), handlers).unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(
        dir.path().join("data/books.json"),
        r#"[{"isbn": "978-0441013593", "title": "Dune"}]"#,
    )
    .unwrap();
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let users = format!("{}/users", serve.url().trim_end_matches('/'));

    assert_eq!(
        curl(&[&users]),
        r#"[{"id":1,"name":"Kate"},{"id":2,"name":"Sarah"}]"#
    );
    let created = curl(&[
        "-i",
        "-H",
        "content-type: application/json",
        "-d",
        r#"{"name":"John"}"#,
        &users,
    ]);
    assert!(created.starts_with("HTTP/1.1 201"), "{created}");
    assert!(
        created.contains(&format!("location: {users}/3\r\n")),
        "{created}"
    );
    assert!(created.ends_with(r#"{"id":3,"name":"John"}"#), "{created}");
    let send = |method: &str, path: &str, body: &str| {
        curl(&[
            "-X",
            method,
            "-w",
            " %{http_code}",
            "-H",
            "content-type: application/json",
            "--data-raw",
            body,
            &format!("{users}{path}"),
        ])
    };
    assert_eq!(
        send("PUT", "/3", r#"{"name":"Johnny"}"#),
        r#"{"id":3,"name":"Johnny"} 200"#
    );
    let patched = send("PATCH", "/3", r#"{"email":"j@example.com"}"#);
    let (patched, status) = patched.rsplit_once(' ').unwrap();
    assert_eq!(status, "200");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(patched).unwrap(),
        serde_json::json!({ "id": 3, "name": "Johnny", "email": "j@example.com" })
    );
    assert_eq!(
        send("POST", "", r#"{"id":1}"#),
        format!(r#"{{"error":"Conflict","message":"/users already has an item with id 1"}} 409"#)
    );
    let bad = send("POST", "", "[1, 2]");
    assert_eq!(
        bad,
        r#"{"error":"Bad Request","message":"expected a JSON object, found an array"} 400"#
    );
    assert_eq!(
        curl(&["-X", "DELETE", "-w", " %{http_code}", &format!("{users}/1")]),
        r#"{"id":1,"name":"Kate"} 200"#
    );
    assert_eq!(
        curl(&["-w", " %{http_code}", &format!("{users}/1")]),
        r#"{"error":"Not Found","message":"/users has no item with id \"1\""} 404"#
    );

    // Python through the HTTPS proxy, on the resource seeded from a file.
    let printed = python(&serve, PYTHON_CRUD, &["https://api.example.com/books"]);
    assert_eq!(
        printed,
        "list 200 ['Dune']\n\
         create 201 Emma 36\n\
         get True\n\
         patch 200 1815\n\
         put 200 ['isbn', 'title']\n\
         conflict 409 Conflict\n\
         bad 400 the request body is not valid JSON\n\
         delete 200 Emma.\n\
         gone 404 Not Found\n"
    );
    // The same collection for every client: Python sees what curl changed.
    let script = "import requests, sys\n\
                  print([user['name'] for user in requests.get(sys.argv[1], timeout=30).json()], end='')";
    assert_eq!(python(&serve, script, &[&users]), "['Sarah', 'Johnny']");

    // A reload starts every collection over from its seed.
    std::fs::write(
        dir.path().join("handlers.yaml"),
        format!("{handlers}# edited\n"),
    )
    .unwrap();
    eventually("the reload", || {
        (curl(&[&users]) == r#"[{"id":1,"name":"Kate"},{"id":2,"name":"Sarah"}]"#).then_some(())
    });
}

#[test]
fn a_bad_resource_entry_fails_the_load_naming_the_file_the_entry_and_the_field() {
    for (entry, says) in [
        (
            "- resource: /users\n  seed: { id: 1 }\n",
            "entry 1 (resource /users): seed: expected a list of JSON objects, found an object",
        ),
        (
            "- resource: /users\n  seed: [ { id: 1 }, { name: Kate } ]\n",
            "entry 1 (resource /users): seed[1]: no `id` field (the id field)",
        ),
        (
            "- resource: /users\n  id_field: uuid\n  seed: [ { uuid: a }, { uuid: a } ]\n",
            "entry 1 (resource /users): seed[1].uuid: duplicate id \"a\" (seed[0] has it too)",
        ),
        (
            "- resource: /users\n  seed: [ [1] ]\n",
            "seed[0]: expected a JSON object, found an array",
        ),
        (
            "- resource: /users\n  seed_file: users.json\n",
            "entry 1 (resource /users): seed_file: could not read",
        ),
        (
            "- resource: /users\n  seed_file: list.json\n",
            "list.json: seed[0].id: an id is a string or a number, found null",
        ),
        (
            "- resource: /users\n  seed: []\n  seed_file: list.json\n",
            "give seed or seed_file, not both",
        ),
        (
            "- resource: /users\n  status: 201\n",
            "entry 1 (resource /users): `status` does not go on a resource entry",
        ),
        (
            "- resource: /users\n  json: []\n",
            "`json` does not go on a resource entry",
        ),
        (
            "- resource: /users\n  path: /users\n",
            "`path` does not go on a resource entry",
        ),
        (
            "- resource: /users\n  seeds: []\n",
            "entry 1 (resource /users): unknown field `seeds`",
        ),
        (
            "- resource: \"/users/:\"\n",
            "entry 1 (resource /users/:): invalid path pattern",
        ),
        (
            "- path: /users\n  seed: []\n",
            "entry 1 (ALL /users): `seed` is a field of resource entries",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("handlers.yaml"), entry).unwrap();
        std::fs::write(dir.path().join("list.json"), r#"[{"id": null}]"#).unwrap();
        let stderr = serve_fails(dir.path(), &["--handlers", "handlers.yaml"]);
        assert!(
            stderr.contains("handlers.yaml, ") && stderr.contains(says),
            "{entry}: {stderr}"
        );
    }
}

/// `sequence:` answers in order (the last repeats); with `once`, each
/// answer once and then the next entry; `once` on a single answer too.
#[test]
fn sequences_answer_in_order_and_once_hands_over_to_the_next_entry() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("handlers.yaml"),
        r#"
- path: /job
  sequence:
    - { status: 202, json: { state: pending } }
    - { json: { state: done }, headers: { x-step: "2" } }
- path: /token
  once: true
  sequence:
    - { body: first }
    - { body: second }
- path: /token
  status: 410
  body: gone
- path: /welcome
  once: true
  body: hello once
"#,
    )
    .unwrap();
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let base = serve.url().trim_end_matches('/').to_owned();
    let get = |path: &str| curl(&["-w", " %{http_code}", &format!("{base}{path}")]);
    assert_eq!(get("/job"), r#"{"state":"pending"} 202"#);
    for _ in 0..2 {
        assert_eq!(get("/job"), r#"{"state":"done"} 200"#);
    }
    let stepped = curl(&["-i", &format!("{base}/job")]);
    assert!(stepped.contains("x-step: 2"), "{stepped}");
    assert_eq!(get("/token"), "first 200");
    assert_eq!(get("/token"), "second 200");
    assert_eq!(get("/token"), "gone 410");
    assert_eq!(get("/welcome"), "hello once 200");
    // Used: unhandled, and addressed to the listener itself.
    assert_eq!(get("/welcome").rsplit(' ').next(), Some("502"));
}

#[test]
fn a_sequence_beside_a_single_answer_fails_the_load_saying_why() {
    for (entry, says) in [
        (
            "  status: 200\n  sequence: [ { body: a } ]",
            "`status` beside `sequence`",
        ),
        ("  sequence: []", "at least one answer"),
        ("  sequence: [ { staus: 200 } ]", "unknown field `staus`"),
        (
            "  sequence: [ { status: 99 } ]",
            "sequence[0]: status: invalid status 99",
        ),
    ] {
        let stderr = load_error(&format!("- path: /job\n{entry}\n"));
        assert!(
            stderr.contains("handlers.yaml, entry 1 (ALL /job)") && stderr.contains(says),
            "{entry}: {stderr}"
        );
    }
}

/// The admin API's handlers resource (issue 24, first part): a test adds
/// handlers at runtime in the handler-file format, ahead of the files',
/// lists them, keeps them across a reload of the files, and removes them.
#[test]
fn handlers_added_through_the_admin_api_answer_ahead_of_the_files_until_removed() {
    let dir = with_handler_file("- path: /user\n  body: from the file\n");
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let base = serve.url().trim_end_matches('/').to_owned();
    let admin = format!("{base}/__mocklib/handlers");
    let get = |path: &str| curl(&["-w", " %{http_code}", &format!("{base}{path}")]);
    assert_eq!(get("/user"), "from the file 200");

    let added = curl(&[
        "-w",
        " %{http_code}",
        "-X",
        "POST",
        "-H",
        "content-type: application/yaml",
        "--data-binary",
        "- path: /user\n  body: from the test\n- path: /extra\n  status: 204\n",
        &admin,
    ]);
    assert_eq!(added, r#"{"added":2} 201"#);
    assert_eq!(get("/user"), "from the test 200");
    assert_eq!(get("/extra"), " 204");
    let listed: serde_json::Value = serde_json::from_str(&curl(&[&admin])).unwrap();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed[0]["handler"], "ALL /user");
    assert_eq!(listed[0]["added_at_runtime"], true);
    assert_eq!(listed[1]["added_at_runtime"], true);
    assert!(
        listed[2..].iter().all(|h| h["added_at_runtime"] == false),
        "{listed:?}"
    );

    // A bad entry: 400 naming the entry and the field, nothing added.
    let refused = curl(&[
        "-w",
        " %{http_code}",
        "-X",
        "POST",
        "--data-binary",
        r#"[{"path": "/x", "staus": 200}]"#,
        &admin,
    ]);
    assert!(
        refused.contains("the request body, entry 1 (ALL /x)")
            && refused.contains("unknown field `staus`")
            && refused.ends_with(" 400"),
        "{refused}"
    );

    // One of them removed by its place in the list; an index that is not
    // one of them is a 404 saying why.
    assert_eq!(
        curl(&["-w", "%{http_code}", "-X", "DELETE", &format!("{admin}/1")]),
        "204"
    );
    // The removed handler no longer answers: unhandled, and addressed to
    // the listener itself.
    assert!(get("/extra").ends_with(" 502"));
    let missing = curl(&["-w", " %{http_code}", "-X", "DELETE", &format!("{admin}/5")]);
    assert!(
        missing.contains("no handler added at runtime has index 5: 1 were added")
            && missing.ends_with(" 404"),
        "{missing}"
    );

    // A reload of the files keeps what the test added, ahead of them.
    std::fs::write(
        dir.path().join("handlers.yaml"),
        "- path: /user\n  body: from the edited file\n- path: /new\n  body: new\n",
    )
    .unwrap();
    eventually("the reload", || (get("/new") == "new 200").then_some(()));
    assert_eq!(get("/user"), "from the test 200");

    // Removed: the files answer again; the admin API's requests are not in
    // the journal.
    assert_eq!(curl(&["-w", "%{http_code}", "-X", "DELETE", &admin]), "204");
    assert_eq!(get("/user"), "from the edited file 200");
    let journal = curl(&[&format!("{base}/__mocklib/requests")]);
    assert!(!journal.contains("__mocklib"), "{journal}");
}

/// The journal's filters (issue 24): method and URL pattern, the handler
/// that answered, unhandled only; a bad filter is a 400 saying why.
#[test]
fn the_journal_filters_by_method_url_handler_and_unhandled() {
    let dir = with_handler_file("- method: GET\n  path: /users/:id\n  body: user\n");
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let base = serve.url().trim_end_matches('/').to_owned();
    curl(&[&format!("{base}/users/1")]);
    curl(&[&format!("{base}/users/2")]);
    curl(&["-o", "/dev/null", "-X", "POST", &format!("{base}/users/3")]);
    curl(&["-o", "/dev/null", &format!("{base}/orders")]);
    let journal = |query: &str| -> Vec<String> {
        let listed: serde_json::Value =
            serde_json::from_str(&curl(&[&format!("{base}/__mocklib/requests?{query}")])).unwrap();
        listed
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| {
                format!(
                    "{} {}",
                    entry["method"].as_str().unwrap(),
                    entry["url"].as_str().unwrap().trim_start_matches(&base)
                )
            })
            .collect()
    };
    assert_eq!(
        journal("method=get&url=/users/:id"),
        ["GET /users/1", "GET /users/2"]
    );
    assert_eq!(
        journal("url=/users/*"),
        ["GET /users/1", "GET /users/2", "POST /users/3"]
    );
    assert_eq!(journal("unhandled=true"), ["POST /users/3", "GET /orders"]);
    assert_eq!(
        journal("handler=/users/:id"),
        ["GET /users/1", "GET /users/2"]
    );
    assert_eq!(journal("").len(), 4);
    let bad = curl(&[
        "-w",
        " %{http_code}",
        &format!("{base}/__mocklib/requests?url=/users/:id("),
    ]);
    assert!(bad.starts_with("url: ") && bad.ends_with(" 400"), "{bad}");
    let unknown = curl(&[
        "-w",
        " %{http_code}",
        &format!("{base}/__mocklib/requests?status=200"),
    ]);
    assert!(
        unknown.contains("unknown filter \"status\"") && unknown.ends_with(" 400"),
        "{unknown}"
    );
}

/// Expectations from any language (issue 24): entries with `times`, and
/// `GET /__mocklib/verify` answering 200 when every count is met, 422
/// with `verify()`'s report when one is not.
#[test]
fn verify_over_http_reports_the_entries_whose_count_is_off() {
    let dir = with_handler_file(
        "- path: /ping\n  times: 2\n  body: pong\n- path: /audit\n  times: { at_least: 1 }\n  status: 204\n",
    );
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let base = serve.url().trim_end_matches('/').to_owned();
    let verify = || curl(&["-w", " %{http_code}", &format!("{base}/__mocklib/verify")]);
    curl(&[&format!("{base}/ping")]);
    let failed = verify();
    assert!(failed.ends_with(" 422"), "{failed}");
    let report: serde_json::Value = serde_json::from_str(failed.trim_end_matches(" 422")).unwrap();
    assert_eq!(report["ok"], false);
    let text = report["report"].as_str().unwrap();
    assert!(
        text.contains("ALL /ping: expected exactly 2, received 1")
            && text.contains("ALL /audit: expected at least 1, received 0"),
        "{text}"
    );
    curl(&[&format!("{base}/ping")]);
    curl(&["-o", "/dev/null", &format!("{base}/audit")]);
    assert_eq!(verify(), r#"{"ok":true} 200"#);
    // A count the format cannot take is refused at load.
    let refused = load_error("- path: /x\n  times: { at_least: 3, at_most: 1 }\n");
    assert!(
        refused.contains("times: at_least 3 is above at_most 1"),
        "{refused}"
    );
}

/// The admin API describes itself (issue 24): `/__mocklib/openapi.json` is
/// an OpenAPI 3.1 document of every admin path, which mocklib's own
/// OpenAPI support loads and answers.
#[test]
fn the_admin_api_describes_itself_as_openapi() {
    let dir = with_handler_file("- path: /user\n  body: x\n");
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let base = serve.url().trim_end_matches('/').to_owned();
    let text = curl(&[&format!("{base}/__mocklib/openapi.json")]);
    let document: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(document["openapi"], "3.1.0");
    assert_eq!(document["servers"][0]["url"], base);
    let paths: Vec<&str> = document["paths"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for path in [
        "/__mocklib/requests",
        "/__mocklib/handlers",
        "/__mocklib/handlers/{index}",
        "/__mocklib/verify",
        "/__mocklib/scopes",
        "/__mocklib/scopes/{id}",
        "/__mocklib/hold",
        "/__mocklib/record",
        "/__mocklib/openapi.json",
        "/__mocklib/",
        "/__mocklib/events",
        "/__mocklib/callbacks",
        "/__mocklib/scopes/{id}/callbacks",
    ] {
        assert!(paths.contains(&path), "{path} missing: {paths:?}");
    }
    // Every operation it names is one the server answers: none is met by
    // the "not an admin resource" 404 or a 405.
    for (path, item) in document["paths"].as_object().unwrap() {
        if path == "/__mocklib/events" {
            continue; // a stream that stays open: page.rs reads it
        }
        for method in item
            .as_object()
            .unwrap()
            .keys()
            .filter(|key| *key != "parameters")
        {
            let concrete = path.replace("{index}", "0").replace("{id}", "999");
            let answer = curl(&[
                "-w",
                " %{http_code}",
                "-X",
                &method.to_uppercase(),
                &format!("{base}{concrete}"),
            ]);
            assert!(
                !answer.contains("is not an admin resource") && !answer.ends_with(" 405"),
                "{method} {path}: {answer}"
            );
        }
    }
    // A valid document: mocklib's OpenAPI support makes handlers of it.
    let handlers = mocklib::openapi::OpenApi::from_json(&text)
        .and_then(|api| api.handlers())
        .unwrap();
    assert_eq!(handlers.len(), 24, "one handler per operation");
    let schemas = &document["components"]["schemas"];
    for frame in ["CallbackCall", "CallbackAnswer", "ScenarioState"] {
        assert_eq!(schemas[frame]["type"], "object", "{frame}");
    }
}

/// `--graphql-contract` (issue 25, part 2): the GraphQL requests to the
/// endpoint and a handler file's answers checked against a schema.
#[test]
fn a_graphql_contract_checks_the_operations_and_their_data() {
    let dir = with_handler_file(
        "- method: POST\n  path: /graphql\n  json: {data: {user: {id: 1, name: null}}}\n",
    );
    std::fs::write(
        dir.path().join("schema.graphql"),
        "type Query { user(id: ID!): User } type User { id: ID! name: String! }",
    )
    .unwrap();
    let serve = Serve::start(
        dir.path(),
        &[
            "--handlers",
            "handlers.yaml",
            "--graphql-contract",
            "schema.graphql",
        ],
    );
    let base = serve.url().trim_end_matches('/').to_owned();
    let query = r#"{"query":"query GetUser { user(id: 1) { id name emial } }"}"#;
    curl(&[
        "-X",
        "POST",
        "-H",
        "content-type: application/json",
        "-d",
        query,
        &format!("{base}/graphql"),
    ]);
    let journal: serde_json::Value =
        serde_json::from_str(&curl(&[&format!("{base}/__mocklib/requests")])).unwrap();
    let findings = journal[0]["contract_findings"].as_array().unwrap();
    let pointers: Vec<&str> = findings
        .iter()
        .map(|finding| finding["pointer"].as_str().unwrap())
        .collect();
    assert_eq!(
        pointers,
        [
            "/request/query/user/emial",
            "/response/body/data/user/id",
            "/response/body/data/user/name",
        ],
        "{journal}"
    );
    assert_eq!(findings[0]["operation"], "query GetUser", "{journal}");
    assert_eq!(
        findings[0]["contract"], "GraphQL schema.graphql",
        "{journal}"
    );
    // Its coverage is served with the OpenAPI contracts'.
    let coverage = curl(&[&format!("{base}/__mocklib/coverage?format=text")]);
    assert!(
        coverage.starts_with("GraphQL schema.graphql: 1 of"),
        "{coverage}"
    );
}

/// `--contract` (issue 25): a handler file's answers checked against an
/// OpenAPI document: the journal and verify name the operation, the field
/// and the entry that answered; `--contract-strict` makes it a 500.
#[test]
fn a_contract_checks_the_handler_files_answers() {
    let dir = with_handler_file(
        "- method: GET\n  path: /users/:id\n  json: {id: 7, name: Kate}\n- method: GET\n  path: /health\n  body: ok\n",
    );
    std::fs::write(
        dir.path().join("users.yaml"),
        r#"
openapi: 3.0.3
info: { title: Users API, version: "2" }
paths:
  /users/{id}:
    get:
      operationId: getUser
      parameters: [{ name: id, in: path, required: true, schema: { type: integer } }]
      responses:
        "200":
          description: a user
          content:
            application/json:
              schema:
                type: object
                required: [id, fullName]
                properties: { id: { type: integer }, fullName: { type: string } }
"#,
    )
    .unwrap();
    let serve = Serve::start(
        dir.path(),
        &["--handlers", "handlers.yaml", "--contract", "users.yaml"],
    );
    let base = serve.url().trim_end_matches('/').to_owned();
    assert_eq!(
        curl(&["-w", " %{http_code}", &format!("{base}/users/7")]),
        r#"{"id":7,"name":"Kate"} 200"#
    );
    // A path the document lacks is a finding too.
    assert_eq!(curl(&[&format!("{base}/health")]), "ok");
    let journal: serde_json::Value =
        serde_json::from_str(&curl(&[&format!("{base}/__mocklib/requests")])).unwrap();
    let findings = &journal[0]["contract_findings"];
    assert_eq!(findings[0]["operation"], "getUser", "{journal}");
    assert_eq!(findings[0]["pointer"], "/response/body", "{journal}");
    assert!(
        findings[0]["expected"]
            .as_str()
            .unwrap()
            .contains("fullName"),
        "{journal}"
    );
    assert_eq!(
        journal[1]["contract_findings"][0]["pointer"], "/request/path",
        "{journal}"
    );
    let verify = curl(&["-w", " %{http_code}", &format!("{base}/__mocklib/verify")]);
    assert!(verify.ends_with(" 422"), "{verify}");
    let (verify, _) = verify.rsplit_once(' ').unwrap();
    let verify: serde_json::Value = serde_json::from_str(verify).unwrap();
    assert_eq!(
        verify["contract_findings"][0]["handler"], "GET /users/:id",
        "{verify}"
    );
    assert!(
        verify["report"]
            .as_str()
            .unwrap()
            .contains("Users API, getUser: /response/body"),
        "{verify}"
    );
    // Coverage: getUser exercised (its 200), as JSON and as a table.
    let coverage: serde_json::Value =
        serde_json::from_str(&curl(&[&format!("{base}/__mocklib/coverage")])).unwrap();
    assert_eq!(
        coverage["contracts"][0]["operations"][0]["requests"], 1,
        "{coverage}"
    );
    let table = curl(&[&format!("{base}/__mocklib/coverage?format=text")]);
    assert!(
        table.starts_with("Users API: 1 of 1 operations exercised, 1 of 1 documented responses"),
        "{table}"
    );
    drop(serve);

    let strict = Serve::start(
        dir.path(),
        &[
            "--handlers",
            "handlers.yaml",
            "--contract",
            "users.yaml",
            "--contract-strict",
        ],
    );
    let answer = curl(&[
        "-w",
        " %{http_code}",
        &format!("{}/users/7", strict.url().trim_end_matches('/')),
    ]);
    assert!(
        answer.ends_with(" 500") && answer.contains("breaks the contract"),
        "{answer}"
    );
}
