//! `vectors/mask.json`: public IDs (FF1 over each layout's bits).

use serde_json::{json, Value};
use snowmint::{Format, IdMask};

use crate::layout_of;

/// Bytes as lowercase hex, as the vectors write keys and tweaks.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The contents of `vectors/mask.json`: the public-ID mask, FF1 (radix 2)
/// with AES-128/256 over each layout's bits. The expected outputs come from
/// the core (the `fpe` crate's FF1); core/tests/mask_ff1_spec.rs checks them
/// against an independent implementation of SP 800-38G that passes NIST's
/// samples.
pub(crate) fn mask() -> Value {
    let key16: Vec<u8> = (0u8..16).collect();
    let key32: Vec<u8> = (0u8..32)
        .map(|i| i.wrapping_mul(37).wrapping_add(11))
        .collect();
    let nist128 = [
        0x2B, 0x7E, 0x15, 0x16, 0x28, 0xAE, 0xD2, 0xA6, 0xAB, 0xF7, 0x15, 0x88, 0x09, 0xCF, 0x4F,
        0x3C,
    ];
    let long_tweak: Vec<u8> = (0u8..40).collect();
    let twenty =
        r#"{"epoch_ms":1700000000000,"fields":[["timestamp",10],["sequence",5],["node",5]]}"#;
    let full = r#"{"epoch_ms":0,"fields":[["timestamp",41],["sequence",12],["node",11]]}"#;
    let tiny = r#"{"epoch_ms":1700000000000,"time_unit_ms":60000,"fields":[["timestamp",20],["sequence",6],["node",4]]}"#;
    let plan: [(&str, &str, &[u8], &[u8]); 10] = [
        ("twitter, AES-128, no tweak", "twitter", &key16, b""),
        (
            "twitter, AES-128, tweak 'orders'",
            "twitter",
            &key16,
            b"orders",
        ),
        (
            "twitter, AES-128, tweak 'users'",
            "twitter",
            &key16,
            b"users",
        ),
        (
            "twitter, AES-256, tweak 'orders'",
            "twitter",
            &key32,
            b"orders",
        ),
        (
            "twitter, NIST sample key, no tweak",
            "twitter",
            &nist128,
            b"",
        ),
        (
            "sonyflake (63 bits), AES-256, no tweak",
            "sonyflake",
            &key32,
            b"",
        ),
        (
            "64 bits (the whole u64), AES-256, tweak of 40 bytes",
            full,
            &key32,
            &long_tweak,
        ),
        (
            "30 bits, AES-128, tweak 'tenant-42'",
            tiny,
            &key16,
            b"tenant-42",
        ),
        (
            "20 bits (the least FF1 allows), AES-128, no tweak",
            twenty,
            &key16,
            b"",
        ),
        ("20 bits, AES-256, tweak 'x'", twenty, &key32, b"x"),
    ];
    let cases: Vec<Value> = plan
        .iter()
        .map(|&(name, spec, key, tweak)| mask_case(name, spec, key, tweak))
        .collect();
    let nineteen =
        r#"{"epoch_ms":1700000000000,"fields":[["timestamp",10],["sequence",5],["node",4]]}"#;
    let errors = vec![
        error_case("key of 0 bytes", "twitter", &[], "new", None),
        error_case("key of 15 bytes", "twitter", &key16[..15], "new", None),
        error_case(
            "key of 24 bytes (AES-192 is not offered)",
            "twitter",
            &key32[..24],
            "new",
            None,
        ),
        error_case("key of 33 bytes", "twitter", &[7; 33], "new", None),
        error_case(
            "19-bit layout (below FF1's 10^6 values)",
            nineteen,
            &key16,
            "new",
            None,
        ),
        error_case(
            "mask: an ID above the layout's 63 bits",
            "twitter",
            &key16,
            "mask",
            Some(1 << 63),
        ),
        error_case(
            "unmask: a public ID above the layout's 63 bits",
            "twitter",
            &key16,
            "unmask",
            Some(u64::MAX),
        ),
        error_case(
            "mask: an ID above 20 bits",
            twenty,
            &key32,
            "mask",
            Some(1 << 20),
        ),
        error_case(
            "unmask: a public ID above 20 bits",
            twenty,
            &key32,
            "unmask",
            Some(1 << 20),
        ),
    ];
    json!({
        "_comment": "Public IDs: NIST SP 800-38G FF1 with AES-128 (16-byte key) or AES-256 (32-byte key), \
            radix 2, over the layout's total_bits bits, most significant bit first (NUM_2 of the numeral \
            string is the ID); the tweak is FF1's tweak T. Keys and tweaks are hex; IDs are decimal strings. \
            Each case: `IdMask(layout, key, tweak)`; for every pair, mask(id) == public, unmask(public) == id, \
            and the public ID's base32/base62 strings. Each error: `op` is `new` (the constructor fails), \
            `mask` or `unmask` of `value` (the constructor succeeds, the call fails) with the code `error`.",
        "cases": cases,
        "errors": errors,
    })
}

/// One key, tweak and layout: IDs across the layout's space and their public IDs.
fn mask_case(name: &str, spec: &str, key: &[u8], tweak: &[u8]) -> Value {
    let l = layout_of(spec);
    let m = IdMask::new(l, key, tweak).unwrap_or_else(|e| panic!("{name}: {e}"));
    let max = l.max_id().get();
    let mut ids = vec![0, 1, 2, 3, max - 1, max, max >> 1, (max >> 1) + 1];
    // Consecutive IDs from the middle of the space, and a spread.
    let mid = max / 3;
    ids.extend(mid..mid + 4);
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ max;
    for _ in 0..4 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ids.push(x & max);
    }
    let pairs: Vec<Value> = ids
        .iter()
        .map(|&id| {
            let p = m.mask(id).unwrap();
            assert_eq!(m.unmask(p).unwrap(), id, "{name}");
            json!({
                "id": id.to_string(),
                "public": p.get().to_string(),
                "base32": p.to_string_in(Format::Base32),
                "base62": p.to_string_in(Format::Base62),
            })
        })
        .collect();
    json!({
        "name": name,
        "layout": spec,
        "key": hex(key),
        "tweak": hex(tweak),
        "pairs": pairs,
    })
}

/// One refused use of the mask: `op` is `new` (the constructor fails), or
/// `mask`/`unmask` of `value` (the call fails).
fn error_case(name: &str, spec: &str, key: &[u8], op: &str, value: Option<u64>) -> Value {
    let l = layout_of(spec);
    let r = IdMask::new(l, key, b"");
    let code = match (op, value) {
        ("new", None) => r.map(|_| ()).unwrap_err().code(),
        ("mask", Some(v)) => r.unwrap().mask(v).unwrap_err().code(),
        ("unmask", Some(v)) => r.unwrap().unmask(v).unwrap_err().code(),
        _ => unreachable!(),
    };
    let mut case = json!({"name": name, "layout": spec, "key": hex(key), "tweak": "", "op": op, "error": code});
    if let Some(v) = value {
        case["value"] = json!(v.to_string());
    }
    case
}
