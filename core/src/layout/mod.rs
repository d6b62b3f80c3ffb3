//! Layouts: which bits of an ID hold the time, the sequence and the node fields.
//!
//! The [`Layout`] type and its accessors and time arithmetic live here; its
//! other methods are split by concern: `field` (the field types), `builder`
//! (validation), `parts` (node values, compose, decompose) and `presets` (the
//! named layouts and [`Layout::parse`]).

use core::fmt;

use crate::error::{Error, LayoutProblem, Result};
use crate::id::Id;
use crate::names::MAX_FIELDS;

mod builder;
mod field;
mod parts;
mod presets;

pub(crate) use builder::LayoutBuilder;
use field::{mask, EMPTY_FIELD};
pub use field::{Field, FieldKind};
pub use parts::{Nodes, Parts};

/// A layout: the epoch, the time unit, and the fields from the most
/// significant bit down.
///
/// The timestamp is always the first field; the sequence and node fields
/// follow in any order. IDs use the low [`total_bits`](Layout::total_bits)
/// bits of a `u64`.
///
/// ```
/// use snowmint::Layout;
/// let twitter = Layout::preset("twitter").unwrap();
/// assert_eq!(twitter.total_bits(), 63);
/// let parts = twitter.decompose(1541815603606036480).unwrap();
/// assert_eq!(parts.timestamp_ms(), 1656432460105);
/// assert_eq!(parts.sequence(), 0);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    epoch_ms: u64,
    unit_ms: u64,
    fields: [Field; MAX_FIELDS],
    len: u8,
    total: u8,
    seq_index: u8,
    /// How the decoders split an ID, worked out from `fields` when the
    /// layout is built: `(shift, mask)` of the sequence, then of each node
    /// field in layout order (`len - 1` entries used). A decode is then one
    /// shift and one mask per field, with no search for the field kinds.
    split: [(u64, u64); MAX_FIELDS - 1],
}

impl Layout {
    /// Builds and validates a layout from `(name, bits)` pairs, most
    /// significant first. `timestamp` must come first and `sequence` must be
    /// present; every other name is a node field.
    ///
    /// ```
    /// use snowmint::Layout;
    /// let game = Layout::new(1700000000000, 1, &[("timestamp", 41), ("server", 10), ("sequence", 12)]).unwrap();
    /// assert_eq!(game.node_count(), 1);
    /// // The 37 + 20 + 16 layout proposed in one of the seed articles is 73 bits wide:
    /// let err = Layout::new(0, 1, &[("timestamp", 37), ("server", 20), ("sequence", 16)]).unwrap_err();
    /// assert!(err.to_string().contains("73 bits"));
    /// ```
    pub fn new(epoch_ms: u64, unit_ms: u64, fields: &[(&str, u32)]) -> Result<Layout> {
        let mut b = LayoutBuilder::new(epoch_ms, unit_ms);
        for (name, bits) in fields {
            b.push(name, *bits)?;
        }
        b.finish()
    }

    /// The epoch, Unix milliseconds.
    pub const fn epoch_ms(&self) -> u64 {
        self.epoch_ms
    }
    /// Milliseconds per time unit.
    pub const fn time_unit_ms(&self) -> u64 {
        self.unit_ms
    }
    /// The fields, most significant first.
    pub fn fields(&self) -> &[Field] {
        &self.fields[..self.len as usize]
    }
    /// The sum of the field widths (at most 64).
    pub const fn total_bits(&self) -> u32 {
        self.total as u32
    }
    /// The timestamp field.
    pub const fn timestamp(&self) -> &Field {
        &self.fields[0]
    }
    /// The sequence field.
    pub const fn sequence(&self) -> &Field {
        &self.fields[self.seq_index as usize]
    }
    /// The node fields, most significant first.
    pub fn nodes(&self) -> impl Iterator<Item = &Field> + '_ {
        self.fields().iter().filter(|f| f.kind == FieldKind::Node)
    }
    /// How many node fields there are.
    pub fn node_count(&self) -> usize {
        self.len as usize - 2
    }
    /// The `i`-th node field.
    pub fn node(&self, i: usize) -> Option<&Field> {
        self.nodes().nth(i)
    }
    /// Finds a node field's index by name.
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes().position(|f| f.name.eq_str(name))
    }
    /// Finds any field by name.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields().iter().find(|f| f.name.eq_str(name))
    }
    /// The largest ID of the layout (all its bits set).
    #[inline]
    pub const fn max_id(&self) -> Id {
        Id::new(self.max_raw())
    }

    #[inline]
    const fn max_raw(&self) -> u64 {
        mask(self.total as u32)
    }

    // ---- time ----------------------------------------------------------

    /// The first instant (Unix ms) that the time field cannot hold: from here
    /// on, generating fails with `time_overflow`; decoding older IDs still works.
    pub const fn time_end_ms(&self) -> u64 {
        self.epoch_ms + (1u64 << self.timestamp().bits) * self.unit_ms
    }

    /// The first instant (Unix ms) from which IDs no longer all fit a signed
    /// 64-bit integer (SQL `BIGINT`, Java `long`). Equal to
    /// [`time_end_ms`](Self::time_end_ms) for layouts of 63 bits or fewer.
    pub const fn i64_end_ms(&self) -> u64 {
        self.end_below_bit(63)
    }

    /// The first instant (Unix ms) from which IDs no longer all fit a
    /// JavaScript safe integer (below 2^53). Equal to the epoch if even the
    /// first IDs are too wide.
    pub const fn js_safe_end_ms(&self) -> u64 {
        self.end_below_bit(53)
    }

    /// The first instant from which some ID is `>= 2^bit`.
    const fn end_below_bit(&self, bit: u32) -> u64 {
        if self.total as u32 <= bit {
            return self.time_end_ms();
        }
        // The IDs of tick t all fit iff (t + 1) << shift <= 2^bit.
        let shift = self.total as u32 - self.fields[0].bits as u32;
        if shift >= bit {
            return self.epoch_ms;
        }
        self.epoch_ms + (1u64 << (bit - shift)) * self.unit_ms
    }

    /// The tick (time units since the epoch) that contains `time_ms`.
    pub const fn tick_of(&self, time_ms: u64) -> Result<u64> {
        if time_ms < self.epoch_ms {
            return Err(Error::TimeBeforeEpoch {
                time_ms,
                epoch_ms: self.epoch_ms,
            });
        }
        let since = time_ms - self.epoch_ms;
        // Most layouts count milliseconds: skip the (slow) 64-bit division.
        let tick = if self.unit_ms == 1 {
            since
        } else {
            since / self.unit_ms
        };
        if tick > self.timestamp().max() {
            return Err(Error::TimeOverflow {
                time_ms,
                end_ms: self.time_end_ms(),
            });
        }
        Ok(tick)
    }

    /// The first Unix millisecond of `tick`. Only meaningful for ticks the
    /// time field holds (and one past them), where it cannot overflow.
    #[inline]
    pub const fn ms_of_tick(&self, tick: u64) -> u64 {
        self.epoch_ms + tick * self.unit_ms
    }

    /// Checks that the epoch is not after `now_ms` (a generator refuses a
    /// layout whose epoch is in the future).
    pub const fn check_epoch(&self, now_ms: u64) -> Result<()> {
        if self.epoch_ms > now_ms {
            return Err(Error::InvalidLayout(LayoutProblem::EpochInFuture {
                epoch_ms: self.epoch_ms,
                now_ms,
            }));
        }
        Ok(())
    }
}

/// Reads a preset name or a JSON descriptor, as [`Layout::parse`].
///
/// ```
/// let layout: snowmint::Layout = "discord".parse()?;
/// assert_eq!(layout.preset_name(), Some("discord"));
/// # Ok::<(), snowmint::Error>(())
/// ```
impl core::str::FromStr for Layout {
    type Err = Error;

    fn from_str(s: &str) -> Result<Layout> {
        Layout::parse(s)
    }
}

impl fmt::Debug for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Layout(")?;
        self.write_json(f)?;
        f.write_str(")")
    }
}
