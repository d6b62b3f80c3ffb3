//! The one error type of snowmint, and its stable codes.

use core::fmt;

pub use crate::lease_error::{FenceCause, LeaseEnd, LeaseProblem};
use crate::names::FieldName;
use crate::text::{fill, Hole, Sink};

/// Everything that can go wrong in snowmint.
///
/// Each variant has a stable snake_case [`code`](Error::code). The code is the
/// contract that every language binding shares (Python's `.code`, a JS error's
/// `code`, the C status); the message text is for people and may change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The layout or its JSON descriptor is not acceptable.
    InvalidLayout(LayoutProblem),
    /// No preset has this name.
    UnknownPreset,
    /// A node value was given for a field the layout does not have
    /// (or for `timestamp`/`sequence`, which are not node fields).
    UnknownField {
        /// The name as given, cut to [`FieldName::MAX_LEN`] bytes.
        name: FieldName,
    },
    /// The layout has this node field but no value was given for it.
    MissingNode {
        /// The field without a value.
        field: FieldName,
    },
    /// A value does not fit its field (a node value, a sequence, a count).
    NodeOutOfRange {
        /// The field that is too narrow.
        field: FieldName,
        /// The value given.
        value: u64,
        /// The largest value the field holds.
        max: u64,
    },
    /// A generator option (policy string, count, seed) is not acceptable.
    InvalidOption(OptionProblem),
    /// A time is before the layout's epoch.
    TimeBeforeEpoch {
        /// The time, Unix milliseconds.
        time_ms: u64,
        /// The layout's epoch, Unix milliseconds.
        epoch_ms: u64,
    },
    /// A time is at or past the end of the layout's time field.
    TimeOverflow {
        /// The time, Unix milliseconds.
        time_ms: u64,
        /// The first instant the time field cannot hold, Unix milliseconds.
        end_ms: u64,
    },
    /// The clock reads earlier than the last ID issued, by more than the
    /// clock policy tolerates.
    ClockMovedBackwards {
        /// The clock reading, Unix milliseconds.
        now_ms: u64,
        /// The start of the time unit of the last ID issued, Unix milliseconds.
        last_ms: u64,
    },
    /// A string or number is not a valid ID (for this layout).
    InvalidId(IdProblem),
    /// This generator was created before `fork()` and is used in the child
    /// process, where it could repeat the parent's IDs.
    ProcessForked,
    /// No lease could be had: the store cannot be reached, every slot is
    /// held, or the clocks disagree too much (see [`LeaseProblem`]).
    LeaseUnavailable(LeaseProblem),
    /// The generator's lease ran out (or another holder took its slot): no
    /// ID may be issued for this time, which is past the reservation the
    /// store confirmed.
    LeaseExpired {
        /// The time of the ID that was refused, Unix milliseconds.
        time_ms: u64,
        /// The first Unix millisecond the reservation does not cover.
        reserved_end_ms: u64,
        /// Why the reservation ended where it did, as far as it is known.
        end: LeaseEnd,
    },
    /// The lease's slot is fenced: its store counts it as reserved up to a
    /// time still ahead of the clock (after a store that may have forgotten,
    /// or a previous holder's reservation), and IDs resume only after it.
    /// The clock is not at fault; waiting is enough.
    LeaseFenced {
        /// The clock reading, Unix milliseconds.
        now_ms: u64,
        /// The first Unix millisecond IDs may carry.
        resume_ms: u64,
        /// Why the slot is fenced.
        cause: FenceCause,
    },
    /// The generator had to wait for the clock (the sequence of the time
    /// unit is used up) and the clock did not advance at all: a clock that
    /// stands still, such as `Date.now()` within a Cloudflare Worker's
    /// request. See [`crate::STALL_READS`].
    ClockStalled {
        /// The reading the clock stands still at, Unix milliseconds.
        now_ms: u64,
        /// The time the generator waited for, Unix milliseconds.
        until_ms: u64,
    },
    /// A binding's argument is of the wrong type or not an acceptable number
    /// (see the conversion layer, `Value`). It has no code of its own: the
    /// code is the one of the argument's meaning ([`Arg`]), so that a bad
    /// node value is `node_out_of_range` whether the core or the binding's
    /// conversion caught it.
    InvalidArgument {
        /// Which argument.
        arg: Arg,
        /// What is wrong with it.
        problem: ArgProblem,
    },
}

/// Which kind of argument a binding's value was for. It decides the error
/// code of a bad value (see [`Error::code`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Arg {
    /// An ID (`invalid_id`).
    Id,
    /// A time in Unix ms (`time_before_epoch` when negative, else `time_overflow`).
    Time,
    /// A sequence value (`node_out_of_range`).
    Sequence,
    /// The value of this node field (`node_out_of_range`).
    Node(FieldName),
    /// A count of IDs (`invalid_option`).
    Count,
    /// A layout (`invalid_layout`).
    Layout,
    /// The map of node values (`unknown_field`).
    Nodes,
    /// The map of generator options (`invalid_option`).
    Options,
    /// The value of this generator option (`invalid_option`).
    Option(FieldName),
    /// A string format name (`invalid_id`).
    Format,
}

/// What is wrong with a binding's argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgProblem {
    /// A value of the wrong type (JavaScript `TypeError`).
    WrongType {
        /// How the message names the type given (`"a float"`, `"a list"`).
        given: &'static str,
    },
    /// A negative number where only non-negative ones are accepted.
    Negative,
    /// A float that is not a whole number of at most 2^53 - 1.
    NotInteger,
    /// An integer of 2^64 or more.
    TooLarge,
    /// A map key that names no option.
    UnknownKey {
        /// The key, cut to [`FieldName::MAX_LEN`] bytes.
        key: FieldName,
    },
    /// The value is not a valid ID (for an option read like an ID: `seed`).
    Id(IdProblem),
}

/// The kind of native error a binding raises for an [`Error`]: JavaScript's
/// `TypeError`, `RangeError` or `Error`; Python's `TypeError` or `ValueError`
/// (each with the code's subclass). See [`Error::class`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// An argument of the wrong type.
    Type,
    /// A number outside what the argument accepts (negative, fractional, not
    /// exact in a double, 2^64 or more).
    Range,
    /// Everything else: a value of the right type that means nothing valid.
    Value,
}

/// Why a layout was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LayoutProblem {
    /// The fields add up to more than 64 bits.
    TooWide {
        /// The total width of the fields.
        bits: u32,
    },
    /// More than [`crate::MAX_FIELDS`] fields.
    TooManyFields,
    /// A field of width zero.
    ZeroWidth {
        /// The field.
        field: FieldName,
    },
    /// A field wider than 53 bits: its values would not all be exact in
    /// JavaScript, and no useful layout needs one.
    FieldTooWide {
        /// The field.
        field: FieldName,
    },
    /// Two fields with one name.
    DuplicateField {
        /// The repeated name.
        field: FieldName,
    },
    /// A field name that is empty, too long, or not `[a-z][a-z0-9_]*`.
    BadFieldName,
    /// No `timestamp` field.
    MissingTimestamp,
    /// No `sequence` field.
    MissingSequence,
    /// The `timestamp` field is not the most significant one.
    TimestampNotFirst,
    /// The time unit is zero milliseconds.
    ZeroTimeUnit,
    /// The time field would reach past 2^53 ms after the Unix epoch (year
    /// 287396), beyond what every language can hold exactly.
    TimeRangeTooLarge,
    /// The epoch is later than the current time.
    EpochInFuture {
        /// The layout's epoch, Unix milliseconds.
        epoch_ms: u64,
        /// The current time, Unix milliseconds.
        now_ms: u64,
    },
    /// The layout has fewer bits than a public-ID mask needs
    /// (20, `MASK_MIN_BITS`: FF1's minimum domain of 10^6 values).
    TooNarrowToMask {
        /// The layout's width in bits.
        bits: u32,
    },
    /// The JSON descriptor is malformed at this byte offset.
    Json {
        /// Byte offset of the problem.
        offset: u32,
    },
}

/// Why a generator option was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OptionProblem {
    /// Not a known clock-backwards policy (`fail`, `wait:N`, `borrow:N`).
    ClockPolicy,
    /// Not a known sequence-exhausted policy (`wait`, `borrow:N`).
    ExhaustedPolicy,
    /// Not a known sequence-start policy (`zero`, `random:N`, `cycle:N`; N >= 1).
    StartPolicy,
    /// A count that must be positive was zero, or a count is too large.
    Count,
    /// The `resume_after` ID does not belong to this layout.
    ResumeAfter,
    /// The lease URL or one of its options is not acceptable (the lease
    /// layer names the part).
    LeaseUrl,
    /// A `lease` option given where there are no leases: a `PureGenerator`
    /// (it has no clock of its own) or a build without lease stores.
    LeaseNotHere,
    /// A public-ID mask key that is not 16 or 32 bytes (AES-128 or AES-256).
    MaskKey,
    /// A public-ID mask key or tweak given as text that is not hex (an even
    /// number of the digits 0-9, a-f, A-F).
    MaskHex,
}

/// Why an ID was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdProblem {
    /// The string is empty.
    Empty,
    /// A character that the format does not use, at this byte offset.
    BadChar {
        /// Byte offset of the character.
        at: u32,
    },
    /// The string has the wrong length for a fixed-length format.
    WrongLength {
        /// The length given.
        len: u32,
        /// The length the format needs.
        expected: u32,
    },
    /// The value is 2^64 or more.
    Overflow,
    /// The value is negative.
    Negative,
    /// A number that is not an integer, or (in JavaScript) not a safe
    /// integer, so it may already have been rounded.
    NotExact,
    /// The ID has bits set above the layout's width.
    TooWideForLayout {
        /// The layout's width in bits.
        layout_bits: u32,
    },
    /// Not a known string format name (`decimal`, `base32`, `base62`).
    UnknownFormat,
}

/// A `Result` with snowmint's [`Error`].
pub type Result<T> = core::result::Result<T, Error>;

impl Error {
    /// The stable, cross-language code of this error.
    ///
    /// ```
    /// let err = snowmint::Layout::preset("nope").unwrap_err();
    /// assert_eq!(err.code(), "unknown_preset");
    /// ```
    pub const fn code(&self) -> &'static str {
        Self::ALL_CODES[self.code_index()]
    }

    /// The index of [`code`](Error::code) in [`ALL_CODES`](Error::ALL_CODES),
    /// for bindings that pass codes as numbers.
    ///
    /// ```
    /// let err = snowmint::Layout::preset("nope").unwrap_err();
    /// assert_eq!(snowmint::Error::ALL_CODES[err.code_index()], "unknown_preset");
    /// ```
    pub const fn code_index(&self) -> usize {
        match self {
            Error::InvalidLayout(_) => 0,
            Error::UnknownPreset => 1,
            Error::UnknownField { .. } => 2,
            Error::MissingNode { .. } => 3,
            Error::NodeOutOfRange { .. } => 4,
            Error::InvalidOption(_) => 5,
            Error::TimeBeforeEpoch { .. } => 6,
            Error::TimeOverflow { .. } => 7,
            Error::ClockMovedBackwards { .. } => 8,
            Error::InvalidId(_) => 9,
            Error::ProcessForked => 10,
            Error::LeaseUnavailable(_) => 11,
            Error::LeaseExpired { .. } => 12,
            Error::LeaseFenced { .. } => 13,
            Error::ClockStalled { .. } => 14,
            Error::InvalidArgument { arg, problem } => match arg {
                Arg::Id | Arg::Format => 9,
                Arg::Time => match problem {
                    ArgProblem::Negative => 6,
                    _ => 7,
                },
                Arg::Sequence | Arg::Node(_) => 4,
                Arg::Count | Arg::Options | Arg::Option(_) => 5,
                Arg::Layout => 0,
                Arg::Nodes => 2,
            },
        }
    }

    /// Which kind of native error a binding raises for this error.
    ///
    /// ```
    /// use snowmint::{ErrorClass, Value};
    /// assert_eq!(Value::Bool(true).to_id().unwrap_err().class(), ErrorClass::Type);
    /// assert_eq!(Value::Float(0.5).to_id().unwrap_err().class(), ErrorClass::Range);
    /// assert_eq!(Value::from("x").to_id().unwrap_err().class(), ErrorClass::Value);
    /// ```
    pub const fn class(&self) -> ErrorClass {
        let problem = match self {
            Error::InvalidArgument { problem, .. } => *problem,
            Error::InvalidId(p) => ArgProblem::Id(*p),
            _ => return ErrorClass::Value,
        };
        match problem {
            ArgProblem::WrongType { .. } | ArgProblem::UnknownKey { .. } => ErrorClass::Type,
            ArgProblem::Negative | ArgProblem::NotInteger | ArgProblem::TooLarge => {
                ErrorClass::Range
            }
            // A number's problems; `Overflow` also for a decimal string of
            // 2^64 or more, which is a number out of range all the same.
            ArgProblem::Id(IdProblem::Negative | IdProblem::NotExact | IdProblem::Overflow) => {
                ErrorClass::Range
            }
            ArgProblem::Id(_) => ErrorClass::Value,
        }
    }

    /// Every code, in a fixed order. Bindings test that they map all of them.
    pub const ALL_CODES: [&'static str; 15] = [
        "invalid_layout",
        "unknown_preset",
        "unknown_field",
        "missing_node",
        "node_out_of_range",
        "invalid_option",
        "time_before_epoch",
        "time_overflow",
        "clock_moved_backwards",
        "invalid_id",
        "process_forked",
        "lease_unavailable",
        "lease_expired",
        "lease_fenced",
        "clock_stalled",
    ];
}

use Hole::{N, S};

impl Error {
    /// Writes the message, the same text as `Display` (`to_string()`), with
    /// `write_str` alone: for targets where the size of `core::fmt`'s
    /// formatting machinery matters (the WebAssembly binding).
    ///
    /// ```
    /// let err = snowmint::Layout::preset("nope").unwrap_err();
    /// let mut message = String::new();
    /// err.write_message(&mut message).unwrap();
    /// assert_eq!(message, err.to_string());
    /// ```
    pub fn write_message<W: fmt::Write>(&self, w: &mut W) -> fmt::Result {
        self.write_to(w)
    }

    fn write_to(&self, w: &mut dyn Sink) -> fmt::Result {
        let (template, holes): (&str, [Hole<'_>; 3]) = match self {
            Error::InvalidLayout(p) => {
                w.put_str("invalid layout: ")?;
                p.message()
            }
            Error::UnknownPreset => (
                "unknown preset (known: twitter, discord, instagram, sonyflake, sonyflake-v2, \
                 shardingsphere, leaf, baidu, tsid, mastodon)",
                [N(0); 3],
            ),
            Error::UnknownField { name } => (
                "the layout has no node field named '{}'",
                [S(name.as_str()), N(0), N(0)],
            ),
            Error::MissingNode { field } => (
                "no value given for node field '{}'",
                [S(field.as_str()), N(0), N(0)],
            ),
            Error::NodeOutOfRange { field, value, max } => (
                "value {} does not fit field '{}' (0..={})",
                [N(*value), S(field.as_str()), N(*max)],
            ),
            Error::InvalidOption(p) => {
                w.put_str("invalid option: ")?;
                (p.message(), [N(0); 3])
            }
            Error::TimeBeforeEpoch { time_ms, epoch_ms } => (
                "time {} ms is before the layout's epoch {} ms",
                [N(*time_ms), N(*epoch_ms), N(0)],
            ),
            Error::TimeOverflow { time_ms, end_ms } => (
                "time {} ms is past the end of the layout's time field ({} ms)",
                [N(*time_ms), N(*end_ms), N(0)],
            ),
            Error::ClockMovedBackwards { now_ms, last_ms } => (
                "clock moved backwards: now {} ms, last ID at {} ms ({} ms behind)",
                [N(*now_ms), N(*last_ms), N(last_ms.saturating_sub(*now_ms))],
            ),
            Error::InvalidId(p) => {
                w.put_str("invalid id: ")?;
                p.message()
            }
            Error::ProcessForked => (
                "generator created before fork(): in the child, create a new one with a node \
                 value no other process uses",
                [N(0); 3],
            ),
            Error::LeaseUnavailable(p) => {
                w.put_str("lease unavailable: ")?;
                p.message()
            }
            Error::LeaseExpired {
                time_ms,
                reserved_end_ms,
                end,
            } => {
                let (t, e) = (N(*time_ms), N(*reserved_end_ms));
                match end {
                    LeaseEnd::Reservation => (
                        "lease expired: {} ms is past the confirmed reservation (ends before {} ms)",
                        [t, e, N(0)],
                    ),
                    LeaseEnd::RenewalsFailing { since_ms } => (
                        "lease expired: {} ms is past the confirmed reservation (ends before {} \
                         ms): no renewal confirmed since {} ms (the store unreachable or refusing: \
                         the lease's last_error says why); IDs resume once one is confirmed \
                         (past the TTL another holder may take the slot)",
                        [t, e, N(*since_ms)],
                    ),
                    LeaseEnd::Lost => (
                        "lease lost: another holder has the slot (the lease went unrenewed past \
                         its TTL, or an operator released it); this generator issues no more \
                         IDs: open a new lease",
                        [N(0); 3],
                    ),
                    LeaseEnd::Closed => (
                        "lease closed: this generator was closed and issues no more IDs: open a \
                         new lease",
                        [N(0); 3],
                    ),
                }
            }
            Error::LeaseFenced {
                now_ms,
                resume_ms,
                cause,
            } => {
                w.put_str("lease fenced: ")?;
                w.put_str(cause.describe())?;
                (
                    "; no ID before {} ms (now {} ms, {} ms to go). The clock is fine: retry \
                     then, or let the generator wait (clock_backwards 'wait:N', N time units \
                     covering that)",
                    [
                        N(*resume_ms),
                        N(*now_ms),
                        N(resume_ms.saturating_sub(*now_ms)),
                    ],
                )
            }
            Error::ClockStalled { now_ms, until_ms } => (
                "clock stalled: the clock has not advanced past {} ms while the sequence of that \
                 time unit is used up (the next ID needs {} ms); in a runtime whose clock stands \
                 still within a request (Cloudflare Workers), issue fewer IDs per request or use \
                 sequence_exhausted 'borrow:N'",
                [N(*now_ms), N(*until_ms), N(0)],
            ),
            Error::InvalidArgument { arg, problem } => {
                arg.write_what(w)?;
                if let ArgProblem::Id(_) = problem {
                    w.put_str(": ")?;
                }
                problem.message(arg)
            }
        };
        fill(w, template, &holes)?;
        fill(w, " [{}]", &[S(self.code())])
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_to(f)
    }
}

impl LayoutProblem {
    /// The message's template and holes (see [`fill`]).
    fn message(&self) -> (&'static str, [Hole<'_>; 3]) {
        let (template, hole) = match self {
            LayoutProblem::TooWide { bits } => (
                "the fields add up to {} bits; at most 64 fit in an ID",
                N(u64::from(*bits)),
            ),
            LayoutProblem::TooManyFields => {
                ("more than {} fields", N(crate::names::MAX_FIELDS as u64))
            }
            LayoutProblem::ZeroWidth { field } => ("field '{}' has width 0", S(field.as_str())),
            LayoutProblem::FieldTooWide { field } => (
                "field '{}' is wider than 53 bits (not exact in every language)",
                S(field.as_str()),
            ),
            LayoutProblem::DuplicateField { field } => {
                ("field '{}' appears twice", S(field.as_str()))
            }
            LayoutProblem::BadFieldName => (
                "a field name must be 1 to 24 characters of [a-z0-9_], starting with a letter",
                N(0),
            ),
            LayoutProblem::MissingTimestamp => ("no 'timestamp' field", N(0)),
            LayoutProblem::MissingSequence => ("no 'sequence' field", N(0)),
            LayoutProblem::TimestampNotFirst => (
                "'timestamp' must be the first (most significant) field",
                N(0),
            ),
            LayoutProblem::ZeroTimeUnit => ("the time unit must be at least 1 ms", N(0)),
            LayoutProblem::TimeRangeTooLarge => (
                "the time field reaches past 2^53 ms (year 287396); use fewer time bits",
                N(0),
            ),
            LayoutProblem::EpochInFuture { epoch_ms, now_ms } => {
                return (
                    "the epoch {} ms is in the future (now {} ms)",
                    [N(*epoch_ms), N(*now_ms), N(0)],
                )
            }
            LayoutProblem::TooNarrowToMask { bits } => (
                "the layout has {} bits; a public-ID mask needs at least 20 (FF1's minimum domain)",
                N(u64::from(*bits)),
            ),
            LayoutProblem::Json { offset } => (
                "malformed layout descriptor at byte {}",
                N(u64::from(*offset)),
            ),
        };
        (template, [hole, N(0), N(0)])
    }
}

impl Arg {
    /// Writes how a message names the argument.
    fn write_what(&self, w: &mut dyn Sink) -> fmt::Result {
        let (template, name) = match self {
            Arg::Id => ("an ID", ""),
            Arg::Time => ("a time in Unix ms", ""),
            Arg::Sequence => ("the sequence value", ""),
            Arg::Node(name) => ("node field '{}'", name.as_str()),
            Arg::Count => ("the count", ""),
            Arg::Layout => ("a layout", ""),
            Arg::Nodes => ("the node values", ""),
            Arg::Options => ("the options", ""),
            Arg::Option(name) => ("option '{}'", name.as_str()),
            Arg::Format => ("the format", ""),
        };
        fill(w, template, &[S(name)])
    }

    /// What the argument must be, for a value of the wrong type.
    fn expected(&self) -> &'static str {
        match self {
            Arg::Id => "an integer or a decimal string",
            Arg::Time | Arg::Sequence | Arg::Node(_) | Arg::Count => "an integer",
            Arg::Layout => "a layout, a preset name or a JSON descriptor",
            Arg::Nodes => "a map of node field names to integers",
            Arg::Options => "a map of option names to values",
            Arg::Option(name) if name.as_str() == "seed" => "an integer or a decimal string",
            // A public-ID mask's key and tweak (`IdMask::bytes_from_value`).
            Arg::Option(name) if matches!(name.as_str(), "key" | "tweak") => {
                "bytes or a hex string"
            }
            Arg::Option(_) | Arg::Format => "a string",
        }
    }
}

impl ArgProblem {
    /// The message's rest after the argument's name (template and holes).
    fn message(&self, arg: &Arg) -> (&'static str, [Hole<'_>; 3]) {
        match self {
            ArgProblem::WrongType { given } => {
                (" must be {}, not {}", [S(arg.expected()), S(given), N(0)])
            }
            ArgProblem::Negative => (" must not be negative", [N(0); 3]),
            ArgProblem::NotInteger => (
                " must be an integer (a float only up to 2^53 - 1, past which it may be rounded)",
                [N(0); 3],
            ),
            ArgProblem::TooLarge => (" must be less than 2^64", [N(0); 3]),
            ArgProblem::UnknownKey { key } => (
                ": unknown option '{}' (known: clock_backwards, sequence_exhausted, \
                 sequence_start, seed, resume_after, or in camelCase)",
                [S(key.as_str()), N(0), N(0)],
            ),
            // Written after ": " (see `write_to`).
            ArgProblem::Id(p) => p.message(),
        }
    }
}

impl fmt::Display for LayoutProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (template, holes) = self.message();
        fill(f, template, &holes)
    }
}

impl OptionProblem {
    fn message(&self) -> &'static str {
        match self {
            OptionProblem::ClockPolicy => "clock_backwards must be 'fail', 'wait:N' or 'borrow:N'",
            OptionProblem::ExhaustedPolicy => "sequence_exhausted must be 'wait' or 'borrow:N'",
            OptionProblem::StartPolicy => {
                "sequence_start must be 'zero', 'random:N' or 'cycle:N' with N >= 1"
            }
            OptionProblem::Count => "the count must be at most 2^32",
            OptionProblem::ResumeAfter => "resume_after is not a valid ID of this layout",
            OptionProblem::LeaseUrl => "the lease URL is not acceptable",
            OptionProblem::MaskKey => "the mask key must be 16 or 32 bytes (AES-128 or AES-256)",
            OptionProblem::MaskHex => {
                "a mask key or tweak given as text must be hex: an even number of 0-9, a-f, A-F"
            }
            // Generic on purpose: which builds have lease stores is each
            // binding's to document, not the core's.
            OptionProblem::LeaseNotHere => {
                "lease is an option only of a system-clock Generator in a build with lease stores"
            }
        }
    }
}

impl fmt::Display for OptionProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl IdProblem {
    /// The message's template and holes (see [`fill`]).
    fn message(&self) -> (&'static str, [Hole<'static>; 3]) {
        match self {
            IdProblem::Empty => ("empty string", [N(0); 3]),
            IdProblem::BadChar { at } => (
                "unexpected character at offset {}",
                [N(u64::from(*at)), N(0), N(0)],
            ),
            IdProblem::WrongLength { len, expected } => (
                "length {}, expected {}",
                [N(u64::from(*len)), N(u64::from(*expected)), N(0)],
            ),
            IdProblem::Overflow => ("value is 2^64 or more", [N(0); 3]),
            IdProblem::Negative => ("value is negative", [N(0); 3]),
            IdProblem::NotExact => (
                "not an exact integer (a float past 2^53 may be rounded: pass an integer or a \
                 decimal string)",
                [N(0); 3],
            ),
            IdProblem::TooWideForLayout { layout_bits } => (
                "the ID has bits set above the layout's {} bits",
                [N(u64::from(*layout_bits)), N(0), N(0)],
            ),
            IdProblem::UnknownFormat => {
                ("unknown format (known: decimal, base32, base62)", [N(0); 3])
            }
        }
    }
}

impl fmt::Display for IdProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (template, holes) = self.message();
        fill(f, template, &holes)
    }
}

#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
impl std::error::Error for Error {}
