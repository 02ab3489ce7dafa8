//! Reading a real `text/event-stream` body back into [`Event`]s, as the
//! HTML standard's event-stream interpretation does, chunk by chunk.

use super::event::Event;

/// An incremental event-stream parser: feed it bytes as they arrive, take
/// the events each chunk completes.
#[derive(Debug, Default)]
pub(super) struct Parser {
    /// Bytes of a line not yet ended.
    pending: Vec<u8>,
    /// The last chunk ended with `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
    started: bool,
    data: Option<String>,
    event: Option<String>,
    id: Option<String>,
    retry: Option<std::time::Duration>,
}

impl Parser {
    /// The events that `chunk` completes.
    pub(super) fn feed(&mut self, chunk: &[u8]) -> Vec<Event> {
        let mut events = Vec::new();
        let mut chunk = chunk;
        if !self.started && !chunk.is_empty() {
            self.started = true;
            chunk = chunk.strip_prefix("\u{feff}".as_bytes()).unwrap_or(chunk);
        }
        for &byte in chunk {
            let was_after_cr = std::mem::replace(&mut self.after_cr, false);
            match byte {
                b'\n' if was_after_cr => {}
                b'\n' | b'\r' => {
                    self.after_cr = byte == b'\r';
                    let line = std::mem::take(&mut self.pending);
                    events.extend(self.line(&String::from_utf8_lossy(&line)));
                }
                _ => self.pending.push(byte),
            }
        }
        events
    }

    /// One complete line; a blank line dispatches the event being built.
    fn line(&mut self, line: &str) -> Option<Event> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None; // a comment
        }
        let (name, value) = match line.split_once(':') {
            Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match name {
            "data" => match &mut self.data {
                None => self.data = Some(value.to_owned()),
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
            },
            "event" => self.event = Some(value.to_owned()),
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse() {
                    self.retry = Some(std::time::Duration::from_millis(ms));
                }
            }
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<Event> {
        let data = self.data.take();
        let event = self.event.take();
        let retry = self.retry.take();
        // The standard keeps the last id across events; forwarding wants the
        // id as this event carried it.
        let id = self.id.take();
        if data.is_none() && retry.is_none() && id.is_none() {
            return None;
        }
        let mut parsed = Event::new();
        if let Some(data) = data {
            parsed.set_data_lines(data);
        }
        parsed.set_parsed(event, id);
        Some(match retry {
            Some(retry) => parsed.retry(retry),
            None => parsed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_pieces(stream: &str, piece: usize) -> Vec<Event> {
        let mut parser = Parser::default();
        let bytes = stream.as_bytes();
        bytes
            .chunks(piece)
            .flat_map(|chunk| parser.feed(chunk))
            .collect()
    }

    #[test]
    fn events_parse_the_same_whatever_the_chunking() {
        let stream = "\u{feff}: comment\r\nevent: greeting\r\nid: 7\r\ndata: hello\r\ndata:world\r\n\r\n\
                      data\n\nretry: 1500\ndata:  two spaces\rretry: x\n\n";
        let expected = vec![
            Event::data("hello\nworld").event("greeting").id("7"),
            Event::data(""),
            Event::data(" two spaces").retry(std::time::Duration::from_millis(1500)),
        ];
        for piece in [1, 2, 3, 5, stream.len()] {
            assert_eq!(
                parse_in_pieces(stream, piece),
                expected,
                "pieces of {piece}"
            );
        }
    }

    #[test]
    fn what_the_encoder_writes_parses_back() {
        let events = [
            Event::data("multi\nline\r\ndata").event("update").id("42"),
            Event::json(&serde_json::json!({ "a": [1, 2] })),
            Event::new().retry(std::time::Duration::from_secs(3)),
        ];
        let mut parser = Parser::default();
        let mut parsed = Vec::new();
        for event in &events {
            parsed.extend(parser.feed(&event.to_bytes()));
        }
        let mut expected = events.to_vec();
        expected[0] = Event::data("multi\nline\ndata").event("update").id("42");
        assert_eq!(parsed, expected);
    }
}
