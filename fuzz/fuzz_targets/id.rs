//! ID strings in every format: `Id::parse(s, Format::Decimal|Base32|Base62)`.
//!
//! Properties: an accepted string encodes back to its canonical form
//! (decimal without leading zeros; base32 upper case with Crockford's
//! `I`/`L` -> `1`, `O` -> `0`; base62 exactly as given), and that form parses
//! to the same ID; decimal agrees with `u64::from_str` except that the core
//! refuses a leading `+` (digits only); every error is `invalid_id`, renders,
//! and a number out of range is a `Range` error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snowmint::{ErrorClass, Format, Id, MAX_STR_LEN};

#[path = "common.rs"]
mod common;

fn canonical(s: &str, format: Format) -> String {
    match format {
        Format::Decimal => {
            let t = s.trim_start_matches('0');
            if t.is_empty() {
                "0".into()
            } else {
                t.into()
            }
        }
        Format::Base32 => s
            .chars()
            .map(|c| match c.to_ascii_uppercase() {
                'I' | 'L' => '1',
                'O' => '0',
                u => u,
            })
            .collect(),
        Format::Base62 => s.into(),
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let s: &str = &text;
    for format in Format::ALL {
        assert_eq!(Format::from_name(format.name()), Ok(format));
        match Id::parse(s, format) {
            Ok(id) => {
                let mut buf = [0u8; MAX_STR_LEN];
                let out = id.encode(format, &mut buf).to_owned();
                let len = out.len();
                match format {
                    Format::Decimal => assert!((1..=20).contains(&len)),
                    Format::Base32 => assert_eq!(len, 13),
                    Format::Base62 => assert_eq!(len, 11),
                }
                assert_eq!(out, canonical(s, format), "{s:?} in {format:?}");
                assert_eq!(Id::parse(&out, format), Ok(id));
                // The other formats round-trip the same ID.
                for other in Format::ALL {
                    let mut buf = [0u8; MAX_STR_LEN];
                    assert_eq!(Id::parse(id.encode(other, &mut buf), other), Ok(id));
                }
            }
            Err(e) => {
                assert_eq!(common::check_error(&e), "invalid_id", "{e}");
                let class = e.class();
                assert!(class == ErrorClass::Value || class == ErrorClass::Range);
            }
        }
    }

    // Decimal against the standard library.
    let core = Id::parse(s, Format::Decimal);
    let std = s.parse::<u64>();
    match (&core, &std) {
        (Ok(id), Ok(v)) => assert_eq!(id.get(), *v),
        (Err(_), Ok(_)) => assert!(s.starts_with('+'), "core refuses {s:?}, u64 reads it"),
        (Ok(_), Err(_)) => panic!("core reads {s:?}, u64 refuses it"),
        (Err(e), Err(_)) => {
            let digits = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            if digits {
                // Only too large: a number out of range.
                assert_eq!(e.class(), ErrorClass::Range, "{s:?}: {e}");
            }
        }
    }

    // A decimal ID string through the conversion layer means the same.
    assert_eq!(snowmint::Value::from(s).to_id(), core);

    // Format names: exactly the three.
    let named = Format::from_name(s);
    assert_eq!(named.is_ok(), ["decimal", "base32", "base62"].contains(&s));
    if let Err(e) = named {
        assert_eq!(common::check_error(&e), "invalid_id");
    }

    // The input's first 8 bytes as an ID: every format round-trips it.
    let mut raw = [0u8; 8];
    let n = data.len().min(8);
    raw[..n].copy_from_slice(&data[..n]);
    let id = Id::new(u64::from_le_bytes(raw));
    for format in Format::ALL {
        let mut buf = [0u8; MAX_STR_LEN];
        let out = id.encode(format, &mut buf);
        assert_eq!(Id::parse(out, format), Ok(id));
        if format == Format::Decimal {
            assert_eq!(out, id.get().to_string());
        }
    }
    // Sorting: base32 and base62 strings sort like the numbers.
    let other = Id::new(id.get().rotate_left(17) ^ 0x9e37_79b9_7f4a_7c15);
    for format in [Format::Base32, Format::Base62] {
        let (mut a, mut b) = ([0u8; MAX_STR_LEN], [0u8; MAX_STR_LEN]);
        let (sa, sb) = (id.encode(format, &mut a), other.encode(format, &mut b));
        assert_eq!(sa.cmp(sb), id.cmp(&other), "{format:?} sort order");
    }
});
