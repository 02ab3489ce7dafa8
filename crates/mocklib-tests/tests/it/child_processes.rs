//! Real clients in child processes, configured by nothing but `server.env()`:
//! Node.js (`http`, `https`, global `fetch`), wget, the JVM (`HttpClient`,
//! `HttpURLConnection`), Go's `net/http`, git and Python `requests`. The host is a made-up
//! `.test` name that resolves nowhere, so a mocked answer means the request
//! went through the listener. A missing tool fails its test with the Debian
//! package to install (`scripts/test` installs them).

use crate::common;

use std::path::Path;
use std::process::Command;

use mocklib::node::{Server, setup_server};
use mocklib::{HttpResponse, http};

/// What the git handlers answer: one branch, dumb-HTTP style.
const GIT_REF: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904\trefs/heads/main";

fn server() -> Server {
    let server = setup_server([
        http::get("https://child.example.test/greeting", |_| {
            HttpResponse::text("hello over https")
        }),
        http::get("http://child.example.test/greeting", |_| {
            HttpResponse::text("hello over http")
        }),
        http::get("https://child.example.test/moved", |_| {
            HttpResponse::empty()
                .status(302)
                .header("location", "/greeting")
        }),
        http::post("http://child.example.test/echo", |args| {
            HttpResponse::text(format!(
                "echo {}",
                args.request.text().unwrap_or("(not UTF-8)")
            ))
        }),
        // `git ls-remote` over dumb HTTP: a text/plain `info/refs`.
        http::get("https://git.example.test/repo.git/info/refs", |_| {
            HttpResponse::text(format!("{GIT_REF}\n"))
        }),
        http::get("https://git.example.test/repo.git/HEAD", |_| {
            HttpResponse::text("ref: refs/heads/main\n")
        }),
    ]);
    server.listen_with(common::error_on_unhandled());
    server
}

/// Runs `program` with `env` added to this process's environment and returns
/// its standard output. Panics, naming the package to install, when the
/// program is missing, and with its standard error when it fails.
fn run(env: &[(String, String)], package: &str, program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .envs(env.iter().cloned())
        .output()
        .unwrap_or_else(|error| {
            panic!("could not run `{program}` ({error}): install the Debian package `{package}`")
        });
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "`{program} {}` failed ({}):\n{stderr}",
        args.join(" "),
        output.status
    );
    String::from_utf8(output.stdout).expect("the child prints UTF-8")
}

/// Prints `STATUS BODY` for a GET with Node's `http` or `https` module,
/// whichever the URL's scheme names.
const NODE_GET: &str = r#"
const url = process.argv[1];
require(new URL(url).protocol.slice(0, -1)).get(url, (response) => {
  let body = '';
  response.setEncoding('utf8');
  response.on('data', (chunk) => (body += chunk));
  response.on('end', () => process.stdout.write(`${response.statusCode} ${body}`));
}).on('error', (error) => {
  console.error(error);
  process.exit(1);
});
"#;

/// A redirected GET over HTTPS and a POST with a body over HTTP with the
/// global `fetch`, one line each.
const NODE_FETCH: &str = r#"
(async () => {
  const moved = await fetch('https://child.example.test/moved');
  console.log(`${moved.status} ${moved.redirected} ${await moved.text()}`);
  const echo = await fetch('http://child.example.test/echo', { method: 'POST', body: 'ping' });
  console.log(`${echo.status} ${await echo.text()}`);
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
"#;

fn node(env: &[(String, String)], script: &str, args: &[&str]) -> String {
    let mut all = vec!["-e", script];
    all.extend(args);
    run(env, "nodejs", "node", &all)
}

#[test]
fn node_https_module_reaches_the_handlers() {
    let server = server();
    let output = node(
        &server.env(),
        NODE_GET,
        &["https://child.example.test/greeting"],
    );
    assert_eq!(output, "200 hello over https");
}

#[test]
fn node_http_module_reaches_the_handlers() {
    let server = server();
    let output = node(
        &server.env(),
        NODE_GET,
        &["http://child.example.test/greeting"],
    );
    assert_eq!(output, "200 hello over http");
}

#[test]
fn node_fetch_reaches_the_handlers_following_redirects_and_sending_bodies() {
    let server = server();
    let output = node(&server.env(), NODE_FETCH, &[]);
    assert_eq!(output, "200 true hello over https\n200 echo ping\n");
}

/// Whether this Node.js reads the proxy variables itself under
/// `NODE_USE_ENV_PROXY=1` (24.5+, 22.21+), where the preload must step aside.
fn node_has_native_proxy_support(version: &str) -> bool {
    let mut numbers = version.trim().split('.').map(|n| n.parse::<u32>().unwrap());
    let (major, minor) = (numbers.next().unwrap(), numbers.next().unwrap());
    major > 24 || (major == 24 && minor >= 5) || (major == 22 && minor >= 21)
}

#[test]
fn node_preload_routes_only_when_proxy_variables_are_set_and_node_lacks_them() {
    let server = server();
    let script = "console.log(process.versions.node, require('http').globalAgent.constructor.name, \
                  require('https').globalAgent.constructor.name)";
    let with_proxy = node(&server.env(), script, &[]);
    let (version, agents) = with_proxy.split_once(' ').unwrap();
    if node_has_native_proxy_support(version) {
        assert_eq!(
            agents, "Agent Agent\n",
            "Node {version} has its own proxy support"
        );
    } else {
        assert_eq!(agents, "HttpTunnelAgent HttpsTunnelAgent\n");
    }

    let (proxies, others): (Vec<_>, Vec<_>) = server
        .env()
        .into_iter()
        .partition(|(name, _)| name.to_ascii_lowercase().ends_with("_proxy"));
    let mut command = Command::new("node");
    command.args(["-e", script]).envs(others);
    for (name, _) in proxies {
        command.env_remove(name);
    }
    let without_proxy = command.output().expect("node runs");
    assert_eq!(
        String::from_utf8_lossy(&without_proxy.stdout),
        format!("{version} Agent Agent\n")
    );
}

#[test]
fn node_in_a_boundary_resolves_in_that_boundary() {
    let server = server();
    let outputs = in_boundary(&server, |env| {
        let https = node(env, NODE_GET, &["https://child.example.test/greeting"]);
        let fetch = node(
            env,
            "fetch(process.argv[1]).then((r) => r.text()).then((t) => process.stdout.write(t))",
            &["http://child.example.test/greeting"],
        );
        format!("{https} / {fetch}")
    });
    assert_eq!(outputs.inside, "200 from the boundary / from the boundary");
    assert_eq!(outputs.outside, "200 hello over https / hello over http");
}

#[test]
fn wget_reaches_the_handlers_over_https_and_http() {
    let server = server();
    let env = server.env();
    for (url, body) in [
        ("https://child.example.test/greeting", "hello over https"),
        ("http://child.example.test/greeting", "hello over http"),
    ] {
        assert_eq!(run(&env, "wget", "wget", &["-q", "-O", "-", url]), body);
    }
}

#[test]
fn wget_in_a_boundary_resolves_in_that_boundary() {
    let server = server();
    let outputs = in_boundary(&server, |env| {
        let url = "https://child.example.test/greeting";
        run(env, "wget", "wget", &["-q", "-O", "-", url])
    });
    assert_eq!(outputs.inside, "from the boundary");
    assert_eq!(outputs.outside, "hello over https");
}

/// `java Main.java CLIENT URL...`: prints each body on a line of its own,
/// with `HttpClient` (`http-client`) or `URL.openConnection` (`url-connection`:
/// `HttpsURLConnection` for https, which it checks).
const JAVA_MAIN: &str = r#"
import java.io.InputStream;
import java.net.URI;
import java.net.URLConnection;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import javax.net.ssl.HttpsURLConnection;

public class Main {
    public static void main(String[] args) throws Exception {
        for (int i = 1; i < args.length; i++) {
            System.out.println(args[0].equals("http-client") ? httpClient(args[i]) : urlConnection(args[i]));
        }
    }

    static String httpClient(String url) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(url)).build();
        return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString()).body();
    }

    static String urlConnection(String url) throws Exception {
        URLConnection connection = URI.create(url).toURL().openConnection();
        if (url.startsWith("https:") && !(connection instanceof HttpsURLConnection)) {
            throw new AssertionError("not an HttpsURLConnection: " + connection);
        }
        try (InputStream body = connection.getInputStream()) {
            return new String(body.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
"#;

/// Runs `JAVA_MAIN` with `client` over `urls`.
fn java(env: &[(String, String)], dir: &Path, client: &str, urls: &[&str]) -> String {
    let main = dir.join("Main.java");
    if !main.exists() {
        std::fs::write(&main, JAVA_MAIN).expect("write Main.java");
    }
    let mut args = vec![main.to_str().expect("a UTF-8 temporary path"), client];
    args.extend(urls);
    run(env, "default-jdk-headless", "java", &args)
}

#[test]
fn jvm_http_client_and_url_connection_reach_the_handlers() {
    let server = server();
    let env = server.env();
    let dir = tempfile::tempdir().unwrap();
    let urls = [
        "https://child.example.test/greeting",
        "http://child.example.test/greeting",
    ];
    for client in ["http-client", "url-connection"] {
        assert_eq!(
            java(&env, dir.path(), client, &urls),
            "hello over https\nhello over http\n",
            "{client}"
        );
    }
}

#[test]
fn jvm_in_a_boundary_resolves_in_that_boundary() {
    let server = server();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_owned();
    let outputs = in_boundary(&server, move |env| {
        let url = "https://child.example.test/greeting";
        java(env, &path, "http-client", &[url])
    });
    assert_eq!(outputs.inside, "from the boundary\n");
    assert_eq!(outputs.outside, "hello over https\n");
}

/// `go run main.go URL...`: prints each answer as `PROTOCOL STATUS BODY` on
/// a line of its own, with the default client (`http.Get`), which takes its
/// proxy from the environment and its roots from `SSL_CERT_FILE`.
const GO_MAIN: &str = r#"
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
)

func main() {
	for _, url := range os.Args[1:] {
		response, err := http.Get(url)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		body, err := io.ReadAll(response.Body)
		response.Body.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%s %d %s\n", response.Proto, response.StatusCode, body)
	}
}
"#;

/// Runs `GO_MAIN` over `urls`.
fn go(env: &[(String, String)], dir: &Path, urls: &[&str]) -> String {
    let main = dir.join("main.go");
    if !main.exists() {
        std::fs::write(&main, GO_MAIN).expect("write main.go");
    }
    let mut args = vec!["run", main.to_str().expect("a UTF-8 temporary path")];
    args.extend(urls);
    run(env, "golang-go", "go", &args)
}

#[test]
fn go_net_http_reaches_the_handlers_over_https_and_http() {
    let server = server();
    let dir = tempfile::tempdir().unwrap();
    let urls = [
        "https://child.example.test/greeting",
        "http://child.example.test/greeting",
    ];
    // HTTP/2 inside the tunnel: Go offers it by ALPN, the listener takes it.
    assert_eq!(
        go(&server.env(), dir.path(), &urls),
        "HTTP/2.0 200 hello over https\nHTTP/1.1 200 hello over http\n"
    );
}

#[test]
fn go_in_a_boundary_resolves_in_that_boundary() {
    let server = server();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_owned();
    let outputs = in_boundary(&server, move |env| {
        go(env, &path, &["https://child.example.test/greeting"])
    });
    assert_eq!(outputs.inside, "HTTP/2.0 200 from the boundary\n");
    assert_eq!(outputs.outside, "HTTP/2.0 200 hello over https\n");
}

#[test]
fn git_ls_remote_over_https_reaches_the_handlers() {
    let server = server();
    let mut env = server.env();
    env.push(("GIT_TERMINAL_PROMPT".to_owned(), "0".to_owned()));
    let output = run(
        &env,
        "git",
        "git",
        &["ls-remote", "https://git.example.test/repo.git"],
    );
    assert!(
        output.lines().any(|line| line == GIT_REF),
        "ls-remote printed:\n{output}"
    );
}

const PYTHON_GET: &str = "import requests, sys\n\
                          response = requests.get(sys.argv[1], timeout=30)\n\
                          print(response.status_code, response.text, end='')";

#[test]
fn python_requests_reaches_the_handlers_over_https_and_http() {
    let server = server();
    let env = server.env();
    for (url, output) in [
        (
            "https://child.example.test/greeting",
            "200 hello over https",
        ),
        ("http://child.example.test/greeting", "200 hello over http"),
    ] {
        let printed = run(
            &env,
            "python3-requests",
            "python3",
            &["-c", PYTHON_GET, url],
        );
        assert_eq!(printed, output);
    }
}

/// What a child printed with the environment from inside a boundary that
/// overrides the greeting, and then with the root's.
struct Outputs {
    inside: String,
    outside: String,
}

fn in_boundary(
    server: &Server,
    child: impl Fn(&[(String, String)]) -> String + Send + Sync + 'static,
) -> Outputs {
    let child = std::sync::Arc::new(child);
    let inside = server.boundary({
        let (server, child) = (server.clone(), std::sync::Arc::clone(&child));
        move || {
            server.use_handlers([http::get("*://child.example.test/greeting", |_| {
                HttpResponse::text("from the boundary")
            })]);
            child(&server.env())
        }
    });
    let inside = inside().into_inner();
    Outputs {
        inside,
        outside: child(&server.env()),
    }
}
