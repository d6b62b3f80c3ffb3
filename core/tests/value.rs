//! The conversion layer: which code and which class each kind of bad
//! argument gets (the table of docs/SEMANTICS.md, "Arguments").

use snowmint::{Arg, ErrorClass, Layout, Value};

fn int(v: i128) -> Value {
    Value::from(v)
}

fn fails(r: snowmint::Result<impl std::fmt::Debug>, code: &str, class: ErrorClass) -> String {
    let e = r.expect_err("an error");
    assert_eq!((e.code(), e.class()), (code, class), "{e}");
    e.to_string()
}

#[test]
fn integers() {
    use ErrorClass::{Range, Type};
    assert_eq!(int(0).to_uint(Arg::Sequence), Ok(0));
    assert_eq!(int(u64::MAX as i128).to_uint(Arg::Count), Ok(u64::MAX));
    assert_eq!(
        Value::Float(9007199254740991.0).to_time_ms(),
        Ok(9007199254740991)
    );
    // -0 is 0, in both forms.
    assert_eq!(Value::Float(-0.0).to_time_ms(), Ok(0));
    assert_eq!(
        Value::Int {
            negative: true,
            low: 0,
            lossless: true
        }
        .to_time_ms(),
        Ok(0)
    );
    let m = fails(int(-1).to_time_ms(), "time_before_epoch", Range);
    assert!(m.contains("must not be negative"), "{m}");
    fails(int(1 << 64).to_time_ms(), "time_overflow", Range);
    // -2^64 has no low bits: negative all the same (found by the fuzzer).
    fails(int(-(1 << 64)).to_time_ms(), "time_before_epoch", Range);
    let minus_huge = Value::Int {
        negative: true,
        low: 0,
        lossless: false,
    };
    fails(
        minus_huge.to_uint(Arg::Sequence),
        "node_out_of_range",
        Range,
    );
    fails(minus_huge.to_time_ms(), "time_before_epoch", Range);
    fails(Value::Float(0.5).to_time_ms(), "time_overflow", Range);
    fails(Value::Float(f64::NAN).to_time_ms(), "time_overflow", Range);
    fails(
        Value::Float(9007199254740992.0).to_time_ms(),
        "time_overflow",
        Range,
    );
    fails(Value::from("5").to_time_ms(), "time_overflow", Type);
    fails(
        Value::Bool(true).to_uint(Arg::Sequence),
        "node_out_of_range",
        Type,
    );
    fails(
        Value::Float(-1.0).to_uint(Arg::Sequence),
        "node_out_of_range",
        Range,
    );
    fails(Value::Absent.to_count(), "invalid_option", Type);
    assert_eq!(int(0).to_count(), Ok(0));
    fails(
        int((1 << 32) + 1).to_count(),
        "invalid_option",
        ErrorClass::Value,
    );
    assert_eq!(int(1 << 32).to_count(), Ok(1 << 32));
}

#[test]
fn ids() {
    use ErrorClass::{Range, Type};
    assert_eq!(Value::from("42").to_id().unwrap().get(), 42);
    assert_eq!(int(u64::MAX as i128).to_id().unwrap().get(), u64::MAX);
    fails(int(-1).to_id(), "invalid_id", Range);
    fails(int(1 << 64).to_id(), "invalid_id", Range);
    fails(Value::Float(1.5).to_id(), "invalid_id", Range);
    fails(
        Value::Float(9007199254740992.0).to_id(),
        "invalid_id",
        Range,
    );
    fails(
        Value::from("18446744073709551616").to_id(),
        "invalid_id",
        Range,
    );
    fails(Value::from("12a").to_id(), "invalid_id", ErrorClass::Value);
    fails(Value::from("").to_id(), "invalid_id", ErrorClass::Value);
    let m = fails(Value::Bool(false).to_id(), "invalid_id", Type);
    assert_eq!(
        m,
        "an ID must be an integer or a decimal string, not a boolean [invalid_id]"
    );
    fails(Value::Other("a list").to_id(), "invalid_id", Type);
    fails(Value::Absent.to_format(), "invalid_id", Type);
    fails(
        Value::from("hex").to_format(),
        "invalid_id",
        ErrorClass::Value,
    );
}

#[test]
fn layouts_and_nodes() {
    use ErrorClass::{Range, Type};
    let twitter = Layout::preset("twitter").unwrap();
    assert_eq!(Value::Layout(twitter).to_layout(), Ok(twitter));
    assert_eq!(Value::from("twitter").to_layout(), Ok(twitter));
    fails(
        Value::from("nope").to_layout(),
        "unknown_preset",
        ErrorClass::Value,
    );
    fails(
        Value::from("{").to_layout(),
        "invalid_layout",
        ErrorClass::Value,
    );
    fails(int(1).to_layout(), "invalid_layout", Type);

    let map = |pairs: &[(&str, Value)]| {
        Value::Map(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    };
    let n = map(&[("worker", int(3)), ("datacenter", Value::Float(1.0))]);
    assert_eq!(n.to_nodes(&twitter).unwrap().values(), &[1, 3]);
    fails(
        Value::Absent.to_nodes(&twitter),
        "missing_node",
        ErrorClass::Value,
    );
    fails(int(1).to_nodes(&twitter), "unknown_field", Type);
    let m = fails(
        map(&[("worker", int(-3)), ("datacenter", int(1))]).to_nodes(&twitter),
        "node_out_of_range",
        Range,
    );
    assert_eq!(
        m,
        "node field 'worker' must not be negative [node_out_of_range]"
    );
    fails(
        map(&[("worker", Value::Absent), ("datacenter", int(1))]).to_nodes(&twitter),
        "node_out_of_range",
        Type,
    );
    fails(
        map(&[("worker", int(32)), ("datacenter", int(1))]).to_nodes(&twitter),
        "node_out_of_range",
        ErrorClass::Value,
    );
    fails(
        map(&[("shard", int(1))]).to_nodes(&twitter),
        "unknown_field",
        ErrorClass::Value,
    );
}

#[test]
fn options() {
    use ErrorClass::{Range, Type};
    let map = |pairs: &[(&str, Value)]| {
        Value::Map(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    };
    let o = map(&[
        ("clock_backwards", "fail".into()),
        ("sequenceExhausted", "borrow:3".into()),
        ("sequence_start", "zero".into()),
        ("seed", "7".into()),
        ("resumeAfter", int(99)),
    ])
    .to_options()
    .unwrap();
    assert_eq!(
        (
            o.clock_backwards.to_string(),
            o.sequence_exhausted.to_string()
        ),
        ("fail".into(), "borrow:3".into())
    );
    assert_eq!((o.seed, o.resume_after), (7, Some(snowmint::Id::new(99))));
    assert_eq!(
        map(&[("seed", Value::Absent)]).to_options(),
        Ok(Default::default())
    );
    let m = fails(
        map(&[("clockbackwards", "fail".into())]).to_options(),
        "invalid_option",
        Type,
    );
    assert!(m.contains("unknown option 'clockbackwards'"), "{m}");
    fails(
        map(&[("Seed", int(1))]).to_options(),
        "invalid_option",
        Type,
    );
    fails(
        map(&[("clock_backwards", int(1))]).to_options(),
        "invalid_option",
        Type,
    );
    fails(
        map(&[("clock_backwards", "later".into())]).to_options(),
        "invalid_option",
        ErrorClass::Value,
    );
    let m = fails(
        map(&[("seed", int(-1))]).to_options(),
        "invalid_option",
        Range,
    );
    assert!(m.starts_with("option 'seed': "), "{m}");
    fails(
        map(&[("seed", Value::Bool(true))]).to_options(),
        "invalid_option",
        Type,
    );
    fails(
        map(&[("resume_after", int(-1))]).to_options(),
        "invalid_id",
        Range,
    );
    fails(Value::from("fail").to_options(), "invalid_option", Type);

    // Keyword arguments: option keys are options, the rest node values.
    let twitter = Layout::preset("twitter").unwrap();
    let (nodes, o) = map(&[
        ("datacenter", int(1)),
        ("clock_backwards", "fail".into()),
        ("worker", int(2)),
    ])
    .to_nodes_and_options(&twitter)
    .unwrap();
    assert_eq!(nodes.values(), &[1, 2]);
    assert_eq!(o.clock_backwards.to_string(), "fail");
}

#[test]
fn every_option_key_in_camel_case() {
    for (i, key) in snowmint::OPTION_KEYS.iter().enumerate() {
        let mut camel = String::new();
        let mut up = false;
        for c in key.chars() {
            if c == '_' {
                up = true;
            } else {
                camel.push(if up { c.to_ascii_uppercase() } else { c });
                up = false;
            }
        }
        assert_eq!(snowmint::option_key(&camel), Some(i), "{camel}");
        assert_eq!(snowmint::option_key(key), Some(i));
    }
    for bad in [
        "",
        "clock",
        "clockbackwards",
        "Clock_backwards",
        "resume_After",
        "seed_",
    ] {
        assert_eq!(snowmint::option_key(bad), None, "{bad}");
    }
}
