//! `mocklib check --har FILE --against URL`: a recording's requests sent
//! again to the live API, and each answer compared with the recorded one
//! (the library's `mocklib::har::Drift`), for CI: the exit status says
//! whether anything drifted. `--openapi FILE` in place of `--against`
//! checks the recorded exchanges against the API's description instead,
//! sending nothing.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use mocklib::har::{Drift, HarError};
use mocklib::openapi::OpenApi;

pub(crate) const USAGE: &str = "usage: mocklib check --har FILE --against URL [options]
       mocklib check --har FILE --openapi FILE [--json]

Sends each request recorded in a HAR file again, to URL in place of its
recorded origin (path and query kept), and reports per entry what differs
from the recorded answer: the status, the content type, and the shape of
JSON bodies (fields added, fields removed, types changed, at JSON
pointers). Values are not compared: ids and timestamps change from run to
run. The requests are real, POST and DELETE included.

Options:
  --har FILE             the HAR file (from mocklib serve --record, a
                         browser's developer tools, a proxy)
  --against URL          the base URL of the live API
  --openapi FILE         instead of --against: check each recorded exchange
                         against this OpenAPI document (the request, the
                         status, the content type, headers, the JSON body
                         by the schema), sending nothing
  --header 'NAME: VALUE' send this header with every request, in place of
                         the recorded one (a credential the recording
                         redacted); may be repeated
  --ignore POINTER       do not compare JSON bodies at or below this JSON
                         pointer (/meta, /items/*/etag); may be repeated
  --timeout SECONDS      how long each request may take (default 30)
  --json                 print the report as JSON, for CI tooling

Exit status:
  0  no drift
  1  drift: an answer differs, or a request got none
  2  usage error, or an option that cannot be used (base URL, header,
     pointer)
  3  the HAR file cannot be read, is not a HAR document, or has an entry
     that cannot be sent
  4  the check could not start (no runtime)
  5  the OpenAPI document cannot be read or compiled";

/// The exit status for drift.
const DRIFT: u8 = 1;
/// The exit status for a usage error (as `args::options_or_exit` exits).
const USAGE_ERROR: u8 = 2;
/// The exit status for a HAR file that cannot be used.
const BAD_HAR: u8 = 3;
/// The exit status when the check cannot start at all.
const NOT_STARTED: u8 = 4;
/// The exit status for an OpenAPI document that cannot be used.
const BAD_DOCUMENT: u8 = 5;

/// What the recording is checked against.
#[derive(Debug, PartialEq)]
enum Against {
    /// The live API's base URL.
    Live(String),
    /// An OpenAPI document.
    OpenApi(PathBuf),
}

#[derive(Debug)]
struct Options {
    har: PathBuf,
    /// Where the answers come from: the live API, or a description.
    against: Against,
    headers: Vec<(String, String)>,
    ignored: Vec<String>,
    timeout: Option<Duration>,
    json: bool,
}

/// Runs `mocklib check` with the arguments after `check`.
pub(crate) fn main(args: &[String]) -> ExitCode {
    let options = match crate::args::options_or_exit("check", USAGE, parse(args)) {
        Ok(options) => options,
        Err(exit) => return exit,
    };
    let mut drift = match Drift::from_path(&options.har) {
        Ok(drift) => drift,
        Err(error) => {
            eprintln!("mocklib check: {error}");
            return ExitCode::from(BAD_HAR);
        }
    };
    let report = match &options.against {
        Against::OpenApi(document) => {
            let contract = match OpenApi::from_path(document).and_then(|api| api.contract()) {
                Ok(contract) => contract,
                Err(error) => {
                    eprintln!("mocklib check: {error}");
                    return ExitCode::from(BAD_DOCUMENT);
                }
            };
            drift.check_contract(&contract)
        }
        Against::Live(url) => {
            drift = drift.against(url);
            match live(drift, &options) {
                Ok(report) => Ok(report),
                Err(exit) => return exit,
            }
        }
    };
    let report = match report {
        Ok(report) => report,
        Err(error) => {
            eprintln!("mocklib check: {error}");
            return ExitCode::from(BAD_HAR);
        }
    };
    if options.json {
        let mut value = serde_json::to_value(&report).expect("a report serializes");
        value["drift"] = report.has_drift().into();
        println!(
            "{}",
            serde_json::to_string_pretty(&value).expect("JSON serializes")
        );
    } else {
        print!("{report}");
    }
    if report.has_drift() {
        ExitCode::from(DRIFT)
    } else {
        ExitCode::SUCCESS
    }
}

/// Sends the recorded requests to the live API: the report, or how the
/// command exits.
fn live(mut drift: Drift, options: &Options) -> Result<mocklib::har::DriftReport, ExitCode> {
    for (name, value) in &options.headers {
        drift = drift.header(name, value);
    }
    for pointer in &options.ignored {
        drift = drift.ignore(pointer);
    }
    if let Some(timeout) = options.timeout {
        drift = drift.timeout(timeout);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| {
            eprintln!("mocklib check: could not start a runtime: {error}");
            ExitCode::from(NOT_STARTED)
        })?;
    runtime.block_on(drift.check()).map_err(|error| {
        eprintln!("mocklib check: {error}");
        ExitCode::from(match error {
            HarError::InvalidOption { .. } => USAGE_ERROR,
            _ => BAD_HAR,
        })
    })
}

/// The options, or `None` for `--help`.
fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut har = None;
    let (mut against, mut openapi) = (None, None);
    let mut options = Options {
        har: PathBuf::new(),
        against: Against::Live(String::new()),
        headers: Vec::new(),
        ignored: Vec::new(),
        timeout: None,
        json: false,
    };
    let mut args = crate::args::Args::new(args);
    while let Some(mut flag) = args.next_flag() {
        match flag.name {
            "--help" | "-h" => return Ok(None),
            "--har" => har = Some(PathBuf::from(flag.value()?)),
            "--against" => against = Some(flag.value()?),
            "--openapi" => openapi = Some(PathBuf::from(flag.value()?)),
            "--header" => {
                let header = flag.value()?;
                let Some((name, value)) = header.split_once(':') else {
                    return Err(format!("--header {header:?}: NAME: VALUE"));
                };
                options
                    .headers
                    .push((name.trim().to_owned(), value.trim().to_owned()));
            }
            "--ignore" => options.ignored.push(flag.value()?),
            "--timeout" => {
                let seconds = flag.value()?;
                options.timeout = Some(
                    seconds
                        .parse::<f64>()
                        .ok()
                        .and_then(|s| Duration::try_from_secs_f64(s).ok())
                        .filter(|timeout| !timeout.is_zero())
                        .ok_or_else(|| format!("invalid --timeout {seconds:?} (seconds)"))?,
                );
            }
            "--json" => options.json = true,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    options.har = har.ok_or("--har FILE is missing")?;
    options.against = match (against, openapi) {
        (Some(url), None) => Against::Live(url),
        (None, Some(document)) => Against::OpenApi(document),
        (None, None) => {
            return Err(
                "--against URL (the live API) or --openapi FILE (its description) is missing"
                    .to_owned(),
            );
        }
        (Some(_), Some(_)) => {
            return Err(
                "--against and --openapi: give one (the live API, or its description)".to_owned(),
            );
        }
    };
    Ok(Some(options))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> Result<Option<Options>, String> {
        parse(&args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn options_in_both_spellings() {
        let options = parsed(&[
            "--har=a.har",
            "--against",
            "http://localhost:1",
            "--header",
            "X-Api-Key: k: v",
            "--ignore=/meta",
            "--timeout",
            "0.5",
            "--json",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(options.har, PathBuf::from("a.har"));
        assert_eq!(
            options.against,
            Against::Live("http://localhost:1".to_owned())
        );
        assert_eq!(
            options.headers,
            [("X-Api-Key".to_owned(), "k: v".to_owned())]
        );
        assert_eq!(options.ignored, ["/meta"]);
        assert_eq!(options.timeout, Some(Duration::from_millis(500)));
        assert!(options.json);
    }

    #[test]
    fn what_is_missing_or_wrong_is_named() {
        assert_eq!(
            parsed(&["--har", "a.har"]).unwrap_err(),
            "--against URL (the live API) or --openapi FILE (its description) is missing"
        );
        assert_eq!(
            parsed(&["--against", "u"]).unwrap_err(),
            "--har FILE is missing"
        );
        assert_eq!(parsed(&["--har"]).unwrap_err(), "--har needs a value");
        assert_eq!(
            parsed(&["--header", "no-colon"]).unwrap_err(),
            "--header \"no-colon\": NAME: VALUE"
        );
        for timeout in ["0", "-1", "soon", "NaN"] {
            assert!(parsed(&["--timeout", timeout]).is_err(), "{timeout}");
        }
        assert_eq!(
            parsed(&["--verbose"]).unwrap_err(),
            "unknown argument \"--verbose\""
        );
        assert!(parsed(&["--har", "a", "--help"]).unwrap().is_none());
    }
}
