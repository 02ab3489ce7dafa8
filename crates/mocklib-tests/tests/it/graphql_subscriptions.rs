//! GraphQL subscriptions: over HTTP as an event stream (GraphQL over SSE),
//! and over a real WebSocket client speaking `graphql-transport-ws`, where
//! queries and mutations resolve against the other `graphql` handlers.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::{SinkExt, StreamExt};
use mocklib::graphql;
use mocklib::node::{Server, setup_server};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message as Wire;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

const HANG: Duration = Duration::from_secs(20);

type Socket<S = MaybeTlsStream<TcpStream>> = WebSocketStream<S>;

/// What a test socket runs on.
trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin {}
impl<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin> Io for S {}

/// Prices for a symbol (its variable), one per tick, then complete; a
/// query and a mutation beside it.
fn market() -> Server {
    let api = graphql::link("https://api.test/graphql");
    setup_server([
        api.subscription("OnPrice", |args| async move {
            let symbol = args.operation.variables["symbol"].clone();
            for price in [100, 101] {
                args.subscription
                    .next_data(json!({ "price": { "symbol": symbol, "value": price } }));
                mocklib::delay(Duration::from_millis(2)).await;
            }
            args.subscription.complete();
        }),
        api.subscription("OnFailure", |_| async {
            mocklib::delay(Duration::from_millis(1)).await;
            Err::<(), _>("the market is closed")
        }),
        api.query("GetSymbol", |args| {
            graphql::data(json!({ "symbol": { "name": args.variables["name"] } }))
        }),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_subscription_is_an_event_stream() {
    let server = market();
    server.listen();
    let response = common::client(&server)
        .post("https://api.test/graphql")
        .header("accept", "text/event-stream")
        .json(&json!({
            "query": "subscription OnPrice($symbol: String!) { price(symbol: $symbol) { value } }",
            "variables": { "symbol": "ACME" },
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let events: Vec<(String, String)> = response
        .bytes_stream()
        .eventsource()
        .map(|event| {
            let event = event.unwrap();
            (event.event, event.data)
        })
        .collect()
        .await;
    assert_eq!(
        events,
        [
            (
                "next".into(),
                r#"{"data":{"price":{"symbol":"ACME","value":100}}}"#.into()
            ),
            (
                "next".into(),
                r#"{"data":{"price":{"symbol":"ACME","value":101}}}"#.into()
            ),
            ("complete".into(), String::new()),
        ]
    );
}

/// A `graphql-transport-ws` client connected to `url` and acknowledged.
async fn open(url: String) -> Socket {
    let mut request =
        tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(url)
            .unwrap();
    request.headers_mut().insert(
        "sec-websocket-protocol",
        "graphql-transport-ws".parse().unwrap(),
    );
    let (mut socket, response) = tokio_tungstenite::connect_async(request).await.unwrap();
    assert_eq!(
        response.headers()["sec-websocket-protocol"],
        "graphql-transport-ws"
    );
    send(
        &mut socket,
        json!({ "type": "connection_init", "payload": {} }),
    )
    .await;
    assert_eq!(
        receive(&mut socket).await,
        json!({ "type": "connection_ack" })
    );
    socket
}

fn ws_url(server: &Server) -> String {
    server
        .url()
        .join("/graphql")
        .unwrap()
        .to_string()
        .replacen("http", "ws", 1)
}

async fn send<S: Io>(socket: &mut Socket<S>, message: Value) {
    socket.send(Wire::text(message.to_string())).await.unwrap();
}

/// The next protocol message (JSON), or the close frame as
/// `{"close": code, "reason": …}`.
async fn receive<S: Io>(socket: &mut Socket<S>) -> Value {
    loop {
        match tokio::time::timeout(HANG, socket.next())
            .await
            .expect("no hang")
        {
            Some(Ok(Wire::Text(text))) => return serde_json::from_str(text.as_str()).unwrap(),
            Some(Ok(Wire::Close(Some(frame)))) => {
                return json!({ "close": u16::from(frame.code), "reason": frame.reason.as_str() });
            }
            Some(Ok(Wire::Ping(_) | Wire::Pong(_))) => continue,
            other => panic!("unexpected {other:?}"),
        }
    }
}

fn subscribe(id: &str, query: &str, variables: Value) -> Value {
    json!({ "id": id, "type": "subscribe", "payload": { "query": query, "variables": variables } })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_a_websocket_subscriptions_stream_and_queries_answer() {
    // Handlers for any endpoint: the listener's own URL (base URL mode).
    let server = setup_server([
        graphql::subscription("OnPrice", |args| async move {
            for value in [100, 101] {
                args.subscription.next_data(json!({ "price": value }));
                mocklib::delay(Duration::from_millis(2)).await;
            }
        }),
        graphql::query("GetSymbol", |args| {
            graphql::data(json!({ "symbol": args.variables["name"] }))
        }),
    ]);
    server.listen();
    let mut socket = open(ws_url(&server)).await;
    send(
        &mut socket,
        json!({ "type": "ping", "payload": { "n": 1 } }),
    )
    .await;
    assert_eq!(
        receive(&mut socket).await,
        json!({ "type": "pong", "payload": { "n": 1 } })
    );
    send(
        &mut socket,
        subscribe("1", "subscription OnPrice { price }", json!({})),
    )
    .await;
    for value in [100, 101] {
        assert_eq!(
            receive(&mut socket).await,
            json!({ "id": "1", "type": "next", "payload": { "data": { "price": value } } })
        );
    }
    // Ending without complete() completes.
    assert_eq!(
        receive(&mut socket).await,
        json!({ "id": "1", "type": "complete" })
    );
    let query = "query GetSymbol($name: String) { symbol(name: $name) }";
    send(
        &mut socket,
        subscribe("2", query, json!({ "name": "ACME" })),
    )
    .await;
    assert_eq!(
        receive(&mut socket).await,
        json!({ "id": "2", "type": "next", "payload": { "data": { "symbol": "ACME" } } })
    );
    assert_eq!(
        receive(&mut socket).await,
        json!({ "id": "2", "type": "complete" })
    );
    send(
        &mut socket,
        subscribe("3", "query Unknown { x }", json!({})),
    )
    .await;
    let error = receive(&mut socket).await;
    assert_eq!(error["type"], "error");
    assert!(
        error["payload"][0]["message"]
            .as_str()
            .unwrap()
            .contains("no handler"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_protocol_rules_close_with_their_codes() {
    let server = setup_server([graphql::subscription("OnTick", |_| ())]);
    server.listen_with(common::on_unhandled(mocklib::UnhandledRequest::Bypass));
    // subscribe before connection_init
    let mut request =
        tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(ws_url(
            &server,
        ))
        .unwrap();
    request.headers_mut().insert(
        "sec-websocket-protocol",
        "graphql-transport-ws".parse().unwrap(),
    );
    let (mut early, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    send(
        &mut early,
        subscribe("1", "subscription OnTick { t }", json!({})),
    )
    .await;
    assert_eq!(
        receive(&mut early).await,
        json!({ "close": 4401, "reason": "Unauthorized" })
    );
    // a second connection_init
    let mut twice = open(ws_url(&server)).await;
    send(&mut twice, json!({ "type": "connection_init" })).await;
    assert_eq!(
        receive(&mut twice).await,
        json!({ "close": 4429, "reason": "Too many initialisation requests" })
    );
    // not a protocol message
    let mut garbage = open(ws_url(&server)).await;
    garbage.send(Wire::text("hello")).await.unwrap();
    assert_eq!(
        receive(&mut garbage).await,
        json!({ "close": 4400, "reason": "Invalid message received" })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_id_closes_and_a_client_complete_stops_the_resolver() {
    let stopped = Arc::new(Mutex::new(None::<tokio::sync::oneshot::Sender<()>>));
    let (sender, on_stop) = tokio::sync::oneshot::channel();
    *stopped.lock().unwrap() = Some(sender);
    let server = setup_server([graphql::subscription("OnTick", {
        let stopped = Arc::clone(&stopped);
        move |args| {
            let stopped = Arc::clone(&stopped);
            args.subscription.next_data(json!({ "tick": 0 }));
            args.operation.finalize(move || {
                if let Some(sender) = stopped.lock().unwrap().take() {
                    let _ = sender.send(());
                }
            });
            async move {
                for tick in 1.. {
                    mocklib::delay(Duration::from_millis(5)).await;
                    args.subscription.next_data(json!({ "tick": tick }));
                }
            }
        }
    })]);
    server.listen();
    let mut socket = open(ws_url(&server)).await;
    send(
        &mut socket,
        subscribe("a", "subscription OnTick { tick }", json!({})),
    )
    .await;
    assert_eq!(receive(&mut socket).await["payload"]["data"]["tick"], 0);
    send(&mut socket, json!({ "id": "a", "type": "complete" })).await;
    tokio::time::timeout(HANG, on_stop)
        .await
        .expect("the subscription's cleanup ran")
        .unwrap();
    // Ids must be unique among running operations.
    let mut socket = open(ws_url(&server)).await;
    send(
        &mut socket,
        subscribe("b", "subscription OnTick { tick }", json!({})),
    )
    .await;
    send(
        &mut socket,
        subscribe("b", "subscription OnTick { tick }", json!({})),
    )
    .await;
    loop {
        let message = receive(&mut socket).await;
        if message.get("close").is_some() {
            assert_eq!(
                message,
                json!({ "close": 4409, "reason": "Subscriber for b already exists" })
            );
            break;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_subscription_sends_an_error_and_a_wss_link_matches_through_tls() {
    let server = market();
    server.listen();
    // The link's https://api.test/graphql is reached as wss:// through CONNECT.
    let tcp = common::tunnel(&server, "api.test:443").await;
    let tls = common::tls_client(&server, "api.test", tcp).await;
    let mut request =
        tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(
            "wss://api.test/graphql",
        )
        .unwrap();
    request.headers_mut().insert(
        "sec-websocket-protocol",
        "graphql-transport-ws".parse().unwrap(),
    );
    let (mut socket, _) = tokio_tungstenite::client_async(request, tls).await.unwrap();
    send(&mut socket, json!({ "type": "connection_init" })).await;
    assert_eq!(
        receive(&mut socket).await,
        json!({ "type": "connection_ack" })
    );
    send(
        &mut socket,
        subscribe("x", "subscription OnFailure { n }", json!({})),
    )
    .await;
    assert_eq!(
        receive(&mut socket).await,
        json!({ "id": "x", "type": "error", "payload": [{ "message": "the market is closed" }] })
    );
}

/// A real `graphql-transport-ws` server on loopback: acknowledges, then
/// answers each subscription with one result naming it (and the client's
/// init token), then completes it.
// The handshake callback's error type is tungstenite's (a whole response).
#[allow(clippy::result_large_err)]
async fn real_graphql_server() -> std::net::SocketAddr {
    use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let choose = |_: &Request, mut response: Response| {
                    let protocol = "graphql-transport-ws".parse().unwrap();
                    response
                        .headers_mut()
                        .insert("sec-websocket-protocol", protocol);
                    Ok(response)
                };
                let mut socket = tokio_tungstenite::accept_hdr_async(tcp, choose)
                    .await
                    .unwrap();
                let mut token = Value::Null;
                while let Some(Ok(Wire::Text(text))) = socket.next().await {
                    let message: Value = serde_json::from_str(text.as_str()).unwrap();
                    match message["type"].as_str().unwrap() {
                        "connection_init" => {
                            token = message["payload"]["token"].clone();
                            send(&mut socket, json!({ "type": "connection_ack" })).await;
                        }
                        "subscribe" => {
                            let id = &message["id"];
                            let name = &message["payload"]["operationName"];
                            let data = json!({ "real": name, "token": token });
                            send(
                                &mut socket,
                                json!({ "id": id, "type": "next", "payload": { "data": data } }),
                            )
                            .await;
                            send(&mut socket, json!({ "id": id, "type": "complete" })).await;
                        }
                        _ => {}
                    }
                }
            });
        }
    });
    address
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_no_handler_answers_goes_to_the_real_server() {
    let real = real_graphql_server().await;
    let api = graphql::link(format!("ws://{real}/graphql"));
    let server = setup_server([api.subscription("OnMocked", |args| {
        args.subscription.next_data(json!({ "mocked": true }));
    })]);
    server.listen();
    let tcp = common::tunnel(&server, &real.to_string()).await;
    let mut request =
        tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(format!(
            "ws://{real}/graphql"
        ))
        .unwrap();
    request.headers_mut().insert(
        "sec-websocket-protocol",
        "graphql-transport-ws".parse().unwrap(),
    );
    let (mut socket, _) = tokio_tungstenite::client_async(request, tcp).await.unwrap();
    send(
        &mut socket,
        json!({ "type": "connection_init", "payload": { "token": "secret" } }),
    )
    .await;
    assert_eq!(
        receive(&mut socket).await,
        json!({ "type": "connection_ack" })
    );
    let subscribe = |id: &str, name: &str| {
        json!({ "id": id, "type": "subscribe", "payload": {
            "query": format!("subscription {name} {{ x }}"), "operationName": name } })
    };
    send(&mut socket, subscribe("m", "OnMocked")).await;
    assert_eq!(
        receive(&mut socket).await,
        json!({ "id": "m", "type": "next", "payload": { "data": { "mocked": true } } })
    );
    assert_eq!(
        receive(&mut socket).await,
        json!({ "id": "m", "type": "complete" })
    );
    send(&mut socket, subscribe("r", "OnReal")).await;
    assert_eq!(
        receive(&mut socket).await,
        json!({ "id": "r", "type": "next", "payload": { "data": { "real": "OnReal", "token": "secret" } } })
    );
    assert_eq!(
        receive(&mut socket).await,
        json!({ "id": "r", "type": "complete" })
    );
}

/// A subscription as graphql-ws-client sends it: the document, its
/// variables, and how to decode one result's `data`.
#[derive(serde::Serialize)]
struct OnPrice {
    query: &'static str,
    variables: Value,
}

impl graphql_ws_client::graphql::GraphqlOperation for OnPrice {
    type Response = Value;
    type Error = serde_json::Error;

    fn decode(&self, data: Value) -> Result<Value, serde_json::Error> {
        Ok(data)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graphql_ws_client_subscribes_end_to_end() {
    let server = setup_server([graphql::subscription("OnPrice", |args| async move {
        let symbol = args.operation.variables["symbol"].clone();
        for value in [100, 101, 102] {
            args.subscription
                .next_data(json!({ "price": { "symbol": symbol, "value": value } }));
            mocklib::delay(Duration::from_millis(2)).await;
        }
    })]);
    server.listen();
    let mut request =
        async_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(ws_url(
            &server,
        ))
        .unwrap();
    request.headers_mut().insert(
        "sec-websocket-protocol",
        "graphql-transport-ws".parse().unwrap(),
    );
    let (connection, _) = async_tungstenite::tokio::connect_async(request)
        .await
        .unwrap();
    let (client, actor) = graphql_ws_client::Client::build(connection).await.unwrap();
    tokio::spawn(actor.into_future());
    let operation = OnPrice {
        query: "subscription OnPrice($symbol: String!) { price(symbol: $symbol) { value } }",
        variables: json!({ "symbol": "ACME" }),
    };
    let prices: Vec<Value> = client
        .subscribe(operation)
        .await
        .unwrap()
        .map(|result| result.unwrap()["data"]["price"]["value"].clone())
        .collect()
        .await;
    assert_eq!(prices, [json!(100), json!(101), json!(102)]);
}
