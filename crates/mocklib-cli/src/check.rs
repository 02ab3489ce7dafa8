//! `mocklib check --har FILE --against URL`: a recording's requests sent
//! again to the live API, and each answer compared with the recorded one
//! (the library's `mocklib::har::Drift`), for CI: the exit status says
//! whether anything drifted.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use mocklib::har::{Drift, HarError};

pub(crate) const USAGE: &str = "usage: mocklib check --har FILE --against URL [options]

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
  4  the check could not start (no runtime)";

/// The exit status for drift.
const DRIFT: u8 = 1;
/// The exit status for a usage error (as `args::options_or_exit` exits).
const USAGE_ERROR: u8 = 2;
/// The exit status for a HAR file that cannot be used.
const BAD_HAR: u8 = 3;
/// The exit status when the check cannot start at all.
const NOT_STARTED: u8 = 4;

#[derive(Debug)]
struct Options {
    har: PathBuf,
    against: String,
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
        Ok(drift) => drift.against(&options.against),
        Err(error) => {
            eprintln!("mocklib check: {error}");
            return ExitCode::from(BAD_HAR);
        }
    };
    for (name, value) in &options.headers {
        drift = drift.header(name, value);
    }
    for pointer in &options.ignored {
        drift = drift.ignore(pointer);
    }
    if let Some(timeout) = options.timeout {
        drift = drift.timeout(timeout);
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mocklib check: could not start a runtime: {error}");
            return ExitCode::from(NOT_STARTED);
        }
    };
    let report = match runtime.block_on(drift.check()) {
        Ok(report) => report,
        Err(error @ HarError::InvalidOption { .. }) => {
            eprintln!("mocklib check: {error}");
            return ExitCode::from(USAGE_ERROR);
        }
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

/// The options, or `None` for `--help`.
fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut har = None;
    let mut against = None;
    let mut options = Options {
        har: PathBuf::new(),
        against: String::new(),
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
    options.against = against.ok_or("--against URL is missing")?;
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
        assert_eq!(options.against, "http://localhost:1");
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
            "--against URL is missing"
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
