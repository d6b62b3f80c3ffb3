//! Names and limits: the leaf of the crate's modules (it imports none of
//! them), so that errors, layouts and IDs can all use it.

use core::fmt;

/// The most fields a layout may have (timestamp and sequence included).
pub const MAX_FIELDS: usize = 8;

/// The most node fields a layout may have.
pub const MAX_NODES: usize = MAX_FIELDS - 2;

/// Every time field must end by this many ms after the Unix epoch (2^53, year
/// 287396), so that every timestamp is exact in every language, JavaScript's
/// `number` included.
pub const MAX_TIME_END_MS: u64 = 1 << 53;

/// The widest a field may be, so that every field value is exact in every
/// language (a JavaScript `number` holds integers up to 2^53 exactly).
pub const MAX_FIELD_BITS: u32 = 53;

/// A field name: 1 to 24 bytes of `[a-z0-9_]`, starting with a letter.
///
/// Stored inline (no allocation) so that layouts and errors are `Copy`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldName {
    pub(crate) bytes: [u8; FieldName::MAX_LEN],
    pub(crate) len: u8,
}

impl FieldName {
    /// The longest name.
    pub const MAX_LEN: usize = 24;

    /// Keeps whatever was given (cut to [`Self::MAX_LEN`] bytes at a character
    /// boundary), for error messages about names that are not fields.
    pub fn lossy(name: &str) -> FieldName {
        let mut end = name.len().min(Self::MAX_LEN);
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0u8; Self::MAX_LEN];
        bytes[..end].copy_from_slice(&name.as_bytes()[..end]);
        FieldName {
            bytes,
            len: end as u8,
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        let out = &self.bytes[..self.len as usize];
        debug_assert!(core::str::from_utf8(out).is_ok());
        // SAFETY: every FieldName holds whole UTF-8 characters only: `new`
        // ASCII bytes it checked, `lossy` a prefix of a `&str` cut at a
        // character boundary, `EMPTY_FIELD` none at all. (`from_utf8` would re-check it, and its
        // validator is ~1 KB of the WebAssembly module.)
        unsafe { core::str::from_utf8_unchecked(out) }
    }

    pub(crate) const fn eq_str(&self, s: &str) -> bool {
        let b = s.as_bytes();
        if b.len() != self.len as usize {
            return false;
        }
        let mut i = 0;
        while i < b.len() {
            if b[i] != self.bytes[i] {
                return false;
            }
            i += 1;
        }
        true
    }
}

impl fmt::Display for FieldName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for FieldName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}
