//! The conversion layer: loosely typed values, as a binding receives them
//! from its language, turned into the core's types.
//!
//! Every binding (Python, Node, C, WebAssembly) converts its native argument
//! into a [`Value`] and calls one method here. Which values are accepted,
//! which error code and which [`ErrorClass`] a bad one gets, and every
//! message are decided in this file alone, so that a rule changes in one
//! place and every language follows. docs/SEMANTICS.md lists the rules
//! ("Arguments").
//!
//! ```
//! use snowmint::{Layout, Value};
//! let layout = Value::from("twitter").to_layout()?;
//! let nodes = Value::Map(vec![
//!     ("datacenter".into(), Value::from(1u64)),
//!     ("worker".into(), Value::Float(3.0)),
//! ])
//! .to_nodes(&layout)?;
//! assert_eq!(nodes.values(), &[1, 3]);
//!
//! let bad = Value::Float(9007199254740993.0).to_id().unwrap_err();
//! assert_eq!((bad.code(), bad.class()), ("invalid_id", snowmint::ErrorClass::Range));
//! # Ok::<(), snowmint::Error>(())
//! ```

use std::string::String;
use std::vec::Vec;

use crate::error::{Arg, ArgProblem, Error, OptionProblem, Result};
use crate::generator::{ClockBackwards, Options, SequenceExhausted, SequenceStart};
use crate::id::{Format, Id};
use crate::layout::{Layout, Nodes};
use crate::names::FieldName;

/// A value as a binding receives it from its language, before it means
/// anything.
///
/// A binding maps each native type to one variant and nothing more: a
/// JavaScript `number` or Python `float` is [`Float`](Value::Float), a
/// JavaScript `bigint` or Python `int` is [`Int`](Value::Int), a string is
/// [`Str`](Value::Str), an object or `dict` is [`Map`](Value::Map),
/// `undefined`/`null`/`None` is [`Absent`](Value::Absent), an instance of the
/// binding's own layout class is [`Layout`](Value::Layout), and any other type
/// is [`Other`](Value::Other) with the name to show in messages.
// A `Value` lives for one call on the stack; boxing the layout would cost an
// allocation per call that passes a layout object, to save stack bytes.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// No value (`undefined`, `null`, `None`, a NULL pointer).
    Absent,
    /// A boolean. Never accepted where a number is expected (Python's `bool`
    /// is an `int` subclass, and `True` as an ID is a mistake).
    Bool(bool),
    /// An exact integer of any size, as engines report big integers: its
    /// sign, its low 64 bits, and whether those bits are its whole magnitude.
    Int {
        /// The value is below zero.
        negative: bool,
        /// The magnitude's low 64 bits.
        low: u64,
        /// `low` is the whole magnitude (the value fits in 64 bits plus sign).
        lossless: bool,
    },
    /// A floating-point number (a JavaScript `number`, a Python `float`):
    /// accepted as an integer only when it is a whole number of at most
    /// 2^53 - 1, below which every integer is exact.
    Float(f64),
    /// A text.
    Str(String),
    /// Names to values (a JavaScript object, a Python `dict` or keyword
    /// arguments), in the caller's order.
    Map(Vec<(String, Value)>),
    /// A layout object of the binding's own layout class.
    Layout(Layout),
    /// Any other type; the text names it in messages (`"a list"`, `"a function"`).
    Other(&'static str),
}

impl From<u64> for Value {
    fn from(v: u64) -> Value {
        Value::Int {
            negative: false,
            low: v,
            lossless: true,
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int {
            negative: v < 0,
            low: v.unsigned_abs(),
            lossless: true,
        }
    }
}

impl From<i128> for Value {
    fn from(v: i128) -> Value {
        let magnitude = v.unsigned_abs();
        Value::Int {
            negative: v < 0,
            low: magnitude as u64,
            lossless: magnitude <= u128::from(u64::MAX),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.into())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s)
    }
}

impl From<Layout> for Value {
    fn from(l: Layout) -> Value {
        Value::Layout(l)
    }
}

/// The largest integer a double holds exactly, with every integer below it:
/// JavaScript's `Number.MAX_SAFE_INTEGER`.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// The option keys [`Value::to_options`] reads, in `snake_case`; each is also
/// accepted in `camelCase` (`clockBackwards`).
///
/// The last, `lease`, is a URL that the lease layer (`snowmint-lease`) reads:
/// [`Value::to_options_and_lease`] hands it over, [`Value::to_options`]
/// refuses it (`invalid_option`: no leases there).
pub const OPTION_KEYS: [&str; 6] = [
    "clock_backwards",
    "sequence_exhausted",
    "sequence_start",
    "seed",
    "resume_after",
    "lease",
];

/// The index in [`OPTION_KEYS`] of an option key in `snake_case` or
/// `camelCase`.
///
/// ```
/// assert_eq!(snowmint::option_key("resumeAfter"), Some(4));
/// assert_eq!(snowmint::option_key("resume_after"), Some(4));
/// assert_eq!(snowmint::option_key("datacenter"), None);
/// ```
pub fn option_key(key: &str) -> Option<usize> {
    OPTION_KEYS.iter().position(|k| {
        *k == key || {
            // `clock_backwards` as `clockBackwards`: each `_x` is `X`.
            let mut camel = k.split('_');
            let first = camel.next().unwrap_or("");
            let mut rest = key.strip_prefix(first);
            for part in camel {
                rest = rest.and_then(|r| {
                    let mut chars = part.chars();
                    let head = chars.next()?.to_ascii_uppercase();
                    r.strip_prefix(head)?.strip_prefix(chars.as_str())
                });
            }
            rest == Some("")
        }
    })
}

fn wrong(arg: Arg, v: &Value) -> Error {
    Error::InvalidArgument {
        arg,
        problem: ArgProblem::WrongType {
            given: v.type_name(),
        },
    }
}

fn problem(arg: Arg, problem: ArgProblem) -> Error {
    Error::InvalidArgument { arg, problem }
}

impl Value {
    /// How messages name this value's type.
    pub const fn type_name(&self) -> &'static str {
        match self {
            Value::Absent => "no value",
            Value::Bool(_) => "a boolean",
            Value::Int { .. } => "an integer",
            Value::Float(_) => "a float",
            Value::Str(_) => "a string",
            Value::Map(_) => "a map",
            Value::Layout(_) => "a layout",
            Value::Other(name) => name,
        }
    }

    /// A non-negative integer for `arg` (a time, a sequence or node value, a
    /// count): an [`Int`](Value::Int) in `0..2^64`, or a [`Float`](Value::Float)
    /// that is a whole number of at most 2^53 - 1.
    ///
    /// Errors are [`Error::InvalidArgument`] with the code `arg` gives
    /// (see [`Arg`]).
    pub fn to_uint(&self, arg: Arg) -> Result<u64> {
        match *self {
            // Below zero: any negative magnitude but an exact -0.
            Value::Int {
                negative,
                low,
                lossless,
            } if negative && !(low == 0 && lossless) => Err(problem(arg, ArgProblem::Negative)),
            Value::Int { low, lossless, .. } => {
                if lossless {
                    Ok(low)
                } else {
                    Err(problem(arg, ArgProblem::TooLarge))
                }
            }
            Value::Float(n) => {
                if n < 0.0 {
                    Err(problem(arg, ArgProblem::Negative))
                } else if n.is_nan() || n > MAX_SAFE_INTEGER as f64 || (n as u64) as f64 != n {
                    Err(problem(arg, ArgProblem::NotInteger))
                } else {
                    Ok(n as u64)
                }
            }
            _ => Err(wrong(arg, self)),
        }
    }

    /// A time in Unix milliseconds ([`Arg::Time`]).
    ///
    /// ```
    /// use snowmint::Value;
    /// assert_eq!(Value::from(-1i64).to_time_ms().unwrap_err().code(), "time_before_epoch");
    /// assert_eq!(Value::Float(0.5).to_time_ms().unwrap_err().code(), "time_overflow");
    /// ```
    pub fn to_time_ms(&self) -> Result<u64> {
        self.to_uint(Arg::Time)
    }

    /// A sequence value for `compose` ([`Arg::Sequence`]);
    /// [`Absent`](Value::Absent) is 0, the argument's default everywhere.
    pub fn to_sequence(&self) -> Result<u64> {
        match self {
            Value::Absent => Ok(0),
            v => v.to_uint(Arg::Sequence),
        }
    }

    /// A time in Unix milliseconds, or [`Absent`](Value::Absent) for none
    /// (`reserve_until(None)` removes a reservation).
    pub fn to_opt_time_ms(&self) -> Result<Option<u64>> {
        match self {
            Value::Absent => Ok(None),
            v => v.to_time_ms().map(Some),
        }
    }

    /// A count of IDs for a batch ([`Arg::Count`]): 0 to 2^32
    /// ([`Generator::check_batch`](crate::Generator::check_batch)).
    pub fn to_count(&self) -> Result<usize> {
        crate::Generator::<crate::SystemClock>::check_batch(self.to_uint(Arg::Count)?)
    }

    /// An ID: an integer in `0..2^64` (a float only if a whole number of at
    /// most 2^53 - 1: a larger one may already have been rounded) or a
    /// decimal string. Everything wrong is `invalid_id`.
    ///
    /// ```
    /// use snowmint::Value;
    /// assert_eq!(Value::from("175928847299117063").to_id()?.get(), 175928847299117063);
    /// assert_eq!(Value::from(-1i64).to_id().unwrap_err().code(), "invalid_id");
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn to_id(&self) -> Result<Id> {
        match self {
            Value::Int {
                negative,
                low,
                lossless,
            } => Id::from_bigint(*negative, *low, *lossless),
            Value::Float(n) => Id::from_f64(*n),
            Value::Str(s) => Id::parse(s, Format::Decimal),
            _ => Err(wrong(Arg::Id, self)),
        }
    }

    /// The text of a string argument for `arg` (a preset name, a JSON
    /// descriptor); another type is `arg`'s wrong-type error.
    pub fn into_text(self, arg: Arg) -> Result<String> {
        match self {
            Value::Str(s) => Ok(s),
            v => Err(wrong(arg, &v)),
        }
    }

    /// An ID written in `format` (a string; another type is `invalid_id`).
    ///
    /// ```
    /// use snowmint::{Format, Value};
    /// assert_eq!(Value::from("1ASD13XH1F800").to_id_in(Format::Base32)?.get(), 1541815603606036480);
    /// assert_eq!(Value::from(7u64).to_id_in(Format::Base62).unwrap_err().code(), "invalid_id");
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn to_id_in(&self, format: Format) -> Result<Id> {
        match self {
            Value::Str(s) => Id::parse(s, format),
            _ => Err(wrong(Arg::Id, self)),
        }
    }

    /// A string format name (`decimal`, `base32`, `base62`).
    pub fn to_format(&self) -> Result<Format> {
        match self {
            Value::Str(s) => Format::from_name(s),
            _ => Err(wrong(Arg::Format, self)),
        }
    }

    /// A layout: a layout object, a preset name or a JSON descriptor
    /// (see [`Layout::parse`]).
    pub fn to_layout(&self) -> Result<Layout> {
        match self {
            Value::Layout(l) => Ok(*l),
            Value::Str(s) => Layout::parse(s),
            _ => Err(wrong(Arg::Layout, self)),
        }
    }

    /// Node values for `layout` from a map of field names to integers;
    /// [`Absent`](Value::Absent) is no node values (right for layouts
    /// without node fields, `missing_node` otherwise).
    pub fn to_nodes(&self, layout: &Layout) -> Result<Nodes> {
        let pairs = self.to_node_pairs()?;
        layout.nodes_from_pairs(pairs.iter().map(|(n, v)| (n.as_str(), *v)))
    }

    /// Node values by name, not yet checked against a layout (a lease's
    /// fixed node values, which leave one field out): each value is a
    /// non-negative integer; [`Absent`](Value::Absent) is none.
    pub fn to_node_pairs(&self) -> Result<Vec<(String, u64)>> {
        match self {
            Value::Absent => Ok(Vec::new()),
            Value::Map(pairs) => pairs
                .iter()
                .map(|(name, v)| Ok((name.clone(), v.to_uint(Arg::Node(FieldName::lossy(name)))?)))
                .collect(),
            _ => Err(wrong(Arg::Nodes, self)),
        }
    }

    /// PureGenerator options from a map with the keys of [`OPTION_KEYS`], in
    /// `snake_case` or `camelCase`; [`Absent`](Value::Absent) (the map's or
    /// a key's value) keeps the default. An unknown key is `invalid_option`
    /// naming it.
    ///
    /// ```
    /// use snowmint::{ClockBackwards, Value};
    /// let o = Value::Map(vec![("clockBackwards".into(), "borrow:10".into())]).to_options()?;
    /// assert_eq!(o.clock_backwards, ClockBackwards::Borrow { max_units: 10 });
    /// let e = Value::Map(vec![("clock".into(), "fail".into())]).to_options().unwrap_err();
    /// assert_eq!(e.code(), "invalid_option");
    /// assert!(e.to_string().contains("'clock'"));
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn to_options(&self) -> Result<Options> {
        match self.to_options_and_lease()? {
            (o, None) => Ok(o),
            (_, Some(_)) => Err(Error::InvalidOption(OptionProblem::LeaseNotHere)),
        }
    }

    /// [`to_options`](Value::to_options) for a generator that may hold a
    /// lease: the options and the `lease` option's URL, if one is given (a
    /// string; the lease layer parses it).
    ///
    /// ```
    /// use snowmint::Value;
    /// let v = Value::Map(vec![("lease".into(), "file:/tmp/ids".into())]);
    /// let (_, url) = v.to_options_and_lease()?;
    /// assert_eq!(url.as_deref(), Some("file:/tmp/ids"));
    /// assert_eq!(v.to_options().unwrap_err().code(), "invalid_option");
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn to_options_and_lease(&self) -> Result<(Options, Option<String>)> {
        let mut o = Options::default();
        let mut lease = None;
        let pairs = match self {
            Value::Absent => return Ok((o, lease)),
            Value::Map(pairs) => pairs,
            _ => return Err(wrong(Arg::Options, self)),
        };
        for (key, v) in pairs {
            if *v == Value::Absent {
                continue;
            }
            let Some(i) = option_key(key) else {
                return Err(problem(
                    Arg::Options,
                    ArgProblem::UnknownKey {
                        key: FieldName::lossy(key),
                    },
                ));
            };
            let arg = Arg::Option(FieldName::lossy(OPTION_KEYS[i]));
            let text = || match v {
                Value::Str(s) => Ok(s.as_str()),
                _ => Err(wrong(arg, v)),
            };
            match i {
                0 => o.clock_backwards = ClockBackwards::parse(text()?)?,
                1 => o.sequence_exhausted = SequenceExhausted::parse(text()?)?,
                2 => o.sequence_start = SequenceStart::parse(text()?)?,
                // The seed reads like an ID, but a bad one is a bad option.
                3 => {
                    o.seed = v
                        .to_id()
                        .map_err(|e| match e {
                            Error::InvalidId(p) => problem(arg, ArgProblem::Id(p)),
                            Error::InvalidArgument { problem: p, .. } => problem(arg, p),
                            other => other,
                        })?
                        .get()
                }
                4 => o.resume_after = Some(v.to_id()?),
                _ => lease = Some(text()?.to_string()),
            }
        }
        Ok((o, lease))
    }

    /// Splits keyword arguments (Python's `PureGenerator(layout, datacenter=1,
    /// clock_backwards="fail")`) into options (the keys of [`OPTION_KEYS`])
    /// and node values (every other key), then converts both.
    pub fn to_nodes_and_options(&self, layout: &Layout) -> Result<(Nodes, Options)> {
        let Value::Map(pairs) = self else {
            return Ok((self.to_nodes(layout)?, Options::default()));
        };
        let (options, nodes): (Vec<_>, Vec<_>) = pairs
            .iter()
            .cloned()
            .partition(|(k, _)| option_key(k).is_some());
        Ok((
            Value::Map(nodes).to_nodes(layout)?,
            Value::Map(options).to_options()?,
        ))
    }
}
