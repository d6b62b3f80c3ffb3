//! The conversion layer: arbitrary `snowmint::Value` trees through every
//! `to_*` method, with layouts from the presets, from fuzzed text and from
//! fuzzed field lists.
//!
//! Properties: every error renders, has a code from the table and the code
//! its argument's row of docs/SEMANTICS.md ("Arguments") allows, and a class
//! that fits the value (a wrong type is `Type`); every success is in range
//! (an ID from a float only for whole numbers <= 2^53 - 1, a count in
//! 0..=2^32, node values that fit their fields, options that match the
//! policy parsers).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use snowmint::{
    Arg, ClockBackwards, Error, ErrorClass, FieldName, Format, Id, Layout, SequenceExhausted,
    SequenceStart, Value, MAX_SAFE_INTEGER,
};

#[path = "common.rs"]
mod common;

/// How a layout is chosen.
#[derive(Arbitrary, Debug)]
enum LayoutIn {
    Preset(u8),
    Text(String),
    Fields {
        epoch_ms: u64,
        unit_ms: u64,
        fields: Vec<(String, u8)>,
    },
}

impl LayoutIn {
    fn layout(&self) -> Option<Layout> {
        match self {
            LayoutIn::Preset(i) => {
                let name = Layout::PRESETS[*i as usize % Layout::PRESETS.len()];
                Some(Layout::preset(name).unwrap())
            }
            LayoutIn::Text(s) => Layout::parse(s).ok(),
            LayoutIn::Fields {
                epoch_ms,
                unit_ms,
                fields,
            } => {
                let f: Vec<(&str, u32)> = fields
                    .iter()
                    .map(|(n, b)| (n.as_str(), u32::from(*b)))
                    .collect();
                match Layout::new(*epoch_ms, *unit_ms, &f) {
                    Ok(l) => Some(l),
                    Err(e) => {
                        assert_eq!(common::check_error(&e), "invalid_layout", "{e}");
                        None
                    }
                }
            }
        }
    }
}

/// A key of a map: often a real field or option name, so maps get accepted.
#[derive(Arbitrary, Debug)]
enum KeyIn {
    Option(u8, bool),
    Node(u8),
    Text(String),
}

const OTHER_TYPES: [&str; 4] = ["a list", "a function", "a tuple", "an object"];
const NODE_NAMES: [&str; 10] = [
    "datacenter",
    "worker",
    "process",
    "shard",
    "machine",
    "node",
    "timestamp",
    "sequence",
    "server",
    "x",
];

/// A mirror of `Value`, so `arbitrary` can build trees of it.
#[derive(Arbitrary, Debug)]
enum ValueIn {
    Absent,
    Bool(bool),
    Int {
        negative: bool,
        low: u64,
        lossless: bool,
    },
    Small(i32),
    Float(f64),
    Whole(u64),
    Str(String),
    Policy(u8, u16),
    Map(Vec<(KeyIn, ValueIn)>),
    Layout(LayoutIn),
    Other(u8),
}

fn key(k: &KeyIn) -> String {
    match k {
        KeyIn::Option(i, camel) => {
            let snake = snowmint::OPTION_KEYS[*i as usize % snowmint::OPTION_KEYS.len()];
            if *camel {
                let mut out = String::new();
                let mut up = false;
                for c in snake.chars() {
                    if c == '_' {
                        up = true;
                    } else if up {
                        out.push(c.to_ascii_uppercase());
                        up = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            } else {
                snake.into()
            }
        }
        KeyIn::Node(i) => NODE_NAMES[*i as usize % NODE_NAMES.len()].into(),
        KeyIn::Text(s) => s.clone(),
    }
}

fn value(v: &ValueIn, depth: u32) -> Value {
    match v {
        ValueIn::Absent => Value::Absent,
        ValueIn::Bool(b) => Value::Bool(*b),
        ValueIn::Int {
            negative,
            low,
            lossless,
        } => Value::Int {
            negative: *negative,
            low: *low,
            lossless: *lossless,
        },
        ValueIn::Small(n) => Value::from(i64::from(*n)),
        ValueIn::Float(f) => Value::Float(*f),
        // Whole floats near the edge of exactness, and just past it.
        ValueIn::Whole(n) => Value::Float((n % (MAX_SAFE_INTEGER + 4)) as f64),
        ValueIn::Str(s) => Value::Str(s.clone()),
        ValueIn::Policy(i, n) => {
            let names = ["fail", "wait", "borrow", "zero", "random", "cycle"];
            let name = names[*i as usize % names.len()];
            Value::Str(if i & 0x80 != 0 {
                name.into()
            } else {
                format!("{name}:{n}")
            })
        }
        ValueIn::Map(pairs) if depth < 3 => Value::Map(
            pairs
                .iter()
                .map(|(k, v)| (key(k), value(v, depth + 1)))
                .collect(),
        ),
        ValueIn::Map(_) => Value::Absent,
        ValueIn::Layout(l) => l
            .layout()
            .map_or(Value::Other("a broken layout"), Value::Layout),
        ValueIn::Other(i) => Value::Other(OTHER_TYPES[*i as usize % OTHER_TYPES.len()]),
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    value: ValueIn,
    layout: LayoutIn,
    node: String,
}

/// The integer a value stands for, if it is an exact non-negative one.
fn exact(v: &Value) -> Option<u64> {
    match *v {
        Value::Int {
            negative,
            low,
            lossless,
        } => (lossless && (!negative || low == 0)).then_some(low),
        Value::Float(f) => {
            (f >= 0.0 && f <= MAX_SAFE_INTEGER as f64 && f.fract() == 0.0).then_some(f as u64)
        }
        _ => None,
    }
}

/// Which types an argument takes.
#[derive(Clone, Copy, PartialEq)]
enum Takes {
    /// Integers and floats (times, node values, counts).
    Number,
    /// Numbers and decimal strings (IDs).
    NumberOrText,
    /// Strings only (format names).
    Text,
    /// Layout objects and strings.
    Layout,
    /// Maps (and nothing).
    Map,
}

/// An error for a value of a type the argument does not take is a `Type`
/// error; a number's problem where numbers are taken is not.
fn check_class(v: &Value, takes: Takes, e: &Error) {
    let number = matches!(v, Value::Int { .. } | Value::Float(_));
    let ok_type = match takes {
        Takes::Number => number,
        Takes::NumberOrText => number || matches!(v, Value::Str(_)),
        Takes::Text => matches!(v, Value::Str(_)),
        Takes::Layout => matches!(v, Value::Str(_) | Value::Layout(_)),
        Takes::Map => matches!(v, Value::Map(_) | Value::Absent),
    };
    if !ok_type {
        assert_eq!(e.class(), ErrorClass::Type, "{v:?}: {e}");
    } else if number {
        assert_eq!(e.class(), ErrorClass::Range, "{v:?}: {e}");
    }
}

fn check_uint(v: &Value, arg: Arg, allowed: &[&str]) {
    match v.to_uint(arg) {
        Ok(n) => assert_eq!(Some(n), exact(v), "{v:?} as {arg:?}"),
        Err(e) => {
            assert_eq!(exact(v), None, "{v:?} refused as {arg:?}: {e}");
            let code = common::check_error(&e);
            assert!(allowed.contains(&code), "{v:?} as {arg:?}: {e}");
            check_class(v, Takes::Number, &e);
        }
    }
}

fn check_value(v: &Value, layouts: &[Layout], node: &str) {
    assert!(!v.type_name().is_empty());

    // IDs.
    match v.to_id() {
        Ok(id) => match v {
            Value::Str(s) => assert_eq!(Id::parse(s, Format::Decimal), Ok(id)),
            _ => assert_eq!(Some(id.get()), exact(v), "{v:?} as an ID"),
        },
        Err(e) => {
            assert_eq!(common::check_error(&e), "invalid_id", "{e}");
            check_class(v, Takes::NumberOrText, &e);
            if !matches!(v, Value::Str(_)) {
                assert_eq!(exact(v), None, "{v:?} refused as an ID: {e}");
            }
        }
    }

    // Numbers for each kind of argument, and the codes their rows allow.
    check_uint(v, Arg::Time, &["time_before_epoch", "time_overflow"]);
    if let Ok(f) = FieldName::new(node) {
        check_uint(v, Arg::Node(f), &["node_out_of_range"]);
    }
    check_uint(v, Arg::Node(FieldName::lossy(node)), &["node_out_of_range"]);
    check_uint(v, Arg::Sequence, &["node_out_of_range"]);
    check_uint(v, Arg::Count, &["invalid_option"]);
    check_uint(v, Arg::Id, &["invalid_id"]);
    match v.to_time_ms() {
        Ok(t) => assert_eq!(Some(t), exact(v)),
        Err(e) => {
            let code = common::check_error(&e);
            // Below zero: any negative integer but -0 (`low` 0 and lossless), a
            // float below zero.
            let negative = matches!(*v, Value::Int { negative: true, low, lossless }
                    if !(low == 0 && lossless))
                || matches!(*v, Value::Float(f) if f < 0.0);
            let want = if negative {
                "time_before_epoch"
            } else {
                "time_overflow"
            };
            assert_eq!(code, want, "{v:?} as a time: {e}");
        }
    }

    // Counts: 0..=2^32 (`Generator::check_batch`).
    match v.to_count() {
        Ok(n) => {
            assert!(n as u64 <= 1 << 32);
            assert_eq!(Some(n as u64), exact(v));
        }
        Err(e) => {
            assert_eq!(common::check_error(&e), "invalid_option", "{e}");
            if exact(v).is_none() {
                check_class(v, Takes::Number, &e);
            }
        }
    }

    // Format names.
    match v.to_format() {
        Ok(f) => assert_eq!(*v, Value::Str(f.name().into())),
        Err(e) => {
            assert_eq!(common::check_error(&e), "invalid_id", "{e}");
            check_class(v, Takes::Text, &e);
        }
    }

    // Layouts.
    match v.to_layout() {
        Ok(l) => {
            common::check_layout(&l);
            match v {
                Value::Layout(given) => assert_eq!(l, *given),
                Value::Str(s) => assert_eq!(Layout::parse(s), Ok(l)),
                _ => panic!("{v:?} read as a layout"),
            }
        }
        Err(e) => {
            let code = common::check_error(&e);
            assert!(code == "invalid_layout" || code == "unknown_preset", "{e}");
            check_class(v, Takes::Layout, &e);
        }
    }

    // Options.
    let options = v.to_options();
    match &options {
        Ok(o) => match v {
            Value::Absent => assert_eq!(*o, snowmint::Options::default()),
            Value::Map(pairs) => {
                for (k, x) in pairs {
                    let Value::Str(s) = x else { continue };
                    match snowmint::option_key(k) {
                        Some(0) => assert!(ClockBackwards::parse(s).is_ok()),
                        Some(1) => assert!(SequenceExhausted::parse(s).is_ok()),
                        Some(2) => assert!(SequenceStart::parse(s).is_ok()),
                        Some(_) => assert!(Id::parse(s, Format::Decimal).is_ok()),
                        None => panic!("unknown key {k:?} accepted"),
                    }
                }
                // The last value given for a key is the one kept.
                if let Some((_, Value::Str(s))) = pairs
                    .iter()
                    .rev()
                    .find(|(k, x)| snowmint::option_key(k) == Some(0) && *x != Value::Absent)
                {
                    assert_eq!(ClockBackwards::parse(s), Ok(o.clock_backwards));
                }
            }
            _ => panic!("{v:?} read as options"),
        },
        Err(e) => {
            let code = common::check_error(e);
            // Options are `invalid_option`; `resume_after` is an ID.
            assert!(code == "invalid_option" || code == "invalid_id", "{e}");
            check_class(v, Takes::Map, e);
        }
    }

    // Node values, and keyword arguments split into nodes and options.
    for l in layouts {
        match v.to_nodes(l) {
            Ok(nodes) => {
                assert_eq!(nodes.values().len(), l.node_count());
                for (value, field) in nodes.values().iter().zip(l.nodes()) {
                    assert!(
                        *value <= field.max(),
                        "{value} does not fit {}",
                        field.name()
                    );
                }
                if let Value::Map(pairs) = v {
                    for (k, x) in pairs {
                        let i = l.node_index(k).unwrap_or_else(|| panic!("{k:?} accepted"));
                        assert_eq!(Some(nodes.values()[i]), exact(x));
                    }
                }
                let id = l.compose(l.epoch_ms(), 0, &nodes).unwrap();
                assert_eq!(l.decompose(id).unwrap().nodes(), nodes.values());
            }
            Err(e) => {
                let code = common::check_error(&e);
                assert!(
                    ["unknown_field", "missing_node", "node_out_of_range"].contains(&code),
                    "{v:?} as nodes of {l:?}: {e}"
                );
                check_class(v, Takes::Map, &e);
            }
        }
        match v.to_nodes_and_options(l) {
            Ok((nodes, o)) => {
                assert_eq!(nodes.values().len(), l.node_count());
                if !matches!(v, Value::Map(_)) {
                    assert_eq!(o, snowmint::Options::default());
                }
            }
            Err(e) => {
                let code = common::check_error(&e);
                assert!(
                    [
                        "unknown_field",
                        "missing_node",
                        "node_out_of_range",
                        "invalid_option",
                        "invalid_id"
                    ]
                    .contains(&code),
                    "{e}"
                );
            }
        }
    }

    // Children of a map go through the same checks.
    if let Value::Map(pairs) = v {
        for (_, x) in pairs.iter().take(4) {
            check_value(x, &layouts[..1], node);
        }
    }
}

fuzz_target!(|input: Input| {
    let v = value(&input.value, 0);
    let mut layouts = vec![Layout::preset("twitter").unwrap()];
    layouts.extend(input.layout.layout());
    if let Some(l) = layouts.last() {
        common::check_layout(l);
    }
    layouts.push(Layout::preset("mastodon").unwrap());
    check_value(&v, &layouts, &input.node);
});
