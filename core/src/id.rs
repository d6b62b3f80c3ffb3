//! The ID type and its string forms.

use core::fmt;

use crate::error::{Error, IdProblem, Result};

/// A 64-bit ID. A transparent wrapper over `u64`, so arrays of IDs can be
/// handed across FFI boundaries as `u64` arrays.
///
/// The public API is consistent about it: a single ID that the core returns
/// is an `Id` (`Generator::next_id`, `Layout::compose`, `Layout::id_bounds`,
/// `Layout::max_id`, `Parts::id`, `Options::resume_after`); a single ID it
/// takes is `impl Into<Id>`, so `Id` or `u64` (`Layout::decompose`,
/// `Layout::is_plausible`); a batch of IDs is a `[u64]` buffer
/// (`Generator::next_ids`, `Layout::decompose_columns`), which bindings hand
/// to their languages' 64-bit arrays as is.
///
/// ```
/// use snowmint::{Format, Id};
/// let id = Id::new(1541815603606036480);
/// let mut buf = [0u8; 20];
/// assert_eq!(id.encode(Format::Base32, &mut buf), "1ASD13XH1F800");
/// assert_eq!(Id::parse("1asd13xh1f800", Format::Base32).unwrap(), id);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
#[repr(transparent)]
pub struct Id(u64);

/// A string form of an ID.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Format {
    /// Base 10, no sign, 1 to 20 digits on output (leading zeros accepted on input).
    Decimal,
    /// Crockford base32, always 13 characters, upper case on output; input is
    /// case-insensitive and reads `I`/`L` as `1` and `O` as `0` (Crockford's
    /// rule). Sorts like the number. The same form as TSID's.
    Base32,
    /// `0-9A-Za-z`, always 11 characters, case-sensitive. Sorts like the number
    /// under byte-wise (ASCII) comparison; the most compact sortable form.
    Base62,
}

const B32: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const B62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The longest string any format writes (a decimal `u64::MAX`).
pub const MAX_STR_LEN: usize = 20;

impl Format {
    /// Every format, in a fixed order.
    pub const ALL: [Format; 3] = [Format::Decimal, Format::Base32, Format::Base62];

    /// A format by its name: `decimal`, `base32` or `base62`.
    pub fn from_name(name: &str) -> Result<Format> {
        match name {
            "decimal" => Ok(Format::Decimal),
            "base32" => Ok(Format::Base32),
            "base62" => Ok(Format::Base62),
            _ => Err(Error::InvalidId(IdProblem::UnknownFormat)),
        }
    }

    /// The format's name.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Decimal => "decimal",
            Format::Base32 => "base32",
            Format::Base62 => "base62",
        }
    }
}

const fn b32_value(c: u8) -> Option<u64> {
    let v = match c {
        b'0'..=b'9' => c - b'0',
        b'o' | b'O' => 0,
        b'i' | b'I' | b'l' | b'L' => 1,
        _ => {
            let u = c.to_ascii_uppercase();
            let mut i = 10;
            while i < 32 {
                if B32[i] == u {
                    return Some(i as u64);
                }
                i += 1;
            }
            return None;
        }
    };
    Some(v as u64)
}

const fn b62_value(c: u8) -> Option<u64> {
    match c {
        b'0'..=b'9' => Some((c - b'0') as u64),
        b'A'..=b'Z' => Some((c - b'A') as u64 + 10),
        b'a'..=b'z' => Some((c - b'a') as u64 + 36),
        _ => None,
    }
}

impl Id {
    /// Wraps a `u64`.
    pub const fn new(v: u64) -> Id {
        Id(v)
    }

    /// The `u64` value.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// An ID from a signed wide integer (as Python ints arrive): negative
    /// values and values of 2^64 or more are `invalid_id`.
    pub const fn from_i128(v: i128) -> Result<Id> {
        if v < 0 {
            Err(Error::InvalidId(IdProblem::Negative))
        } else if v > u64::MAX as i128 {
            Err(Error::InvalidId(IdProblem::Overflow))
        } else {
            Ok(Id(v as u64))
        }
    }

    /// An ID from a JavaScript BigInt as engines report it: its sign, its low
    /// 64 bits, and whether those bits are the whole value.
    pub const fn from_bigint(negative: bool, low: u64, lossless: bool) -> Result<Id> {
        if negative && !(low == 0 && lossless) {
            Err(Error::InvalidId(IdProblem::Negative))
        } else if !lossless {
            Err(Error::InvalidId(IdProblem::Overflow))
        } else {
            Ok(Id(low))
        }
    }

    /// An ID from a JavaScript `number`: only safe integers (`0 ..= 2^53 - 1`)
    /// are exact, so anything else is refused rather than rounded.
    ///
    /// ```
    /// use snowmint::Id;
    /// assert_eq!(Id::from_f64(42.0).unwrap().get(), 42);
    /// assert_eq!(Id::from_f64(9007199254740993.0).unwrap_err().code(), "invalid_id");
    /// ```
    pub fn from_f64(n: f64) -> Result<Id> {
        const MAX_SAFE: f64 = 9007199254740991.0;
        if n.is_nan() || n > MAX_SAFE {
            Err(Error::InvalidId(IdProblem::NotExact))
        } else if n < 0.0 {
            Err(Error::InvalidId(IdProblem::Negative))
        } else if (n as u64) as f64 != n {
            // A fraction (`f64::fract` needs std, so compare the truncation).
            Err(Error::InvalidId(IdProblem::NotExact))
        } else {
            Ok(Id(n as u64))
        }
    }

    /// Writes the ID in `format` into `buf` and returns the written part.
    pub fn encode(self, format: Format, buf: &mut [u8; MAX_STR_LEN]) -> &str {
        let len = match format {
            Format::Decimal => {
                let mut tmp = [0u8; 20];
                let digits = crate::text::decimal(self.0, &mut tmp).as_bytes();
                buf[..digits.len()].copy_from_slice(digits);
                digits.len()
            }
            Format::Base32 => {
                let mut v = self.0;
                for i in (0..13).rev() {
                    buf[i] = B32[(v & 31) as usize];
                    v >>= 5;
                }
                13
            }
            Format::Base62 => {
                let mut v = self.0;
                for i in (0..11).rev() {
                    buf[i] = B62[(v % 62) as usize];
                    v /= 62;
                }
                11
            }
        };
        let out = &buf[..len];
        debug_assert!(out.is_ascii());
        // SAFETY: every byte written above comes from a digit or an alphabet
        // table of ASCII characters, and ASCII is UTF-8. (`from_utf8` would
        // re-check it, and its validator is ~1 KB of the WebAssembly module.)
        unsafe { core::str::from_utf8_unchecked(out) }
    }

    /// The ID written in `format`, as a new `String`.
    ///
    /// ```
    /// use snowmint::{Format, Id};
    /// assert_eq!(Id::new(1541815603606036480).to_string_in(Format::Base32), "1ASD13XH1F800");
    /// ```
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn to_string_in(self, format: Format) -> std::string::String {
        let mut buf = [0u8; MAX_STR_LEN];
        self.encode(format, &mut buf).into()
    }

    /// Reads an ID written in `format`. Anything that is not exactly a valid
    /// string of that format is `invalid_id`, never a different ID.
    ///
    /// ```
    /// use snowmint::{Format, Id};
    /// assert_eq!(Id::parse("18446744073709551615", Format::Decimal).unwrap().get(), u64::MAX);
    /// assert_eq!(Id::parse("18446744073709551616", Format::Decimal).unwrap_err().code(), "invalid_id");
    /// assert_eq!(Id::parse(" 1", Format::Decimal).unwrap_err().code(), "invalid_id");
    /// ```
    pub fn parse(s: &str, format: Format) -> Result<Id> {
        let b = s.as_bytes();
        let bad = |p| Err(Error::InvalidId(p));
        let bad_char = |i: usize| bad(IdProblem::BadChar { at: i as u32 });
        if b.is_empty() {
            return bad(IdProblem::Empty);
        }
        match format {
            Format::Decimal => {
                if b[0] == b'-' && b.len() > 1 && b[1..].iter().all(u8::is_ascii_digit) {
                    return bad(IdProblem::Negative);
                }
                let mut v: u64 = 0;
                for (i, &c) in b.iter().enumerate() {
                    if !c.is_ascii_digit() {
                        return bad_char(i);
                    }
                    v = match v
                        .checked_mul(10)
                        .and_then(|v| v.checked_add((c - b'0') as u64))
                    {
                        Some(v) => v,
                        None => {
                            // Report a bad character later in the string before the overflow.
                            return match b[i..].iter().position(|c| !c.is_ascii_digit()) {
                                Some(j) => bad_char(i + j),
                                None => bad(IdProblem::Overflow),
                            };
                        }
                    };
                }
                Ok(Id(v))
            }
            Format::Base32 => {
                if b.len() != 13 {
                    return bad(IdProblem::WrongLength {
                        len: b.len() as u32,
                        expected: 13,
                    });
                }
                let mut v: u64 = 0;
                for (i, &c) in b.iter().enumerate() {
                    let d = match b32_value(c) {
                        Some(d) => d,
                        None => return bad_char(i),
                    };
                    // 13 characters carry 65 bits: the first may only use 4.
                    if i == 0 && d > 15 {
                        return bad(IdProblem::Overflow);
                    }
                    v = (v << 5) | d;
                }
                Ok(Id(v))
            }
            Format::Base62 => {
                if b.len() != 11 {
                    return bad(IdProblem::WrongLength {
                        len: b.len() as u32,
                        expected: 11,
                    });
                }
                let mut v: u64 = 0;
                let mut overflow = false;
                for (i, &c) in b.iter().enumerate() {
                    let d = match b62_value(c) {
                        Some(d) => d,
                        None => return bad_char(i),
                    };
                    match v.checked_mul(62).and_then(|v| v.checked_add(d)) {
                        Some(n) => v = n,
                        None => overflow = true,
                    }
                }
                if overflow {
                    return bad(IdProblem::Overflow);
                }
                Ok(Id(v))
            }
        }
    }
}

/// An `Id` compares with a plain `u64` (`id == 42`, `id > last`).
impl PartialEq<u64> for Id {
    fn eq(&self, other: &u64) -> bool {
        self.0 == *other
    }
}

impl PartialEq<Id> for u64 {
    fn eq(&self, other: &Id) -> bool {
        *self == other.0
    }
}

impl PartialOrd<u64> for Id {
    fn partial_cmp(&self, other: &u64) -> Option<core::cmp::Ordering> {
        self.0.partial_cmp(other)
    }
}

impl PartialOrd<Id> for u64 {
    fn partial_cmp(&self, other: &Id) -> Option<core::cmp::Ordering> {
        self.partial_cmp(&other.0)
    }
}

impl From<u64> for Id {
    fn from(v: u64) -> Id {
        Id(v)
    }
}

impl From<Id> for u64 {
    fn from(id: Id) -> u64 {
        id.0
    }
}

/// Reads a decimal ID (`"175928847299117063".parse::<Id>()`), as
/// [`Id::parse`] with [`Format::Decimal`].
///
/// ```
/// let id: snowmint::Id = "175928847299117063".parse()?;
/// assert_eq!(id.get(), 175928847299117063);
/// assert_eq!("-1".parse::<snowmint::Id>().unwrap_err().code(), "invalid_id");
/// # Ok::<(), snowmint::Error>(())
/// ```
impl core::str::FromStr for Id {
    type Err = Error;

    fn from_str(s: &str) -> Result<Id> {
        Id::parse(s, Format::Decimal)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}
