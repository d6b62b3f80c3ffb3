//! Node values, and IDs composed from and split into their parts.

use super::{mask, FieldKind, Layout, EMPTY_FIELD};
use crate::error::{Error, IdProblem, Result};
use crate::id::Id;
use crate::names::{FieldName, MAX_NODES};

impl Layout {
    // ---- nodes ---------------------------------------------------------

    /// Node values from `(name, value)` pairs; every node field needs
    /// exactly one value.
    ///
    /// ```
    /// use snowmint::Layout;
    /// let l = Layout::preset("twitter").unwrap();
    /// let n = l.nodes_from_pairs([("worker", 3), ("datacenter", 1)]).unwrap();
    /// assert_eq!(n.values(), &[1, 3]);
    /// assert_eq!(l.nodes_from_pairs([("worker", 3)]).unwrap_err().code(), "missing_node");
    /// assert_eq!(l.nodes_from_pairs([("worker", 32), ("datacenter", 1)]).unwrap_err().code(), "node_out_of_range");
    /// ```
    pub fn nodes_from_pairs<'a, I>(&self, pairs: I) -> Result<Nodes>
    where
        I: IntoIterator<Item = (&'a str, u64)>,
    {
        let mut values = [0u64; MAX_NODES];
        let mut seen = [false; MAX_NODES];
        for (name, value) in pairs {
            let i = self.node_index(name).ok_or(Error::UnknownField {
                name: FieldName::lossy(name),
            })?;
            if seen[i] {
                // A name given twice is as unknown as a name not in the layout:
                // there is no single value for it.
                return Err(Error::UnknownField {
                    name: FieldName::lossy(name),
                });
            }
            seen[i] = true;
            values[i] = value;
        }
        if let Some(i) = seen[..self.node_count()].iter().position(|s| !s) {
            return Err(Error::MissingNode {
                field: self.node(i).map(|f| f.name).unwrap_or(EMPTY_FIELD.name),
            });
        }
        self.nodes_from_values(&values[..self.node_count()])
    }

    /// Node values in the order of [`nodes`](Self::nodes).
    pub fn nodes_from_values(&self, values: &[u64]) -> Result<Nodes> {
        let n = self.node_count();
        if values.len() < n {
            return Err(Error::MissingNode {
                field: self
                    .node(values.len())
                    .map(|f| f.name)
                    .unwrap_or(EMPTY_FIELD.name),
            });
        }
        if values.len() > n {
            return Err(Error::UnknownField {
                name: FieldName::lossy("(extra value)"),
            });
        }
        let mut out = Nodes {
            values: [0; MAX_NODES],
            len: n as u8,
            bits: 0,
        };
        for (i, (f, &v)) in self.nodes().zip(values).enumerate() {
            if v > f.max() {
                return Err(Error::NodeOutOfRange {
                    field: f.name,
                    value: v,
                    max: f.max(),
                });
            }
            out.values[i] = v;
            out.bits |= v << f.shift;
        }
        Ok(out)
    }

    // ---- compose / decompose -------------------------------------------

    /// Builds an ID from a time, a sequence value and node values.
    ///
    /// ```
    /// use snowmint::Layout;
    /// let l = Layout::preset("twitter").unwrap();
    /// let nodes = l.nodes_from_values(&[1, 3]).unwrap();
    /// let id = l.compose(1656432460105, 0, &nodes).unwrap();
    /// assert_eq!(l.decompose(id).unwrap().nodes(), &[1, 3]);
    /// ```
    pub fn compose(&self, time_ms: u64, sequence: u64, nodes: &Nodes) -> Result<Id> {
        let tick = self.tick_of(time_ms)?;
        let seq = self.sequence();
        if sequence > seq.max() {
            return Err(Error::NodeOutOfRange {
                field: seq.name,
                value: sequence,
                max: seq.max(),
            });
        }
        // Re-check: `nodes` may come from another layout.
        let nodes = self.nodes_from_values(nodes.values())?;
        Ok(Id::new(self.compose_raw(tick, sequence, nodes.bits)))
    }

    /// Builds an ID from values already known to fit.
    #[inline(always)]
    pub(crate) const fn compose_raw(&self, tick: u64, seq: u64, node_bits: u64) -> u64 {
        (tick << self.fields[0].shift)
            | (seq << self.fields[self.seq_index as usize].shift)
            | node_bits
    }

    /// Fails with `invalid_id` when `id` has bits above the layout's width.
    #[inline]
    fn check_width(&self, id: u64) -> Result<()> {
        if id > self.max_raw() {
            return Err(Error::InvalidId(IdProblem::TooWideForLayout {
                layout_bits: self.total as u32,
            }));
        }
        Ok(())
    }

    /// Splits an ID into its parts. Fails with `invalid_id` when the ID has
    /// bits above the layout's width.
    #[inline]
    pub fn decompose(&self, id: impl Into<Id>) -> Result<Parts> {
        let id = id.into().get();
        self.check_width(id)?;
        // The timestamp is the top field: no mask needed below the width.
        let tick = id >> self.fields[0].shift;
        let (seq_shift, seq_mask) = self.split[0];
        let mut nodes = [0; MAX_NODES];
        for (v, &(shift, mask)) in nodes.iter_mut().zip(&self.split[1..self.len as usize - 1]) {
            *v = (id >> shift) & mask;
        }
        Ok(Parts {
            id: Id::new(id),
            tick,
            timestamp_ms: self.ms_of_tick(tick),
            sequence: (id >> seq_shift) & seq_mask,
            nodes,
            node_count: self.node_count() as u8,
        })
    }

    /// Splits one ID into `out` as `f64` values (exact: no field is wider
    /// than 53 bits and no time reaches 2^53 ms): the timestamp (Unix ms, as
    /// [`Parts::timestamp_ms`]), the sequence, then each node field in layout
    /// order; returns how many were written (`2 + node_count()`). The
    /// per-ID form of [`decompose_columns`](Self::decompose_columns), for
    /// bindings that hand the values to JavaScript through a scratch
    /// `Float64Array`. Fails with `invalid_id` like
    /// [`decompose`](Self::decompose), leaving `out` unchanged. Panics if
    /// `out` is shorter than `2 + node_count()`.
    ///
    /// ```
    /// use snowmint::Layout;
    /// let discord = Layout::preset("discord").unwrap();
    /// let mut out = [0.0; 8];
    /// assert_eq!(discord.decompose_f64(175928847299117063, &mut out), Ok(4));
    /// assert_eq!(out[..4], [1462015105796.0, 7.0, 1.0, 0.0]); // ms, sequence, worker, process
    /// ```
    #[inline]
    pub fn decompose_f64(&self, id: impl Into<Id>, out: &mut [f64]) -> Result<usize> {
        let id = id.into().get();
        self.check_width(id)?;
        let n = 2 + self.node_count();
        let (ms, rest) = out[..n].split_at_mut(1);
        // Every value is below 2^53: the signed conversion is exact, and in
        // WebAssembly cheaper than the unsigned one.
        ms[0] = self.ms_of_tick(id >> self.fields[0].shift) as i64 as f64;
        for (i, o) in rest.iter_mut().enumerate() {
            let (shift, mask) = self.split[i];
            *o = ((id >> shift) & mask) as i64 as f64;
        }
        Ok(n)
    }

    /// Splits many IDs at once, into columns of `f64` (exact: no field is
    /// wider than 53 bits and no time reaches 2^53 ms): `out` holds
    /// `2 + node_count()` columns of `ids.len()` values each, the timestamps
    /// (Unix ms, as [`Parts::timestamp_ms`]), the sequences, then each node
    /// field in layout order. For bindings that hand columns to JavaScript
    /// typed arrays or NumPy; the same values as [`decompose`](Self::decompose)
    /// ID by ID, several times faster.
    ///
    /// If an ID has bits above the layout's width, returns its index and the
    /// `invalid_id` error, and leaves `out` unspecified. Panics if `out` is
    /// shorter than `ids.len() * (2 + node_count())`.
    ///
    /// ```
    /// use snowmint::Layout;
    /// let discord = Layout::preset("discord").unwrap();
    /// let ids = [175928847299117063, 175928847303311366];
    /// let mut out = [0.0; 2 * 4];
    /// discord.decompose_columns(&ids, &mut out).unwrap();
    /// for (i, &id) in ids.iter().enumerate() {
    ///     let p = discord.decompose(id).unwrap();
    ///     assert_eq!(out[i], p.timestamp_ms() as f64);
    ///     assert_eq!(out[2 + i], p.sequence() as f64);
    ///     assert_eq!(out[4 + i], p.nodes()[0] as f64); // worker
    ///     assert_eq!(out[6 + i], p.nodes()[1] as f64); // process
    /// }
    /// // Twitter IDs have 63 bits: 2^63 is not one.
    /// let twitter = Layout::preset("twitter").unwrap();
    /// let (at, err) = twitter.decompose_columns(&[1, 1 << 63], &mut out).unwrap_err();
    /// assert_eq!((at, err.code()), (1, "invalid_id"));
    /// ```
    pub fn decompose_columns(
        &self,
        ids: &[u64],
        out: &mut [f64],
    ) -> core::result::Result<(), (usize, Error)> {
        let n = ids.len();
        let max = self.max_raw();
        if let Some(at) = ids.iter().position(|&id| id > max) {
            return Err((
                at,
                self.check_width(ids[at])
                    .err()
                    .unwrap_or(Error::InvalidId(IdProblem::Overflow)),
            ));
        }
        let out = &mut out[..n * (2 + self.node_count())];
        let (ms, rest) = out.split_at_mut(n);
        let (seq, mut nodes) = rest.split_at_mut(n);
        // One pass per field over the whole batch: each loop is a shift and
        // a mask, which the compiler can vectorise.
        for f in self.fields() {
            let (shift, mask) = (f.shift, f.max());
            let col: &mut [f64] = match f.kind {
                FieldKind::Timestamp => {
                    let (epoch, unit) = (self.epoch_ms, self.unit_ms);
                    for (o, &id) in ms.iter_mut().zip(ids) {
                        *o = (epoch + ((id >> shift) & mask) * unit) as f64;
                    }
                    continue;
                }
                FieldKind::Sequence => &mut *seq,
                FieldKind::Node => {
                    let (col, tail) = core::mem::take(&mut nodes).split_at_mut(n);
                    nodes = tail;
                    col
                }
            };
            for (o, &id) in col.iter_mut().zip(ids) {
                *o = ((id >> shift) & mask) as f64;
            }
        }
        Ok(())
    }

    /// The smallest and largest IDs whose time unit contains `time_ms`, for
    /// range queries (`WHERE id BETWEEN min AND max`).
    ///
    /// ```
    /// use snowmint::Layout;
    /// let l = Layout::preset("twitter").unwrap();
    /// let (lo, hi) = l.id_bounds(1656432460105).unwrap();
    /// assert_eq!(lo.get(), 1541815603604488192);
    /// assert_eq!(hi.get(), lo.get() + (1 << 22) - 1);
    /// ```
    pub fn id_bounds(&self, time_ms: u64) -> Result<(Id, Id)> {
        let tick = self.tick_of(time_ms)?;
        let shift = self.fields[0].shift as u32;
        let lo = tick << shift;
        Ok((Id::new(lo), Id::new(lo | mask(shift))))
    }

    /// True when `id` fits the layout and decodes to a time between the
    /// epoch and `now_ms` plus one day: the test behind "which layout fits?".
    pub fn is_plausible(&self, id: impl Into<Id>, now_ms: u64) -> bool {
        match self.decompose(id) {
            Ok(p) => p.timestamp_ms <= now_ms.saturating_add(86_400_000),
            Err(_) => false,
        }
    }
}

/// Node values for one layout, checked against its field widths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Nodes {
    values: [u64; MAX_NODES],
    len: u8,
    bits: u64,
}

impl Nodes {
    /// The values, in the layout's node-field order.
    pub fn values(&self) -> &[u64] {
        &self.values[..self.len as usize]
    }
    /// The node values placed at their bit positions.
    pub const fn bits(&self) -> u64 {
        self.bits
    }
}

/// An ID split into its parts by a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Parts {
    id: Id,
    tick: u64,
    timestamp_ms: u64,
    sequence: u64,
    nodes: [u64; MAX_NODES],
    node_count: u8,
}

impl Parts {
    /// The ID.
    pub const fn id(&self) -> Id {
        self.id
    }
    /// The time field's raw value (units since the epoch).
    pub const fn tick(&self) -> u64 {
        self.tick
    }
    /// The start of the ID's time unit, Unix milliseconds.
    pub const fn timestamp_ms(&self) -> u64 {
        self.timestamp_ms
    }
    /// The sequence value.
    pub const fn sequence(&self) -> u64 {
        self.sequence
    }
    /// Node values in the layout's node-field order.
    pub fn nodes(&self) -> &[u64] {
        &self.nodes[..self.node_count as usize]
    }
}
