//! The lexical grammar: tokens as byte spans of the source, nothing copied.
//!
//! Works on bytes: every token starts with an ASCII byte, and the bytes of a
//! multi-byte UTF-8 character are never ASCII, so scanning strings and
//! comments byte by byte cannot split or mistake a character.

use super::Error;

const BOM: &[u8] = "\u{feff}".as_bytes();

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// One of `! $ & ( ) : = @ [ ] { | }`: the byte itself.
    Punct(u8),
    /// `...`
    Spread,
    Name,
    Int,
    Float,
    /// `"…"`
    String,
    /// `"""…"""`
    BlockString,
    /// The end of the document.
    End,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Token {
    pub(super) kind: Kind,
    pub(super) start: usize,
    pub(super) end: usize,
}

pub(super) struct Lexer<'a> {
    pub(super) src: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(src: &'a str) -> Self {
        Lexer {
            src,
            bytes: src.as_bytes(),
            pos: 0,
        }
    }

    /// The next token, after any ignored characters.
    pub(super) fn next_token(&mut self) -> Result<Token, Error> {
        self.skip_ignored();
        let start = self.pos;
        let Some(&byte) = self.bytes.get(start) else {
            return Ok(Token {
                kind: Kind::End,
                start,
                end: start,
            });
        };
        let kind = match byte {
            b'!' | b'$' | b'&' | b'(' | b')' | b':' | b'=' | b'@' | b'[' | b']' | b'{' | b'|'
            | b'}' => {
                self.pos += 1;
                Kind::Punct(byte)
            }
            b'.' if self.bytes[start..].starts_with(b"...") => {
                self.pos += 3;
                Kind::Spread
            }
            b'.' => return Err(Error::new(start, "unexpected `.` (the spread is `...`)")),
            b'_' | b'a'..=b'z' | b'A'..=b'Z' => {
                self.pos = start + 1 + self.count(start + 1, is_name_continue);
                Kind::Name
            }
            b'-' | b'0'..=b'9' => self.number()?,
            b'"' if self.bytes[start..].starts_with(b"\"\"\"") => self.block_string()?,
            b'"' => self.string()?,
            _ => {
                let message = format!("unexpected character {}", self.describe_char(start));
                return Err(Error::new(start, message));
            }
        };
        Ok(Token {
            kind,
            start,
            end: self.pos,
        })
    }

    /// Skips the spec's `Ignored` tokens: the BOM, white space, line
    /// terminators, comments and commas.
    fn skip_ignored(&mut self) {
        while let Some(&byte) = self.bytes.get(self.pos) {
            match byte {
                b' ' | b'\t' | b'\n' | b'\r' | b',' => self.pos += 1,
                b'#' => self.pos += self.count(self.pos, |b| b != b'\n' && b != b'\r'),
                0xEF if self.bytes[self.pos..].starts_with(BOM) => self.pos += BOM.len(),
                _ => return,
            }
        }
    }

    /// How many bytes from `from` on satisfy `accept`.
    fn count(&self, from: usize, accept: impl Fn(u8) -> bool) -> usize {
        let rest = &self.bytes[from.min(self.bytes.len())..];
        rest.iter().position(|&b| !accept(b)).unwrap_or(rest.len())
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// `IntValue` or `FloatValue`, with the spec's lookahead rule: neither
    /// may be followed by a digit, `.` or a name start (`1a`, `1.2.3`, `0x1`).
    fn number(&mut self) -> Result<Kind, Error> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.pos += self.count(self.pos, |b| b.is_ascii_digit()),
            _ => return Err(self.number_error(start, "a digit after `-`")),
        }
        let mut kind = Kind::Int;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            self.digits(start, "a digit after `.`")?;
            kind = Kind::Float;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            self.digits(start, "a digit in the exponent")?;
            kind = Kind::Float;
        }
        match self.peek() {
            Some(b'0'..=b'9' | b'.' | b'_' | b'a'..=b'z' | b'A'..=b'Z') => {
                let message = format!(
                    "invalid number `{}`: it cannot be followed by {}",
                    &self.src[start..self.pos],
                    self.describe_char(self.pos)
                );
                Err(Error::new(self.pos, message))
            }
            _ => Ok(kind),
        }
    }

    /// One or more digits (a fraction or an exponent).
    fn digits(&mut self, start: usize, expected: &str) -> Result<(), Error> {
        match self.count(self.pos, |b| b.is_ascii_digit()) {
            0 => Err(self.number_error(start, expected)),
            n => {
                self.pos += n;
                Ok(())
            }
        }
    }

    fn number_error(&self, start: usize, expected: &str) -> Error {
        let message = format!(
            "invalid number `{}`: expected {expected}, found {}",
            &self.src[start..self.pos],
            self.describe_char(self.pos)
        );
        Error::new(self.pos, message)
    }

    /// `"…"`: no line terminator inside, escapes checked.
    fn string(&mut self) -> Result<Kind, Error> {
        let start = self.pos;
        self.pos += 1;
        loop {
            self.pos += self.count(self.pos, |b| !matches!(b, b'"' | b'\\' | b'\n' | b'\r'));
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Kind::String);
                }
                Some(b'\\') if self.pos + 1 < self.bytes.len() => self.escape()?,
                Some(b'\n' | b'\r') => {
                    let message = "unterminated string: it reaches the end of the line \
                                   (a line break in a string is written `\\n`)";
                    return Err(Error::new(start, message));
                }
                _ => return Err(Error::new(start, "unterminated string")),
            }
        }
    }

    /// An escape sequence in a string, at its `\`.
    fn escape(&mut self) -> Result<(), Error> {
        let start = self.pos;
        match self.bytes.get(start + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                self.pos += 2;
                Ok(())
            }
            Some(b'u') => self.unicode_escape(start),
            _ => {
                let text = self.src[start + 1..].chars().next().unwrap_or_default();
                let message = format!("invalid escape sequence `\\{}`", text.escape_debug());
                Err(Error::new(start, message))
            }
        }
    }

    /// `\uXXXX` (a legacy surrogate pair `\uD83D\uDE00` too) or `\u{X…}`:
    /// each must come to a Unicode scalar value.
    fn unicode_escape(&mut self, start: usize) -> Result<(), Error> {
        let malformed = || {
            Error::new(
                start,
                "invalid Unicode escape: `\\u` takes 4 hexadecimal digits or `{…}`",
            )
        };
        self.pos = start + 2;
        let value = if self.peek() == Some(b'{') {
            let digits = self.count(self.pos + 1, |b| b.is_ascii_hexdigit());
            if digits == 0 || self.bytes.get(self.pos + 1 + digits) != Some(&b'}') {
                return Err(malformed());
            }
            // Leading zeros are allowed, so the digit count bounds nothing:
            // saturate above the largest scalar value instead.
            let value = self.bytes[self.pos + 1..self.pos + 1 + digits]
                .iter()
                .fold(0u32, |value, &b| (value * 16 + hex(b)).min(0x11_0000));
            self.pos += digits + 2;
            value
        } else {
            let leading = self.hex4(self.pos).ok_or_else(malformed)?;
            self.pos += 4;
            if (0xD800..=0xDBFF).contains(&leading) && self.bytes[self.pos..].starts_with(b"\\u") {
                if let Some(0xDC00..=0xDFFF) = self.hex4(self.pos + 2) {
                    self.pos += 6;
                    return Ok(());
                }
            }
            leading
        };
        if char::from_u32(value).is_none() {
            let message = format!(
                "invalid Unicode escape `{}`: not a Unicode scalar value",
                &self.src[start..self.pos]
            );
            return Err(Error::new(start, message));
        }
        Ok(())
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.bytes.get(at..at + 4)?;
        digits
            .iter()
            .all(u8::is_ascii_hexdigit)
            .then(|| digits.iter().fold(0, |value, &b| value * 16 + hex(b)))
    }

    /// `"""…"""`: anything but `"""`, which is written `\"""` inside.
    fn block_string(&mut self) -> Result<Kind, Error> {
        let start = self.pos;
        let mut at = start + 3;
        loop {
            at += self.count(at, |b| b != b'"' && b != b'\\');
            let rest = &self.bytes[at..];
            if rest.is_empty() {
                return Err(Error::new(start, "unterminated block string"));
            }
            if rest.starts_with(b"\"\"\"") {
                self.pos = at + 3;
                return Ok(Kind::BlockString);
            }
            at += if rest.starts_with(b"\\\"\"\"") { 4 } else { 1 };
        }
    }

    /// The character at `at` for a message: `` `x` `` or the end.
    pub(super) fn describe_char(&self, at: usize) -> String {
        match self.src.get(at..).and_then(|rest| rest.chars().next()) {
            None => "the end of the document".to_owned(),
            Some('\n' | '\r') => "the end of the line".to_owned(),
            // Invisible characters escaped: `\u{a0}`, `\0`.
            Some(c) if c.is_control() || c.is_whitespace() || c == '\u{feff}' => {
                format!("`{}`", c.escape_debug())
            }
            Some(c) => format!("`{c}`"),
        }
    }
}

fn is_name_continue(byte: u8) -> bool {
    byte == b'_' || byte.is_ascii_alphanumeric()
}

fn hex(byte: u8) -> u32 {
    char::from(byte).to_digit(16).unwrap_or(0)
}
