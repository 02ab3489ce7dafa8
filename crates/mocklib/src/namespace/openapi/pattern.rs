//! Strings that match a schema's `pattern`: the regex parsed by
//! regex-syntax (already compiled for jsonschema) and its syntax tree
//! walked, choosing literals, class members, repetition counts and
//! alternatives — the simplest choices for a static answer, random ones
//! for a dynamic answer — within `minLength`/`maxLength`.

use fastrand::Rng;
use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind};

/// How many items past its minimum a repetition may get in a dynamic
/// answer: `\d+` gives 1 to 9 digits, `\d{2,}` 2 to 10.
const SPREAD: u32 = 8;

/// The characters a static answer prefers, in order: a class's first
/// lowercase letter, else its first capital, digit, printable ASCII
/// character (`[A-Z]` gives `A`, `\d` gives `0`, `.` gives `a`).
const PREFERRED: [(char, char); 4] = [('a', 'z'), ('A', 'Z'), ('0', '9'), (' ', '~')];

/// What the generated string must also satisfy.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lengths {
    /// `minLength`, in characters.
    pub(crate) min: usize,
    /// `maxLength`, in characters.
    pub(crate) max: Option<usize>,
    /// No string longer than this is made (the generator's size budget).
    pub(crate) limit: usize,
}

/// A string matching `pattern` (a JSON Schema regex: unanchored, ECMA
/// 262 syntax as far as regex-syntax reads it) within `lengths`: the
/// simplest one without `rng`, a random one with it. `Err` says why none
/// was found: syntax regex-syntax does not know (look-arounds,
/// back-references), a class that matches nothing, bounds the pattern
/// cannot meet.
pub(crate) fn matching(
    pattern: &str,
    lengths: Lengths,
    mut rng: Option<&mut Rng>,
) -> Result<String, String> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .map_err(|error| {
            // regex-syntax's message draws the pattern over several lines.
            let first = error.to_string();
            let reason = first.lines().last().unwrap_or_default().trim().to_owned();
            format!("the pattern cannot be read ({reason})")
        })?;
    // Anchors and word boundaries are not generated, only checked: by
    // regex-lite, already a dependency, when it reads the pattern
    // (`\p{..}` classes it does not; their strings go unchecked).
    let check = regex_lite::Regex::new(pattern).ok();
    let attempts = if rng.is_some() { 8 } else { 1 };
    let mut last = String::new();
    for _ in 0..attempts {
        for shortest in [false, true] {
            let mut walk = Walk {
                rng: rng.as_deref_mut(),
                shortest,
                lengths,
                out: String::new(),
                chars: 0,
            };
            walk.emit(&hir, 0)?;
            let fits = walk.chars >= lengths.min && lengths.max.is_none_or(|max| walk.chars <= max);
            if fits && check.as_ref().is_none_or(|regex| regex.is_match(&walk.out)) {
                return Ok(walk.out);
            }
            last = walk.out;
        }
    }
    let bounds = match lengths.max {
        Some(max) => format!("{}..={max} characters", lengths.min),
        None => format!("at least {} characters", lengths.min),
    };
    Err(format!(
        "no string matching it within {bounds} was found (the closest: {last:?})"
    ))
}

/// One walk down the syntax tree, writing the string.
struct Walk<'r> {
    rng: Option<&'r mut Rng>,
    /// Repetitions at their minimum and the shortest alternatives: the
    /// second try when the first was too long.
    shortest: bool,
    lengths: Lengths,
    out: String,
    /// `out`'s length in characters.
    chars: usize,
}

impl Walk<'_> {
    /// Writes a string `hir` matches; `reserve` is how many characters
    /// at least what follows it will add (so that repetitions grown
    /// towards `minLength` leave room for it).
    fn emit(&mut self, hir: &Hir, reserve: usize) -> Result<(), String> {
        if self.chars > self.lengths.limit {
            return Err(format!(
                "the string grew past the size budget ({} characters)",
                self.lengths.limit
            ));
        }
        match hir.kind() {
            HirKind::Empty | HirKind::Look(_) => {}
            HirKind::Literal(literal) => {
                let text = std::str::from_utf8(&literal.0)
                    .map_err(|_| "the pattern has a literal that is not UTF-8".to_owned())?;
                self.push_str(text);
            }
            HirKind::Class(Class::Unicode(class)) => {
                let c = self.pick(class)?;
                self.push(c);
            }
            HirKind::Class(Class::Bytes(class)) => {
                // `(?-u)` classes: their ASCII part, as characters.
                let ascii = class
                    .ranges()
                    .iter()
                    .filter(|range| range.start() < 0x80)
                    .map(|range| {
                        ClassUnicodeRange::new(
                            char::from(range.start()),
                            char::from(range.end().min(0x7f)),
                        )
                    });
                let c = self.pick(&ClassUnicode::new(ascii))?;
                self.push(c);
            }
            HirKind::Capture(capture) => self.emit(&capture.sub, reserve)?,
            HirKind::Concat(items) => {
                for (index, item) in items.iter().enumerate() {
                    let after: usize = items[index + 1..].iter().map(min_len).sum();
                    self.emit(item, reserve + after)?;
                }
            }
            HirKind::Alternation(branches) => {
                let branch = if self.shortest {
                    branches.iter().min_by_key(|branch| min_len(branch))
                } else {
                    match self.rng.as_deref_mut() {
                        Some(rng) => branches.get(rng.usize(..branches.len())),
                        None => branches.first(),
                    }
                };
                if let Some(branch) = branch {
                    self.emit(branch, reserve)?;
                }
            }
            HirKind::Repetition(repetition) => {
                let (min, max) = (repetition.min, repetition.max.unwrap_or(u32::MAX));
                let item = min_len(&repetition.sub);
                let mut count = 0;
                while count < min {
                    let left = (min - count - 1) as usize * item;
                    self.emit(&repetition.sub, reserve + left)?;
                    count += 1;
                }
                // A dynamic answer adds a random number more, as far as
                // `maxLength` leaves room.
                let extra = match (self.shortest, self.rng.as_deref_mut()) {
                    (false, Some(rng)) => rng.u32(0..=max.saturating_sub(min).min(SPREAD)),
                    _ => 0,
                };
                let room = |walk: &Self| {
                    walk.lengths
                        .max
                        .is_none_or(|max| walk.chars + reserve + item.max(1) <= max)
                };
                for _ in 0..extra {
                    if !room(self) {
                        break;
                    }
                    self.emit(&repetition.sub, reserve)?;
                    count += 1;
                }
                // Then more while the string is shorter than
                // `minLength` needs.
                while count < max && self.chars + reserve < self.lengths.min {
                    let before = self.chars;
                    self.emit(&repetition.sub, reserve)?;
                    count += 1;
                    if self.chars == before {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// A member of `class`: see [`PREFERRED`] for a static answer; a
    /// random printable ASCII member for a dynamic one, else any.
    fn pick(&mut self, class: &ClassUnicode) -> Result<char, String> {
        let Some(first) = class.ranges().first() else {
            return Err("the pattern has a class that matches nothing".to_owned());
        };
        let Some(rng) = self.rng.as_deref_mut() else {
            let preferred = PREFERRED.iter().find_map(|&(low, high)| {
                class
                    .ranges()
                    .iter()
                    .find(|range| range.start() <= high && range.end() >= low)
                    .map(|range| range.start().max(low))
            });
            return Ok(preferred.unwrap_or(first.start()));
        };
        let mut printable = class.clone();
        printable.intersect(&ClassUnicode::new([ClassUnicodeRange::new(' ', '~')]));
        let from = if printable.ranges().is_empty() {
            class
        } else {
            &printable
        };
        let sizes = from
            .ranges()
            .iter()
            .map(|range| u64::from(range.end()) - u64::from(range.start()) + 1);
        let mut index = rng.u64(..sizes.clone().sum::<u64>());
        for (range, size) in from.ranges().iter().zip(sizes) {
            if index < size {
                // Ranges may span the surrogates, which are no characters.
                let code = u32::from(range.start()) + index as u32;
                return Ok(char::from_u32(code).unwrap_or(range.start()));
            }
            index -= size;
        }
        Ok(first.start())
    }

    fn push(&mut self, c: char) {
        self.out.push(c);
        self.chars += 1;
    }

    fn push_str(&mut self, text: &str) {
        self.out.push_str(text);
        self.chars += text.chars().count();
    }
}

/// The fewest characters `hir` matches (bytes, as regex-syntax counts
/// them: equal for ASCII, an overestimate otherwise).
fn min_len(hir: &Hir) -> usize {
    hir.properties().minimum_len().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    // Explicit, over proptest's prelude's `Rng` trait.
    use fastrand::Rng;
    use proptest::prelude::*;

    fn lengths(min: usize, max: Option<usize>) -> Lengths {
        Lengths {
            min,
            max,
            limit: 10_000,
        }
    }

    /// Patterns as OpenAPI documents write them.
    const REALISTIC: &[&str] = &[
        r"^[A-Z]{3}-\d{4}$",
        r"^\+?[1-9]\d{1,14}$",
        r"^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$",
        r"^[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
        r"^\d{4}-\d{2}-\d{2}$",
        r"^(cat|dog|bird)s?$",
        r"^[a-z0-9]+(?:-[a-z0-9]+)*$",
        r"^#([A-Fa-f0-9]{6}|[A-Fa-f0-9]{3})$",
        r"^(\d{1,3}\.){3}\d{1,3}$",
        r"^[A-Z]{2}\d{2}[A-Z0-9]{1,30}$",
        r"^\S+$",
        r"^\w{3,16}$",
        r"\bid-\d+\b",
        r"v\d+\.\d+",
        r"^\p{Lu}\p{Ll}+$",
        r"^.{2,5}$",
    ];

    #[test]
    fn static_strings_are_the_simplest_match() {
        let simplest = |pattern: &str| matching(pattern, lengths(0, None), None).unwrap();
        assert_eq!(simplest(r"^[A-Z]{3}-\d{4}$"), "AAA-0000");
        assert_eq!(simplest(r"^\+?[1-9]\d{1,14}$"), "10");
        assert_eq!(simplest(r"^(cat|dog)s?$"), "cat");
        assert_eq!(simplest(r"^.{2}$"), "aa");
        assert_eq!(simplest(r"^[^a-z]$"), "A");
    }

    #[test]
    fn lengths_grow_and_shrink_the_repetitions() {
        let text = matching(r"^[a-z]+\d$", lengths(6, Some(6)), None).unwrap();
        assert_eq!(text, "aaaaa0");
        let mut rng = Rng::with_seed(1);
        for _ in 0..50 {
            let text = matching(r"^[a-z]*-[a-z]*$", lengths(3, Some(5)), Some(&mut rng)).unwrap();
            assert!((3..=5).contains(&text.len()), "{text:?}");
        }
    }

    #[test]
    fn what_cannot_be_met_says_why() {
        let error = matching(r"^\d{4}$", lengths(6, None), None).unwrap_err();
        assert!(error.contains("at least 6"), "{error}");
        let error = matching(r"^(?=a)b$", lengths(0, None), None).unwrap_err();
        assert!(error.contains("cannot be read"), "{error}");
        let error = matching(r"^[^\s\S]$", lengths(0, None), None).unwrap_err();
        assert!(error.contains("matches nothing"), "{error}");
        let error = matching(r"^a{5000}$", lengths(0, None).with_limit(100), None).unwrap_err();
        assert!(error.contains("size budget"), "{error}");
    }

    impl Lengths {
        fn with_limit(mut self, limit: usize) -> Self {
            self.limit = limit;
            self
        }
    }

    proptest! {
        /// Every generated string matches its pattern (by the `regex`
        /// crate) and its length bounds, static and dynamic.
        #[test]
        fn generated_strings_match(
            index in 0..REALISTIC.len(),
            seed in any::<u64>(),
            min in 0usize..12,
            spread in proptest::option::of(0usize..24),
        ) {
            let pattern = REALISTIC[index];
            let regex = regex::Regex::new(pattern).unwrap();
            let bounds = lengths(min, spread.map(|spread| min + spread));
            // The shortest match (its classes' ASCII members: as many
            // characters as bytes) fits these bounds, so one must be found.
            let shortest = regex_syntax::parse(pattern).unwrap().properties().minimum_len().unwrap();
            let must = min <= shortest && bounds.max.is_none_or(|max| shortest <= max);
            let mut rng = Rng::with_seed(seed);
            for rng in [None, Some(&mut rng)] {
                // Bounds a pattern cannot meet (`^\d{4}-\d{2}-\d{2}$` in
                // 3 characters) are an error, never a wrong string.
                let found = matching(pattern, bounds, rng);
                prop_assert!(!must || found.is_ok(), "{pattern} in {bounds:?}: {found:?}");
                if let Ok(text) = found {
                    prop_assert!(regex.is_match(&text), "{pattern}: {text:?}");
                    let length = text.chars().count();
                    prop_assert!(length >= min, "{pattern}: {text:?} shorter than {min}");
                    if let Some(max) = bounds.max {
                        prop_assert!(length <= max, "{pattern}: {text:?} longer than {max}");
                    }
                }
            }
        }

        /// Without length bounds, every realistic pattern is met.
        #[test]
        fn unbounded_patterns_are_always_met(index in 0..REALISTIC.len(), seed in any::<u64>()) {
            let pattern = REALISTIC[index];
            let regex = regex::Regex::new(pattern).unwrap();
            let mut rng = Rng::with_seed(seed);
            let text = matching(pattern, lengths(0, None), Some(&mut rng)).unwrap();
            prop_assert!(regex.is_match(&text), "{pattern}: {text:?}");
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_string() {
        let pattern = r"^[A-Z]{3}-\d{4}$";
        let with =
            |seed| matching(pattern, lengths(0, None), Some(&mut Rng::with_seed(seed))).unwrap();
        assert_eq!(with(42), with(42));
        let distinct: std::collections::HashSet<String> = (0..20).map(with).collect();
        assert!(distinct.len() > 15, "{distinct:?}");
    }
}
