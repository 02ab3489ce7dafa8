//! [`Times`]: how many requests a handler expects (wiremock-rs: `Times`).

use std::fmt;
use std::ops::{Bound, RangeBounds};

/// How many requests a handler must match for
/// [`verify`](crate::node::Server::verify) to pass: exactly, at least, at most,
/// or between two counts.
///
/// Made by [`Handler::times`](crate::Handler::times) and its siblings, or
/// from a count or a range with [`Handler::expect`](crate::Handler::expect):
///
/// ```
/// use mocklib::Times;
///
/// assert_eq!(Times::from(2).to_string(), "exactly 2");
/// assert_eq!(Times::from(1..).to_string(), "at least 1");
/// assert_eq!(Times::from(..=3).to_string(), "at most 3");
/// assert_eq!(Times::from(1..3).to_string(), "between 1 and 2");
/// assert!(Times::from(1..3).contains(2) && !Times::from(1..3).contains(3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Times {
    min: usize,
    /// `None`: no upper limit.
    max: Option<usize>,
}

impl Times {
    /// Exactly `n` requests.
    pub const fn exactly(n: usize) -> Self {
        Times {
            min: n,
            max: Some(n),
        }
    }

    /// `n` requests or more.
    pub const fn at_least(n: usize) -> Self {
        Times { min: n, max: None }
    }

    /// `n` requests or fewer (none included).
    pub const fn at_most(n: usize) -> Self {
        Times {
            min: 0,
            max: Some(n),
        }
    }

    /// The fewest requests that meet the expectation.
    ///
    /// ```
    /// # use mocklib::Times;
    /// assert_eq!((Times::from(2..).min(), Times::from(2..).max()), (2, None));
    /// assert_eq!((Times::at_most(3).min(), Times::at_most(3).max()), (0, Some(3)));
    /// ```
    pub fn min(&self) -> usize {
        self.min
    }

    /// The most requests that meet the expectation; `None`: no limit.
    pub fn max(&self) -> Option<usize> {
        self.max
    }

    /// Whether `count` requests meet the expectation.
    pub fn contains(&self, count: usize) -> bool {
        count >= self.min && self.max.is_none_or(|max| count <= max)
    }
}

impl From<usize> for Times {
    fn from(n: usize) -> Self {
        Times::exactly(n)
    }
}

macro_rules! from_range {
    ($($range:ty),*) => {$(
        impl From<$range> for Times {
            fn from(range: $range) -> Self {
                from_bounds(&range)
            }
        }
    )*};
}

from_range!(
    std::ops::Range<usize>,
    std::ops::RangeInclusive<usize>,
    std::ops::RangeFrom<usize>,
    std::ops::RangeTo<usize>,
    std::ops::RangeToInclusive<usize>,
    std::ops::RangeFull
);

fn from_bounds(range: &impl RangeBounds<usize>) -> Times {
    let min = match range.start_bound() {
        Bound::Included(&n) => n,
        Bound::Excluded(&n) => n.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let max = match range.end_bound() {
        Bound::Included(&n) => Some(n),
        // An empty range (`0..0`) can be met by nothing; `..0` reads as "never".
        Bound::Excluded(&n) => Some(n.saturating_sub(1)),
        Bound::Unbounded => None,
    };
    Times { min, max }
}

impl fmt::Display for Times {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.min, self.max) {
            (0, Some(0)) => f.write_str("never"),
            (min, Some(max)) if min == max => write!(f, "exactly {min}"),
            (0, Some(max)) => write!(f, "at most {max}"),
            (min, None) => write!(f, "at least {min}"),
            (min, Some(max)) => write!(f, "between {min} and {max}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_counts() {
        assert_eq!(Times::from(0), Times::exactly(0));
        assert_eq!(Times::from(0).to_string(), "never");
        assert_eq!(Times::from(..).to_string(), "at least 0");
        assert_eq!(Times::from(2..=4).to_string(), "between 2 and 4");
        assert_eq!(Times::from(..3), Times::at_most(2));
        for (times, yes, no) in [
            (Times::exactly(1), 1, 2),
            (Times::at_least(2), 9, 1),
            (Times::at_most(1), 0, 2),
            (Times::from(2..4), 3, 4),
        ] {
            assert!(times.contains(yes), "{times} {yes}");
            assert!(!times.contains(no), "{times} {no}");
        }
    }
}
