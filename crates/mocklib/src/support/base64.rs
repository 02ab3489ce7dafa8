//! Base64 (RFC 4648, standard alphabet), for PEM bundles, proxy
//! credentials and binary bodies in HAR files; small enough not to need a
//! dependency.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub(crate) fn encode(data: &[u8]) -> String {
    let mut encoded = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let bytes = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(bytes[0]) << 16) | (u32::from(bytes[1]) << 8) | u32::from(bytes[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                encoded.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                encoded.push('=');
            }
        }
    }
    encoded
}

/// `None` for anything that is not valid padded base64.
#[cfg_attr(
    not(any(
        feature = "har",
        feature = "grpc",
        feature = "openapi",
        all(feature = "net", not(target_arch = "wasm32"))
    )),
    allow(dead_code) // the matchers only encode
)]
pub(crate) fn decode(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if text.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    for (index, chunk) in text.chunks(4).enumerate() {
        let last = index == text.len() / 4 - 1;
        let padding = chunk.iter().rev().take_while(|&&b| b == b'=').count();
        if padding > 2 || (padding > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for &byte in &chunk[..4 - padding] {
            let value = ALPHABET.iter().position(|&a| a == byte)? as u32;
            n = (n << 6) | value;
        }
        n <<= 6 * padding as u32;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - padding]);
    }
    Some(out)
}

/// Base64 as clients of gRPC-Web's text form and Connect's GETs send it:
/// either alphabet (standard or URL-safe), padding optional and allowed at
/// the end of any group (gRPC-Web's text bodies are base64 chunks padded
/// one by one, concatenated), line breaks and spaces ignored. `None` for
/// anything else.
#[cfg(feature = "grpc")]
pub(crate) fn decode_lenient(text: &[u8]) -> Option<Vec<u8>> {
    /// Appends the bytes of a group of `count` sextets; `false` for a
    /// group of one, which holds no whole byte.
    fn flush(group: u32, count: usize, out: &mut Vec<u8>) -> bool {
        if count == 1 {
            return false;
        }
        if count > 1 {
            let n = group << (6 * (4 - count));
            out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8][..count - 1]);
        }
        true
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 3);
    let (mut group, mut count) = (0u32, 0usize);
    for &byte in text {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => {
                if !flush(group, count, &mut out) {
                    return None;
                }
                (group, count) = (0, 0);
                continue;
            }
            b'\r' | b'\n' | b' ' | b'\t' => continue,
            _ => return None,
        };
        group = (group << 6) | u32::from(value);
        count += 1;
        if count == 4 {
            flush(group, 4, &mut out);
            (group, count) = (0, 0);
        }
    }
    flush(group, count, &mut out).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "grpc")]
    #[test]
    fn lenient_decoding_takes_both_alphabets_inner_padding_and_no_padding() {
        assert_eq!(decode_lenient(b"Zm9vYmFy").unwrap(), b"foobar");
        // Chunks padded one by one, as gRPC-Web text streams send them.
        assert_eq!(decode_lenient(b"Zg==Zm8=Zm9v").unwrap(), b"ffofoo");
        // URL-safe, unpadded (a Connect GET's message).
        assert_eq!(
            decode_lenient(
                encode(&[0xfb, 0xff])
                    .replace('+', "-")
                    .replace('/', "_")
                    .trim_end_matches('=')
                    .as_bytes()
            )
            .unwrap(),
            [0xfb, 0xff]
        );
        assert_eq!(decode_lenient(b"Zm9v\r\nYmFy").unwrap(), b"foobar");
        assert_eq!(decode_lenient(b"Z"), None, "one sextet holds no byte");
        assert_eq!(decode_lenient(b"Zm9v!"), None);
    }

    #[test]
    fn round_trips_and_matches_rfc_4648_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode(plain.as_bytes()), encoded);
            assert_eq!(decode(encoded).unwrap(), plain.as_bytes());
        }
    }

    #[test]
    fn rejects_what_is_not_base64() {
        for bad in ["Zg=", "Z===", "Zg==Zg==", "Zm9*", "\u{e9}abc"] {
            assert_eq!(decode(bad), None, "{bad}");
        }
    }
}
