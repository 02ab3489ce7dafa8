//! A message kept as its protobuf bytes, for handlers whose types are known
//! only at run time (from a `.proto` file or a descriptor set).

use bytes::{Buf, BufMut, Bytes};
use prost::DecodeError;
use prost::encoding::{DecodeContext, WireType, encode_key};

/// A gRPC message as its protobuf bytes, not decoded: the message type of
/// a handler that converts messages itself (with `prost-reflect`'s
/// `DynamicMessage` and a descriptor, say, as `mocklib serve --proto`
/// does), or that only relays them.
///
/// ```
/// use mocklib::grpc::{self, ResolverArgs, RawMessage};
///
/// // Echoes whatever message it gets, whatever its type.
/// grpc::unary("echo.Echo/Echo", |args: ResolverArgs<RawMessage>| Ok(args.message));
///
/// let message = RawMessage::new(&b"\x0a\x04Kate"[..]);
/// assert_eq!(prost::Message::encode_to_vec(&message), b"\x0a\x04Kate");
/// assert_eq!(format!("{message:?}"), "RawMessage(0a 04 4b 61 74 65)");
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RawMessage {
    bytes: Bytes,
}

impl RawMessage {
    /// The message whose protobuf encoding is `bytes`.
    pub fn new(bytes: impl Into<Bytes>) -> Self {
        RawMessage {
            bytes: bytes.into(),
        }
    }

    /// The message's protobuf encoding.
    pub fn as_bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The message's protobuf encoding.
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }

    fn append(&mut self, more: Bytes) {
        if self.bytes.is_empty() {
            self.bytes = more;
        } else {
            // Merging protobuf messages is concatenating their encodings.
            let mut joined = Vec::with_capacity(self.bytes.len() + more.len());
            joined.extend_from_slice(&self.bytes);
            joined.extend_from_slice(&more);
            self.bytes = joined.into();
        }
    }
}

impl std::fmt::Debug for RawMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const SHOWN: usize = 64;
        f.write_str("RawMessage(")?;
        for (index, byte) in self.bytes.iter().take(SHOWN).enumerate() {
            if index > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{byte:02x}")?;
        }
        if self.bytes.len() > SHOWN {
            write!(f, " … {} bytes", self.bytes.len())?;
        }
        f.write_str(")")
    }
}

impl prost::Message for RawMessage {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        buf.put_slice(&self.bytes);
    }

    /// Keeps the whole buffer as it is: decoding is copying (or, from
    /// `Bytes`, sharing) the encoding.
    fn merge(&mut self, mut buf: impl Buf) -> Result<(), DecodeError> {
        let more = buf.copy_to_bytes(buf.remaining());
        self.append(more);
        Ok(())
    }

    /// One field, re-encoded as it came (when decoded field by field, as a
    /// length-delimited message is).
    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        use prost::encoding::{bytes, check_wire_type, encode_varint, fixed32, fixed64, uint64};
        let mut field = Vec::new();
        encode_key(tag, wire_type, &mut field);
        match wire_type {
            WireType::Varint => {
                let mut value = 0;
                uint64::merge(wire_type, &mut value, buf, ctx)?;
                encode_varint(value, &mut field);
            }
            WireType::SixtyFourBit => {
                let mut value = 0;
                fixed64::merge(wire_type, &mut value, buf, ctx)?;
                field.extend_from_slice(&value.to_le_bytes());
            }
            WireType::ThirtyTwoBit => {
                let mut value = 0;
                fixed32::merge(wire_type, &mut value, buf, ctx)?;
                field.extend_from_slice(&value.to_le_bytes());
            }
            WireType::LengthDelimited => {
                let mut value = Vec::new();
                bytes::merge(wire_type, &mut value, buf, ctx)?;
                encode_varint(value.len() as u64, &mut field);
                field.extend_from_slice(&value);
            }
            // Groups (proto2, deprecated) are refused, with prost's error.
            WireType::StartGroup | WireType::EndGroup => {
                check_wire_type(WireType::LengthDelimited, wire_type)?;
            }
        }
        self.append(field.into());
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        self.bytes.len()
    }

    fn clear(&mut self) {
        self.bytes = Bytes::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[derive(Clone, PartialEq, prost::Message)]
    struct Sample {
        #[prost(string, tag = "1")]
        name: String,
        #[prost(uint64, tag = "2")]
        count: u64,
        #[prost(fixed32, tag = "3")]
        fixed: u32,
        #[prost(fixed64, tag = "4")]
        wide: u64,
    }

    #[test]
    fn a_raw_message_keeps_any_encoding_as_it_came() {
        let sample = Sample {
            name: "Kate".into(),
            count: 300,
            fixed: 7,
            wide: 9,
        };
        let encoded = sample.encode_to_vec();
        let raw = RawMessage::decode(&encoded[..]).unwrap();
        assert_eq!(raw.as_bytes(), &encoded[..]);
        assert_eq!(raw.encode_to_vec(), encoded);
        // Field by field (length-delimited), as when nested.
        let delimited = sample.encode_length_delimited_to_vec();
        let raw = RawMessage::decode_length_delimited(&delimited[..]).unwrap();
        assert_eq!(Sample::decode(raw.into_bytes()).unwrap(), sample);
    }
}
