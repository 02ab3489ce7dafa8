//! The crypto provider of the listener's TLS and of the upstream client,
//! chosen by cargo feature, and the one digest rustls does not offer.
//!
//! Always named explicitly: with more than one rustls provider compiled into
//! the final binary (the application's reqwest brings aws-lc-rs, say), the
//! provider-less builders panic instead of guessing, and nothing process-wide
//! is installed, so mocklib cannot clash with the application's own rustls.

use std::sync::Arc;

use rustls::crypto::CryptoProvider;

#[cfg(not(any(feature = "aws-lc-rs", feature = "ring")))]
compile_error!(
    "mocklib's `net` feature needs a crypto provider: enable the `aws-lc-rs` feature \
     (the default, as reqwest 0.13's) or `ring`"
);

/// The provider the features chose: aws-lc-rs when on, else ring.
pub(crate) fn provider() -> Arc<CryptoProvider> {
    #[cfg(feature = "aws-lc-rs")]
    let provider = rustls::crypto::aws_lc_rs::default_provider();
    #[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
    let provider = rustls::crypto::ring::default_provider();
    Arc::new(provider)
}

/// The name of [`provider`]'s crypto library, for error messages.
pub(crate) const PROVIDER_NAME: &str = if cfg!(feature = "aws-lc-rs") {
    "aws-lc-rs"
} else {
    "ring"
};

/// SHA-1 (FIPS 180-4), for the one place a format demands it: the integrity
/// digest of the JKS trust store handed to child JVMs. Never for security.
pub(crate) fn sha1(parts: &[&[u8]]) -> [u8; 20] {
    let mut state: [u32; 5] = [
        0x6745_2301,
        0xEFCD_AB89,
        0x98BA_DCFE,
        0x1032_5476,
        0xC3D2_E1F0,
    ];
    let mut message: Vec<u8> = parts.concat();
    let bit_length = (message.len() as u64).wrapping_mul(8);
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&bit_length.to_be_bytes());
    for block in message.chunks_exact(64) {
        compress(&mut state, block);
    }
    let mut digest = [0; 20];
    for (out, word) in digest.chunks_exact_mut(4).zip(state) {
        out.copy_from_slice(&word.to_be_bytes());
    }
    digest
}

fn compress(state: &mut [u32; 5], block: &[u8]) {
    let mut w = [0u32; 80];
    for (word, bytes) in w.iter_mut().zip(block.chunks_exact(4)) {
        *word = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    }
    for t in 16..80 {
        w[t] = (w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]).rotate_left(1);
    }
    let [mut a, mut b, mut c, mut d, mut e] = *state;
    for (t, word) in w.iter().enumerate() {
        let (f, k) = match t {
            0..=19 => ((b & c) | (!b & d), 0x5A82_7999),
            20..=39 => (b ^ c ^ d, 0x6ED9_EBA1),
            40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
            _ => (b ^ c ^ d, 0xCA62_C1D6),
        };
        let next = a
            .rotate_left(5)
            .wrapping_add(f)
            .wrapping_add(e)
            .wrapping_add(k)
            .wrapping_add(*word);
        (e, d, c, b, a) = (d, c, b.rotate_left(30), a, next);
    }
    for (word, add) in state.iter_mut().zip([a, b, c, d, e]) {
        *word = word.wrapping_add(add);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn sha1_matches_the_fips_180_test_vectors() {
        assert_eq!(
            hex(&sha1(&[b"abc"])),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            hex(&sha1(&[b""])),
            "da39a3ee5e6b4b0d3255bfef95601890afd80709"
        );
        let two_blocks = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        assert_eq!(
            hex(&sha1(&[two_blocks])),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        let million = vec![b'a'; 1_000_000];
        assert_eq!(
            hex(&sha1(&[&million])),
            "34aa973cd4c4daa4f61eeb2bdbad27316534016f"
        );
        // Parts hash as their concatenation.
        assert_eq!(sha1(&[b"ab", b"c"]), sha1(&[b"abc"]));
    }
}
