//! [`Event`]: one server-sent event, and its `text/event-stream` framing.

use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};

/// One server-sent event (MSW: the object given to `client.send`): `data`,
/// and optionally an `event` type, an `id` and a `retry` delay.
///
/// ```
/// use std::time::Duration;
/// use mocklib::sse::Event;
///
/// let greeting = Event::data("hello\nworld").event("greeting").id("1");
/// assert_eq!(greeting.to_bytes(), "event: greeting\nid: 1\ndata: hello\ndata: world\n\n");
/// let typed = Event::json(&serde_json::json!({ "token": "Hel" }));
/// assert_eq!(typed.to_bytes(), "data: {\"token\":\"Hel\"}\n\n");
/// let reconnect_later = Event::new().retry(Duration::from_secs(5));
/// assert_eq!(reconnect_later.to_bytes(), "retry: 5000\n\n");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use = "an event does nothing until it is sent with `client.send`"]
pub struct Event {
    event: Option<String>,
    data: Option<String>,
    id: Option<String>,
    retry: Option<Duration>,
    /// A mistake made while building (a line break in a field that cannot
    /// hold one, JSON that does not serialize): sending it ends the stream
    /// with this error rather than corrupting the framing.
    invalid: Option<String>,
}

impl Event {
    /// An event without data (say, only [`retry`](Self::retry)); clients
    /// dispatch no `message` for it.
    pub fn new() -> Self {
        Event::default()
    }

    /// An event with `data` (several lines are sent as several `data:` lines
    /// and arrive joined with `\n`).
    pub fn data(data: impl Into<String>) -> Self {
        Event {
            data: Some(data.into()),
            ..Event::default()
        }
    }

    /// An event whose data is `value` serialized as JSON. A value that does
    /// not serialize makes [`Client::send`](super::Client::send) end the
    /// stream with an error naming the serde error.
    pub fn json<T: serde::Serialize + ?Sized>(value: &T) -> Self {
        match serde_json::to_string(value) {
            Ok(json) => Event::data(json),
            Err(error) => Event {
                invalid: Some(format!("Event::json could not serialize the data: {error}")),
                ..Event::default()
            },
        }
    }

    /// Sets the event type (MSW: `event`); clients dispatch it to listeners
    /// of that type instead of `message`. It cannot hold a line break.
    pub fn event(self, event: impl Into<String>) -> Self {
        let event = event.into();
        self.single_line("event type", event, |e, value| e.event = Some(value))
    }

    /// Sets the event id, which the client sends back as `Last-Event-ID`
    /// when it reconnects. It cannot hold a line break or a NUL.
    pub fn id(self, id: impl Into<String>) -> Self {
        let id = id.into();
        if id.contains('\0') {
            return self.invalid(format!("an event id cannot hold a NUL: {id:?}"));
        }
        self.single_line("event id", id, |e, value| e.id = Some(value))
    }

    /// Sets how long the client waits before reconnecting (whole milliseconds).
    pub fn retry(mut self, retry: Duration) -> Self {
        self.retry = Some(retry);
        self
    }

    /// The event type, if set.
    pub fn event_type(&self) -> Option<&str> {
        self.event.as_deref()
    }

    /// The data, if any.
    pub fn data_text(&self) -> Option<&str> {
        self.data.as_deref()
    }

    /// The data parsed as JSON into `T`.
    pub fn data_json<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.data.as_deref().unwrap_or_default())
    }

    /// The id, if set.
    pub fn event_id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The retry delay, if set.
    pub fn retry_delay(&self) -> Option<Duration> {
        self.retry
    }

    /// The event framed for a `text/event-stream` body.
    pub fn to_bytes(&self) -> Bytes {
        let mut out = BytesMut::new();
        if let Some(event) = &self.event {
            field(&mut out, "event", event);
        }
        if let Some(id) = &self.id {
            field(&mut out, "id", id);
        }
        if let Some(retry) = self.retry {
            field(&mut out, "retry", &retry.as_millis().to_string());
        }
        if let Some(data) = &self.data {
            for line in lines(data) {
                field(&mut out, "data", line);
            }
        }
        out.put_u8(b'\n');
        out.freeze()
    }

    pub(super) fn problem(&self) -> Option<&str> {
        self.invalid.as_deref()
    }

    pub(super) fn set_data_lines(&mut self, data: String) {
        self.data = Some(data);
    }

    pub(super) fn set_parsed(&mut self, event: Option<String>, id: Option<String>) {
        self.event = event;
        self.id = id;
    }

    fn single_line(
        mut self,
        what: &str,
        value: String,
        set: impl FnOnce(&mut Self, String),
    ) -> Self {
        if value.contains(['\r', '\n']) {
            return self.invalid(format!("an {what} cannot hold a line break: {value:?}"));
        }
        set(&mut self, value);
        self
    }

    fn invalid(mut self, problem: String) -> Self {
        self.invalid.get_or_insert(problem);
        self
    }
}

/// `name: value\n`; the space after the colon keeps a value that starts with
/// a space intact (the parser strips exactly one).
fn field(out: &mut BytesMut, name: &str, value: &str) {
    out.put_slice(name.as_bytes());
    out.put_slice(b": ");
    out.put_slice(value.as_bytes());
    out.put_u8(b'\n');
}

/// The lines of `text` as the event-stream format sees them: split at
/// `\r\n`, `\r` or `\n`.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let text = rest?;
        match text.find(['\r', '\n']) {
            None => {
                rest = None;
                Some(text)
            }
            Some(end) => {
                let skip = if text[end..].starts_with("\r\n") {
                    2
                } else {
                    1
                };
                rest = Some(&text[end + skip..]);
                Some(&text[..end])
            }
        }
    })
}

/// A comment line (`: text`), ignored by clients: a keep-alive.
pub(super) fn comment(text: &str) -> Bytes {
    let mut out = BytesMut::new();
    for line in lines(text) {
        out.put_slice(b": ");
        out.put_slice(line.as_bytes());
        out.put_u8(b'\n');
    }
    out.put_u8(b'\n');
    out.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_break_starts_a_data_line() {
        let event = Event::data("a\r\nb\rc\nd\n");
        assert_eq!(
            event.to_bytes(),
            "data: a\ndata: b\ndata: c\ndata: d\ndata: \n\n"
        );
        assert_eq!(Event::data("").to_bytes(), "data: \n\n");
        assert_eq!(Event::data(" lead").to_bytes(), "data:  lead\n\n");
    }

    #[test]
    fn line_breaks_in_single_line_fields_are_reported_not_sent() {
        let event = Event::data("x").event("a\nb");
        assert!(event.problem().unwrap().contains("line break"), "{event:?}");
        assert!(Event::data("x").id("1\r").problem().is_some());
        assert!(
            Event::data("x")
                .id("nul\0")
                .problem()
                .unwrap()
                .contains("NUL")
        );
        assert!(Event::data("x").id("7").event("tick").problem().is_none());
    }

    #[test]
    fn comments_keep_the_stream_alive_without_an_event() {
        assert_eq!(comment("keep-alive"), ": keep-alive\n\n");
    }
}
