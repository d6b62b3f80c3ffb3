//! Public IDs: a keyed, reversible mask over a layout's ID space.
//!
//! The construction is NIST SP 800-38G FF1 (format-preserving encryption)
//! with AES-128 or AES-256, radix 2, over the layout's `total_bits()` bits.
//! `docs/SEMANTICS.md` ("Public IDs (masking)") specifies it exactly.

use alloc::vec::Vec;
use core::fmt;

use aes::{Aes128, Aes256};
use fpe::ff1::{FlexibleNumeralString, FF1};

use crate::error::{Error, IdProblem, LayoutProblem, OptionProblem, Result};
use crate::id::Id;
use crate::layout::Layout;

/// The fewest bits a layout needs to be masked: FF1 needs a domain of at
/// least 1,000,000 values (radix^minlen >= 10^6), and 2^20 is the first
/// power of two that large.
pub const MASK_MIN_BITS: u32 = 20;

enum Cipher {
    Aes128(FF1<Aes128>),
    Aes256(FF1<Aes256>),
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
            16 => Cipher::Aes128(FF1::new(key, 2).map_err(|_| bad_key)?),
            32 => Cipher::Aes256(FF1::new(key, 2).map_err(|_| bad_key)?),
            _ => return Err(bad_key),
        };
        Ok(IdMask {
            layout,
            cipher,
            tweak: tweak.to_vec(),
        })
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
        let x = FlexibleNumeralString::from(
            (0..n)
                .rev()
                .map(|i| ((v >> i) & 1) as u16)
                .collect::<Vec<u16>>(),
        );
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
        let out = Vec::<u16>::from(y)
            .iter()
            .fold(0u64, |acc, &b| (acc << 1) | u64::from(b & 1));
        Ok(Id::new(out))
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
