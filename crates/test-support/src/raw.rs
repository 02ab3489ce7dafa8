//! Raw TCP exchanges with a listener, for the tests that send it bytes no
//! client would (mocklib-tests' listener_robustness and hostile_input).

use std::time::Duration;

use tokio::io::AsyncReadExt;

/// How an exchange on a raw connection ended.
#[derive(Debug)]
pub enum Ended {
    /// The listener closed the connection.
    Closed(Vec<u8>),
    /// The listener reset the connection.
    Reset(Vec<u8>),
    /// Still open when the client stopped waiting.
    StillOpen(Vec<u8>),
}

impl Ended {
    pub fn received(&self) -> &[u8] {
        match self {
            Ended::Closed(bytes) | Ended::Reset(bytes) | Ended::StillOpen(bytes) => bytes,
        }
    }
}

/// Reads until the listener closes the connection, or `wait` has passed.
pub async fn read_until_closed<S>(stream: &mut S, wait: Duration) -> Ended
where
    S: tokio::io::AsyncRead + Unpin,
{
    let mut received = Vec::new();
    let deadline = tokio::time::Instant::now() + wait;
    let mut buffer = [0u8; 16 * 1024];
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Err(_) => return Ended::StillOpen(received),
            Ok(Ok(0)) => return Ended::Closed(received),
            Ok(Ok(n)) => received.extend_from_slice(&buffer[..n]),
            Ok(Err(_)) => return Ended::Reset(received),
        }
    }
}

/// The status code of an HTTP/1.x response at the start of `bytes`.
pub fn status_of(bytes: &[u8]) -> Option<u16> {
    let text = std::str::from_utf8(bytes.get(..12)?).ok()?;
    if !(text.starts_with("HTTP/1.1 ") || text.starts_with("HTTP/1.0 ")) {
        return None;
    }
    text[9..12].parse().ok()
}
