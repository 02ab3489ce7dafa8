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
//! Why `fake`: it is maintained, has these fourteen locales, generates
//! from any `rand` generator (so a seed decides everything), and costs the
//! command little: `fake`, `deunicode` and `either` to compile (`rand`
//! 0.10 and `chacha20` come with tungstenite already), and in the release
//! command 0.22 MB of code (1.4 %, `scripts/size-by-crate`) plus its word
//! lists, at most 0.6 MB.

use fake::Fake;
use fake::faker;
use fake::locales::{self, Data};
use minijinja::value::Kwargs;
use minijinja::{Error, ErrorKind, State};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// The kinds `fake()` knows, as a template names them.
pub(crate) const KINDS: &[&str] = &[
    "name.first",
    "name.last",
    "name.full",
    "name.title",
    "name.suffix",
    "internet.email",
    "internet.free_email",
    "internet.username",
    "internet.domain_suffix",
    "internet.ipv4",
    "internet.ipv6",
    "internet.mac_address",
    "internet.user_agent",
    "address.street",
    "address.building_number",
    "address.secondary",
    "address.city",
    "address.state",
    "address.state_abbr",
    "address.zip",
    "address.postcode",
    "address.country",
    "address.country_code",
    "address.time_zone",
    "address.latitude",
    "address.longitude",
    "phone.number",
    "phone.cell",
    "company.name",
    "company.suffix",
    "company.industry",
    "company.profession",
    "company.buzzword",
    "company.catch_phrase",
    "job.title",
    "job.field",
    "lorem.word",
    "lorem.sentence",
    "lorem.paragraph",
    "currency.code",
    "currency.name",
    "boolean",
    "uuid",
    "date.past",
    "date.future",
    "date.birthday",
];

/// The locales `locale=` accepts.
const LOCALES: &[&str] = &[
    "en", "fr_fr", "de_de", "it_it", "nl_nl", "pt_br", "pt_pt", "ja_jp", "zh_cn", "zh_tw", "ar_sa",
    "tr_tr", "fa_ir", "cy_gb",
];

/// The template function `fake(kind, locale=, seed=, random=)`.
pub(crate) fn fake(state: &mut State, kind: &str, options: Kwargs) -> Result<String, Error> {
    let locale: Option<String> = options.get("locale")?;
    let seed: Option<minijinja::Value> = options.get("seed")?;
    let random: Option<bool> = options.get("random")?;
    options.assert_all_used()?;
    if !KINDS.contains(&kind) {
        return Err(invalid(format!(
            "fake({kind:?}): no such kind; known: {}",
            KINDS.join(", ")
        )));
    }
    let mut rng = if random == Some(true) {
        StdRng::seed_from_u64(fastrand::u64(..))
    } else {
        // Each call of the render its own value: the nth call in a field.
        let count = state
            .get_temp("fake()")
            .and_then(|value| u64::try_from(value).ok())
            .unwrap_or(0);
        state.set_temp("fake()", minijinja::Value::from(count + 1));
        let mut hash = Fnv::new();
        match &seed {
            Some(seed) => hash.write(seed.to_string().as_bytes()),
            None => {
                let request = state.lookup("request");
                for part in ["method", "url", "body"] {
                    let value = request
                        .as_ref()
                        .and_then(|request| request.get_attr(part).ok())
                        .map(|value| value.to_string())
                        .unwrap_or_default();
                    hash.write(value.as_bytes());
                }
            }
        }
        hash.write(state.name().as_bytes());
        hash.write(&count.to_le_bytes());
        StdRng::seed_from_u64(hash.finish())
    };
    let locale = locale.as_deref().unwrap_or("en");
    let generated = match locale {
        "en" => generate(locales::EN, kind, &mut rng),
        "fr_fr" => generate(locales::FR_FR, kind, &mut rng),
        "de_de" => generate(locales::DE_DE, kind, &mut rng),
        "it_it" => generate(locales::IT_IT, kind, &mut rng),
        "nl_nl" => generate(locales::NL_NL, kind, &mut rng),
        "pt_br" => generate(locales::PT_BR, kind, &mut rng),
        "pt_pt" => generate(locales::PT_PT, kind, &mut rng),
        "ja_jp" => generate(locales::JA_JP, kind, &mut rng),
        "zh_cn" => generate(locales::ZH_CN, kind, &mut rng),
        "zh_tw" => generate(locales::ZH_TW, kind, &mut rng),
        "ar_sa" => generate(locales::AR_SA, kind, &mut rng),
        "tr_tr" => generate(locales::TR_TR, kind, &mut rng),
        "fa_ir" => generate(locales::FA_IR, kind, &mut rng),
        "cy_gb" => generate(locales::CY_GB, kind, &mut rng),
        other => {
            return Err(invalid(format!(
                "fake({kind:?}, locale={other:?}): no such locale; known: {}",
                LOCALES.join(", ")
            )));
        }
    };
    // `KINDS` was checked above: a kind listed there and not generated
    // below is this file's mistake, said as one.
    generated.ok_or_else(|| {
        invalid(format!(
            "fake({kind:?}): listed but not generated, a bug of mocklib serve"
        ))
    })
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

fn invalid(message: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, message)
}

/// A value of `kind` (one of [`KINDS`]) in `locale`'s words.
fn generate<L>(locale: L, kind: &str, rng: &mut StdRng) -> Option<String>
where
    L: Data + Copy + fake::faker::impls::address::CityNameGenFn,
{
    use faker::address::raw as address;
    use faker::company::raw as company;
    use faker::currency::raw as currency;
    use faker::internet::raw as internet;
    use faker::job::raw as job;
    use faker::lorem::raw as lorem;
    use faker::name::raw as name;
    use faker::phone_number::raw as phone;
    let l = locale;
    Some(match kind {
        "name.first" => name::FirstName(l).fake_with_rng(rng),
        "name.last" => name::LastName(l).fake_with_rng(rng),
        "name.full" => name::Name(l).fake_with_rng(rng),
        "name.title" => name::Title(l).fake_with_rng(rng),
        "name.suffix" => name::Suffix(l).fake_with_rng(rng),
        "internet.email" => internet::SafeEmail(l).fake_with_rng(rng),
        "internet.free_email" => internet::FreeEmail(l).fake_with_rng(rng),
        "internet.username" => internet::Username(l).fake_with_rng(rng),
        "internet.domain_suffix" => internet::DomainSuffix(l).fake_with_rng(rng),
        "internet.ipv4" => internet::IPv4(l).fake_with_rng(rng),
        "internet.ipv6" => internet::IPv6(l).fake_with_rng(rng),
        "internet.mac_address" => internet::MACAddress(l).fake_with_rng(rng),
        "internet.user_agent" => internet::UserAgent(l).fake_with_rng(rng),
        "address.street" => address::StreetName(l).fake_with_rng(rng),
        "address.building_number" => address::BuildingNumber(l).fake_with_rng(rng),
        "address.secondary" => address::SecondaryAddress(l).fake_with_rng(rng),
        "address.city" => address::CityName(l).fake_with_rng(rng),
        "address.state" => address::StateName(l).fake_with_rng(rng),
        "address.state_abbr" => address::StateAbbr(l).fake_with_rng(rng),
        "address.zip" => address::ZipCode(l).fake_with_rng(rng),
        "address.postcode" => address::PostCode(l).fake_with_rng(rng),
        "address.country" => address::CountryName(l).fake_with_rng(rng),
        "address.country_code" => address::CountryCode(l).fake_with_rng(rng),
        "address.time_zone" => address::TimeZone(l).fake_with_rng(rng),
        "address.latitude" => address::Latitude(l).fake_with_rng(rng),
        "address.longitude" => address::Longitude(l).fake_with_rng(rng),
        "phone.number" => phone::PhoneNumber(l).fake_with_rng(rng),
        "phone.cell" => phone::CellNumber(l).fake_with_rng(rng),
        "company.name" => company::CompanyName(l).fake_with_rng(rng),
        "company.suffix" => company::CompanySuffix(l).fake_with_rng(rng),
        "company.industry" => company::Industry(l).fake_with_rng(rng),
        "company.profession" => company::Profession(l).fake_with_rng(rng),
        "company.buzzword" => company::Buzzword(l).fake_with_rng(rng),
        "company.catch_phrase" => company::CatchPhrase(l).fake_with_rng(rng),
        "job.title" => job::Title(l).fake_with_rng(rng),
        "job.field" => job::Field(l).fake_with_rng(rng),
        "lorem.word" => lorem::Word(l).fake_with_rng(rng),
        "lorem.sentence" => lorem::Sentence(l, 4..10).fake_with_rng(rng),
        "lorem.paragraph" => lorem::Paragraph(l, 3..6).fake_with_rng(rng),
        "currency.code" => currency::CurrencyCode(l).fake_with_rng(rng),
        "currency.name" => currency::CurrencyName(l).fake_with_rng(rng),
        "boolean" => faker::boolean::raw::Boolean(l, 50)
            .fake_with_rng::<bool, _>(rng)
            .to_string(),
        "uuid" => uuid_of(rng.random()),
        "date.past" => days_from_today(-(rng.random_range(1..=365))),
        "date.future" => days_from_today(rng.random_range(1..=365)),
        "date.birthday" => days_from_today(-(rng.random_range(18 * 365..=80 * 365))),
        _ => return None,
    })
}

/// A version 4 UUID of 16 random bytes.
pub(crate) fn uuid_of(mut bytes: [u8; 16]) -> String {
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// The date `offset` days from today (UTC), `YYYY-MM-DD`.
fn days_from_today(offset: i64) -> String {
    let today = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs() / 86_400) as i64;
    let (year, month, day) = civil_from_days(today + offset);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The calendar date of a day count since 1970-01-01 (Howard Hinnant's
/// algorithm).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// FNV-1a, 64 bits: a seed that stays the same across runs, builds and
/// Rust versions (std's hashers promise none of that).
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
        // A separator, so that ("ab", "c") and ("a", "bc") differ.
        self.0 = (self.0 ^ 0xff).wrapping_mul(0x0100_0000_01b3);
    }

    fn finish(&self) -> u64 {
        self.0
    }
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
    fn every_listed_kind_is_generated_in_every_locale() {
        for locale in LOCALES {
            for kind in KINDS {
                let source = format!("{{{{ fake('{kind}', locale='{locale}') }}}}");
                let value = render(&source, request("http://a/"))
                    .unwrap_or_else(|error| panic!("{kind} in {locale}: {error:#}"));
                assert!(!value.is_empty(), "{kind} in {locale}");
            }
        }
    }

    #[test]
    fn dates_are_days_around_today() {
        let past = render("{{ fake('date.past') }}", request("http://a/")).unwrap();
        let birthday = render("{{ fake('date.birthday') }}", request("http://a/")).unwrap();
        assert_eq!(past.len(), 10, "{past}");
        assert!(birthday < past, "{birthday} {past}");
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

    #[test]
    fn days_become_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_418), (2025, 11, 26));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
