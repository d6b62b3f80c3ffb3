//! The slot space: which IDs a lease's slots stand for, and the stable key a
//! store files them under.

use snowmint::{Error, Field, FieldName, Layout, Nodes};

use crate::error::LeaseError;

/// The slots of one ID space: the values of the one node field the user did
/// not fix (the *leased* field), under a layout's time encoding and the node
/// values the user fixed, plus an optional namespace.
///
/// Two generators share slots exactly when their IDs could collide through
/// this field: same epoch, time unit, width, timestamp and sequence positions,
/// the same bits fixed, the leased field at the same position, and the same
/// namespace. Field names and the layout's name do not matter (`twitter` with
/// datacenter 1 and a layout that fixes the same bits under another name share
/// one space). See [`SlotSpace::text`] for the canonical form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotSpace {
    layout: Layout,
    fixed: Vec<(FieldName, u64)>,
    leased: Field,
    text: String,
    key: String,
}

impl SlotSpace {
    /// The space of `layout` with the node values `fixed` (every node field
    /// but one) and `namespace`.
    ///
    /// Fails with `invalid_option` when no node field or more than one is left
    /// unfixed, and with the core's errors for unknown fields or values that do
    /// not fit.
    ///
    /// ```
    /// use snowmint::Layout;
    /// use snowmint_lease::SlotSpace;
    /// let s = SlotSpace::new(Layout::preset("twitter")?, &[("datacenter", 1)], Some("orders"))?;
    /// assert_eq!(s.leased_field(), "worker");
    /// assert_eq!(s.slots(), 32);
    /// assert_eq!(s.key().len(), 35); // "v1-" and 32 hex digits
    /// # Ok::<(), snowmint_lease::LeaseError>(())
    /// ```
    pub fn new(
        layout: Layout,
        fixed: &[(&str, u64)],
        namespace: Option<&str>,
    ) -> Result<SlotSpace, LeaseError> {
        for (name, _) in fixed {
            if layout.node_index(name).is_none() {
                return Err(Error::UnknownField {
                    name: FieldName::lossy(name),
                }
                .into());
            }
        }
        let unfixed: Vec<&Field> = layout
            .nodes()
            .filter(|f| !fixed.iter().any(|(n, _)| *n == f.name()))
            .collect();
        let names = || {
            layout
                .nodes()
                .map(|f| f.name().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let leased = match unfixed.as_slice() {
            [one] => **one,
            [] => {
                return Err(LeaseError::url(format!(
                "a lease needs one node field left unfixed, and every node field ({}) has a value",
                names()
            )))
            }
            many => {
                return Err(LeaseError::url(format!(
                    "a lease leases exactly one node field; fix every other one (unfixed: {})",
                    many.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
                )))
            }
        };
        let fixed: Vec<(FieldName, u64)> = fixed
            .iter()
            .map(|(n, v)| (FieldName::lossy(n), *v))
            .collect();
        let mut space = SlotSpace {
            layout,
            fixed,
            leased,
            text: String::new(),
            key: String::new(),
        };
        // Also checks the fixed values fit (and that no field is given twice).
        let fixed_bits = space.nodes(0)?.bits();
        let field = |f: &Field| format!("{}@{}", f.bits(), f.shift());
        space.text = format!(
            "snowmint lease space v1\nepoch_ms={}\nunit_ms={}\nbits={}\ntimestamp={}\nsequence={}\nfixed_bits={:#x}\nleased={}\nnamespace={}\n",
            layout.epoch_ms(),
            layout.time_unit_ms(),
            layout.total_bits(),
            field(layout.timestamp()),
            field(layout.sequence()),
            fixed_bits,
            field(&leased),
            namespace.unwrap_or(""),
        );
        space.key = format!("v1-{:032x}", fnv1a_128(space.text.as_bytes()));
        Ok(space)
    }

    /// The canonical text the key is the digest of: one `name=value` line per
    /// property, fields as `width@shift`, `fixed_bits` the fixed node values
    /// in place (hex), `namespace=` empty without one. For example (twitter,
    /// datacenter 1, namespace `orders`):
    ///
    /// ```text
    /// snowmint lease space v1
    /// epoch_ms=1288834974657
    /// unit_ms=1
    /// bits=63
    /// timestamp=41@22
    /// sequence=12@0
    /// fixed_bits=0x20000
    /// leased=5@12
    /// namespace=orders
    /// ```
    pub fn text(&self) -> &str {
        &self.text
    }

    /// `v1-` and the FNV-1a 128-bit digest of [`text`](Self::text) in 32 lowercase
    /// hex digits: the name stores file the space's slots under. Stores that
    /// can keep the text beside it (the file store does) check it on open, so a
    /// digest collision is detected rather than shared.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// How many slots: 2^(width of the leased field).
    pub fn slots(&self) -> u64 {
        self.leased.max() + 1
    }

    /// The name of the leased field.
    pub fn leased_field(&self) -> &str {
        self.leased.name()
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The node values of `slot`: the fixed ones and `slot` in the leased field.
    pub fn nodes(&self, slot: u64) -> Result<Nodes, Error> {
        let pairs = self
            .fixed
            .iter()
            .map(|(n, v)| (n.as_str(), *v))
            .chain(std::iter::once((self.leased.name(), slot)));
        self.layout.nodes_from_pairs(pairs)
    }
}

/// FNV-1a, 128 bits (no dependency; the key needs spreading, not secrecy).
fn fnv1a_128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013b;
    bytes
        .iter()
        .fold(OFFSET, |h, &b| (h ^ u128::from(b)).wrapping_mul(PRIME))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn twitter() -> Layout {
        Layout::preset("twitter").unwrap()
    }

    #[test]
    fn fnv_reference_values() {
        // Published FNV-1a 128 test values.
        assert_eq!(fnv1a_128(b""), 0x6c62272e07bb014262b821756295c58d);
        assert_eq!(fnv1a_128(b"a"), 0xd228cb696f1a8caf78912b704e4a8964);
    }

    #[test]
    fn key_is_stable() {
        let s = SlotSpace::new(twitter(), &[("datacenter", 1)], Some("orders")).unwrap();
        assert_eq!(
            s.text(),
            "snowmint lease space v1\nepoch_ms=1288834974657\nunit_ms=1\nbits=63\ntimestamp=41@22\n\
             sequence=12@0\nfixed_bits=0x20000\nleased=5@12\nnamespace=orders\n"
        );
        // Pinned: a change here orphans every slot already in a store.
        assert_eq!(
            s.key(),
            format!("v1-{:032x}", fnv1a_128(s.text().as_bytes()))
        );
        assert_eq!(s.key(), "v1-effbdbe10b7b6761eee57be57d3b03b8");
        assert_eq!(s.slots(), 32);
        assert_eq!(s.nodes(7).unwrap().values(), &[1, 7]);
    }

    #[test]
    fn what_separates_spaces() {
        let key = |l: Layout, fixed: &[(&str, u64)], ns: Option<&str>| {
            SlotSpace::new(l, fixed, ns).unwrap().key().to_string()
        };
        let base = key(twitter(), &[("datacenter", 1)], None);
        assert_ne!(base, key(twitter(), &[("datacenter", 2)], None));
        assert_ne!(base, key(twitter(), &[("datacenter", 1)], Some("a")));
        assert_ne!(
            key(twitter(), &[("datacenter", 1)], Some("a")),
            key(twitter(), &[("datacenter", 1)], Some("b"))
        );
        // Leasing the other field is another space.
        assert_ne!(base, key(twitter(), &[("worker", 1)], None));
        // Another epoch.
        let other_epoch = Layout::new(
            0,
            1,
            &[
                ("timestamp", 41),
                ("datacenter", 5),
                ("worker", 5),
                ("sequence", 12),
            ],
        )
        .unwrap();
        assert_ne!(base, key(other_epoch, &[("datacenter", 1)], None));
        // Names do not matter, bits do: the same layout under other field names.
        let renamed = Layout::new(
            1288834974657,
            1,
            &[
                ("timestamp", 41),
                ("region", 5),
                ("process", 5),
                ("sequence", 12),
            ],
        )
        .unwrap();
        assert_eq!(base, key(renamed, &[("region", 1)], None));
    }

    #[test]
    fn exactly_one_unfixed_field() {
        let e = SlotSpace::new(twitter(), &[], None).unwrap_err();
        assert_eq!(e.code(), "invalid_option");
        assert!(e.to_string().contains("unfixed: datacenter, worker"), "{e}");
        let e = SlotSpace::new(twitter(), &[("datacenter", 1), ("worker", 2)], None).unwrap_err();
        assert_eq!(e.code(), "invalid_option");
        assert!(
            e.to_string().contains("(datacenter, worker) has a value"),
            "{e}"
        );
        let e = SlotSpace::new(twitter(), &[("rack", 1)], None).unwrap_err();
        assert_eq!(e.code(), "unknown_field");
        let e = SlotSpace::new(twitter(), &[("datacenter", 32)], None).unwrap_err();
        assert_eq!(e.code(), "node_out_of_range");
        // One node field only: nothing to fix.
        let s = SlotSpace::new(Layout::preset("sonyflake").unwrap(), &[], None).unwrap();
        assert_eq!(s.slots(), 1 << 16);
    }
}
