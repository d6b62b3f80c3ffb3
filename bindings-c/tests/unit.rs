//! Unit tests of the C binding (compiled into the library's test build by
//! `src/lib.rs`; the C tests beside this file test the built library).

use core::ffi::{c_int, CStr};

use snowmint::{Error, IdProblem, Iso8601, Layout};

use crate::ffi::{boundary, boundary_value};
use crate::status::{CORE, OWN};
use crate::*;

#[test]
fn a_panic_becomes_a_status() {
    let s = boundary(|| panic!("boom"));
    assert_eq!(s, snowmint_status::Panic);
    assert_eq!(boundary_value(7, || panic!("boom")), 7);
}

#[test]
fn header_version_matches_the_crate() {
    let header = include_str!("../include/snowmint.h");
    let v = env!("CARGO_PKG_VERSION");
    let want = [
        format!(
            "#define SNOWMINT_VERSION_MAJOR {}",
            env!("CARGO_PKG_VERSION_MAJOR")
        ),
        format!(
            "#define SNOWMINT_VERSION_MINOR {}",
            env!("CARGO_PKG_VERSION_MINOR")
        ),
        format!(
            "#define SNOWMINT_VERSION_PATCH {}",
            env!("CARGO_PKG_VERSION_PATCH")
        ),
        format!("#define SNOWMINT_VERSION_STRING \"{v}\""),
    ];
    for w in want {
        assert!(
            header.contains(&w),
            "include/snowmint.h lacks `{w}`: update after_includes in bindings-c/cbindgen.toml"
        );
    }
}

#[test]
fn buffers_are_large_enough() {
    // The widest layout descriptor: 8 fields with 24-byte names and
    // 20-digit numbers.
    let json = r#"{"epoch_ms":0,"time_unit_ms":1,"fields":[["timestamp",10],["aaaaaaaaaaaaaaaaaaaaaaa1",1],["aaaaaaaaaaaaaaaaaaaaaaa2",1],["aaaaaaaaaaaaaaaaaaaaaaa3",1],["aaaaaaaaaaaaaaaaaaaaaaa4",1],["aaaaaaaaaaaaaaaaaaaaaaa5",1],["aaaaaaaaaaaaaaaaaaaaaaa6",1],["sequence",10]]}"#;
    let l = Layout::from_json(json).unwrap();
    let longest = l.to_json().len() + 2 * 19 + 8;
    assert!(longest < SNOWMINT_LAYOUT_JSON_SIZE);
    assert!(Iso8601(u64::MAX).to_string().len() < SNOWMINT_ISO8601_SIZE);
}

fn code(s: c_int) -> &'static str {
    // SAFETY: `snowmint_status_code` returns a static C string.
    unsafe { CStr::from_ptr(snowmint_status_code(s)) }
        .to_str()
        .unwrap()
}

/// `InvalidLayout` as `invalid_layout`: the name cbindgen gives the C
/// constant, in the core's spelling.
fn snake(s: snowmint_status) -> String {
    let mut out = String::new();
    for c in format!("{s:?}").chars() {
        if c.is_ascii_uppercase() && !out.is_empty() {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[test]
fn each_core_code_has_the_status_of_its_name() {
    for (i, want) in Error::ALL_CODES.iter().enumerate() {
        assert_eq!(snake(CORE[i]), *want);
        assert_eq!(code(CORE[i] as c_int), *want);
    }
    for (s, c, _) in OWN {
        assert_eq!(snake(s), c.to_str().unwrap());
        assert_eq!(code(s as c_int), snake(s));
    }
    // Real errors map to the status of their code.
    let errors = [
        Layout::preset("nope").unwrap_err(),
        Error::InvalidId(IdProblem::Empty),
        snowmint::Value::Bool(true).to_time_ms().unwrap_err(),
        Error::ProcessForked,
        Error::ClockStalled {
            now_ms: 1,
            until_ms: 2,
        },
    ];
    for e in errors {
        assert_eq!(code(snowmint_status::from(e) as c_int), e.code());
    }
}

#[test]
fn unknown_values_have_no_code() {
    for s in [-1, 16, 99, 106, c_int::MAX, c_int::MIN] {
        assert_eq!(code(s), "unknown_status");
    }
}

#[test]
fn all_statuses_lists_exactly_the_known_values() {
    let all: Vec<c_int> = all_statuses().iter().map(|&s| s as c_int).collect();
    for n in -1..=300 {
        assert_eq!(all.contains(&n), code(n) != "unknown_status", "status {n}");
    }
    assert_eq!(all.len(), 1 + Error::ALL_CODES.len() + OWN.len() - 1);
}
