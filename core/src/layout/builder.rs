//! Validation of a layout, field by field.

use super::{Field, FieldKind, Layout, EMPTY_FIELD};
use crate::error::{Error, LayoutProblem, Result};
use crate::names::{FieldName, MAX_FIELDS, MAX_FIELD_BITS, MAX_TIME_END_MS};

/// Builds a layout field by field (what [`Layout::new`] and the JSON reader use).
pub(crate) struct LayoutBuilder {
    epoch_ms: u64,
    unit_ms: u64,
    names: [FieldName; MAX_FIELDS],
    bits: [u32; MAX_FIELDS],
    len: usize,
    total: u32,
    too_many: bool,
}

impl LayoutBuilder {
    pub(crate) fn new(epoch_ms: u64, unit_ms: u64) -> Self {
        LayoutBuilder {
            epoch_ms,
            unit_ms,
            names: [EMPTY_FIELD.name; MAX_FIELDS],
            bits: [0; MAX_FIELDS],
            len: 0,
            total: 0,
            too_many: false,
        }
    }

    pub(crate) fn set_epoch(&mut self, epoch_ms: u64) {
        self.epoch_ms = epoch_ms;
    }

    pub(crate) fn set_unit(&mut self, unit_ms: u64) {
        self.unit_ms = unit_ms;
    }

    pub(crate) fn push(&mut self, name: &str, bits: u32) -> Result<()> {
        let name = FieldName::new(name)?;
        // Keep adding widths past 64 so the error can say how wide it got.
        self.total = self.total.saturating_add(bits);
        if self.len == MAX_FIELDS {
            self.too_many = true;
            return Ok(());
        }
        self.names[self.len] = name;
        self.bits[self.len] = bits;
        self.len += 1;
        Ok(())
    }

    pub(crate) fn finish(self) -> Result<Layout> {
        let bad = |p| Err(Error::InvalidLayout(p));
        if self.total > 64 {
            return bad(LayoutProblem::TooWide { bits: self.total });
        }
        if self.too_many {
            return bad(LayoutProblem::TooManyFields);
        }
        let names = &self.names[..self.len];
        for (i, n) in names.iter().enumerate() {
            if names[..i].contains(n) {
                return bad(LayoutProblem::DuplicateField { field: *n });
            }
        }
        let ts = names.iter().position(|n| n.eq_str("timestamp"));
        let seq = names.iter().position(|n| n.eq_str("sequence"));
        let seq = match (ts, seq) {
            (None, _) => return bad(LayoutProblem::MissingTimestamp),
            (Some(t), _) if t != 0 => return bad(LayoutProblem::TimestampNotFirst),
            (_, None) => return bad(LayoutProblem::MissingSequence),
            (Some(_), Some(s)) => s,
        };
        for (n, &b) in names.iter().zip(&self.bits) {
            if b == 0 {
                return bad(LayoutProblem::ZeroWidth { field: *n });
            }
            if b > MAX_FIELD_BITS {
                return bad(LayoutProblem::FieldTooWide { field: *n });
            }
        }
        if self.unit_ms == 0 {
            return bad(LayoutProblem::ZeroTimeUnit);
        }
        // The time field has at most 53 bits, so 2^bits fits; the product and
        // sum are checked against 2^53.
        let span = (1u128 << self.bits[0]) * self.unit_ms as u128;
        if self.epoch_ms as u128 + span > MAX_TIME_END_MS as u128 {
            return bad(LayoutProblem::TimeRangeTooLarge);
        }
        let mut layout = Layout {
            epoch_ms: self.epoch_ms,
            unit_ms: self.unit_ms,
            fields: [EMPTY_FIELD; MAX_FIELDS],
            len: self.len as u8,
            total: self.total as u8,
            seq_index: seq as u8,
            split: [(0, 0); MAX_FIELDS - 1],
        };
        let mut below = self.total;
        for i in 0..self.len {
            below -= self.bits[i];
            layout.fields[i] = Field {
                name: self.names[i],
                bits: self.bits[i] as u8,
                shift: below as u8,
                kind: if i == 0 {
                    FieldKind::Timestamp
                } else if i == seq {
                    FieldKind::Sequence
                } else {
                    FieldKind::Node
                },
            };
        }
        let mut split = layout.split;
        let order = layout.fields[seq..=seq].iter().chain(layout.nodes());
        for (f, slot) in order.zip(&mut split) {
            *slot = (f.shift as u64, f.max());
        }
        layout.split = split;
        Ok(layout)
    }
}
