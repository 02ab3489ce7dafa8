//! `sse:` entries of handler files: event streams read by `curl -N`, by
//! Node's `EventSource` (behind `--experimental-eventsource` in Node 20)
//! and by Node's `fetch` (a POST stream, which EventSource cannot make),
//! and through the admin API.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::*;

const SSE_YAML: &str = r#"
- sse: /notifications/:user
  template: true
  events:
    - { event: greeting, data: "hello {{ request.params.user }}", id: "{{ round }}", retry: 3000 }
    - { pause_ms: 300 }
    - { data: { unread: 3 } }
  repeat: 2
- sse: /chat
  method: POST
  events: [ { data: Hel }, { data: lo }, { data: "[DONE]" } ]
"#;

/// What the stream of `/notifications/kate` carries, as written on the
/// wire.
const KATE: &str = "event: greeting\nid: 0\nretry: 3000\ndata: hello kate\n\n\
                    data: {\"unread\":3}\n\n\
                    event: greeting\nid: 1\nretry: 3000\ndata: hello kate\n\n\
                    data: {\"unread\":3}\n\n";

/// Reads `process.argv[1]` with `fetch`, parsing the events as an
/// EventSource does; prints the content type, then `type id data` per
/// event.
const NODE_READER: &str = r#"
const response = await fetch(process.argv[1], { method: process.argv[2] ?? 'GET' });
const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
let buffer = '';
const seen = [];
for (;;) {
  const { value, done } = await reader.read();
  if (done) break;
  buffer += value;
  let end;
  while ((end = buffer.indexOf('\n\n')) >= 0) {
    const block = buffer.slice(0, end);
    buffer = buffer.slice(end + 2);
    const fields = {};
    for (const line of block.split('\n')) {
      const colon = line.indexOf(':');
      fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
    }
    seen.push(`${fields.event ?? 'message'} ${fields.id ?? '-'} ${fields.data}`);
  }
}
console.log([response.headers.get('content-type'), ...seen].join('\n'));
"#;

/// Python's `urllib` on `sys.argv[1]` through the scope's proxy: the
/// events of the stream as they come, `type lastEventId data` each.
const PYTHON_EVENTS: &str = r#"
import sys, urllib.request
event, data, last_id = "message", [], ""
with urllib.request.urlopen(sys.argv[1]) as stream:
    assert stream.headers["content-type"].startswith("text/event-stream")
    for raw in stream:
        line = raw.decode().rstrip("\n")
        if not line:
            if data:
                print(event, last_id or "-", "\n".join(data))
            event, data = "message", []
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
        elif field == "id":
            last_id = value
"#;

/// Node's `EventSource` on `process.argv[1]`: `type lastEventId data` of
/// the first four events, then it closes (an EventSource reconnects when a
/// stream ends).
const NODE_EVENT_SOURCE: &str = r#"
const source = new EventSource(process.argv[1]);
const seen = [];
const timer = setTimeout(() => { console.log('timed out:', seen); process.exit(1); }, 15000);
const record = (event) => {
  seen.push(`${event.type} ${event.lastEventId} ${event.data}`);
  if (seen.length === 4) {
    source.close();
    clearTimeout(timer);
    console.log(seen.join('\n'));
  }
};
source.addEventListener('greeting', record);
source.onmessage = record;
"#;

fn node_reads(url: &str, method: &str) -> String {
    let output = Command::new("node")
        .args(["--input-type=module", "-e", NODE_READER, url, method])
        .output()
        .expect("node runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn an_sse_entry_streams_its_events_with_pauses_and_repeats_to_curl_and_node() {
    let dir = with_handler_file(SSE_YAML);
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let kate = format!("{}/notifications/kate", serve.url());

    let started = Instant::now();
    let (status, body) = call(None, &["-N", &kate]);
    assert_eq!((status, body.as_str()), (200, KATE));
    // Two pauses of 300 ms.
    assert!(
        started.elapsed() >= Duration::from_millis(550),
        "{:?}",
        started.elapsed()
    );
    let head = curl(&["-sS", "-N", "-D", "-", "-o", "/dev/null", &kate]);
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{head}"
    );

    let output = Command::new("node")
        .args(["--experimental-eventsource", "-e", NODE_EVENT_SOURCE, &kate])
        .output()
        .expect("node runs");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "greeting 0 hello kate\n\
         message 0 {\"unread\":3}\n\
         greeting 1 hello kate\n\
         message 1 {\"unread\":3}\n",
        "{output:?}"
    );
    assert_eq!(
        node_reads(&kate, "GET"),
        "text/event-stream\n\
         greeting 0 hello kate\n\
         message - {\"unread\":3}\n\
         greeting 1 hello kate\n\
         message - {\"unread\":3}\n"
    );
    // Python, reading the stream line by line as it comes (urllib; the
    // events parsed as an EventSource does), through the proxy.
    let python_events = python(
        &serve,
        PYTHON_EVENTS,
        &["http://api.example.com/notifications/kate"],
    );
    assert_eq!(
        python_events,
        "greeting 0 hello kate\nmessage 0 {\"unread\":3}\ngreeting 1 hello kate\nmessage 1 {\"unread\":3}\n"
    );
    // POST, as LLM APIs stream; GET is not this entry's method.
    let chat = format!("{}/chat", serve.url());
    assert_eq!(
        node_reads(&chat, "POST"),
        "text/event-stream\nmessage - Hel\nmessage - lo\nmessage - [DONE]\n"
    );
    assert_ne!(get(&chat).0, 200);
}

#[test]
fn an_sse_entry_added_through_the_admin_api_streams_and_a_bad_one_gets_its_pointer() {
    let dir = with_handler_file("[]");
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let admin = format!("{}/__mocklib/handlers", serve.url());
    let (status, body) = post_yaml(
        &admin,
        "- sse: /ticks\n  events: [ { data: tick }, { pause_ms: 20 } ]\n  repeat: true\n",
    );
    assert_eq!((status, body.as_str()), (201, r#"{"added":1}"#));
    // `repeat: true`: ticks until the client goes away (curl's time limit).
    let output = Command::new("curl")
        .args(["-sN", "--max-time", "1", &format!("{}/ticks", serve.url())])
        .output()
        .unwrap();
    let ticks = String::from_utf8_lossy(&output.stdout)
        .matches("data: tick\n\n")
        .count();
    assert!(ticks >= 5, "{ticks} ticks: {output:?}");

    admin_refuses(
        &admin,
        &[
            (
                "- sse: /e\n  template: true\n  events: [ { data: \"{{ x\" } ]\n",
                "/0/events/0/data",
                "entry 1 (sse /e): events[0].data: not a template",
            ),
            (
                "- sse: /e\n  events: [ { data: a }, { pause_ms: 5, id: \"1\" } ]\n",
                "/0/events/1",
                "events[1]: a pause is an item of its own",
            ),
            (
                "- sse: /e\n  events: [ { data: a } ]\n  repeat: true\n",
                "/0/repeat",
                "repeat: true sends the events until the client goes away",
            ),
            (
                "- sse: /e\n  events: [ { data: a } ]\n  json: {}\n",
                "/0/json",
                "`json` does not go on an sse entry; it takes sse, method, events",
            ),
        ],
    );
}

#[test]
fn a_template_that_fails_mid_stream_sends_an_error_event_and_ends_the_stream() {
    let dir = with_handler_file(
        "- sse: /e\n  template: true\n  events: [ { data: first }, { data: \"{{ nosuch(request.query.n) }}\" } ]\n",
    );
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let (status, body) = call(None, &["-N", &format!("{}/e?n=0", serve.url())]);
    assert_eq!(status, 200);
    assert!(
        body.starts_with("data: first\n\nevent: mocklib-error\ndata: mocklib serve: the template of events[1].data failed"),
        "{body}"
    );
}
