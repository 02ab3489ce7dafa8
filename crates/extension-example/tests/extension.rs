//! The handler kind and the front door of this crate, both written on
//! mocklib's public surface alone, against real sockets where a request is
//! performed for real.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use mocklib::exchange::{Exchange, ExchangeSink};
use mocklib::node::{Server, setup_server};
use mocklib::{HttpResponse, ListenOptions, UnhandledRequest, http, journal::AnswerSummary};
use mocklib_extension_example::{jsonrpc, ureq_door::MockMiddleware};
use serde_json::{Value, json};

fn agent(server: &Server) -> ureq::Agent {
    ureq::Agent::config_builder()
        .middleware(MockMiddleware::new(server))
        .http_status_as_error(false)
        .build()
        .into()
}

fn call(agent: &ureq::Agent, method: &str) -> Result<Value, ureq::Error> {
    let body = json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": ["0xabc"] });
    agent
        .post("https://rpc.example.com/")
        .send_json_value(&body)
}

trait SendJson {
    fn send_json_value(self, body: &Value) -> Result<Value, ureq::Error>;
}

impl SendJson for ureq::RequestBuilder<ureq::typestate::WithBody> {
    fn send_json_value(self, body: &Value) -> Result<Value, ureq::Error> {
        let text = self
            .header("content-type", "application/json")
            .send(body.to_string().as_bytes())?
            .body_mut()
            .read_to_string()?;
        Ok(serde_json::from_str(&text).expect("a JSON answer"))
    }
}

#[test]
fn a_handler_kind_from_outside_answers_and_is_journaled_and_verified() {
    let rpc = jsonrpc::endpoint("https://rpc.example.com/");
    let server = setup_server([
        http::get("https://rpc.example.com/health", |_| {
            HttpResponse::text("ok")
        }),
        rpc.method("eth_blockNumber", |_| json!("0x10")).times(1),
        rpc.method(
            "eth_getBalance",
            |args| json!({ "of": args.params[0], "calls": args.previous_calls() }),
        ),
    ]);
    server.listen_with(ListenOptions::new().on_unhandled_request(UnhandledRequest::Error));
    let agent = agent(&server);

    let answer = call(&agent, "eth_blockNumber").unwrap();
    assert_eq!(
        answer,
        json!({ "jsonrpc": "2.0", "id": 7, "result": "0x10" })
    );
    let answer = call(&agent, "eth_getBalance").unwrap();
    assert_eq!(answer["result"], json!({ "of": "0xabc", "calls": 0 }));
    let answer = call(&agent, "eth_getBalance").unwrap();
    assert_eq!(
        answer["result"]["calls"], 1,
        "the call context counts per scope"
    );
    server.verify().unwrap();

    let journal = server.requests();
    assert_eq!(journal.len(), 3);
    assert_eq!(
        journal[0]
            .handler()
            .map(|h| h.header().to_owned())
            .as_deref(),
        Some("jsonrpc eth_blockNumber at https://rpc.example.com/")
    );
    assert_eq!(
        *journal[0].answer(),
        AnswerSummary::Mocked(::http::StatusCode::OK)
    );

    // A method no handler answers: the `error` strategy fails it at ureq.
    let error = call(&agent, "eth_chainId").unwrap_err();
    assert!(
        error.to_string().contains("eth_chainId")
            || error.to_string().contains("https://rpc.example.com/"),
        "{error}"
    );
    // An ordinary http handler sits in the same list.
    let health = agent
        .get("https://rpc.example.com/health")
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    assert_eq!(health, "ok");

    // A second eth_blockNumber breaks the expectation `times(1)`.
    call(&agent, "eth_blockNumber").unwrap();
    let report = server.verify().unwrap_err().to_string();
    assert!(report.contains("jsonrpc eth_blockNumber"), "{report}");
}

#[test]
fn the_index_asks_only_the_handler_of_the_requested_method() {
    let rpc = jsonrpc::endpoint("https://rpc.example.com/");
    let mut handlers: Vec<_> = (0..1_000)
        .map(|n| rpc.method(&format!("method_{n}"), move |_| json!(n)))
        .collect();
    handlers.push(http::post("https://other.example.com/", |_| {
        HttpResponse::text("other")
    }));
    let server = setup_server(handlers);
    server.listen();
    let agent = agent(&server);

    let answer = call(&agent, "method_617").unwrap();
    assert_eq!(answer["result"], 617);
    assert_eq!(
        rpc.asked(),
        1,
        "only the handler keyed by the method was asked"
    );

    // A request to another URL asks none of them (the endpoint is checked
    // once, by the key source, for all of its handlers).
    agent
        .post("https://other.example.com/")
        .send("x".as_bytes())
        .unwrap();
    assert_eq!(rpc.asked(), 1);
}

#[test]
fn boundaries_scope_the_front_door_per_thread() {
    let rpc = jsonrpc::endpoint("https://rpc.example.com/");
    let server = setup_server([rpc.method("whoami", |_| json!("everyone"))]);
    server.listen();
    let threads: Vec<_> = (0..8)
        .map(|n| {
            let (server, rpc) = (server.clone(), rpc.clone());
            std::thread::spawn(move || {
                let inner = server.clone();
                let run = server.boundary(move |n: u32| {
                    let server = &inner;
                    server.use_handlers([rpc.method("whoami", move |_| json!(n))]);
                    let agent = agent(server);
                    (0..20)
                        .map(|_| call(&agent, "whoami").unwrap()["result"].clone())
                        .collect::<Vec<_>>()
                });
                (n, run(n).into_inner())
            })
        })
        .collect();
    for thread in threads {
        let (n, answers) = thread.join().unwrap();
        assert!(
            answers.iter().all(|answer| *answer == json!(n)),
            "thread {n}: {answers:?}"
        );
    }
    assert_eq!(
        call(&agent(&server), "whoami").unwrap()["result"],
        "everyone"
    );
}

/// An HTTP server on loopback answering every request with `real`.
fn real_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap() == 1 {
                head.push(byte[0]);
            }
            stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\nconnection: close\r\n\r\nreal")
                .unwrap();
        }
    });
    port
}

#[derive(Debug, Default)]
struct Recorded(Mutex<Vec<Exchange>>);

impl ExchangeSink for Recorded {
    fn record(&self, exchange: Exchange) {
        self.0.lock().unwrap().push(exchange);
    }
}

#[test]
fn requests_no_handler_answers_are_performed_for_real_and_recorded() {
    let port = real_server();
    let server = setup_server([]);
    server.listen_with(ListenOptions::new().on_unhandled_request(UnhandledRequest::Bypass));
    let recorded = Arc::new(Recorded::default());
    server.record_exchanges(recorded.clone());
    let agent = agent(&server);

    let url = format!("http://127.0.0.1:{port}/data");
    let body = agent
        .get(&url)
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    assert_eq!(body, "real");

    let exchanges = recorded.0.lock().unwrap();
    assert_eq!(exchanges.len(), 1);
    assert_eq!(exchanges[0].request().url().as_str(), url);
    assert_eq!(exchanges[0].status(), 200);
    assert_eq!(&exchanges[0].body()[..], b"real");
    assert_eq!(*server.requests()[0].answer(), AnswerSummary::Unhandled);
}
