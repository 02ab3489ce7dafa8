use super::*;

fn url(s: &str) -> Url {
    Url::parse(s).unwrap_or_else(|e| panic!("bad test url {s}: {e}"))
}

fn pat(s: &str) -> PathPattern {
    PathPattern::parse(s).unwrap_or_else(|e| panic!("{e}"))
}

fn m(pattern: &str, request: &str) -> Option<RawParams> {
    pat(pattern).matches(&url(request), None)
}

fn mb(pattern: &str, request: &str, base: &str) -> Option<RawParams> {
    pat(pattern).matches(&url(request), Some(&url(base)))
}

fn is(pattern: &str, request: &str) -> bool {
    m(pattern, request).is_some()
}

/// Params as (name, values) pairs for compact assertions.
fn params(pattern: &str, request: &str) -> Vec<(String, Vec<String>)> {
    m(pattern, request)
        .unwrap_or_else(|| panic!("{pattern} should match {request}"))
        .into_iter()
        .map(|p| (p.name, p.value.segments().to_vec()))
        .collect()
}

fn p(name: &str, values: &[&str]) -> (String, Vec<String>) {
    (
        name.to_owned(),
        values.iter().map(|v| v.to_string()).collect(),
    )
}

fn err(pattern: &str) -> PatternError {
    match PathPattern::parse(pattern) {
        Ok(_) => panic!("{pattern:?} should not parse"),
        Err(e) => e,
    }
}

#[test]
fn types_are_shareable() {
    fn check<T: Send + Sync + Clone + std::fmt::Debug>() {}
    check::<PathPattern>();
    check::<RawParam>();
    check::<IndexKey>();
    check::<PatternError>();
}

#[test]
fn relative_pattern_without_base_ignores_origin() {
    assert!(is("/user", "https://api.example.com/user"));
    assert!(is("/user", "http://localhost:3000/user"));
    assert!(!is("/user", "http://localhost:3000/users"));
    assert!(!is("/user", "http://localhost:3000/api/user"));
    assert!(matches!(pat("/user").kind, Kind::Relative));
    assert_eq!(pat("/user").as_str(), "/user");
}

#[test]
fn relative_pattern_with_base_requires_same_origin() {
    let base = "http://localhost:3000/some/page";
    assert!(mb("/user", "http://localhost:3000/user", base).is_some());
    assert!(mb("/user", "http://localhost:3001/user", base).is_none());
    assert!(mb("/user", "https://localhost:3000/user", base).is_none());
    assert!(mb("/user", "http://example.com:3000/user", base).is_none());
    // Default ports are the same origin; host case does not matter.
    assert!(
        mb(
            "/user",
            "https://EXAMPLE.com:443/user",
            "https://example.com"
        )
        .is_some()
    );
    assert!(mb("/user", "http://example.com/user", "http://example.com:80/").is_some());
    // The base only pins the origin, its path does not matter.
    assert!(
        mb(
            "/user",
            "http://localhost:3000/user",
            "http://localhost:3000/a/b/"
        )
        .is_some()
    );
}

#[test]
fn absolute_pattern_matches_scheme_host_port_and_path() {
    let pattern = "https://api.example.com/user";
    assert!(is(pattern, "https://api.example.com/user"));
    assert!(!is(pattern, "http://api.example.com/user"), "scheme");
    assert!(!is(pattern, "https://example.com/user"), "host");
    assert!(!is(pattern, "https://api.example.com:8443/user"), "port");
    assert!(!is(pattern, "https://api.example.com/users"), "path");
    assert!(matches!(pat(pattern).kind, Kind::Absolute(_)));
    // A base never changes an absolute pattern.
    assert!(mb(pattern, "https://api.example.com/user", "http://other.test").is_some());

    assert!(is(
        "http://localhost:3000/posts/:id",
        "http://localhost:3000/posts/1"
    ));
    assert!(!is(
        "http://localhost:3000/posts/:id",
        "http://localhost:3001/posts/1"
    ));
    assert!(!is(
        "http://localhost:3000/posts/:id",
        "http://localhost/posts/1"
    ));
}

#[test]
fn default_ports_are_equivalent() {
    assert!(is("https://x.test:443/a", "https://x.test/a"));
    assert!(is("https://x.test/a", "https://x.test:443/a"));
    assert!(is("http://x.test:80/a", "http://x.test/a"));
    assert!(is("http://x.test/a", "http://x.test:80/a"));
    assert!(!is("http://x.test:443/a", "http://x.test/a"));
    assert!(!is("https://x.test:80/a", "https://x.test/a"));
    assert!(is("ws://x.test:80/socket", "ws://x.test/socket"));
}

#[test]
fn absolute_pattern_without_path_means_root() {
    assert!(is("https://api.example.com", "https://api.example.com"));
    assert!(is("https://api.example.com", "https://api.example.com/"));
    assert!(!is(
        "https://api.example.com",
        "https://api.example.com/user"
    ));
    assert!(is("http://localhost:3000", "http://localhost:3000/?q=1"));
}

#[test]
fn host_is_case_insensitive_and_normalized() {
    assert!(is(
        "https://API.Example.COM/user",
        "https://api.example.com/user"
    ));
    assert!(is(
        "https://api.example.com/user",
        "https://API.EXAMPLE.com/user"
    ));
    assert!(is("http://[::1]:8080/x", "http://[0:0::1]:8080/x"));
    assert!(is("http://127.0.0.1/x", "http://127.0.0.1:80/x"));
    assert!(is(
        "https://bücher.example/x",
        "https://xn--bcher-kva.example/x"
    ));
}

#[test]
fn host_wildcard_matches_within_the_host() {
    let pattern = "https://*.example.com/x";
    assert_eq!(
        params(pattern, "https://api.example.com/x"),
        vec![p("0", &["api"])]
    );
    assert_eq!(
        params(pattern, "https://a.b.example.com/x"),
        vec![p("0", &["a.b"])]
    );
    assert!(!is(pattern, "https://example.com/x"));
    assert!(!is(pattern, "https://api.example.org/x"));
    assert!(!is(pattern, "http://api.example.com/x"));
    assert!(!is(pattern, "https://api.example.com:444/x"));

    assert!(is("https://*/x", "https://anything.at.all/x"));
    assert!(is("https://*/x", "https://[::1]/x"));
    // The host wildcard never reaches into the path.
    assert!(!is("https://*/x", "https://a.test/y/x"));
    // Wildcards are numbered across the whole pattern.
    assert_eq!(
        params("https://*.test/a/*", "https://api.test/a/b/c"),
        vec![p("0", &["api"]), p("1", &["b/c"])]
    );
}

#[test]
fn host_param_matches_one_whole_label() {
    let pattern = "https://:tenant.example.com/user";
    assert_eq!(
        params(pattern, "https://acme.example.com/user"),
        vec![p("tenant", &["acme"])]
    );
    // Hosts arrive lowercased.
    assert_eq!(
        params(pattern, "https://ACME.Example.com/user"),
        vec![p("tenant", &["acme"])]
    );
    // Unlike MSW, a host param never spans a '.' (`*` does).
    assert!(!is(pattern, "https://a.b.example.com/user"));
    assert!(!is(pattern, "https://example.com/user"));
    assert!(!is(pattern, "https://acme.example.com:8443/user"), "port");
    assert!(!is(pattern, "http://acme.example.com/user"), "scheme");
    assert!(!is(pattern, "https://acme.example.com/users"), "path");
    assert!(!is(pattern, "https://acme.example.org/user"));

    let pattern = "https://api.:region.example.com/*";
    assert_eq!(
        params(pattern, "https://api.eu.example.com/a/b"),
        vec![p("region", &["eu"]), p("0", &["a/b"])]
    );
    assert!(!is(pattern, "https://api.eu.west.example.com/a"));
    assert!(!is(pattern, "https://api.example.com/a"));
    assert!(!is(pattern, "https://www.eu.example.com/a"));
    // A lone param is a one-label host.
    assert_eq!(
        params("http://:host/x", "http://localhost/x"),
        vec![p("host", &["localhost"])]
    );
    assert!(!is("http://:host/x", "http://api.example.com/x"));
    assert!(!is("http://:host/x", "http://[::1]/x"));
}

#[test]
fn host_param_inside_a_label() {
    let pattern = "https://api-:region.example.com/x";
    assert_eq!(
        params(pattern, "https://api-eu.example.com/x"),
        vec![p("region", &["eu"])]
    );
    assert!(!is(pattern, "https://api-.example.com/x"));
    assert!(!is(pattern, "https://api-eu.west.example.com/x"));
    assert!(!is(pattern, "https://xapi-eu.example.com/x"));
    assert_eq!(
        params(
            "https://:app-:env.example.com/",
            "https://shop-prod.example.com/"
        ),
        vec![p("app", &["shop"]), p("env", &["prod"])]
    );
    assert_eq!(
        params("https://v:major.api.test/", "https://v2.api.test/"),
        vec![p("major", &["2"])]
    );
    // A numeric last label: an IPv4 range, with a port after the param.
    assert_eq!(
        params("http://10.0.0.:n:8080/x", "http://10.0.0.7:8080/x"),
        vec![p("n", &["7"])]
    );
    assert!(!is("http://10.0.0.:n:8080/x", "http://10.0.0.7/x"));
}

#[test]
fn host_and_path_params_together() {
    assert_eq!(
        params(
            "https://:tenant.example.com/users/:id",
            "https://acme.example.com/users/7"
        ),
        vec![p("tenant", &["acme"]), p("id", &["7"])]
    );
    let pattern = "https://:tenant.example.com:8443/x";
    assert!(is(pattern, "https://a.example.com:8443/x"));
    assert!(!is(pattern, "https://a.example.com/x"));
    // Numbering of wildcards runs through host, port and path.
    assert_eq!(
        params(
            "http://*.:svc.local:*/v/*",
            "http://a.b.auth.local:81/v/c/d"
        ),
        vec![
            p("0", &["a.b"]),
            p("svc", &["auth"]),
            p("1", &["81"]),
            p("2", &["c/d"])
        ]
    );
}

#[test]
fn host_param_modifiers_and_patterns() {
    let pattern = "https://api.:region?.example.com/x";
    assert_eq!(params(pattern, "https://api.example.com/x"), vec![]);
    assert_eq!(
        params(pattern, "https://api.eu.example.com/x"),
        vec![p("region", &["eu"])]
    );
    assert!(!pat(pattern).had_query_or_hash());
    let pattern = "https://api.:labels+.example.com/x";
    assert_eq!(
        params(pattern, "https://api.a.b.example.com/x"),
        vec![p("labels", &["a", "b"])]
    );
    assert!(!is(pattern, "https://api.example.com/x"));
    assert_eq!(
        params(
            "https://api.:labels*.example.com/x",
            "https://api.example.com/x"
        ),
        vec![]
    );
    let found = m(
        "https://api.:labels*.example.com/x",
        "https://api.a.example.com/x",
    );
    assert!(found.expect("one label")[0].repeating());

    let pattern = r"https://:n(\d+).example.com/";
    assert_eq!(
        params(pattern, "https://42.example.com/"),
        vec![p("n", &["42"])]
    );
    assert!(!is(pattern, "https://a.example.com/"));
    // A custom pattern may span labels, never the port or path.
    let pattern = "https://:sub(.+).example.com/x";
    assert_eq!(
        params(pattern, "https://a.b.example.com/x"),
        vec![p("sub", &["a.b"])]
    );
    assert!(!is(pattern, "https://a.example.com:444/x"));
    // ':' and '/' inside a custom pattern are the pattern's, not the
    // port's or the path's.
    assert!(is(r"https://:h(a|b(?:c)).test/", "https://bc.test/"));
    assert!(is(r"https://:h([^/]+).test:81/", "https://ab.test:81/"));
    // The explicit way to glue a param to the end of the host name.
    assert_eq!(
        params("http://localhost:suffix([^.]+)/x", "http://localhostabc/x"),
        vec![p("suffix", &["abc"])]
    );
    // A query after a host param is still a query.
    let compiled = pat("https://:t.example.com?x=1");
    assert!(compiled.had_query_or_hash());
    assert!(
        compiled
            .matches(&url("https://a.example.com/"), None)
            .is_some()
    );
}

#[test]
fn wildcard_led_host_params_match_one_label() {
    let pattern = "*://:tenant.example.com/x";
    assert_eq!(
        params(pattern, "https://acme.example.com/x"),
        vec![p("0", &["https"]), p("tenant", &["acme"])]
    );
    assert!(!is(pattern, "https://a.b.example.com/x"));
    assert!(!is(pattern, "https://acme.example.com:81/x"));
    assert_eq!(
        params("*://:t.example.com:*/x", "http://a.example.com:81/x"),
        vec![p("0", &["http"]), p("t", &["a"]), p("1", &["81"])]
    );
}

#[test]
fn port_wildcard_matches_any_port_including_none() {
    let pattern = "http://localhost:*/x";
    assert_eq!(
        params(pattern, "http://localhost:3000/x"),
        vec![p("0", &["3000"])]
    );
    assert_eq!(params(pattern, "http://localhost/x"), vec![]);
    assert_eq!(params(pattern, "http://localhost:80/x"), vec![]);
    assert!(!is(pattern, "https://localhost:3000/x"));
    assert!(!is(pattern, "http://127.0.0.1:3000/x"));
    assert!(!is(pattern, "http://localhost:3000/y"));
    assert_eq!(
        params("http://localhost:*/u/:id", "http://localhost:1/u/7"),
        vec![p("0", &["1"]), p("id", &["7"])]
    );
}

#[test]
fn wildcard_led_patterns_match_the_clean_url() {
    assert!(is("*", "https://anything.test/a/b?c=d#e"));
    assert!(is("*", "http://localhost:3000"));
    assert_eq!(
        params("*", "http://x.test/a"),
        vec![p("0", &["http://x.test/a"])]
    );

    assert!(is("*/user", "https://api.example.com/user"));
    assert!(is("*/user", "http://localhost:3000/user/"));
    assert!(!is("*/user", "http://localhost:3000/users"));
    assert_eq!(
        params("*/api/*", "https://x.test/api/a/b"),
        vec![p("0", &["https://x.test"]), p("1", &["a/b"])]
    );
    assert!(matches!(pat("*/user").kind, Kind::WildcardLed));
    // Base is irrelevant for `*`-led patterns.
    assert!(mb("*/user", "https://a.test/user", "http://b.test").is_some());
    // The credentials of the request are not part of the clean URL.
    assert_eq!(
        params("*/user", "https://me:pw@x.test:8443/user"),
        vec![p("0", &["https://x.test:8443"])]
    );
    // Scheme and port colons are literal; `:*` is an optional port.
    assert!(is("*://localhost:3000/x", "http://localhost:3000/x"));
    assert!(!is("*://localhost:3000/x", "http://localhost:3001/x"));
    assert!(is("*://localhost:*/x", "http://localhost/x"));
    assert_eq!(
        params("*://localhost:*/x", "http://localhost:9/x"),
        vec![p("0", &["http"]), p("1", &["9"])]
    );
    // Elsewhere a `:name` is a parameter as usual.
    assert_eq!(
        params("*/users/:id", "http://a.test/users/5"),
        vec![p("0", &["http://a.test"]), p("id", &["5"])]
    );
}

#[test]
fn path_matching_is_case_insensitive() {
    assert!(is("/Posts/:id", "http://x.test/posts/1"));
    assert!(is("/posts", "http://x.test/POSTS"));
    assert_eq!(
        params("/posts/:id", "http://x.test/POSTS/AbC"),
        vec![p("id", &["AbC"])]
    );
}

#[test]
fn trailing_slash_is_tolerated_on_the_request_only() {
    assert!(is("/posts", "http://x.test/posts/"));
    assert!(is("/posts/", "http://x.test/posts/"));
    assert!(!is("/posts/", "http://x.test/posts"));
    assert!(is("/posts/:id", "http://x.test/posts/1/"));
    assert!(!is("/posts", "http://x.test/posts//"));
}

#[test]
fn request_query_and_hash_are_ignored() {
    assert!(is("/posts", "http://x.test/posts?page=2"));
    assert!(is("/posts", "http://x.test/posts#top"));
    assert_eq!(
        params("/posts/:id", "http://x.test/posts/1?x=2#y"),
        vec![p("id", &["1"])]
    );
}

#[test]
fn pattern_query_and_hash_are_stripped_and_flagged() {
    for (pattern, request) in [
        ("/posts?page=1", "http://x.test/posts"),
        ("/posts#top", "http://x.test/posts"),
        ("/posts/:id?page=1", "http://x.test/posts/3"),
        ("https://api.test?x=1", "https://api.test/"),
        ("https://api.test#frag", "https://api.test/"),
        ("https://api.test/a?x", "https://api.test/a"),
        ("*/a?x", "https://api.test/a"),
    ] {
        let compiled = pat(pattern);
        assert!(compiled.had_query_or_hash(), "{pattern}");
        assert!(compiled.matches(&url(request), None).is_some(), "{pattern}");
        assert_eq!(compiled.as_str(), pattern);
    }
    assert!(!is("/posts?page=1", "http://x.test/posts/1"));
    // An optional modifier is not a query.
    assert!(!pat("/posts/:id?").had_query_or_hash());
    assert!(!pat("/a/:b?/c").had_query_or_hash());
    assert!(!pat("/posts").had_query_or_hash());
    // An escaped '?' or '#' is literal text, encoded as in a path.
    assert!(!pat(r"/what\?").had_query_or_hash());
    assert!(is(r"/what\?", "http://x.test/what%3F"));
    assert!(is(r"/c\#", "http://x.test/c%23"));
}

#[test]
fn named_params() {
    assert_eq!(
        params("/posts/:id", "http://x.test/posts/1"),
        vec![p("id", &["1"])]
    );
    assert_eq!(
        params(
            "/users/:userId/books/:book_id",
            "http://x.test/users/u1/books/b2"
        ),
        vec![p("userId", &["u1"]), p("book_id", &["b2"])]
    );
    assert!(!is("/posts/:id", "http://x.test/posts"));
    assert!(!is("/posts/:id", "http://x.test/posts/"));
    assert!(!is("/posts/:id", "http://x.test/posts/1/2"));
    // Two params in one segment: the first is lazy.
    assert_eq!(
        params("/range/:from-:to", "http://x.test/range/1-2-3"),
        vec![p("from", &["1"]), p("to", &["2-3"])]
    );
    assert!(!m("/posts/:id", "http://x.test/posts/1").unwrap()[0].repeating());
}

#[test]
fn optional_params() {
    assert_eq!(params("/posts/:id?", "http://x.test/posts"), vec![]);
    assert_eq!(params("/posts/:id?", "http://x.test/posts/"), vec![]);
    assert_eq!(
        params("/posts/:id?", "http://x.test/posts/1"),
        vec![p("id", &["1"])]
    );
    assert!(!is("/posts/:id?", "http://x.test/posts/1/2"));
    assert!(!is("/posts/:id?", "http://x.test/postsx"));
    assert_eq!(params("/a/:b?/c", "http://x.test/a/c"), vec![]);
    assert_eq!(
        params("/a/:b?/c", "http://x.test/a/b/c"),
        vec![p("b", &["b"])]
    );
    // '.' is a prefix too, as in path-to-regexp.
    assert_eq!(params("/file.:ext?", "http://x.test/file"), vec![]);
    assert_eq!(
        params("/file.:ext?", "http://x.test/file.json"),
        vec![p("ext", &["json"])]
    );
    let found = m("/posts/:id?", "http://x.test/posts/1").unwrap();
    assert!(!found[0].repeating());
}

#[test]
fn zero_or_more_params() {
    assert_eq!(params("/files/:path*", "http://x.test/files"), vec![]);
    assert_eq!(params("/files/:path*", "http://x.test/files/"), vec![]);
    assert_eq!(
        params("/files/:path*", "http://x.test/files/a"),
        vec![p("path", &["a"])]
    );
    assert_eq!(
        params("/files/:path*", "http://x.test/files/a/b/c"),
        vec![p("path", &["a", "b", "c"])]
    );
    assert!(!is("/files/:path*", "http://x.test/filesa"));
    let found = m("/files/:path*", "http://x.test/files/a/b").unwrap();
    assert!(found[0].repeating());
    assert_eq!(
        params("/files/:path*/meta", "http://x.test/files/a/b/meta"),
        vec![p("path", &["a", "b"])]
    );
    assert_eq!(
        params("/files/:path*/meta", "http://x.test/files/meta"),
        vec![]
    );
}

#[test]
fn one_or_more_params() {
    assert!(!is("/files/:path+", "http://x.test/files"));
    assert!(!is("/files/:path+", "http://x.test/files/"));
    assert_eq!(
        params("/files/:path+", "http://x.test/files/a"),
        vec![p("path", &["a"])]
    );
    assert_eq!(
        params("/files/:path+", "http://x.test/files/a/b"),
        vec![p("path", &["a", "b"])]
    );
    assert!(m("/files/:path+", "http://x.test/files/a").unwrap()[0].repeating());
    // Repeated segments are decoded one by one: an encoded '/' stays inside.
    assert_eq!(
        params("/files/:path+", "http://x.test/files/a%2Fb/c%20d"),
        vec![p("path", &["a/b", "c d"])]
    );
}

#[test]
fn unnamed_wildcards() {
    assert_eq!(
        params("/user/*", "http://x.test/user/a/b"),
        vec![p("0", &["a/b"])]
    );
    assert_eq!(
        params("/user/*", "http://x.test/user/"),
        vec![p("0", &[""])]
    );
    // Like MSW: the wildcard's '/' prefix is required.
    assert!(!is("/user/*", "http://x.test/user"));
    assert!(!is("/user/*", "http://x.test/users"));
    assert_eq!(
        params("/a/*/b/*", "http://x.test/a/x/b/y/z"),
        vec![p("0", &["x"]), p("1", &["y/z"])]
    );
    assert_eq!(
        params("/a/**", "http://x.test/a/b/c"),
        vec![p("0", &["b/c"])]
    );
    assert!(!m("/a/*", "http://x.test/a/b/c").unwrap()[0].repeating());
    // Name-like text before '*' stays literal.
    assert_eq!(
        params("/files/abc*", "http://x.test/files/abcdef"),
        vec![p("0", &["def"])]
    );
    assert!(!is("/files/abc*", "http://x.test/files/ab"));
    assert_eq!(
        params("/*.json", "http://x.test/a/b.json"),
        vec![p("0", &["a/b"])]
    );
    // A modifier may follow a wildcard, as on `(.*)` in path-to-regexp.
    assert_eq!(params("/user/*?", "http://x.test/user"), vec![]);
    // Wildcards and names mix; unnamed indices count wildcards only.
    assert_eq!(
        params("/:lang/*/:id", "http://x.test/en/a/b/7"),
        vec![p("lang", &["en"]), p("0", &["a/b"]), p("id", &["7"])]
    );
}

#[test]
fn params_are_percent_decoded() {
    assert_eq!(
        params("/users/:name", "http://x.test/users/John%20Doe"),
        vec![p("name", &["John Doe"])]
    );
    assert_eq!(
        params("/q/:v", "http://x.test/q/a+b%2Bc"),
        vec![p("v", &["a+b+c"])]
    );
    assert_eq!(
        params("/q/:v", "http://x.test/q/caf%C3%A9"),
        vec![p("v", &["café"])]
    );
    // Invalid UTF-8 after decoding: the raw text is kept.
    assert_eq!(
        params("/q/:v", "http://x.test/q/%FF%FE"),
        vec![p("v", &["%FF%FE"])]
    );
    assert_eq!(
        params("/q/*", "http://x.test/q/a%20b/c"),
        vec![p("0", &["a b/c"])]
    );
}

#[test]
fn literals_are_encoded_like_request_paths() {
    assert!(is("/users/John Doe", "http://x.test/users/John%20Doe"));
    assert!(is("/café", "http://x.test/caf%C3%A9"));
    assert!(is("/café", "http://x.test/café"));
    assert!(is("/caf%C3%A9", "http://x.test/caf%c3%a9"));
    assert!(is(r"/a\{b\}", "http://x.test/a%7Bb%7D"));
    // Regex metacharacters in literals are escaped.
    assert!(is("/a.b", "http://x.test/a.b"));
    assert!(!is("/a.b", "http://x.test/axb"));
    assert!(is("/a$b^c|d[e]", "http://x.test/a$b^c|d[e]"));
    assert!(is("/a)", "http://x.test/a)"));
}

#[test]
fn escapes_make_special_characters_literal() {
    assert!(is(r"/a\+b", "http://x.test/a+b"));
    assert!(is(r"/time/12\:30", "http://x.test/time/12:30"));
    assert!(is(r"/a\*", "http://x.test/a*"));
    assert!(!is(r"/a\*", "http://x.test/ab"));
    assert!(is(r"/a\(b\)", "http://x.test/a(b)"));
    // An escaped '/' is no prefix: the param is then not optional-with-slash.
    assert!(is(r"/a\/:b?", "http://x.test/a/"));
    assert!(!is(r"/a\/:b?", "http://x.test/a"));
}

#[test]
fn repeated_name_keeps_the_last_value() {
    assert_eq!(
        params("/:id/:id", "http://x.test/1/2"),
        vec![p("id", &["2"])]
    );
    // An absent later occurrence does not erase an earlier value.
    assert_eq!(
        params("/:id/x/:id?", "http://x.test/1/x"),
        vec![p("id", &["1"])]
    );
}

#[test]
fn custom_param_patterns() {
    assert_eq!(
        params(r"/users/:id(\d+)", "http://x.test/users/42"),
        vec![p("id", &["42"])]
    );
    assert!(!is(r"/users/:id(\d+)", "http://x.test/users/abc"));
    assert_eq!(
        params(r"/v/:version(v1|v2)/x", "http://x.test/v/V2/x"),
        vec![p("version", &["V2"])]
    );
    assert!(!is(r"/v/:version(v1|v2)/x", "http://x.test/v/v3/x"));
    assert_eq!(
        params(r"/n/:ids(\d+)+", "http://x.test/n/1/2/3"),
        vec![p("ids", &["1", "2", "3"])]
    );
    assert!(!is(r"/n/:ids(\d+)+", "http://x.test/n/1/a"));
    assert_eq!(params(r"/n/:id(\d+)?", "http://x.test/n"), vec![]);
    // Nested non-capturing groups and escaped parens are fine.
    assert_eq!(
        params(r"/g/:x((?:ab)+\))", "http://x.test/g/abab)"),
        vec![p("x", &["abab)"])]
    );
    // A custom pattern may span segments.
    assert_eq!(
        params(r"/raw/:rest(.*)", "http://x.test/raw/a/b"),
        vec![p("rest", &["a/b"])]
    );
}

#[test]
fn errors_report_exact_positions() {
    let cases: &[(&str, usize, &str)] = &[
        ("", 0, "must be an absolute URL"),
        ("posts", 0, "must be an absolute URL"),
        ("posts/:id", 0, "start with '/'"),
        ("ftp:nonsense", 0, "must be an absolute URL"),
        ("http:/x.test/a", 0, "must be an absolute URL"),
        ("1http://x.test", 0, "must be an absolute URL"),
        (" /posts", 0, "must be an absolute URL"),
        ("/posts/:", 7, "missing parameter name"),
        ("/posts/:/x", 7, "missing parameter name"),
        ("/a/:-b", 3, "missing parameter name"),
        ("/a:*", 2, "missing parameter name"),
        ("/a/{b}", 3, "'{'"),
        ("/a/b}", 4, "'}'"),
        ("/a/(b)", 3, "'('"),
        ("/a/*(x)", 4, "'('"),
        ("/a/+", 3, "'+'"),
        ("/a+", 2, "'+'"),
        ("/a/:id*+", 7, "'+'"),
        ("/a/:id**", 7, "at most one modifier"),
        ("/a:id*", 5, "cannot repeat parameter \"id\""),
        ("/a-*+", 4, "cannot repeat parameter \"0\""),
        ("/a\\", 2, "trailing '\\'"),
        ("/u/:id(", 6, "unbalanced"),
        ("/u/:id(\\d+", 6, "unbalanced"),
        ("/u/:id()", 6, "empty custom pattern"),
        ("/u/:id([a-)", 6, "invalid custom pattern"),
        (
            "/u/:id(\\p{L}+)",
            6,
            "Unicode character classes are not supported",
        ),
        ("/u/:id((\\d+))", 6, "capturing groups"),
        ("/u/:id(\\d+)(x)", 11, "'('"),
        ("https://", 8, "missing host"),
        ("https:///a", 8, "missing host"),
        ("https://:3000/a", 8, "missing host"),
        ("https://user:pw@x.test/a", 15, "credentials"),
        ("http://localhost:abc/a", 17, "is not a port"),
        ("http://127.0.0.1:port/a", 17, "is not a port"),
        ("http://localhost:30:00/a", 19, "invalid port"),
        ("http://localhost:99999/a", 17, "out of range"),
        ("http://x.test:3*/a", 15, "invalid port"),
        ("https://:.example.com", 8, "missing parameter name"),
        ("https://api.:.example.com", 12, "missing parameter name"),
        (
            "http://localhost::port/x",
            17,
            "cannot be a named parameter",
        ),
        ("https://:id.test/users/:id", 23, "\"id\" is used twice"),
        ("https://:a.:a.test/", 11, "\"a\" is used twice"),
        ("https://:a.:b.test/:c/:b", 22, "\"b\" is used twice"),
        ("*://:id.test/users/:id", 19, "\"id\" is used twice"),
        ("https://:sub?.example.com/", 12, "right after a '.'"),
        ("https://api-:r?.example.com/", 14, "right after a '.'"),
        ("https://api-:r+.x.test/", 14, "cannot repeat"),
        ("https://a{b}.test/a", 9, "unexpected character '{' in host"),
        ("https://a!b.test/a", 9, "unexpected character '!' in host"),
        ("https://a+b.test/a", 9, "unexpected character '+' in host"),
        (
            "https://a\\/b.test/a",
            10,
            "unexpected character '/' in host",
        ),
        ("https://:id(\\d+.test/a", 11, "unbalanced"),
        ("https://*.bücher.de/x", 11, "IDNA form"),
        ("https://:a.bücher.de/x", 12, "IDNA form"),
        ("https://[::1/a", 8, "unclosed '['"),
        ("https://[::1]x/a", 13, "after an IPv6 host"),
        ("https://x.test/a/:", 17, "missing parameter name"),
        ("*/a/{", 4, "'{'"),
        ("*:", 1, "missing parameter name"),
    ];
    for &(pattern, position, reason) in cases {
        let e = err(pattern);
        assert_eq!(e.pattern, pattern);
        assert_eq!(e.position, position, "position for {pattern:?}: {e}");
        assert!(
            e.reason.contains(reason),
            "reason for {pattern:?}: {:?}",
            e.reason
        );
    }
}

#[test]
fn error_display_points_at_the_position() {
    let e = err("/posts/:/x");
    assert_eq!(
        e.to_string(),
        format!(
            "invalid path pattern \"/posts/:/x\" at position 7: {}\n  /posts/:/x\n         ^",
            e.reason
        )
    );
    let e = err("");
    assert!(e.to_string().ends_with("\n  \n  ^"));
}

#[test]
fn index_keys() {
    let key = |s: &str| pat(s).index_key();
    let k = |origin: Option<&str>, prefix: &str| IndexKey {
        origin: origin.map(str::to_owned),
        path_prefix: prefix.to_owned(),
    };
    assert_eq!(key("/posts/:id"), k(None, "/posts"));
    assert_eq!(key("/posts/:id?"), k(None, "/posts"));
    assert_eq!(key("/Posts/All"), k(None, "/posts/all"));
    assert_eq!(key("/files/:path*"), k(None, "/files"));
    assert_eq!(key("/user/*"), k(None, "/user"));
    assert_eq!(key("/files/abc*"), k(None, "/files/abc"));
    assert_eq!(key("/file.:ext?"), k(None, "/file"));
    assert_eq!(key("/range/:from-:to"), k(None, "/range"));
    assert_eq!(key("/users/John Doe"), k(None, "/users/john%20doe"));
    assert_eq!(key("/café/:x"), k(None, "/caf%c3%a9"));
    assert_eq!(key("/posts?x=1"), k(None, "/posts"));
    assert_eq!(key("*/user"), k(None, ""));
    assert_eq!(key("*"), k(None, ""));
    assert_eq!(
        key("https://API.example.com/User/:id"),
        k(Some("https://api.example.com"), "/user")
    );
    assert_eq!(key("https://x.test:443/a"), k(Some("https://x.test"), "/a"));
    assert_eq!(
        key("http://localhost:3000"),
        k(Some("http://localhost:3000"), "/")
    );
    assert_eq!(key("https://*.x.test/a/:b"), k(None, "/a"));
    assert_eq!(key("http://localhost:*/a"), k(None, "/a"));
    // A host param is no literal origin either.
    assert_eq!(key("https://:t.example.com/a/:b"), k(None, "/a"));
    assert_eq!(key("https://api.:r?.example.com"), k(None, "/"));
    assert_eq!(
        key("http://[::1]:8080/a"),
        k(Some("http://[::1]:8080"), "/a")
    );
}

const PATTERNS: &[&str] = &[
    "/",
    "/posts",
    "/posts/",
    "/posts/:id",
    "/posts/:id?",
    "/posts/:id/comments",
    "/files/:path*",
    "/files/:path+",
    "/files/:path*/meta",
    "/user/*",
    "/a/*/b/*",
    "/*",
    "/*.json",
    "/file.:ext?",
    "/files/abc*",
    r"/users/:id(\d+)",
    "/range/:from-:to",
    "/Users/John Doe",
    "/café",
    "https://api.example.com",
    "https://api.example.com/posts/:id?",
    "http://localhost:3000/posts/:id",
    "https://*.example.com/user/*",
    "http://localhost:*/files/:path*",
    "https://:sub.example.com/user/*",
    "https://:a.:b.example.com/posts/:id",
    "https://api.:region?.example.com/posts/:id?",
    "http://:host:3000/posts",
    "*://:sub.example.com/api/:v",
    "*",
    "*/user",
    "*/api/*",
    "*://localhost:3000/posts",
];

const URLS: &[&str] = &[
    "http://localhost:3000/",
    "http://localhost:3000/posts",
    "http://localhost:3000/posts/",
    "http://localhost:3000/POSTS/1",
    "http://localhost:3000/posts/1/comments",
    "http://localhost/files",
    "http://localhost/files/a/b/c",
    "http://localhost/files/a/meta",
    "https://api.example.com/",
    "https://api.example.com/posts/7?x=1",
    "https://api.example.com/user/a/b",
    "https://a.b.example.com/user/",
    "https://api.example.com/api/v1",
    "http://x.test/user/",
    "http://x.test/a/1/b/2",
    "http://x.test/x.json",
    "http://x.test/file",
    "http://x.test/file.tar",
    "http://x.test/files/abcd",
    "http://x.test/users/42",
    "http://x.test/range/1-2",
    "http://x.test/users/john%20doe",
    "http://x.test/caf%C3%A9",
    "http://x.test/%E2%82%AC/x",
];

#[test]
fn index_prefix_is_a_true_prefix_of_every_match() {
    let mut matched = 0;
    for pattern in PATTERNS {
        let compiled = pat(pattern);
        let key = compiled.index_key();
        for request in URLS {
            let request = url(request);
            if compiled.matches(&request, None).is_some() {
                matched += 1;
                let path = request.path().to_ascii_lowercase();
                assert!(
                    path.starts_with(&key.path_prefix),
                    "{pattern} matched {request} but {path:?} lacks prefix {:?}",
                    key.path_prefix
                );
                if let Some(origin) = &key.origin {
                    assert_eq!(
                        request.origin().ascii_serialization().to_ascii_lowercase(),
                        *origin,
                        "{pattern} vs {request}"
                    );
                }
            }
        }
    }
    // Make sure the check is not vacuous.
    assert!(matched > 40, "only {matched} matches");
}

/// A tiny deterministic generator; no dev-dependencies needed.
struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn random_input_never_panics() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let alphabet: Vec<char> = ":/*?+(){}\\#.-_aZ09é ".chars().collect();
    let heads = [
        "",
        "/",
        "*",
        "http://",
        "https://a.test",
        "http://x:",
        "*://",
        "https://:",
        "https://a.:",
    ];
    let urls: Vec<Url> = [
        "http://localhost:3000/",
        "https://a.test/a/b/c",
        "http://x:8080/posts/1?x#y",
        "https://a.test/%FF/(x)",
    ]
    .iter()
    .map(|u| url(u))
    .collect();
    let base = url("https://a.test/");
    let mut parsed = 0;
    for round in 0..4000 {
        let text: String = if round % 4 == 0 {
            // Raw bytes, lossily decoded: arbitrary characters.
            let bytes: Vec<u8> = (0..rng.below(24)).map(|_| rng.next() as u8).collect();
            String::from_utf8_lossy(&bytes).into_owned()
        } else {
            let mut s = heads[rng.below(heads.len())].to_owned();
            for _ in 0..rng.below(16) {
                s.push(alphabet[rng.below(alphabet.len())]);
            }
            s
        };
        match PathPattern::parse(&text) {
            Ok(compiled) => {
                parsed += 1;
                let key = compiled.index_key();
                for u in &urls {
                    if compiled.matches(u, None).is_some() {
                        assert!(u.path().to_ascii_lowercase().starts_with(&key.path_prefix));
                    }
                    let _ = compiled.matches(u, Some(&base));
                }
            }
            Err(e) => {
                assert!(e.position <= text.chars().count(), "{e}");
                let _ = e.to_string();
            }
        }
    }
    assert!(parsed > 200, "only {parsed} random patterns parsed");
}

/// Runs `pattern`'s tokens through the step matcher and the regex they
/// compile to on `haystack`: the same answer and the same params.
fn assert_steps_agree(text: &str, tokens: &[Token], ctx: &Ctx<'_>, haystack: &str) -> Option<bool> {
    let fast = compile_path(tokens, ctx).unwrap();
    let Matcher::Steps { fallback, .. } = &fast.matcher else {
        return None;
    };
    let slow = compiler::compile_regex(tokens, ctx).unwrap();
    let (mut a, mut b) = (RawParams::new(), RawParams::new());
    let hit = capture(&fast, haystack, &mut a);
    assert_eq!(
        hit,
        capture(&slow, haystack, &mut b),
        "{text:?} on {haystack:?}"
    );
    assert_eq!(a, b, "{text:?} on {haystack:?}");
    assert_eq!(
        hit,
        fast.matcher.is_match(haystack),
        "{text:?} on {haystack:?}"
    );
    Some(fallback.is_some())
}

/// The step matcher agrees with the regex the same tokens compile to,
/// params included, on random patterns (paths, hosts, `*`-led URLs) and
/// random haystacks, short and over the step limit.
#[test]
fn step_matcher_agrees_with_the_regex() {
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    let pieces = [
        "/a", "/B", "/:p", "/:q", ":r", "-x", ".y", "/:s?", "/*", "*", "/a-", "/%7E", "/é",
        ".json", "-",
    ];
    let hosts = ["a", "x", ":h", "-:h", ".a", ".:k", "b.:k", "*", ".*"];
    let led = ["*", "/a", "/:p", "://", ".x", ":*", "/*", "-y"];
    let parts = [
        "/", "a", "b", "x", "-", ".", "y", "%41", "ab", ":", "é", ".json", "://",
    ];
    let (mut stepped, mut free, mut matched, mut long) = (0, 0, 0, 0);
    for round in 0..4000 {
        let (choices, head): (&[&str], &str) = match round % 4 {
            0 => (&hosts, ""),
            1 => (&led, "*"),
            _ => (&pieces, ""),
        };
        let text: String = std::iter::once(head)
            .chain((0..1 + rng.below(4)).map(|_| choices[rng.below(choices.len())]))
            .collect();
        let chars: Vec<char> = text.chars().collect();
        let mut ctx = Ctx {
            source: &text,
            next_unnamed: 0,
            had_query_or_hash: false,
        };
        let tokens = match round % 4 {
            0 => tokenize(&chars, 0, &mut ctx, &tokenizer::HOST_SYNTAX),
            1 => parse_wildcard_led(&chars, &mut ctx),
            _ => tokenize(&chars, 0, &mut ctx, &PATH_SYNTAX),
        };
        let Ok(tokens) = tokens else { continue };
        for attempt in 0..20 {
            let mut haystack: String = (0..rng.below(8))
                .map(|_| parts[rng.below(parts.len())])
                .collect();
            if attempt == 0 {
                // Over the step limit: the regex answers for a free parameter.
                haystack = format!("{}{haystack}", "a/-.".repeat(70));
                long += 1;
            }
            let Some(has_free) = assert_steps_agree(&text, &tokens, &ctx, &haystack) else {
                break;
            };
            stepped += usize::from(attempt == 0);
            free += usize::from(attempt == 0 && has_free);
            matched += usize::from(capture(
                &compile_path(&tokens, &ctx).unwrap(),
                &haystack,
                &mut RawParams::new(),
            ));
        }
    }
    // Make sure every side was exercised.
    assert!(stepped > 1000, "only {stepped} stepped patterns");
    assert!(free > 300, "only {free} patterns with a free parameter");
    assert!(matched > 500, "only {matched} matches");
    assert!(long > 1000);
}

#[test]
fn common_patterns_need_no_regex() {
    for pattern in [
        "/users/:id",
        "/users/:id/posts/:post",
        "https://:tenant.example.com/users/:id",
        "https://api.example.com/files/:name.json",
        "/v1/:a-:b/x",
        "*/user",
        "https://api.example.com/*",
        "*",
        // Two free parameters, a custom pattern, a modifier: the regex.
        "/files/:a-:b-:c",
        "/u/:id(\\d+)",
        "/a/:p?",
    ] {
        let compiled = pat(pattern);
        let host_is_regex = matches!(
            &compiled.kind,
            Kind::Absolute(OriginMatcher { host: HostMatcher::Pattern(c), .. })
                if matches!(c.matcher, Matcher::Regex(_))
        );
        let uses_regex = host_is_regex || matches!(compiled.path.matcher, Matcher::Regex(_));
        let expected = ["/files/:a-:b-:c", "/u/:id(\\d+)", "/a/:p?"].contains(&pattern);
        assert_eq!(uses_regex, expected, "{pattern}");
    }
}

#[test]
fn a_free_parameter_takes_the_regexs_choice() {
    // Lazy: the shortest name before ".json"; greedy: the longest prefix.
    assert_eq!(
        params("/files/:name.json", "http://x.test/files/a.b.json"),
        vec![p("name", &["a.b"])]
    );
    assert_eq!(
        params("*/user", "https://x.test/a/user/user/"),
        vec![p("0", &["https://x.test/a/user"])]
    );
    assert_eq!(
        params("/v1/:a-:b/x", "http://x.test/v1/one-two-three/x"),
        vec![p("a", &["one"]), p("b", &["two-three"])]
    );
    assert!(!is("/files/:name.json", "http://x.test/files/.json"));
    // A URL over the step limit gets the same answer through the regex.
    let name = "a.".repeat(200);
    let long = format!("http://x.test/files/{name}.json");
    assert_eq!(
        params("/files/:name.json", &long),
        vec![p("name", &[&name])]
    );
}

#[test]
fn a_wildcard_led_pattern_checks_its_longest_literal_before_matching() {
    assert_eq!(pat("*/__mocklib/*").required.as_deref(), Some("/__mocklib"));
    assert!(is("*/__mocklib/*", "http://127.0.0.1:9/__MOCKLIB/handlers"));
    assert!(!is("*/__mocklib/*", "http://127.0.0.1:9/user"));
    // Text a URL percent-encodes is not required as written.
    assert_eq!(pat("*/caf%C3%A9").required.as_deref(), None);
    assert!(is("*/café", "https://x.test/caf%C3%A9"));
    assert!(is("*/a b/*", "https://x.test/a%20b/c"));
    assert_eq!(pat("/users").required, None);
}

/// A request whose URL is not parsed yet (a plain target under the
/// listener's origin) matches every kind of pattern as its parsed URL does;
/// `*`-led patterns look for their literal in the origin and path pieces.
#[test]
fn unparsed_urls_match_as_parsed_ones() {
    use crate::message::request::{Request, Target};
    let origin = std::sync::Arc::new(url("http://127.0.0.1:4321/"));
    let base = url("http://127.0.0.1:4321/");
    let patterns = [
        "*/__mocklib/*",
        "*/user",
        "*0.1:4321/us*",
        "*:4321/*",
        "*127.0.0.2*",
        "/user",
        "/users/:id",
        "http://127.0.0.1:4321/user",
        "http://127.0.0.1:*/users/*",
        "*",
    ];
    for target in [
        "/user",
        "/users/7?x=1",
        "/__mocklib/handlers",
        "/",
        "/a/user",
    ] {
        let parsed = url(&format!("http://127.0.0.1:4321{target}"));
        for pattern in patterns {
            let path: http::uri::PathAndQuery = target.parse().unwrap();
            let unparsed = Request::from_owned_parts(
                http::Method::GET,
                Target::Under(std::sync::Arc::clone(&origin), path),
                http::Version::HTTP_11,
                http::HeaderMap::new(),
                bytes::Bytes::new(),
            );
            let compiled = pat(pattern);
            let expected = compiled.matches(&parsed, Some(&base)).map(|p| p.len());
            let got = compiled
                .matches(unparsed.url_parts(), Some(&base))
                .map(|p| p.len());
            assert_eq!(got, expected, "{pattern} against {target}");
            // Turned down without parsing a URL: the admin API's pattern
            // is tried on every request `mocklib serve` gets.
            if pattern == "*/__mocklib/*" && expected.is_none() {
                assert!(unparsed.url_parts().unparsed().is_some(), "{target}");
            }
        }
    }
    assert!(contains_across(
        "http://127.0.0.1:4321",
        "/user",
        "0.1:4321/us"
    ));
    assert!(contains_across("http://a", "/B", "a/b"));
    assert!(!contains_across("http://a", "/b", "a/c"));
    assert!(!contains_across("ab", "", "abc"));
}
