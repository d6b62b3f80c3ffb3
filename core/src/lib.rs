//! snowmint: Snowflake-style 64-bit IDs.
//!
//! IDs are unique across machines (each generator has its own node values),
//! ordered by time (good for B-tree inserts), 64 bits wide (a `BIGINT`), and
//! made without a round trip to a server.
//!
//! - [`Layout`]: which bits hold the time, the sequence and node fields, with
//!   ten presets (`twitter`, `discord`, `sonyflake`, ...), a JSON descriptor,
//!   compose/decompose, ID bounds for range queries and lifetime reports.
//! - [`PureGenerator`]: the pure state machine. The caller passes the time; it
//!   returns the next ID, an error, or when to retry. `no_std`, no allocation.
//! - `Generator` (`std`): thread-safe and lock-free, on the system clock,
//!   sharing state with every generator of the process that has the same node
//!   values, and refusing to run in a child process after `fork()`.
//! - [`Id`] and [`Format`]: decimal, Crockford base32 and base62 string forms.
//! - `IdMask` (`mask`): public IDs, a keyed permutation of a layout's IDs
//!   that hides their order and time.
//! - [`time`]: dates: [`Iso8601`] (Unix ms as RFC 3339 UTC), RFC 3339 parsing
//!   and the calendar arithmetic, for the CLI, the lease stores and the C
//!   binding.
//! - [`Error`]: one error type whose [`code`](Error::code) is the contract
//!   shared by the Python, Node, C and WebAssembly bindings.
//!
//! The semantics are written down in `docs/SEMANTICS.md` and pinned by the
//! test vectors in `vectors/`, which every binding's test suite runs.
//!
//! # Cargo Features
//!
//! - `std` (default): the system clock, `Generator`, the process-wide
//!   registry, fork detection, and `std::error::Error` for [`Error`]. Without
//!   it the crate is `no_std` and allocates nothing; it builds for bare-metal
//!   targets such as `thumbv7em-none-eabihf`.
//! - `mask`: `IdMask`, the keyed public-ID mask (FF1 with AES-128/256 over
//!   the layout's bits, see `docs/SEMANTICS.md`). It needs an allocator
//!   (`alloc`) but not `std`.
//! - `serde`: `Serialize`/`Deserialize` for [`Id`] (a decimal string in
//!   human-readable formats such as JSON, because JavaScript readers lose
//!   precision above 2^53; read from a string or a number), [`Format`] (its
//!   name), [`Layout`] (a preset name or JSON descriptor string) and, serialise
//!   only, [`Parts`]. `#[serde(with = "snowmint::serde::as_number")]` writes an
//!   `Id` field as a number. Works without `std`.
//!
//! # Example
//!
//! ```
//! use snowmint::{Layout, Options, Generator};
//! let layout = Layout::preset("twitter")?;
//! let nodes = layout.nodes_from_pairs([("datacenter", 1), ("worker", 3)])?;
//! let generator = Generator::new(layout, nodes, Options::default())?;
//! let id = generator.next_id()?;
//! let parts = layout.decompose(id)?;
//! assert_eq!(parts.nodes(), &[1, 3]);
//! # Ok::<(), snowmint::Error>(())
//! ```
#![cfg_attr(not(feature = "std"), no_std)]
// Only docs.rs sets `docsrs` (its nightly rustdoc shows which feature an item
// needs); the stable builds never do.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]

#[cfg(feature = "mask")]
extern crate alloc;

mod clock;
mod error;
// Generation on a state word kept by the caller (shared memory).
#[cfg(all(feature = "std", not(loom)))]
mod external;
mod generator;
mod id;
mod json;
mod layout;
mod lease_error;
#[cfg(feature = "mask")]
mod mask;
mod names;
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub mod serde;
#[cfg(feature = "std")]
mod sync;
mod text;
pub mod time;
#[cfg(feature = "std")]
mod value;

/// The crate README's Rust examples, compiled and run as doctests (the
/// workspace README's Rust example is checked to be one of them by
/// tools/vectors/tests/docs.rs, so the packaged crate needs no file outside it).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use clock::SystemClock;
pub use clock::{Clock, STALL_READS};
pub use error::{
    Arg, ArgProblem, Error, ErrorClass, FenceCause, IdProblem, LayoutProblem, LeaseEnd,
    LeaseProblem, OptionProblem, Result,
};
pub use generator::{
    ClockBackwards, Config, Next, Options, PureGenerator, SequenceExhausted, SequenceStart,
};
pub use id::{Format, Id, MAX_STR_LEN};
pub use layout::{Field, FieldKind, Layout, Nodes, Parts};
#[cfg(feature = "mask")]
#[cfg_attr(docsrs, doc(cfg(feature = "mask")))]
pub use mask::{IdMask, MASK_MIN_BITS};
pub use names::{FieldName, MAX_FIELDS, MAX_FIELD_BITS, MAX_NODES, MAX_TIME_END_MS};
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use sync::{Generator, ManualClock, StateKey};

pub use time::Iso8601;
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use value::{option_key, Value, MAX_SAFE_INTEGER, OPTION_KEYS};
