//! The `fault` entries of handler files: transport failures in place of
//! an answer, `HttpResponse::fault(Fault::..)` in Rust, or an answer whose
//! body is cut (`HttpResponse::truncate_after(n)`) or paced
//! (`HttpResponse::dribble(duration)`).
//!
//! ```yaml
//! - path: /flaky
//!   fault: connection_reset     # or empty_response, garbage, malformed_chunk
//! - path: /chunks
//!   fault: malformed_chunk      # the head (status, headers), then a bad chunk
//!   status: 200
//! - method: GET
//!   path: /report
//!   fault: { truncate_after: 10, dribble_ms: 500 }   # either or both
//!   json: { rows: [ 1, 2, 3 ] } # the body to cut or pace (or body: text)
//!   status: 200                 # optional, as are headers, delay_ms, match
//! ```
//!
//! What each client sees of each fault is the table of `mocklib::Fault`'s
//! docs (curl: exit 56, 52, 1 and 56; a truncated body: exit 18).

use std::collections::BTreeMap;
use std::time::Duration;

use mocklib::{Fault, Handler, HttpResponse};

use crate::entry_parts::{Conditions, Expected, check_headers, http_handler, method_and_path};

/// A `fault` entry, as written.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FaultEntry {
    method: Option<String>,
    path: Option<String>,
    /// A `Fault` by name, or `{truncate_after, dribble_ms}`.
    fault: serde_json::Value,
    /// The head of a `malformed_chunk` or of a body fault.
    status: Option<u16>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// The body a body fault cuts or paces.
    body: Option<String>,
    json: Option<serde_json::Value>,
    delay_ms: Option<u64>,
    #[serde(rename = "match")]
    conditions: Option<Conditions>,
    #[serde(default)]
    once: bool,
    times: Option<Expected>,
}

/// A body fault: the answer's body cut after some bytes, paced, or both.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct BodyFault {
    /// Bytes of the body sent before the connection closes.
    truncate_after: Option<usize>,
    /// Milliseconds over which the body is sent, in pieces.
    dribble_ms: Option<u64>,
}

/// The `Fault` a name says: `connection_reset`, `ConnectionReset`, ...
/// (case and underscores aside).
pub(crate) fn fault_named(name: &str) -> Result<Fault, String> {
    let plain: String = name
        .chars()
        .filter(|c| *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    Ok(match plain.as_str() {
        "connectionreset" => Fault::ConnectionReset,
        "emptyresponse" => Fault::EmptyResponse,
        "garbage" => Fault::Garbage,
        "malformedchunk" => Fault::MalformedChunk,
        _ => {
            return Err(format!(
                "unknown fault {name:?}: connection_reset, empty_response, garbage, malformed_chunk"
            ));
        }
    })
}

impl FaultEntry {
    /// The entry's expected count, taken out before the handler is built.
    pub(crate) fn times(&mut self) -> Option<Expected> {
        self.times.take()
    }

    /// The response every request gets, built at load.
    fn response(&self) -> Result<HttpResponse, String> {
        let status = self.status.unwrap_or(200);
        http::StatusCode::from_u16(status)
            .map_err(|_| format!("status: invalid status {status}"))?;
        check_headers(&self.headers)?;
        let with_head = |mut response: HttpResponse| {
            response = response.status(status);
            for (name, value) in &self.headers {
                response = response.header(name, value);
            }
            response
        };
        match &self.fault {
            serde_json::Value::String(name) => {
                let fault = fault_named(name)
                    .map_err(|why| format!("fault: {why}, or {{truncate_after, dribble_ms}}"))?;
                let given = [
                    ("status", self.status.is_some()),
                    ("headers", !self.headers.is_empty()),
                    ("body", self.body.is_some()),
                    ("json", self.json.is_some()),
                ];
                let head = fault == Fault::MalformedChunk;
                let stray = given.iter().find(|(field, given)| {
                    *given && !(head && matches!(*field, "status" | "headers"))
                });
                if let Some((field, _)) = stray {
                    return Err(format!(
                        "`{field}` does not go with fault {name}: {}",
                        if head {
                            "its body is the malformed chunk (status and headers make its head)"
                        } else {
                            "no response is sent"
                        }
                    ));
                }
                let response = HttpResponse::fault(fault);
                Ok(if head { with_head(response) } else { response })
            }
            serde_json::Value::Object(_) => {
                let spec: BodyFault = serde_json::from_value(self.fault.clone())
                    .map_err(|error| format!("fault: {error}"))?;
                if spec.truncate_after.is_none() && spec.dribble_ms.is_none() {
                    return Err("fault: give truncate_after, dribble_ms or both".to_owned());
                }
                let response = match (&self.body, &self.json) {
                    (Some(text), None) => HttpResponse::text(text.clone()),
                    (None, Some(json)) => HttpResponse::json(json),
                    (Some(_), Some(_)) => {
                        return Err("give one of body and json, not both".to_owned());
                    }
                    (None, None) => {
                        return Err(
                            "fault: a body fault cuts or paces a body: give body or json"
                                .to_owned(),
                        );
                    }
                };
                let mut response = with_head(response);
                if let Some(bytes) = spec.truncate_after {
                    response = response.truncate_after(bytes);
                }
                if let Some(milliseconds) = spec.dribble_ms {
                    response = response.dribble(Duration::from_millis(milliseconds));
                }
                Ok(response)
            }
            other => Err(format!(
                "fault: expected a fault's name or {{truncate_after, dribble_ms}}, found {other}"
            )),
        }
    }

    /// The handler: an HTTP handler answering with the fault.
    pub(crate) fn into_handler(self) -> Result<Handler, String> {
        let response = self.response()?;
        let (method, path) = method_and_path(self.method.as_deref(), self.path)?;
        let delay_ms = self.delay_ms;
        let respond = move |_: mocklib::ResolverArgs| {
            let response = response.clone();
            async move {
                if let Some(milliseconds) = delay_ms {
                    mocklib::delay(milliseconds).await;
                }
                response
            }
        };
        let handler = http_handler(method, path, respond)?;
        crate::entry_parts::finish(handler, self.conditions, self.once)
    }
}
