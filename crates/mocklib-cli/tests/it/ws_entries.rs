//! `ws:` entries of handler files, talked to by real WebSocket clients:
//! tokio-tungstenite, Node's `WebSocket` (behind `--experimental-websocket`
//! in Node 20), and Python speaking RFC 6455 over a plain socket (its
//! standard library has no WebSocket client); and through the admin API.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use crate::common::*;

const WS_YAML: &str = r#"
- ws: /chat/:room
  on_open: [ welcome, { type: hello } ]
  on_message:
    - match: { text: ping }
      send: [ pong ]
    - match: { json: { type: join } }
      send: [ { type: joined } ]
    - match: { regex: "^bye" }
      send: [ see you ]
      close: { code: 4000, reason: bye }
    - send: [ "?" ]
- ws: /closed
  close: { code: 1008, reason: not today }
"#;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

fn ws_url(serve: &Serve, path: &str) -> String {
    format!("{}{path}", serve.url().replacen("http://", "ws://", 1))
}

/// The next message the server sends, within 10 s.
async fn next(socket: &mut Socket) -> Message {
    tokio::time::timeout(Duration::from_secs(10), socket.next())
        .await
        .expect("a message within 10 s")
        .expect("the socket is open")
        .expect("a frame")
}

/// The texts of the next `count` messages.
async fn texts(socket: &mut Socket, count: usize) -> Vec<String> {
    let mut texts = Vec::new();
    for _ in 0..count {
        match next(socket).await {
            Message::Text(text) => texts.push(text.to_string()),
            other => panic!("not text: {other:?}"),
        }
    }
    texts
}

/// The close frame the server sends next: code and reason.
async fn closed(socket: &mut Socket) -> (u16, String) {
    match next(socket).await {
        Message::Close(Some(frame)) => (u16::from(frame.code), frame.reason.to_string()),
        other => panic!("not a close frame: {other:?}"),
    }
}

#[test]
fn a_ws_entry_greets_answers_matching_messages_and_closes_for_tungstenite() {
    let dir = with_handler_file(WS_YAML);
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let (mut socket, _) = tokio_tungstenite::connect_async(ws_url(&serve, "/chat/rust"))
            .await
            .unwrap();
        assert_eq!(
            texts(&mut socket, 2).await,
            ["welcome", r#"{"type":"hello"}"#]
        );
        for (sent, answer) in [
            ("ping", "pong"),
            (
                r#"{"type": "join", "room": "rust"}"#,
                r#"{"type":"joined"}"#,
            ),
            ("pong", "?"),
        ] {
            socket.send(Message::text(sent)).await.unwrap();
            assert_eq!(texts(&mut socket, 1).await, [answer], "{sent}");
        }
        socket.send(Message::text("bye now")).await.unwrap();
        assert_eq!(texts(&mut socket, 1).await, ["see you"]);
        assert_eq!(closed(&mut socket).await, (4000, "bye".to_owned()));

        let (mut socket, _) = tokio_tungstenite::connect_async(ws_url(&serve, "/closed"))
            .await
            .unwrap();
        let (code, reason) = closed(&mut socket).await;
        assert_eq!(
            (CloseCode::from(code), reason.as_str()),
            (CloseCode::Policy, "not today")
        );
    });
}

/// Node's WebSocket on `process.argv[1]`: after the greeting it sends
/// `ping`, then `bye`; prints each message and the close.
const NODE_CLIENT: &str = r#"
const socket = new WebSocket(process.argv[1]);
const seen = [];
const timer = setTimeout(() => { console.log('timed out:', seen); process.exit(1); }, 15000);
socket.onmessage = (event) => {
  seen.push(event.data);
  if (seen.length === 2) socket.send('ping');
  if (seen.length === 3) socket.send('bye');
};
socket.onclose = (event) => {
  clearTimeout(timer);
  console.log([...seen, `closed ${event.code} ${event.reason}`].join('\n'));
};
"#;

#[test]
fn a_ws_entry_talks_to_node_s_websocket() {
    let dir = with_handler_file(WS_YAML);
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let output = std::process::Command::new("node")
        .args([
            "--experimental-websocket",
            "-e",
            NODE_CLIENT,
            &ws_url(&serve, "/chat/node"),
        ])
        .output()
        .expect("node runs");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "welcome\n{\"type\":\"hello\"}\npong\nsee you\nclosed 4000 bye\n",
        "{output:?}"
    );
}

/// A WebSocket client in Python's standard library: the handshake, then
/// masked text frames out and unmasked frames in; prints what it got.
const PYTHON_CLIENT: &str = r#"
import base64, os, socket, struct, sys, urllib.parse
url = urllib.parse.urlparse(os.environ['MOCKLIB_URL'])
sock = socket.create_connection((url.hostname, url.port), timeout=20)
key = base64.b64encode(os.urandom(16)).decode()
sock.sendall((f'GET /chat/py HTTP/1.1\r\nHost: {url.netloc}\r\nUpgrade: websocket\r\n'
              f'Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n').encode())
head = b''
while b'\r\n\r\n' not in head:
    head += sock.recv(1)
print(head.split(b'\r\n')[0].decode())
def exactly(n):
    data = b''
    while len(data) < n:
        data += sock.recv(n - len(data))
    return data
def receive():
    first, second = exactly(2)
    length = second & 0x7f
    if length == 126:
        length = struct.unpack('!H', exactly(2))[0]
    return first & 0x0f, exactly(length)
def send(text):
    payload, mask = text.encode(), os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    sock.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + masked)
for _ in range(2):
    print(receive()[1].decode())
send('ping')
print(receive()[1].decode())
send('bye')
print(receive()[1].decode())
opcode, payload = receive()
print(opcode, struct.unpack('!H', payload[:2])[0], payload[2:].decode())
"#;

#[test]
fn a_ws_entry_talks_to_a_python_client_written_on_a_plain_socket() {
    let dir = with_handler_file(WS_YAML);
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    assert_eq!(
        python(&serve, PYTHON_CLIENT, &[]),
        "HTTP/1.1 101 Switching Protocols\nwelcome\n{\"type\":\"hello\"}\npong\nsee you\n8 4000 bye\n",
        "{}",
        serve.stderr()
    );
}

#[test]
fn a_ws_entry_added_through_the_admin_api_answers_and_a_bad_one_gets_its_pointer() {
    let dir = with_handler_file("[]");
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let admin = format!("{}/__mocklib/handlers", serve.url());
    let (status, body) = post_yaml(
        &admin,
        "- ws: /echo\n  on_message: [ { send: [ echoed ] } ]\n",
    );
    assert_eq!((status, body.as_str()), (201, r#"{"added":1}"#));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let (mut socket, _) = tokio_tungstenite::connect_async(ws_url(&serve, "/echo"))
            .await
            .unwrap();
        socket.send(Message::text("anything")).await.unwrap();
        assert_eq!(texts(&mut socket, 1).await, ["echoed"]);
    });

    admin_refuses(
        &admin,
        &[
            (
                "- ws: /e\n  on_message: [ { match: { regex: \"(\" }, send: [ x ] } ]\n",
                "/0/on_message/0/match/regex",
                "entry 1 (ws /e): on_message[0].match.regex: not a regular expression",
            ),
            (
                "- ws: /e\n  on_message: [ { match: { text: a, json: {} }, send: [ x ] } ]\n",
                "/0/on_message/0/match",
                "on_message[0].match: give one of text, json and regex",
            ),
            (
                "- ws: /e\n  close: { code: 1005 }\n",
                "/0/close/code",
                "close.code: 1005 is not a close code a server sends",
            ),
            (
                "- ws: /e\n  on_message: [ { match: { text: a } } ]\n",
                "/0/on_message/0",
                "on_message[0]: give send, close or both",
            ),
            (
                "- ws: /e\n  on_open: [ hi ]\n  body: x\n",
                "/0/body",
                "`body` does not go on a ws entry; it takes ws, on_open, on_message",
            ),
        ],
    );
}
