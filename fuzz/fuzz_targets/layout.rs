//! Layout descriptors and preset names: `Layout::parse` and
//! `Layout::from_json` on arbitrary text.
//!
//! Properties: `parse` is `from_json` for text starting with `{` or `"`
//! (after whitespace) and `preset` otherwise; only the ten preset names are
//! presets; an accepted layout is well formed and its canonical JSON reads
//! back to an equal layout; IDs decode and compose back; every error renders,
//! has a code from the table and is `invalid_layout` or `unknown_preset`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snowmint::{Error, Layout};

#[path = "common.rs"]
mod common;

fn check(r: &Result<Layout, Error>) {
    match r {
        Ok(l) => common::check_layout(l),
        Err(e) => {
            let code = common::check_error(e);
            assert!(
                code == "invalid_layout" || code == "unknown_preset",
                "reading a layout failed with {code}: {e}"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let s: &str = &text;

    let parsed = Layout::parse(s);
    let json = Layout::from_json(s);
    let preset = Layout::preset(s);
    check(&parsed);
    check(&json);
    check(&preset);

    assert_eq!(
        preset.is_ok(),
        Layout::PRESETS.contains(&s),
        "preset({s:?})"
    );
    if let Err(e) = &preset {
        assert_eq!(*e, Error::UnknownPreset);
    }
    match s.trim_start().as_bytes().first() {
        Some(b'{' | b'"') => assert_eq!(parsed, json, "parse and from_json disagree on {s:?}"),
        _ => assert_eq!(parsed, preset, "parse and preset disagree on {s:?}"),
    }
    // A preset name as a JSON string is the preset.
    if let Ok(name) = serde_like_unquote(s) {
        if Layout::PRESETS.contains(&name) {
            assert_eq!(json, Layout::preset(name));
        }
    }

    if let Ok(l) = parsed.or(json) {
        // IDs from the input's bytes, and the edges of the layout.
        let mut h: u64 = 0xcbf29ce484222325;
        for &b in data {
            h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
        }
        let max = l.max_id().get();
        for id in [0, 1, h, h & max, max, max.wrapping_add(1), u64::MAX] {
            common::check_roundtrip(&l, id);
        }
        for t in [0, l.epoch_ms(), l.time_end_ms() - 1, l.time_end_ms(), h] {
            match l.id_bounds(t) {
                Ok((lo, hi)) => {
                    assert!(lo <= hi && hi <= l.max_id());
                    let (a, b) = (l.decompose(lo).unwrap(), l.decompose(hi).unwrap());
                    assert_eq!(a.tick(), b.tick());
                    assert_eq!(l.tick_of(t), Ok(a.tick()));
                }
                Err(e) => {
                    let code = common::check_error(&e);
                    assert!(
                        code == "time_before_epoch" || code == "time_overflow",
                        "{e}"
                    );
                }
            }
        }
    }
});

/// The contents of a plain JSON string `"..."` (no escapes), surrounded only
/// by JSON whitespace.
fn serde_like_unquote(s: &str) -> Result<&str, ()> {
    let t = s.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'));
    let inner = t
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .ok_or(())?;
    if inner.contains(['"', '\\']) {
        return Err(());
    }
    Ok(inner)
}
