//! Security requirements: whether a request carries the credentials an
//! operation asks for (`security`, else the document's), as Prism checks
//! them — present and well formed, never whether they are right: a mock
//! knows no users.

use serde_norway::Value;

use super::OpenApiError;
use super::document::{Document, child, entries, scalar_text};
use super::validate::Failure;
use crate::handling::resolver::ResolverArgs;

/// An operation's security requirements.
#[derive(Debug)]
pub(crate) struct Security {
    /// Any one of these lets a request through; each needs all its
    /// schemes. Never empty, and no alternative is (an empty requirement,
    /// `{}`, makes the credentials optional: nothing is checked).
    alternatives: Vec<Vec<Scheme>>,
    /// The `realm` of `Basic` challenges: the document's title.
    realm: String,
}

/// A security scheme, by its name in `components/securitySchemes`.
#[derive(Debug)]
struct Scheme {
    name: String,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    /// `http` `bearer`, `oauth2` and `openIdConnect`: a bearer token
    /// (`Authorization: Bearer …`). The text says which, for messages.
    Bearer(&'static str),
    /// `http` `basic`: `Authorization: Basic base64(user:password)`.
    Basic,
    /// Another `http` scheme (`digest`, …): `Authorization: <scheme> …`.
    Http(String),
    /// `apiKey`: a header, query parameter or cookie named `name`.
    ApiKey { place: Place, name: String },
    /// `mutualTLS`: a client certificate, which no handler sees.
    MutualTls,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Header,
    Query,
    Cookie,
}

/// How a request stands against one scheme.
enum Standing {
    Met,
    Missing,
    /// Present but unusable: why.
    Malformed(String),
}

/// Why a request was refused: the `WWW-Authenticate` value and a failure
/// for each way it could have authenticated.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub(crate) challenges: String,
    pub(crate) failures: Vec<Failure>,
}

impl Security {
    /// The requirements of `operation` (at `pointer`), `None` when it has
    /// none or they are optional. A scheme the document does not define is
    /// an error.
    pub(crate) fn new(
        doc: &Document,
        operation: &Value,
        pointer: &str,
        realm: &str,
    ) -> Result<Option<Self>, OpenApiError> {
        let (requirements, pointer) = match operation.get("security") {
            Some(own) => (own, child(pointer, "security")),
            None => match doc.root.get("security") {
                Some(shared) => (shared, "/security".to_owned()),
                None => return Ok(None),
            },
        };
        let Some(requirements) = requirements.as_sequence() else {
            return Err(doc.invalid(&pointer, "`security` is not a list".to_owned()));
        };
        let mut alternatives = Vec::new();
        for (index, requirement) in requirements.iter().enumerate() {
            let at = child(&pointer, &index.to_string());
            let mut schemes = Vec::new();
            for (name, _scopes) in entries(Some(requirement)) {
                schemes.push(Scheme {
                    kind: scheme_kind(doc, &name, &child(&at, &name))?,
                    name,
                });
            }
            if schemes.is_empty() {
                return Ok(None);
            }
            alternatives.push(schemes);
        }
        if alternatives.is_empty() {
            return Ok(None);
        }
        // A quoted-string may not hold `"` or `\` unescaped; a title
        // rarely has them, so they are left out.
        let realm = realm.chars().filter(|c| !matches!(c, '"' | '\\')).collect();
        Ok(Some(Security {
            alternatives,
            realm,
        }))
    }

    /// `Ok` when the request meets one of the alternatives.
    pub(crate) fn check(&self, args: &ResolverArgs) -> Result<(), Refusal> {
        let mut failures = Vec::new();
        let count = self.alternatives.len();
        for schemes in &self.alternatives {
            let mut unmet = Vec::new();
            for scheme in schemes {
                match scheme.standing(args) {
                    Standing::Met => {}
                    Standing::Missing => unmet.push((scheme, None)),
                    Standing::Malformed(why) => unmet.push((scheme, Some(why))),
                }
            }
            let Some((first, _)) = unmet.first() else {
                return Ok(());
            };
            let needs: Vec<String> = unmet
                .iter()
                .map(|(scheme, why)| {
                    let mut need = format!("{}: expected {}", scheme.name, scheme.kind.describe());
                    if let Some(why) = why {
                        need.push_str(&format!(" ({why})"));
                    }
                    need
                })
                .collect();
            let mut message = needs.join("; and ");
            if count > 1 {
                message = format!("one of {count} ways to authenticate: {message}");
            }
            failures.push(Failure {
                location: first.kind.location(),
                message,
            });
        }
        let mut challenges: Vec<String> = Vec::new();
        for scheme in self.alternatives.iter().flatten() {
            let Some(challenge) = scheme.kind.challenge(&self.realm) else {
                continue;
            };
            if !challenges.contains(&challenge) {
                challenges.push(challenge);
            }
        }
        Err(Refusal {
            challenges: challenges.join(", "),
            failures,
        })
    }
}

/// The scheme `name` as `components/securitySchemes` defines it.
fn scheme_kind(doc: &Document, name: &str, pointer: &str) -> Result<Kind, OpenApiError> {
    let defined = doc
        .root
        .get("components")
        .and_then(|components| components.get("securitySchemes"))
        .and_then(|schemes| entries(Some(schemes)).find(|(key, _)| key == name))
        .map(|(_, scheme)| scheme);
    let Some(scheme) = defined else {
        let message = format!("the security scheme {name:?} is not in components/securitySchemes");
        return Err(doc.invalid(pointer, message));
    };
    let scheme_pointer = child("/components/securitySchemes", name);
    let (scheme, scheme_pointer) = doc.resolve(scheme, scheme_pointer)?;
    let field = |key: &str| scheme.get(key).and_then(scalar_text);
    let kind = field("type").unwrap_or_default();
    Ok(match kind.as_str() {
        "http" => {
            let http = field("scheme").unwrap_or_default().to_ascii_lowercase();
            match http.as_str() {
                "bearer" => Kind::Bearer("a bearer token"),
                "basic" => Kind::Basic,
                "" => {
                    let message = "an http security scheme needs `scheme`".to_owned();
                    return Err(doc.invalid(&scheme_pointer, message));
                }
                _ => Kind::Http(http),
            }
        }
        "oauth2" => Kind::Bearer("an OAuth 2 access token"),
        "openIdConnect" => Kind::Bearer("an OpenID Connect token"),
        "mutualTLS" => Kind::MutualTls,
        "apiKey" => {
            let place = match field("in").as_deref() {
                Some("header") => Place::Header,
                Some("query") => Place::Query,
                Some("cookie") => Place::Cookie,
                other => {
                    let message =
                        format!("an apiKey is in a header, query or cookie, not {other:?}");
                    return Err(doc.invalid(&scheme_pointer, message));
                }
            };
            let Some(name) = field("name") else {
                let message = "an apiKey security scheme needs `name`".to_owned();
                return Err(doc.invalid(&scheme_pointer, message));
            };
            Kind::ApiKey { place, name }
        }
        other => {
            let message = format!("unknown security scheme type {other:?}");
            return Err(doc.invalid(&scheme_pointer, message));
        }
    })
}

impl Scheme {
    fn standing(&self, args: &ResolverArgs) -> Standing {
        let authorization = || {
            let value = args.request.header("authorization")?;
            let (scheme, credentials) = value.trim().split_once(' ').unwrap_or((value.trim(), ""));
            Some((scheme.to_owned(), credentials.trim().to_owned()))
        };
        let from_authorization =
            |wanted: &str, usable: &dyn Fn(&str) -> Result<(), String>| match authorization() {
                None => Standing::Missing,
                Some((scheme, _)) if !scheme.eq_ignore_ascii_case(wanted) => {
                    Standing::Malformed(format!("Authorization holds a {scheme} credential"))
                }
                Some((_, credentials)) => match usable(&credentials) {
                    Ok(()) => Standing::Met,
                    Err(why) => Standing::Malformed(why),
                },
            };
        let non_empty = |credentials: &str| {
            if credentials.is_empty() {
                Err("the credentials are empty".to_owned())
            } else {
                Ok(())
            }
        };
        match &self.kind {
            Kind::Bearer(_) => from_authorization("bearer", &non_empty),
            Kind::Http(scheme) => from_authorization(scheme, &non_empty),
            Kind::Basic => {
                from_authorization(
                    "basic",
                    &|credentials| match crate::support::base64::decode(credentials) {
                        Some(decoded) if decoded.contains(&b':') => Ok(()),
                        _ => Err("not the base64 of user:password".to_owned()),
                    },
                )
            }
            Kind::ApiKey { place, name } => {
                let present = match place {
                    Place::Header => args
                        .request
                        .headers()
                        .get(name.as_str())
                        .is_some_and(|value| !value.is_empty()),
                    Place::Query => args
                        .request
                        .url()
                        .query_pairs()
                        .any(|(key, value)| key == name.as_str() && !value.is_empty()),
                    Place::Cookie => args
                        .cookies
                        .get(name)
                        .is_some_and(|value| !value.is_empty()),
                };
                if present {
                    Standing::Met
                } else {
                    Standing::Missing
                }
            }
            Kind::MutualTls => Standing::Met,
        }
    }
}

impl Kind {
    /// What the request should carry, for messages.
    fn describe(&self) -> String {
        match self {
            Kind::Bearer(what) => format!("{what} (Authorization: Bearer <token>)"),
            Kind::Basic => "Authorization: Basic <base64 of user:password>".to_owned(),
            Kind::Http(scheme) => format!("Authorization: {scheme} <credentials>"),
            Kind::ApiKey { place, name } => match place {
                Place::Header => format!("an API key in the {name} header"),
                Place::Query => format!("an API key in the {name} query parameter"),
                Place::Cookie => format!("an API key in the {name} cookie"),
            },
            Kind::MutualTls => "a client certificate".to_owned(),
        }
    }

    /// Where, as validation failures name places.
    fn location(&self) -> String {
        match self {
            Kind::ApiKey { place, name } => match place {
                Place::Header => format!("header.{name}"),
                Place::Query => format!("query.{name}"),
                Place::Cookie => format!("cookie.{name}"),
            },
            _ => "header.authorization".to_owned(),
        }
    }

    /// Its `WWW-Authenticate` challenge. API keys have no registered
    /// scheme; `ApiKey` with where and what is what such APIs commonly
    /// send, and a 401 must carry some challenge (RFC 9110).
    fn challenge(&self, realm: &str) -> Option<String> {
        Some(match self {
            Kind::Bearer(_) => "Bearer".to_owned(),
            Kind::Basic => format!("Basic realm=\"{realm}\""),
            Kind::Http(scheme) => {
                let mut chars = scheme.chars();
                chars
                    .next()
                    .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                    .unwrap_or_default()
            }
            Kind::ApiKey { place, name } => {
                let place = match place {
                    Place::Header => "header",
                    Place::Query => "query",
                    Place::Cookie => "cookie",
                };
                format!("ApiKey in=\"{place}\", name=\"{name}\"")
            }
            // Met or not, the certificate is the TLS layer's business.
            Kind::MutualTls => return None,
        })
    }
}
