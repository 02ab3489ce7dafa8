//! mocklib parses and encodes cookies itself (the `cookie` crate would bring
//! `time` and a proc macro into every build); the `cookie` crate is the
//! reference here. Through the public API (`Cookies::from_headers`,
//! `HttpResponse::cookie`), so the library's own dev-dependencies, which
//! every example compiles, need neither `cookie` nor `time`.

use std::collections::BTreeMap;

use http::{HeaderMap, HeaderValue};
use mocklib::{HttpResponse, request::Cookies};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

proptest! {
    // Past failures are replayed from tests/cookies.proptest-regressions
    // (named here: the default looks for a src/ folder beside the file).
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn pairs_are_read_as_the_cookie_crate_reads_them(
        // Pairs with blanks around names, `=` and values; escapes that
        // decode, one that is not UTF-8 (%FF) and a lone `%`.
        header in proptest::string::string_regex(
            &r#"([ \t]{0,2}(T){0,3}[ \t]{0,2}=?[ \t]{0,2}(T){0,4}[ \t]{0,2};){0,4}[ \t]{0,2}(T){0,3}=?(T){0,3}"#
                .replace('T', r#"[a-zA-Z0-9"(),=\u{e9}]|%20|%3[bB]|%[cC]3%[aA]9|%[fF]{2}|%"#),
        ).unwrap(),
    ) {
        // The first value of a name wins (`Cookies` keeps one per name). A
        // header with raw non-ASCII bytes (the `é` above) is no string to
        // `HeaderValue::to_str`, so it is skipped whole.
        let mut expected = BTreeMap::new();
        if header.is_ascii() {
            for cookie in cookie::Cookie::split_parse_encoded(header.as_str()).flatten() {
                expected.entry(cookie.name().to_owned()).or_insert_with(|| cookie.value().to_owned());
            }
        }
        let mut headers = HeaderMap::new();
        headers.insert("cookie", HeaderValue::from_bytes(header.as_bytes()).unwrap());
        let actual: BTreeMap<String, String> = Cookies::from_headers(&headers)
            .iter()
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect();
        prop_assert_eq!(actual, expected);
    }

    #[test]
    fn set_cookie_values_match_the_cookie_crate(name in "\\PC{0,12}", value in "\\PC{0,12}") {
        let expected = cookie::Cookie::new(name.clone(), value.clone()).encoded().to_string();
        let response = HttpResponse::empty().cookie(&name, &value);
        let headers: Vec<_> = response.headers().get_all("set-cookie").iter().collect();
        prop_assert_eq!(headers.len(), 1);
        prop_assert_eq!(headers[0].to_str().unwrap(), expected);
    }
}
