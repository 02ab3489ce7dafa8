//! `mocklib serve` as a test suite in another language uses it: the built
//! command as a child process, driven by curl and Python's `requests`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

// The library's test fixtures, shared with its integration tests.
const HAR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../mocklib-tests/tests/fixtures/har/api.har"
);

/// A running `mocklib serve`, killed when dropped (a failing test leaves
/// no server behind).
struct Serve {
    child: Child,
    /// What it printed once listening.
    variables: BTreeMap<String, String>,
    stderr: PathBuf,
}

impl Serve {
    /// Starts `mocklib serve ARGS` in `dir` and reads the variables it
    /// prints, up to the empty line.
    fn start(dir: &Path, args: &[&str]) -> Serve {
        let stderr = dir.join(format!("stderr-{}.txt", args.len()));
        let mut child = Command::new(env!("CARGO_BIN_EXE_mocklib"))
            .arg("serve")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("the mocklib command runs");
        let mut variables = BTreeMap::new();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        loop {
            let Some(Ok(line)) = lines.next() else {
                let status = child.wait().unwrap();
                panic!(
                    "mocklib serve ended ({status}) before listening:\n{}",
                    std::fs::read_to_string(&stderr).unwrap()
                );
            };
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once('=').expect("KEY=VALUE lines");
            variables.insert(name.to_owned(), value.to_owned());
        }
        Serve {
            child,
            variables,
            stderr,
        }
    }

    /// The base URL, without a trailing slash.
    fn url(&self) -> &str {
        &self.variables["MOCKLIB_URL"]
    }

    fn env(&self) -> impl Iterator<Item = (&String, &String)> {
        self.variables.iter()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap()
    }

    /// Sends SIGTERM and waits for the exit.
    fn terminate(mut self) -> ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        self.child.wait().unwrap()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `python3 -c SCRIPT ARGS...` with `serve`'s variables; what it printed.
fn python(serve: &Serve, script: &str, args: &[&str]) -> String {
    let output = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .envs(serve.env())
        .output()
        .expect("python3 runs (Debian: python3-requests)");
    assert!(
        output.status.success(),
        "python3 failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

const PYTHON_GET: &str = "import requests, sys\n\
                          response = requests.get(sys.argv[1], timeout=30)\n\
                          print(response.status_code, response.headers.get('content-type'), response.text, end='')";

/// Calls `check` until it returns `Some`, up to 20 seconds: for what
/// happens after a file is polled (reloads, recordings).
fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    for _ in 0..400 {
        if let Some(value) = check() {
            return value;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("{what} did not happen within 20 seconds");
}

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

    let deleted = curl(&[
        "--request",
        "DELETE",
        "--write-out",
        "%{http_code}",
        &journal,
    ]);
    assert_eq!(deleted, "204");
    assert_eq!(curl(&[&journal]), "[]");
    let _ = curl(&[&format!("{}/users/1", serve.url())]);
    let entries: Vec<serde_json::Value> = serde_json::from_str(&curl(&[&journal])).unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["handler"], "GET /users/:id");
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

/// The code blocks tagged `lang` of the README's "mocklib serve" section.
fn readme_blocks(lang: &str) -> Vec<String> {
    let readme = include_str!("../../../README.md");
    let start = readme
        .find("\n## mocklib serve: for any language\n")
        .expect("the README has the section");
    let section = &readme[start + 1..];
    let section = &section[..section[3..]
        .find("\n## ")
        .map_or(section.len(), |end| end + 3)];
    let mut blocks = Vec::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        if let Some(tag) = line.strip_prefix("```") {
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            if tag == lang {
                blocks.push(body.join("\n") + "\n");
            }
        }
    }
    blocks
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

/// A project folder with the README's handler file as tests/mocks.yaml.
fn readme_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tests")).unwrap();
    let handlers = &readme_blocks("yaml")[0];
    std::fs::write(dir.path().join("tests/mocks.yaml"), handlers).unwrap();
    dir
}

#[test]
fn the_readme_python_suite_passes_against_the_readme_handler_file() {
    let dir = readme_project();
    std::fs::write(
        dir.path().join("tests/test_users.py"),
        &readme_blocks("python")[0],
    )
    .unwrap();
    let output = Command::new("python3")
        .args(["-m", "unittest", "discover", "-s", "tests"])
        .current_dir(dir.path())
        .env("PATH", path_with_mocklib())
        .output()
        .expect("python3 runs (Debian: python3-requests)");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("Ran 2 tests"), "{stderr}");
}

/// Runs the README's shell script in `dir` with its test command
/// (`go test ./...`) swapped for `command`, one this machine has.
fn run_readme_script(dir: &Path, command: &str) -> std::process::Output {
    let script = &readme_blocks("sh")[1];
    assert!(script.contains("go test ./..."), "{script}");
    Command::new("sh")
        .arg("-c")
        .arg(script.replace("go test ./...", command))
        .current_dir(dir)
        .env("PATH", path_with_mocklib())
        .output()
        .unwrap()
}

#[test]
fn the_readme_shell_script_reaches_the_handlers() {
    let dir = readme_project();
    let output = run_readme_script(
        dir.path(),
        "curl --silent --show-error https://api.example.com/users/7 > answer.json",
    );
    assert!(output.status.success(), "{output:?}");
    let answer = std::fs::read_to_string(dir.path().join("answer.json")).unwrap();
    assert_eq!(answer, r#"{"id":7,"name":"Kate"}"#);
}

#[test]
fn the_readme_node_suite_passes_through_the_readme_shell_script() {
    let dir = readme_project();
    let [suite] = &readme_blocks("js")[..] else {
        panic!("one js block in the README's serve section")
    };
    std::fs::create_dir_all(dir.path().join("tests")).unwrap();
    std::fs::write(dir.path().join("tests/users.test.mjs"), suite).unwrap();
    let output = run_readme_script(
        dir.path(),
        "node --test tests/users.test.mjs > node.out 2>&1",
    );
    let report = std::fs::read_to_string(dir.path().join("node.out")).unwrap_or_default();
    assert!(output.status.success(), "{output:?}\n{report}");
    assert!(
        report.contains("# pass 1") && report.contains("# fail 0"),
        "{report}"
    );
}

/// Runs curl with `args` (plus `--silent --show-error --max-time 20`) as a
/// child process; returns what it printed, failing the test if it failed.
fn curl(args: &[&str]) -> String {
    let output = Command::new("curl")
        .args(["--silent", "--show-error", "--max-time", "20"])
        .args(args)
        .output()
        .expect("curl runs");
    assert!(
        output.status.success(),
        "curl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("curl printed text")
}

/// Serves `app` on an ephemeral loopback port for the rest of the test's
/// runtime; returns its address.
async fn spawn_upstream(app: axum::Router) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let address = listener.local_addr().expect("local address");
    tokio::spawn(async move {
        axum::serve(listener, app).await.expect("upstream server");
    });
    address
}
