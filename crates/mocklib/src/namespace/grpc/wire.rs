//! gRPC's length-prefix framing at its smallest: the 5-byte header of a
//! message (a compressed flag, then the length, big-endian), written and
//! read over whole frames. `frame` (messages of requests and replies) and
//! `record` (the journal's copies) both build on it.

use bytes::{BufMut, BytesMut};

/// Appends the 5-byte header of an uncompressed message of `length` bytes.
#[inline] // once per reply framed
pub(super) fn put_header(length: usize, out: &mut BytesMut) {
    out.put_u8(0);
    out.put_u32(u32::try_from(length).unwrap_or(u32::MAX));
}

/// Where each message of `framed` (whole frames, as this module writes
/// them) starts and ends, without its 5-byte header.
pub(super) fn whole_frames(framed: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let header = framed.get(at..at + 5)?;
        let length = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
        let start = at + 5;
        at = (start + length).min(framed.len());
        Some((start, at))
    })
}
