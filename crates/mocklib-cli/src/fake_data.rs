//! Fake data for response templates: `fake("name.first")`, from the
//! [fake](https://docs.rs/fake) crate's word lists.
//!
//! ```yaml
//! - path: /users/:id
//!   template: true
//!   json:
//!     id: "{{ request.params.id }}"
//!     name: "{{ fake('name.full') }}"
//!     email: "{{ fake('internet.email') }}"
//!     city: "{{ fake('address.city', locale='fr_fr') }}"
//!     since: "{{ fake('date.past') }}"
//! ```
//!
//! **Seeded by the request.** By default a value is chosen by a generator
//! seeded from the request's method, URL and body, the field it is
//! rendered into, and how many `fake()` calls came before it there: the
//! same request gets the same answer, run after run (a test that fails
//! replays), and two different requests get different people. `seed=`
//! seeds from a value of your choice instead (`seed=request.params.id`:
//! the same user whatever the query says), `random=true` draws anew each
//! time. `locale=` picks the word lists: `en` (the default), `fr_fr`,
//! `de_de`, `it_it`, `nl_nl`, `pt_br`, `pt_pt`, `ja_jp`, `zh_cn`, `zh_tw`,
//! `ar_sa`, `tr_tr`, `fa_ir`, `cy_gb`.
//!
//! The values are the library's `mocklib::fake::Faker` (feature `fake`):
//! in Rust, `Faker::for_request(&request).value("name.full")`. Why the
//! [fake](https://docs.rs/fake) crate: it is maintained, has these
//! fourteen locales, generates from any `rand` generator (so a seed decides
//! everything), and costs the command little: `fake`, `deunicode` and
//! `either` to compile (`rand` 0.10 and `chacha20` come with tungstenite
//! already), and in the release command 0.22 MB of code (1.4 %,
//! `scripts/size-by-crate`) plus its word lists, at most 0.6 MB.

use minijinja::value::Kwargs;
use minijinja::{Error, ErrorKind, State};
use mocklib::fake::{Faker, KINDS, seed_of};

/// The template function `fake(kind, locale=, seed=, random=)`.
pub(crate) fn fake(state: &mut State, kind: &str, options: Kwargs) -> Result<String, Error> {
    let locale: Option<String> = options.get("locale")?;
    let seed: Option<minijinja::Value> = options.get("seed")?;
    let random: Option<bool> = options.get("random")?;
    options.assert_all_used()?;
    let mut faker = if random == Some(true) {
        Faker::random()
    } else {
        // Each call of the render its own value: the nth call in a field.
        let count = state
            .get_temp("fake()")
            .and_then(|value| u64::try_from(value).ok())
            .unwrap_or(0);
        state.set_temp("fake()", minijinja::Value::from(count + 1));
        let mut parts: Vec<String> = match &seed {
            Some(seed) => vec![seed.to_string()],
            None => {
                let request = state.lookup("request");
                ["method", "url", "body"]
                    .into_iter()
                    .map(|part| {
                        request
                            .as_ref()
                            .and_then(|request| request.get_attr(part).ok())
                            .map(|value| value.to_string())
                            .unwrap_or_default()
                    })
                    .collect()
            }
        };
        parts.push(state.name().to_owned());
        parts.push(count.to_string());
        let parts: Vec<&[u8]> = parts.iter().map(String::as_bytes).collect();
        Faker::seeded(seed_of(&parts))
    };
    faker
        .value_in(kind, locale.as_deref().unwrap_or("en"))
        .map_err(|error| Error::new(ErrorKind::InvalidOperation, error.to_string()))
}

/// Checks the kinds a template's source names literally (`fake('name.first')`),
/// so that a misspelt kind fails the load, not each request.
pub(crate) fn check_kinds(source: &str) -> Result<(), String> {
    let mut rest = source;
    while let Some(at) = rest.find("fake(") {
        rest = &rest[at + "fake(".len()..];
        let argument = rest.trim_start();
        let Some(quote) = argument.chars().next().filter(|c| *c == '\'' || *c == '"') else {
            continue; // a variable: checked when rendered
        };
        let Some(end) = argument[1..].find(quote) else {
            continue; // the template compiler says what is wrong
        };
        let kind = &argument[1..1 + end];
        if !KINDS.contains(&kind) {
            return Err(format!(
                "fake({kind:?}): no such kind; known: {}",
                KINDS.join(", ")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(source: &str, request: minijinja::Value) -> Result<String, Error> {
        let mut env = minijinja::Environment::new();
        env.add_function("fake", fake);
        env.add_template("json.name", source)?;
        env.get_template("json.name")?
            .render(minijinja::context! { request => request })
    }

    fn request(url: &str) -> minijinja::Value {
        minijinja::context! { method => "GET", url => url, body => "" }
    }

    #[test]
    fn the_same_request_gets_the_same_values_and_another_request_others() {
        let source = "{{ fake('name.full') }}|{{ fake('internet.email') }}|{{ fake('uuid') }}|{{ fake('uuid') }}";
        let first = render(source, request("http://api/users/1")).unwrap();
        assert_eq!(
            first,
            render(source, request("http://api/users/1")).unwrap()
        );
        assert_ne!(
            first,
            render(source, request("http://api/users/2")).unwrap()
        );
        // Two calls of one kind in one field: two values.
        let uuids: Vec<&str> = first.split('|').skip(2).collect();
        assert_ne!(uuids[0], uuids[1]);
        assert_eq!(uuids[0].len(), 36);
    }

    #[test]
    fn a_seed_of_ones_own_ties_the_value_to_it_and_random_draws_anew() {
        let seeded = "{{ fake('uuid', seed=request.url) }}";
        assert_eq!(
            render(seeded, request("http://a/1")).unwrap(),
            render(
                seeded,
                minijinja::context! { method => "POST", url => "http://a/1", body => "x" }
            )
            .unwrap()
        );
        let random = "{{ fake('uuid', random=true) }}";
        assert_ne!(
            render(random, request("http://a/1")).unwrap(),
            render(random, request("http://a/1")).unwrap()
        );
    }

    #[test]
    fn unknown_kinds_and_locales_are_named() {
        let error = render("{{ fake('name.frist') }}", request("http://a/")).unwrap_err();
        assert!(
            format!("{error:#}").contains("fake(\"name.frist\"): no such kind; known: name.first"),
            "{error:#}"
        );
        let error = render(
            "{{ fake('name.first', locale='xx') }}",
            request("http://a/"),
        )
        .unwrap_err();
        assert!(
            format!("{error:#}").contains("no such locale; known: en, fr_fr"),
            "{error:#}"
        );
        assert!(
            check_kinds("{{ fake( \"name.frist\" ) }}")
                .unwrap_err()
                .contains("name.frist")
        );
        assert_eq!(
            check_kinds("{{ fake(kind) }} {{ fake('name.first') }}"),
            Ok(())
        );
    }
}
