//! Serde support (the `serde` feature; works without `std`).
//!
//! - [`Id`] serialises as a decimal string in human-readable formats (JSON,
//!   TOML, YAML...), because a JavaScript reader turns a JSON number above
//!   2^53 into the nearest double and silently changes the ID. It
//!   deserialises from that string or from a number (an integer, or a float
//!   that is an exact integer up to 2^53). Binary formats (bincode,
//!   postcard...) get the `u64` itself.
//! - [`as_number`]: `#[serde(with = "snowmint::serde::as_number")]` on an `Id`
//!   field writes it as a number (for readers that keep 64-bit integers); it
//!   reads both forms.
//! - [`Format`]: its name (`"decimal"`, `"base32"`, `"base62"`).
//! - [`Layout`]: a string, the canonical JSON descriptor on output; a preset
//!   name or a JSON descriptor on input (as [`Layout::parse`] and every
//!   binding read layouts).
//! - [`Parts`]: serialise only (`id`, `tick`, `timestamp_ms`, `sequence`,
//!   `nodes` in node-field order); reading parts back needs their layout: use
//!   [`Layout::compose`].
//!
//! Bad input fails with the core's message and code, for example
//! `invalid id: unexpected character at offset 0 [invalid_id]`.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use snowmint::Id;
//!
//! #[derive(Serialize, Deserialize, PartialEq, Debug)]
//! struct Row {
//!     id: Id,
//!     #[serde(with = "snowmint::serde::as_number")]
//!     parent: Id,
//! }
//! let row = Row { id: Id::new(1541815603606036480), parent: Id::new(7) };
//! let json = serde_json::to_string(&row).unwrap();
//! assert_eq!(json, r#"{"id":"1541815603606036480","parent":7}"#);
//! assert_eq!(serde_json::from_str::<Row>(r#"{"id":1541815603606036480,"parent":"7"}"#).unwrap(), row);
//! ```

use core::fmt;

use ::serde::de::{self, Deserialize, Deserializer, Visitor};
use ::serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::{Error, Format, Id, Layout, Parts, MAX_STR_LEN};

/// A core error as a serde error (its message ends with its code).
fn de_error<E: de::Error>(err: Error) -> E {
    E::custom(err)
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            let mut buf = [0u8; MAX_STR_LEN];
            s.serialize_str(self.encode(Format::Decimal, &mut buf))
        } else {
            s.serialize_u64(self.get())
        }
    }
}

struct IdVisitor;

impl Visitor<'_> for IdVisitor {
    type Value = Id;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a 64-bit ID as a decimal string or a non-negative integer")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
        Id::parse(v, Format::Decimal).map_err(de_error)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
        Ok(Id::new(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Id, E> {
        Id::from_i128(v.into()).map_err(de_error)
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Id, E> {
        Id::from_i128(i128::try_from(v).unwrap_or(i128::MAX)).map_err(de_error)
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Id, E> {
        Id::from_i128(v).map_err(de_error)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Id, E> {
        Id::from_f64(v).map_err(de_error)
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
        if d.is_human_readable() {
            d.deserialize_any(IdVisitor)
        } else {
            d.deserialize_u64(IdVisitor)
        }
    }
}

/// An [`Id`] as a number: `#[serde(with = "snowmint::serde::as_number")]`.
///
/// Writes the `u64` (JSON readers in JavaScript lose precision above 2^53:
/// use it only where every reader keeps 64-bit integers). Reads a number or
/// a decimal string, like `Id`'s own `Deserialize`.
pub mod as_number {
    use super::*;

    /// Writes the ID as a `u64`.
    pub fn serialize<S: Serializer>(id: &Id, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(id.get())
    }

    /// Reads a number or a decimal string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
        Id::deserialize(d)
    }
}

impl Serialize for Format {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

struct FormatVisitor;

impl Visitor<'_> for FormatVisitor {
    type Value = Format;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an ID format name (decimal, base32, base62)")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Format, E> {
        Format::from_name(v).map_err(de_error)
    }
}

impl<'de> Deserialize<'de> for Format {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Format, D::Error> {
        d.deserialize_str(FormatVisitor)
    }
}

/// `Display` through [`Layout::write_json`], so that serialising needs no
/// allocation.
struct Descriptor<'a>(&'a Layout);

impl fmt::Display for Descriptor<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write_json(f)
    }
}

impl Serialize for Layout {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&Descriptor(self))
    }
}

struct LayoutVisitor;

impl Visitor<'_> for LayoutVisitor {
    type Value = Layout;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a layout preset name or JSON descriptor string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Layout, E> {
        Layout::parse(v).map_err(de_error)
    }
}

impl<'de> Deserialize<'de> for Layout {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Layout, D::Error> {
        d.deserialize_str(LayoutVisitor)
    }
}

impl Serialize for Parts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Parts", 5)?;
        st.serialize_field("id", &self.id())?;
        st.serialize_field("tick", &self.tick())?;
        st.serialize_field("timestamp_ms", &self.timestamp_ms())?;
        st.serialize_field("sequence", &self.sequence())?;
        st.serialize_field("nodes", self.nodes())?;
        st.end()
    }
}
