//! The fields of a layout: their names, kinds, widths and positions.

use crate::error::{Error, LayoutProblem, Result};
use crate::names::FieldName;

impl FieldName {
    /// Checks and stores a name.
    pub const fn new(name: &str) -> Result<FieldName> {
        let b = name.as_bytes();
        if b.is_empty() || b.len() > Self::MAX_LEN || !b[0].is_ascii_lowercase() {
            return Err(Error::InvalidLayout(LayoutProblem::BadFieldName));
        }
        let mut bytes = [0u8; Self::MAX_LEN];
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_') {
                return Err(Error::InvalidLayout(LayoutProblem::BadFieldName));
            }
            bytes[i] = c;
            i += 1;
        }
        Ok(FieldName {
            bytes,
            len: b.len() as u8,
        })
    }
}

/// What a field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldKind {
    /// Time units since the epoch.
    Timestamp,
    /// The counter within one time unit.
    Sequence,
    /// A node value fixed per generator (datacenter, worker, shard...).
    Node,
}

impl FieldKind {
    /// The kind's name, as every binding shows it: `timestamp`, `sequence`
    /// or `node`.
    ///
    /// ```
    /// let twitter = snowmint::Layout::preset("twitter").unwrap();
    /// let kinds: Vec<&str> = twitter.fields().iter().map(|f| f.kind().as_str()).collect();
    /// assert_eq!(kinds, ["timestamp", "node", "node", "sequence"]);
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            FieldKind::Timestamp => "timestamp",
            FieldKind::Sequence => "sequence",
            FieldKind::Node => "node",
        }
    }
}

/// One field of a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    pub(super) name: FieldName,
    pub(super) bits: u8,
    pub(super) shift: u8,
    pub(super) kind: FieldKind,
}

impl Field {
    /// The field's name.
    pub fn name(&self) -> &str {
        self.name.as_str()
    }
    /// The field's name as stored.
    pub const fn field_name(&self) -> FieldName {
        self.name
    }
    /// Width in bits.
    pub const fn bits(&self) -> u32 {
        self.bits as u32
    }
    /// Position of the field's lowest bit in the ID.
    pub const fn shift(&self) -> u32 {
        self.shift as u32
    }
    /// What the field holds.
    pub const fn kind(&self) -> FieldKind {
        self.kind
    }
    /// The largest value the field holds.
    pub const fn max(&self) -> u64 {
        mask(self.bits as u32)
    }
}

pub(super) const fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The filler of unused field slots.
pub(super) const EMPTY_FIELD: Field = Field {
    name: FieldName {
        bytes: [0; FieldName::MAX_LEN],
        len: 0,
    },
    bits: 0,
    shift: 0,
    kind: FieldKind::Node,
};
