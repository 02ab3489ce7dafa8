//! The X.509 certificates of the in-memory CA, written directly in DER.
//!
//! mocklib issues two shapes of certificate and nothing else: a self-signed
//! CA and leaves for one host each, all ECDSA P-256 with SHA-256. A general
//! certificate builder (rcgen, with its ASN.1 writer and date library) cost
//! more build time than mocklib's whole listener, so the two shapes are
//! encoded here, a few fixed DER structures (RFC 5280) around a key pair and
//! signatures from the crypto library rustls already compiles.
//!
//! What every client this was tested with (rustls/webpki, OpenSSL in curl
//! and Python, GnuTLS in wget, the JDK, Node) requires is here: a v3
//! certificate; `basicConstraints` (critical); `keyUsage` (critical); on
//! leaves `extendedKeyUsage` serverAuth and the host in `subjectAltName`;
//! subject and authority key identifiers (OpenSSL 3's strict mode, which
//! Python 3.13 turns on, wants both); positive minimal serials; UTCTime
//! before 2050.

use std::net::IpAddr;
use std::time::{SystemTime, UNIX_EPOCH};

#[cfg(feature = "aws-lc-rs")]
use aws_lc_rs as crypto;
#[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
use ring as crypto;

use crypto::rand::SystemRandom;
use crypto::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair as _};

/// An ECDSA P-256 key pair, generated in memory.
pub(crate) struct KeyPair {
    key: EcdsaKeyPair,
    pkcs8: Vec<u8>,
}

/// The crypto library failed to generate a key or to sign.
#[derive(Debug)]
pub(crate) struct CryptoFailure;

impl KeyPair {
    pub(crate) fn generate() -> Result<Self, CryptoFailure> {
        let random = SystemRandom::new();
        let document = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &random)
            .map_err(|_| CryptoFailure)?;
        let pkcs8 = document.as_ref().to_vec();
        #[cfg(feature = "aws-lc-rs")]
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &pkcs8);
        #[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &pkcs8, &random);
        let key = key.map_err(|_| CryptoFailure)?;
        Ok(Self { key, pkcs8 })
    }

    /// The private key as PKCS#8 DER, for rustls's key provider.
    pub(crate) fn pkcs8_der(&self) -> &[u8] {
        &self.pkcs8
    }

    /// The public key as an uncompressed point (`04 || x || y`).
    fn public_key(&self) -> &[u8] {
        self.key.public_key().as_ref()
    }

    /// A key identifier (RFC 5280 4.2.1.2, method 1): the SHA-1 of the public
    /// key, used to name it, not to secure anything.
    fn identifier(&self) -> [u8; 20] {
        super::crypto::sha1(&[self.public_key()])
    }

    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, CryptoFailure> {
        let signature = self
            .key
            .sign(&SystemRandom::new(), message)
            .map_err(|_| CryptoFailure)?;
        Ok(signature.as_ref().to_vec())
    }
}

/// The subject of a certificate: an optional common name, organization
/// "mocklib".
pub(crate) fn name(common_name: Option<&str>) -> Vec<u8> {
    let mut attributes = Vec::new();
    if let Some(common_name) = common_name {
        attributes.extend(attribute(OID_COMMON_NAME, common_name));
    }
    attributes.extend(attribute(OID_ORGANIZATION, "mocklib"));
    tlv(SEQUENCE, &attributes)
}

/// What a certificate says besides its key and issuer.
pub(crate) struct Template<'a> {
    /// 16 random bytes; made positive and minimal here.
    pub(crate) serial: [u8; 16],
    /// DER of the subject's name, from [`name`].
    pub(crate) subject: &'a [u8],
    pub(crate) not_before: SystemTime,
    pub(crate) not_after: SystemTime,
    pub(crate) kind: Kind<'a>,
}

/// A CA, or a leaf naming one host.
pub(crate) enum Kind<'a> {
    Authority,
    Leaf(Host<'a>),
}

/// The host a leaf certificate is for.
pub(crate) enum Host<'a> {
    /// A valid DNS name (checked by the caller).
    Dns(&'a str),
    Ip(IpAddr),
}

/// Where a certificate's signature comes from.
pub(crate) struct Issuer<'a> {
    /// DER of the issuer's name (its certificate's subject).
    pub(crate) name: &'a [u8],
    pub(crate) key: &'a KeyPair,
}

/// A certificate for `key`, signed by `issuer` (itself for a CA), in DER.
pub(crate) fn certificate(
    template: &Template<'_>,
    key: &KeyPair,
    issuer: &Issuer<'_>,
) -> Result<Vec<u8>, CryptoFailure> {
    let tbs = to_be_signed(template, key, issuer);
    let signature = issuer.key.sign(&tbs)?;
    let mut certificate = tbs;
    certificate.extend(ECDSA_WITH_SHA256);
    certificate.extend(bit_string(&signature));
    Ok(tlv(SEQUENCE, &certificate))
}

/// The TBSCertificate (RFC 5280 4.1).
fn to_be_signed(template: &Template<'_>, key: &KeyPair, issuer: &Issuer<'_>) -> Vec<u8> {
    let mut tbs = Vec::with_capacity(512);
    tbs.extend(VERSION_3);
    tbs.extend(serial(template.serial));
    tbs.extend(ECDSA_WITH_SHA256);
    tbs.extend(issuer.name);
    let mut validity = time(template.not_before);
    validity.extend(time(template.not_after));
    tbs.extend(tlv(SEQUENCE, &validity));
    tbs.extend(template.subject);
    tbs.extend(public_key_info(key));
    let extensions = extensions(&template.kind, key, issuer.key);
    tbs.extend(tlv(EXTENSIONS, &tlv(SEQUENCE, &extensions)));
    tlv(SEQUENCE, &tbs)
}

fn extensions(kind: &Kind<'_>, key: &KeyPair, issuer: &KeyPair) -> Vec<u8> {
    let mut extensions = Vec::new();
    match kind {
        Kind::Authority => {
            // cA TRUE, no path length limit.
            extensions.extend(extension(
                OID_BASIC_CONSTRAINTS,
                true,
                &tlv(SEQUENCE, &[BOOLEAN, 1, 0xff]),
            ));
            // keyCertSign and cRLSign (bits 5 and 6).
            extensions.extend(extension(OID_KEY_USAGE, true, &[BIT_STRING, 2, 1, 0x06]));
        }
        Kind::Leaf(host) => {
            // cA FALSE, the default, is encoded as an empty sequence.
            extensions.extend(extension(OID_BASIC_CONSTRAINTS, true, &tlv(SEQUENCE, &[])));
            // digitalSignature (bit 0).
            extensions.extend(extension(OID_KEY_USAGE, true, &[BIT_STRING, 2, 7, 0x80]));
            extensions.extend(extension(
                OID_EXTENDED_KEY_USAGE,
                false,
                &tlv(SEQUENCE, OID_SERVER_AUTH),
            ));
            let general_name = match host {
                Host::Dns(dns) => tlv(DNS_NAME, dns.as_bytes()),
                Host::Ip(IpAddr::V4(ip)) => tlv(IP_ADDRESS, &ip.octets()),
                Host::Ip(IpAddr::V6(ip)) => tlv(IP_ADDRESS, &ip.octets()),
            };
            extensions.extend(extension(
                OID_SUBJECT_ALT_NAME,
                false,
                &tlv(SEQUENCE, &general_name),
            ));
            let authority_key = tlv(KEY_IDENTIFIER, &issuer.identifier());
            extensions.extend(extension(
                OID_AUTHORITY_KEY_IDENTIFIER,
                false,
                &tlv(SEQUENCE, &authority_key),
            ));
        }
    }
    let subject_key = tlv(OCTET_STRING, &key.identifier());
    extensions.extend(extension(OID_SUBJECT_KEY_IDENTIFIER, false, &subject_key));
    extensions
}

fn extension(oid: &[u8], critical: bool, value: &[u8]) -> Vec<u8> {
    let mut content = oid.to_vec();
    if critical {
        content.extend([BOOLEAN, 1, 0xff]);
    }
    content.extend(tlv(OCTET_STRING, value));
    tlv(SEQUENCE, &content)
}

/// One relative distinguished name: `SET { SEQUENCE { oid, UTF8String } }`.
fn attribute(oid: &[u8], value: &str) -> Vec<u8> {
    let mut pair = oid.to_vec();
    pair.extend(tlv(UTF8_STRING, value.as_bytes()));
    tlv(SET, &tlv(SEQUENCE, &pair))
}

fn public_key_info(key: &KeyPair) -> Vec<u8> {
    let mut algorithm = OID_EC_PUBLIC_KEY.to_vec();
    algorithm.extend(OID_P256);
    let mut info = tlv(SEQUENCE, &algorithm);
    info.extend(bit_string(key.public_key()));
    tlv(SEQUENCE, &info)
}

/// A positive INTEGER of 16 bytes whose DER is minimal: top bit clear (not
/// negative), next bit set (no leading zero byte to strip, and never zero).
fn serial(mut bytes: [u8; 16]) -> Vec<u8> {
    bytes[0] = (bytes[0] & 0x7f) | 0x40;
    tlv(INTEGER, &bytes)
}

fn bit_string(bytes: &[u8]) -> Vec<u8> {
    let mut content = Vec::with_capacity(bytes.len() + 1);
    content.push(0); // no unused bits
    content.extend_from_slice(bytes);
    tlv(BIT_STRING, &content)
}

/// UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5);
/// times before 1970 are clamped to it.
fn time(at: SystemTime) -> Vec<u8> {
    let seconds = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (year, month, day) = crate::support::date::civil_date_since(seconds / 86_400);
    let of_day = seconds % 86_400;
    let clock = format!(
        "{month:02}{day:02}{:02}{:02}{:02}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    );
    if year < 2050 {
        tlv(UTC_TIME, format!("{:02}{clock}", year % 100).as_bytes())
    } else {
        tlv(GENERALIZED_TIME, format!("{year:04}{clock}").as_bytes())
    }
}

/// A DER tag-length-value.
fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(content.len() + 4);
    out.push(tag);
    let length = content.len();
    if length < 0x80 {
        out.push(length as u8);
    } else {
        let bytes = length.to_be_bytes();
        let skip = bytes.iter().take_while(|&&b| b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
    out
}

const BOOLEAN: u8 = 0x01;
const INTEGER: u8 = 0x02;
const BIT_STRING: u8 = 0x03;
const OCTET_STRING: u8 = 0x04;
const UTF8_STRING: u8 = 0x0c;
const UTC_TIME: u8 = 0x17;
const GENERALIZED_TIME: u8 = 0x18;
const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;
/// `[3] EXPLICIT` in a TBSCertificate.
const EXTENSIONS: u8 = 0xa3;
/// `[0] IMPLICIT` in AuthorityKeyIdentifier.
const KEY_IDENTIFIER: u8 = 0x80;
/// `[2] IMPLICIT IA5String` and `[7] IMPLICIT OCTET STRING` in GeneralName.
const DNS_NAME: u8 = 0x82;
const IP_ADDRESS: u8 = 0x87;

/// `[0] EXPLICIT INTEGER 2`: X.509 v3.
const VERSION_3: &[u8] = &[0xa0, 3, INTEGER, 1, 2];
/// AlgorithmIdentifier of ecdsa-with-SHA256 (1.2.840.10045.4.3.2), no
/// parameters.
const ECDSA_WITH_SHA256: &[u8] = &[
    SEQUENCE, 10, 0x06, 8, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02,
];
/// id-ecPublicKey (1.2.840.10045.2.1).
const OID_EC_PUBLIC_KEY: &[u8] = &[0x06, 7, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
/// prime256v1 (1.2.840.10045.3.1.7).
const OID_P256: &[u8] = &[0x06, 8, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
/// id-at-commonName (2.5.4.3) and id-at-organizationName (2.5.4.10).
const OID_COMMON_NAME: &[u8] = &[0x06, 3, 0x55, 0x04, 0x03];
const OID_ORGANIZATION: &[u8] = &[0x06, 3, 0x55, 0x04, 0x0a];
/// Certificate extensions (2.5.29.x).
const OID_SUBJECT_KEY_IDENTIFIER: &[u8] = &[0x06, 3, 0x55, 0x1d, 0x0e];
const OID_KEY_USAGE: &[u8] = &[0x06, 3, 0x55, 0x1d, 0x0f];
const OID_SUBJECT_ALT_NAME: &[u8] = &[0x06, 3, 0x55, 0x1d, 0x11];
const OID_BASIC_CONSTRAINTS: &[u8] = &[0x06, 3, 0x55, 0x1d, 0x13];
const OID_AUTHORITY_KEY_IDENTIFIER: &[u8] = &[0x06, 3, 0x55, 0x1d, 0x23];
const OID_EXTENDED_KEY_USAGE: &[u8] = &[0x06, 3, 0x55, 0x1d, 0x25];
/// id-kp-serverAuth (1.3.6.1.5.5.7.3.1).
const OID_SERVER_AUTH: &[u8] = &[0x06, 8, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x01];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_switch_to_generalized_in_2050() {
        let at = |secs| UNIX_EPOCH + std::time::Duration::from_secs(secs);
        assert_eq!(time(at(0)), tlv(UTC_TIME, b"700101000000Z"));
        // 2049-12-31 23:59:59 and a second later.
        assert_eq!(time(at(2_524_607_999)), tlv(UTC_TIME, b"491231235959Z"));
        assert_eq!(
            time(at(2_524_608_000)),
            tlv(GENERALIZED_TIME, b"20500101000000Z")
        );
    }

    #[test]
    fn lengths_use_the_long_form_from_128_bytes() {
        assert_eq!(tlv(OCTET_STRING, &[7; 127])[..2], [OCTET_STRING, 127]);
        assert_eq!(tlv(OCTET_STRING, &[7; 128])[..3], [OCTET_STRING, 0x81, 128]);
        assert_eq!(
            tlv(OCTET_STRING, &[7; 300])[..4],
            [OCTET_STRING, 0x82, 0x01, 0x2c]
        );
    }

    #[test]
    fn serials_are_positive_and_minimal() {
        for first in [0x00, 0x01, 0x7f, 0x80, 0xff] {
            let mut bytes = [0; 16];
            bytes[0] = first;
            let encoded = serial(bytes);
            assert_eq!(encoded[..2], [INTEGER, 16]);
            // Positive (top bit clear) and no redundant leading zero byte.
            assert_eq!(encoded[2] & 0xc0, 0x40, "{first:#x}");
        }
    }
}
