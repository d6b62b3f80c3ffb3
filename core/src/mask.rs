//! Public IDs: a keyed, reversible mask over a layout's ID space.
//!
//! The construction is NIST SP 800-38G FF1 (format-preserving encryption)
//! with AES-128 or AES-256, radix 2, over the layout's `total_bits()` bits.
//! `docs/SEMANTICS.md` ("Public IDs (masking)") specifies it exactly.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;

use aes::{Aes128, Aes256};
use fpe::ff1::{NumeralString, Operations, FF1};

#[cfg(feature = "std")]
use crate::error::{Arg, ArgProblem};
use crate::error::{Error, IdProblem, LayoutProblem, OptionProblem, Result};
use crate::id::Id;
use crate::layout::Layout;
#[cfg(feature = "std")]
use crate::names::FieldName;
#[cfg(feature = "std")]
use crate::value::Value;

/// The fewest bits a layout needs to be masked: FF1 needs a domain of at
/// least 1,000,000 values (radix^minlen >= 10^6), and 2^20 is the first
/// power of two that large.
pub const MASK_MIN_BITS: u32 = 20;

enum Cipher {
    Aes128(Box<FF1<Aes128>>),
    Aes256(Box<FF1<Aes256>>),
}

/// A radix-2 numeral string of `n` <= 64 numerals held in a `u64`: numeral
/// `X[1]` (the first) is bit `n - 1`, `X[n]` is bit 0, so `NUM_2(X)` is the
/// value itself. `fpe`'s FF1 runs the algorithm; this type only does its
/// arithmetic on machine words instead of big integers (its halves have at
/// most 32 numerals, and FF1 only needs `NUM(S) mod 2^m` of each round's `S`).
#[derive(Clone, Copy)]
struct Bits {
    v: u64,
    n: usize,
}

/// The low `m` (<= 64) bits.
const fn low(m: usize) -> u64 {
    if m >= 64 {
        u64::MAX
    } else {
        (1 << m) - 1
    }
}

/// `STR^b_256(x)` for `b` <= 16.
struct BeBytes {
    buf: [u8; 16],
    b: usize,
}

impl AsRef<[u8]> for BeBytes {
    fn as_ref(&self) -> &[u8] {
        &self.buf[16 - self.b..]
    }
}

impl NumeralString for Bits {
    type Ops = Bits;

    fn is_valid(&self, radix: u32) -> bool {
        radix == 2 && self.n <= 64 && self.v <= low(self.n)
    }

    fn numeral_count(&self) -> usize {
        self.n
    }

    fn split(&self) -> (Bits, Bits) {
        // A = X[1..u] (the high u bits), B = X[u+1..n] (the low n - u).
        let u = self.n / 2;
        let v = self.n - u;
        (
            Bits {
                v: self.v >> v,
                n: u,
            },
            Bits {
                v: self.v & low(v),
                n: v,
            },
        )
    }

    fn concat(a: Bits, b: Bits) -> Bits {
        Bits {
            v: (a.v << b.n) | b.v,
            n: a.n + b.n,
        }
    }
}

impl Operations for Bits {
    type Bytes = BeBytes;

    fn numeral_count(&self) -> usize {
        self.n
    }

    fn to_be_bytes(&self, _radix: u32, b: usize) -> BeBytes {
        // b = ceil(n / 8) <= 4 for radix 2 and n <= 32.
        BeBytes {
            buf: u128::from(self.v).to_be_bytes(),
            b: b.min(16),
        }
    }

    fn add_mod_exp(self, other: impl Iterator<Item = u8>, _radix: u32, m: usize) -> Bits {
        Bits {
            v: self.v.wrapping_add(num_low(other)) & low(m),
            n: m,
        }
    }

    fn sub_mod_exp(self, other: impl Iterator<Item = u8>, _radix: u32, m: usize) -> Bits {
        Bits {
            v: self.v.wrapping_sub(num_low(other)) & low(m),
            n: m,
        }
    }
}

/// `NUM(S) mod 2^64` of a big-endian byte string (the caller reduces it
/// further mod `2^m`, m <= 64).
fn num_low(s: impl Iterator<Item = u8>) -> u64 {
    s.fold(0, |acc, byte| (acc << 8) | u64::from(byte))
}

/// A keyed permutation of a layout's IDs: [`mask`](IdMask::mask) maps an
/// internal ID to a public ID of the same width, [`unmask`](IdMask::unmask)
/// maps it back.
///
/// It is NIST SP 800-38G FF1 with AES-128 (a 16-byte key) or AES-256 (a
/// 32-byte key), radix 2, over the layout's [`total_bits`](Layout::total_bits)
/// bits, most significant bit first; the tweak is FF1's tweak. Every ID of the
/// layout's space (`0..=max_id`) has exactly one public ID in the same space,
/// so a 63-bit `twitter` ID stays a non-negative `BIGINT`. Without the key,
/// public IDs reveal neither order nor time; the same key, tweak and layout
/// give the same public ID in every language.
///
/// Use a different tweak per place (a table, a tenant) so that the same
/// internal ID has unrelated public IDs in different places.
///
/// `Debug` shows the layout, the AES key size and the tweak's length, never
/// the key.
///
/// ```
/// use snowmint::{Format, IdMask, Layout};
/// let layout = Layout::preset("twitter")?;
/// let key = [7u8; 16]; // in practice: 16 or 32 random bytes kept secret
/// let mask = IdMask::new(layout, &key, b"orders")?;
/// let id = 1541815603606036480u64;
/// let public = mask.mask(id)?;
/// assert!(public <= layout.max_id());
/// assert_eq!(mask.unmask(public)?, id);
/// // The public ID's string forms are those of any ID:
/// let text = public.to_string_in(Format::Base62);
/// let back = snowmint::Id::parse(&text, Format::Base62)?;
/// assert_eq!(mask.unmask(back)?, id);
/// # Ok::<(), snowmint::Error>(())
/// ```
pub struct IdMask {
    layout: Layout,
    cipher: Cipher,
    tweak: Vec<u8>,
}

impl IdMask {
    /// A mask for `layout` with this AES key (16 bytes: AES-128, 32 bytes:
    /// AES-256) and FF1 tweak (any length, may be empty).
    ///
    /// Fails with `invalid_option` when the key is not 16 or 32 bytes, and
    /// with `invalid_layout` when the layout has fewer than
    /// [`MASK_MIN_BITS`] (20) bits, below FF1's minimum domain.
    pub fn new(layout: Layout, key: &[u8], tweak: &[u8]) -> Result<IdMask> {
        let bits = layout.total_bits();
        if bits < MASK_MIN_BITS {
            return Err(Error::InvalidLayout(LayoutProblem::TooNarrowToMask {
                bits,
            }));
        }
        let bad_key = Error::InvalidOption(OptionProblem::MaskKey);
        // Radix 2 is always a valid FF1 radix: the error cannot happen.
        let cipher = match key.len() {
            16 => Cipher::Aes128(Box::new(FF1::new(key, 2).map_err(|_| bad_key)?)),
            32 => Cipher::Aes256(Box::new(FF1::new(key, 2).map_err(|_| bad_key)?)),
            _ => return Err(bad_key),
        };
        Ok(IdMask {
            layout,
            cipher,
            tweak: tweak.to_vec(),
        })
    }

    /// The bytes of a key or tweak written as hex: an even number of the
    /// digits `0-9`, `a-f`, `A-F`, nothing else (the empty string is no
    /// bytes). Every binding that takes a key or tweak as text reads it here.
    ///
    /// Fails with `invalid_option` otherwise; the message never repeats the
    /// text, which may be a key.
    ///
    /// ```
    /// use snowmint::IdMask;
    /// assert_eq!(IdMask::bytes_from_hex("00ff7A")?, vec![0, 255, 122]);
    /// assert_eq!(IdMask::bytes_from_hex("0g").unwrap_err().code(), "invalid_option");
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn bytes_from_hex(text: &str) -> Result<Vec<u8>> {
        const fn digit(c: u8) -> Option<u8> {
            match c {
                b'0'..=b'9' => Some(c - b'0'),
                b'a'..=b'f' => Some(c - b'a' + 10),
                b'A'..=b'F' => Some(c - b'A' + 10),
                _ => None,
            }
        }
        let bad = Error::InvalidOption(OptionProblem::MaskHex);
        let text = text.as_bytes();
        if text.len() % 2 != 0 {
            return Err(bad);
        }
        text.chunks_exact(2)
            .map(|pair| match (digit(pair[0]), digit(pair[1])) {
                (Some(hi), Some(lo)) => Ok((hi << 4) | lo),
                _ => Err(bad),
            })
            .collect()
    }

    /// A binding's key or tweak argument (`arg` is `"key"` or `"tweak"`)
    /// that is not a byte string of its language: a string is hex
    /// ([`bytes_from_hex`](IdMask::bytes_from_hex)), another type is
    /// `invalid_option` (a `TypeError` where the language has one).
    ///
    /// ```
    /// use snowmint::{ErrorClass, IdMask, Value};
    /// assert_eq!(IdMask::bytes_from_value(Value::from("0a0B"), "key")?, vec![10, 11]);
    /// let err = IdMask::bytes_from_value(Value::from(7u64), "tweak").unwrap_err();
    /// assert_eq!((err.code(), err.class()), ("invalid_option", ErrorClass::Type));
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    ///
    /// (With feature `std`, where [`Value`] is.)
    #[cfg(feature = "std")]
    pub fn bytes_from_value(value: Value, arg: &str) -> Result<Vec<u8>> {
        match value {
            Value::Str(text) => IdMask::bytes_from_hex(&text),
            other => Err(Error::InvalidArgument {
                arg: Arg::Option(FieldName::lossy(arg)),
                problem: ArgProblem::WrongType {
                    given: other.type_name(),
                },
            }),
        }
    }

    /// The layout whose IDs this mask permutes.
    pub const fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The public ID of `id`. Fails with `invalid_id` when `id` has bits set
    /// above the layout's width.
    pub fn mask(&self, id: impl Into<Id>) -> Result<Id> {
        self.run(id.into(), true)
    }

    /// The internal ID whose public ID is `public`. Fails with `invalid_id`
    /// when `public` has bits set above the layout's width.
    pub fn unmask(&self, public: impl Into<Id>) -> Result<Id> {
        self.run(public.into(), false)
    }

    fn run(&self, id: Id, encrypt: bool) -> Result<Id> {
        let n = self.layout.total_bits();
        let v = id.get();
        if v > self.layout.max_id().get() {
            return Err(Error::InvalidId(IdProblem::TooWideForLayout {
                layout_bits: n,
            }));
        }
        // The numeral string: the ID's n bits, most significant first, so
        // that NUM_2(X) is the ID itself.
        let x = Bits { v, n: n as usize };
        let t = &self.tweak;
        let y = match (&self.cipher, encrypt) {
            (Cipher::Aes128(c), true) => c.encrypt(t, &x),
            (Cipher::Aes128(c), false) => c.decrypt(t, &x),
            (Cipher::Aes256(c), true) => c.encrypt(t, &x),
            (Cipher::Aes256(c), false) => c.decrypt(t, &x),
        };
        // The string is valid for radix 2 and at least MASK_MIN_BITS long,
        // so FF1 cannot refuse it; were it to, say so as `new` would.
        let y = y.map_err(|_| Error::InvalidLayout(LayoutProblem::TooNarrowToMask { bits: n }))?;
        Ok(Id::new(y.v))
    }
}

impl fmt::Debug for IdMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let aes = match self.cipher {
            Cipher::Aes128(_) => "AES-128",
            Cipher::Aes256(_) => "AES-256",
        };
        f.debug_struct("IdMask")
            .field("layout", &self.layout)
            .field("cipher", &aes)
            .field("key", &"<hidden>")
            .field("tweak_len", &self.tweak.len())
            .finish()
    }
}
