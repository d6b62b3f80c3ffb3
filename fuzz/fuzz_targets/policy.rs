//! Option and policy strings: `ClockBackwards::parse`,
//! `SequenceExhausted::parse`, `SequenceStart::parse`.
//!
//! Properties: an accepted string's `Display` reads back to the same policy
//! and is the input itself when the input has no leading zeros; every error
//! is `invalid_option` and renders; `Options::from_policies` and the
//! conversion layer's `to_options` (snake_case and camelCase keys) agree with
//! the three parsers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snowmint::{ClockBackwards, Error, Options, SequenceExhausted, SequenceStart, Value};

#[path = "common.rs"]
mod common;

/// No number in the text is written with a leading zero.
fn no_leading_zero(s: &str) -> bool {
    match s.split_once(':') {
        Some((_, n)) => !(n.len() > 1 && n.starts_with('0')),
        None => true,
    }
}

fn check<T, F>(s: &str, r: &Result<T, Error>, parse: F)
where
    T: std::fmt::Display + PartialEq + std::fmt::Debug,
    F: Fn(&str) -> Result<T, Error>,
{
    match r {
        Ok(p) => {
            let shown = p.to_string();
            assert_eq!(parse(&shown).as_ref(), Ok(p), "{s:?} shows as {shown:?}");
            if no_leading_zero(s) {
                assert_eq!(shown, s, "{p:?} does not show as the text it was read from");
            }
        }
        Err(e) => assert_eq!(common::check_error(e), "invalid_option", "{e}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let s: &str = &text;
    let clock = ClockBackwards::parse(s);
    let exhausted = SequenceExhausted::parse(s);
    let start = SequenceStart::parse(s);
    check(s, &clock, ClockBackwards::parse);
    check(s, &exhausted, SequenceExhausted::parse);
    check(s, &start, SequenceStart::parse);

    let d = Options::default();
    let with = |clock, exhausted, start| Options::from_policies(clock, exhausted, start);
    assert_eq!(with(Some(s), None, None).map(|o| o.clock_backwards), clock);
    assert_eq!(
        with(None, Some(s), None).map(|o| o.sequence_exhausted),
        exhausted
    );
    assert_eq!(with(None, None, Some(s)).map(|o| o.sequence_start), start);
    assert_eq!(with(None, None, None), Ok(d));

    // The conversion layer reads the same texts under either key spelling.
    for (snake, camel) in [
        ("clock_backwards", "clockBackwards"),
        ("sequence_exhausted", "sequenceExhausted"),
        ("sequence_start", "sequenceStart"),
    ] {
        for key in [snake, camel] {
            let r = Value::Map(vec![(key.into(), Value::from(s))]).to_options();
            match snake {
                "clock_backwards" => assert_eq!(r.map(|o| o.clock_backwards), clock),
                "sequence_exhausted" => assert_eq!(r.map(|o| o.sequence_exhausted), exhausted),
                _ => assert_eq!(r.map(|o| o.sequence_start), start),
            }
        }
    }

    // The text as a key: an option key or an unknown key naming it.
    let r = Value::Map(vec![(s.into(), Value::from("fail"))]).to_options();
    match snowmint::option_key(s) {
        Some(0) => assert!(r.is_ok()),
        Some(i) => {
            // "fail" is no other option's value; `resume_after` is an ID.
            assert!(i < snowmint::OPTION_KEYS.len());
            let e = r.unwrap_err();
            let want = if i == 4 {
                "invalid_id"
            } else {
                "invalid_option"
            };
            assert_eq!(common::check_error(&e), want, "{e}");
        }
        None => {
            let e = r.unwrap_err();
            assert_eq!(common::check_error(&e), "invalid_option");
            assert_eq!(e.class(), snowmint::ErrorClass::Type);
        }
    }
});
