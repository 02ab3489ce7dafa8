//! Calendar dates from the system clock, without a date library: for the
//! CA's certificates and HAR timestamps.

/// The proleptic Gregorian date of a day counted from 1970-01-01, before
/// it too (Howard Hinnant's `civil_from_days`).
pub(crate) fn civil_date(days: i64) -> (i64, u64, u64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    // Both in range by construction (1..=31, 1..=12).
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1).unsigned_abs();
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    }
    .unsigned_abs();
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// [`civil_date`] of a day count since the epoch that is never before it.
#[cfg(any(
    all(feature = "net", not(target_arch = "wasm32")),
    feature = "har",
    feature = "openapi"
))]
pub(crate) fn civil_date_since(days: u64) -> (i64, u64, u64) {
    civil_date(i64::try_from(days).unwrap_or(i64::MAX))
}

/// `at` as RFC 3339 in UTC with milliseconds (`2026-11-23T16:30:00.123Z`), as
/// HAR's `startedDateTime` has it; times before 1970 are clamped to it.
#[cfg(feature = "har")]
pub(crate) fn rfc3339(at: std::time::SystemTime) -> String {
    use std::time::UNIX_EPOCH;
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since.as_secs();
    let (year, month, day) = civil_date_since(seconds / 86_400);
    let of_day = seconds % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(59), (1970, 3, 1));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
        assert_eq!(civil_date(20_415), (2025, 11, 23));
        assert_eq!(civil_date(29_220), (2050, 1, 1));
        assert_eq!(civil_date(-1), (1969, 12, 31));
        assert_eq!(civil_date(-29_219), (1890, 1, 1));
    }

    #[cfg(feature = "har")]
    #[test]
    fn rfc3339_has_milliseconds() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_763_915_400_123);
        assert_eq!(rfc3339(at), "2025-11-23T16:30:00.123Z");
    }
}
