//! Fetches one URL with a plain reqwest client configured only by its
//! environment — the way a child process of the code under test would.
//!
//! Hand it `server.env()` and its request reaches the handlers: reqwest reads
//! `HTTPS_PROXY` / `HTTP_PROXY`, and its native-roots TLS reads
//! `SSL_CERT_FILE`, the bundle holding the mocklib CA. The tests run it as a
//! child process; try it by hand with
//! `cargo run --example child_fetch -- https://example.com/` and the variables
//! printed by a listening server.

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args().nth(1).ok_or("usage: child_fetch <url>")?;
    let client = reqwest::Client::builder().use_rustls_tls().build()?;
    let response = client.get(&url).send().await?;
    print!("{} {}", response.status().as_u16(), response.text().await?);
    Ok(())
}
