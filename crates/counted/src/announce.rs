//! How a counted server tells its caller where it is, and is told to stop:
//! this package's, and the `--serve` ones of mocklib-benches' websocket and
//! grpc benches.

use std::io::{Read, Write};

/// Prints `url` on a line of its own and blocks until stdin closes:
/// `scripts/bench-counted` (and its `-ws` and `-grpc` siblings) and
/// `scripts/bench` read the URL, and close the pipe to stop the server
/// (valgrind then writes its counts).
pub fn announce_and_wait(url: &str) {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{url}").unwrap();
    stdout.flush().unwrap();
    drop(stdout);
    let mut sink = [0u8; 256];
    let mut stdin = std::io::stdin().lock();
    while let Ok(n) = stdin.read(&mut sink) {
        if n == 0 {
            break;
        }
    }
}
