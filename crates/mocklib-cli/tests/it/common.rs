//! What the tests of the `mocklib` command share: `mocklib serve` as a
//! child process, Python driving it, and curl calling its admin API; with
//! curl, an upstream server on loopback and polling, from
//! crates/test-support (shared with the library's tests).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};

use serde_json::Value;

pub use test_support::{curl, eventually, spawn_upstream};

/// The service the library's gRPC tests generate a tonic client and server
/// from (crates/mocklib-tests/protos/helloworld.proto): one method of each
/// kind, for `mocklib serve --proto`.
pub const HELLOWORLD_PROTO: &str = include_str!("../../../mocklib-tests/protos/helloworld.proto");

/// A running `mocklib serve`, killed when dropped (a failing test leaves
/// no server behind).
pub struct Serve {
    pub child: Child,
    /// What it printed once listening.
    pub variables: BTreeMap<String, String>,
    stderr: PathBuf,
}

impl Serve {
    /// Starts `mocklib serve ARGS` in `dir` and reads the variables it
    /// prints, up to the empty line.
    pub fn start(dir: &Path, args: &[&str]) -> Serve {
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
    pub fn url(&self) -> &str {
        &self.variables["MOCKLIB_URL"]
    }

    pub fn env(&self) -> impl Iterator<Item = (&String, &String)> {
        self.variables.iter()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap()
    }

    /// Sends SIGTERM and waits for the exit.
    pub fn terminate(mut self) -> ExitStatus {
        assert!(self.send_term(), "kill -TERM failed");
        self.child.wait().unwrap()
    }

    /// Sends SIGTERM (with the `kill` command: no signal API in `std`);
    /// whether it was sent.
    fn send_term(&self) -> bool {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .is_ok_and(|status| status.success())
    }
}

impl Drop for Serve {
    /// SIGTERM first, as a harness should: a killed server cannot remove its
    /// CA bundle directory (the next one sweeps it after an hour).
    fn drop(&mut self) {
        // Not after `terminate` (or any exit already waited for): its pid
        // is free again, and the next child this process starts (these
        // tests start hundreds, in parallel) may hold it.
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        if self.send_term() {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while std::time::Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `python3 -c SCRIPT ARGS...` with `serve`'s variables; what it printed.
pub fn python(serve: &Serve, script: &str, args: &[&str]) -> String {
    let mut python = Command::new("python3");
    python.arg("-c").arg(script).args(args).envs(serve.env());
    test_support::stdout_of(&mut python)
}

/// Calls `method` (`/package.Service/Method`) from Python's `grpcio`
/// without generated code (no serializers: bytes both ways), over h2c on
/// the base URL: `kind` is the channel's method (`unary_unary`,
/// `unary_stream`, `stream_unary`), `messages` the Python expression of
/// what is sent. Returns each reply in hex, then the status's `CODE
/// details`, space-separated.
pub fn grpcio_call(serve: &Serve, kind: &str, method: &str, messages: &str) -> String {
    let script = format!(
        "import os, grpc\n\
         channel = grpc.insecure_channel(os.environ['MOCKLIB_URL'].removeprefix('http://'))\n\
         call = channel.{kind}('{method}')\n\
         shown = []\n\
         try:\n    \
             answer = call({messages}, timeout=20)\n    \
             for reply in [answer] if isinstance(answer, bytes) else answer:\n        \
                 shown.append(reply.hex())\n    \
             shown.append('OK')\n\
         except grpc.RpcError as error:\n    \
             shown.append(f'{{error.code().name}} {{error.details()}}')\n\
         print(' '.join(shown), end='')\n"
    );
    python(serve, &script, &[])
}

/// helloworld.proto's `SayHello` for `{name: "Kate"}` from `grpcio`, as
/// [`grpcio_call`] says it ended.
pub fn grpcio_say_hello_to_kate(serve: &Serve) -> String {
    grpcio_call(
        serve,
        "unary_unary",
        "/helloworld.Greeter/SayHello",
        r"b'\x0a\x04Kate'",
    )
}

/// Runs curl with `args`, adding `-w '\n%{http_code}'`; the status and the
/// body. `env`: a scope's environment for curl (its proxy, its CA bundle).
pub fn call(env: Option<&Value>, args: &[&str]) -> (u16, String) {
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

pub fn get(url: &str) -> (u16, String) {
    call(None, &[url])
}

pub fn get_json(url: &str) -> Value {
    let (status, body) = get(url);
    assert_eq!(status, 200, "GET {url}: {body}");
    serde_json::from_str(&body).unwrap()
}

pub fn post_yaml(url: &str, yaml: &str) -> (u16, String) {
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

pub fn delete(url: &str) -> u16 {
    call(None, &["-X", "DELETE", url]).0
}

/// Opens a scope; its description (`id`, `url`, `proxy_url`, `env`).
pub fn open_scope(serve: &Serve) -> Value {
    let (status, body) = call(
        None,
        &["-X", "POST", &format!("{}/__mocklib/scopes", serve.url())],
    );
    assert_eq!(status, 201, "{body}");
    serde_json::from_str(&body).unwrap()
}

pub fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} in {value}"))
}

/// A folder holding `handlers.yaml` with `text`.
pub fn with_handler_file(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("handlers.yaml"), text).unwrap();
    dir
}

/// Runs `mocklib serve ARGS` in `dir`, which must fail to start (exit
/// code 1, nothing printed on standard output); what it said on standard
/// error.
pub fn serve_fails(dir: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_mocklib"))
        .arg("serve")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(output.stdout.is_empty(), "{output:?}");
    stderr
}

/// What `mocklib serve --handlers handlers.yaml` says when `text` does not
/// load (it must fail to start).
pub fn load_error(text: &str) -> String {
    let dir = with_handler_file(text);
    serve_fails(dir.path(), &["--handlers", "handlers.yaml"])
}

/// Posts each entry to the admin API's `handlers` at `admin`, which must
/// refuse it: a `400` whose JSON pointer is `pointer` and whose message
/// contains `says`.
pub fn admin_refuses(admin: &str, cases: &[(&str, &str, &str)]) {
    for (entry, pointer, says) in cases {
        let (status, body) = post_yaml(admin, entry);
        assert_eq!(status, 400, "{entry}: {body}");
        let refused: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(refused["pointer"], *pointer, "{entry}: {body}");
        assert!(body.contains(says), "{entry}: {body}");
    }
}
