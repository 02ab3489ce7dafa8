//! The server's own origin: what is addressed to the admin API and the live
//! page rather than mocked.

use url::Url;

/// The path every admin resource (and the live page) is under.
pub(crate) const PREFIX: &str = "/__mocklib/";

/// The journal resource's path: its `DELETE` clears the journal.
pub(crate) const JOURNAL_PATH: &str = "/__mocklib/requests";

/// `path` on the listener's own origin.
pub(crate) fn own_url(base_url: &Url, path: &str) -> Url {
    base_url.join(path).expect("a path joins the base URL")
}

/// Whether a journal entry is a request to the admin API or the live page:
/// on a loopback origin, under [`PREFIX`].
pub(crate) fn is_admin_request(url: &Url) -> bool {
    is_loopback(url) && url.path().starts_with(PREFIX)
}

/// Whether `url`'s host is a loopback address or `localhost`.
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name == "localhost",
        None => false,
    }
}
