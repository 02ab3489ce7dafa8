//! Fake data for resolvers: names, emails, addresses, phone numbers,
//! companies, lorem ipsum, dates and UUIDs in 14 locales, from the
//! [fake](https://docs.rs/fake) crate's word lists — seeded by the request,
//! so the same request gets the same answer, run after run (a test that
//! failed replays), and two requests get different people. `mocklib serve`
//! templates call it as `fake('name.full')`.
//!
//! ```
//! use mocklib::fake::Faker;
//! use mocklib::{http, HttpResponse};
//!
//! let user = http::get("https://api.example.com/users/:id", |args| {
//!     let mut fake = Faker::for_request(&args.request);
//!     HttpResponse::json(&serde_json::json!({
//!         "id": args.params.get("id"),
//!         "name": fake.value("name.full").unwrap(),
//!         "email": fake.value("internet.email").unwrap(),
//!         "city": fake.value_in("address.city", "fr_fr").unwrap(),
//!     }))
//! });
//! # let _ = user;
//! ```
//!
//! A [`Faker`] is a sequence: each value it gives is the next of the
//! sequence its seed decides ([`Faker::for_request`]: the request's method,
//! URL and body; [`Faker::seeded`]: a number of yours, such as an id from
//! the path; [`Faker::random`]: anew each time).

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use ::fake::Fake;
use ::fake::faker;
use ::fake::locales::{self, Data};

use crate::message::request::Request;

/// The kinds `fake()` knows, as a template names them.
pub const KINDS: &[&str] = &[
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
pub const LOCALES: &[&str] = &[
    "en", "fr_fr", "de_de", "it_it", "nl_nl", "pt_br", "pt_pt", "ja_jp", "zh_cn", "zh_tw", "ar_sa",
    "tr_tr", "fa_ir", "cy_gb",
];

/// Why [`Faker`] gave no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FakeError {
    /// No such kind (see [`KINDS`]).
    #[error("fake({kind:?}): no such kind; known: {}", KINDS.join(", "))]
    UnknownKind {
        /// The kind asked for.
        kind: String,
    },
    /// No such locale (see [`LOCALES`]).
    #[error("fake({kind:?}, locale={locale:?}): no such locale; known: {}", LOCALES.join(", "))]
    UnknownLocale {
        /// The kind asked for.
        kind: String,
        /// The locale asked for.
        locale: String,
    },
}

/// A sequence of fake values: see the [module docs](self).
#[derive(Debug)]
pub struct Faker {
    rng: StdRng,
}

impl Faker {
    /// The sequence `request` decides: its method, URL and body.
    pub fn for_request(request: &Request) -> Faker {
        Faker::seeded(seed_of(&[
            request.method().as_str().as_bytes(),
            request.url().as_str().as_bytes(),
            request.body(),
        ]))
    }

    /// The sequence `seed` decides.
    pub fn seeded(seed: u64) -> Faker {
        Faker {
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// A sequence of its own each time.
    pub fn random() -> Faker {
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(0);
        Faker::seeded(hasher.finish())
    }

    /// The next value of `kind` (one of [`KINDS`], such as `name.full`), in
    /// English.
    pub fn value(&mut self, kind: &str) -> Result<String, FakeError> {
        self.value_in(kind, "en")
    }

    /// The next value of `kind` in `locale`'s words (one of [`LOCALES`]).
    pub fn value_in(&mut self, kind: &str, locale: &str) -> Result<String, FakeError> {
        if !KINDS.contains(&kind) {
            return Err(FakeError::UnknownKind {
                kind: kind.to_owned(),
            });
        }
        let rng = &mut self.rng;
        let generated = match locale {
            "en" => generate(locales::EN, kind, rng),
            "fr_fr" => generate(locales::FR_FR, kind, rng),
            "de_de" => generate(locales::DE_DE, kind, rng),
            "it_it" => generate(locales::IT_IT, kind, rng),
            "nl_nl" => generate(locales::NL_NL, kind, rng),
            "pt_br" => generate(locales::PT_BR, kind, rng),
            "pt_pt" => generate(locales::PT_PT, kind, rng),
            "ja_jp" => generate(locales::JA_JP, kind, rng),
            "zh_cn" => generate(locales::ZH_CN, kind, rng),
            "zh_tw" => generate(locales::ZH_TW, kind, rng),
            "ar_sa" => generate(locales::AR_SA, kind, rng),
            "tr_tr" => generate(locales::TR_TR, kind, rng),
            "fa_ir" => generate(locales::FA_IR, kind, rng),
            "cy_gb" => generate(locales::CY_GB, kind, rng),
            _ => {
                return Err(FakeError::UnknownLocale {
                    kind: kind.to_owned(),
                    locale: locale.to_owned(),
                });
            }
        };
        // Every listed kind is generated below (a test checks each in each
        // locale); one that is not would be this file's mistake.
        Ok(generated.unwrap_or_default())
    }
}

/// A seed from `parts` that stays the same across runs, builds and Rust
/// versions (std's hashers promise none of that): FNV-1a, 64 bits, with a
/// separator after each part (so `["ab", "c"]` and `["a", "bc"]` differ).
pub fn seed_of(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in *part {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
        hash = (hash ^ 0xff).wrapping_mul(0x0100_0000_01b3);
    }
    hash
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
fn uuid_of(mut bytes: [u8; 16]) -> String {
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
    let (year, month, day) = crate::support::date::civil_date(today + offset);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(url: &str) -> Request {
        Request::new(http::Method::GET, url.parse().unwrap())
    }

    #[test]
    fn the_same_request_gets_the_same_values_and_another_request_others() {
        let values = |url: &str| {
            let mut fake = Faker::for_request(&request(url));
            ["name.full", "internet.email", "uuid", "uuid"].map(|kind| fake.value(kind).unwrap())
        };
        let first = values("http://api/users/1");
        assert_eq!(first, values("http://api/users/1"));
        assert_ne!(first, values("http://api/users/2"));
        assert_ne!(first[2], first[3], "each value the next of the sequence");
        assert!(first[1].contains('@'));
        let mut random = (Faker::random(), Faker::random());
        assert_ne!(random.0.value("uuid"), random.1.value("uuid"));
    }

    #[test]
    fn every_listed_kind_is_generated_in_every_locale() {
        let mut fake = Faker::seeded(7);
        for locale in LOCALES {
            for kind in KINDS {
                let value = fake.value_in(kind, locale).unwrap();
                assert!(!value.is_empty(), "{kind} in {locale}");
                assert!(
                    generate(locales::EN, kind, &mut StdRng::seed_from_u64(1)).is_some(),
                    "{kind}"
                );
            }
        }
    }

    #[test]
    fn dates_are_days_around_today_and_unknowns_are_named() {
        let mut fake = Faker::seeded(3);
        let (past, birthday) = (
            fake.value("date.past").unwrap(),
            fake.value("date.birthday").unwrap(),
        );
        assert_eq!(past.len(), 10, "{past}");
        assert!(birthday < past, "{birthday} {past}");
        let error = fake.value("name.frist").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("fake(\"name.frist\"): no such kind; known: name.first")
        );
        let error = fake.value_in("name.first", "xx").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("no such locale; known: en, fr_fr"),
            "{error}"
        );
        assert_ne!(seed_of(&[b"ab", b"c"]), seed_of(&[b"a", b"bc"]));
    }
}
