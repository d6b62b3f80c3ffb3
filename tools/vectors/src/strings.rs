//! `vectors/strings.json`: the string forms (decimal, base32, base62) and
//! IDs as JavaScript numbers.

use serde_json::{json, Map, Value};
use snowmint::{Format, Id};

/// The contents of `vectors/strings.json`.
pub(crate) fn strings() -> Value {
    let mut encode = Vec::new();
    for id in [
        0u64,
        1,
        31,
        32,
        61,
        62,
        1 << 53,
        (1 << 53) - 1,
        (1 << 63) - 1,
        1 << 63,
        u64::MAX,
        175928847299117063,
        1541815603606036480,
    ] {
        let mut m = Map::new();
        m.insert("id".into(), json!(id.to_string()));
        for f in Format::ALL {
            let mut b = [0u8; 20];
            m.insert(f.name().into(), json!(Id::new(id).encode(f, &mut b)));
        }
        encode.push(Value::Object(m));
    }
    let parse_inputs: &[(&str, &str)] = &[
        ("decimal", "0"),
        ("decimal", "00042"),
        ("decimal", "18446744073709551615"),
        ("decimal", "18446744073709551616"),
        ("decimal", "99999999999999999999999"),
        ("decimal", ""),
        ("decimal", "-1"),
        ("decimal", "+1"),
        ("decimal", " 1"),
        ("decimal", "1 "),
        ("decimal", "1e5"),
        ("decimal", "0x10"),
        ("decimal", "12.0"),
        ("decimal", "١٢٣"),
        ("base32", "1ASD13XH1F800"),
        ("base32", "1asd13xh1f800"),
        ("base32", "0000000000001"),
        ("base32", "OOOOOOOOOOOOI"),
        ("base32", "000000000000l"),
        ("base32", "FZZZZZZZZZZZZ"),
        ("base32", "G000000000000"),
        ("base32", "ZZZZZZZZZZZZZ"),
        ("base32", "000000000000U"),
        ("base32", "1ASD13XH1F80"),
        ("base32", "1ASD13XH1F8000"),
        ("base32", ""),
        ("base32", "1ASD13XH1F80-"),
        ("base62", "00000000001"),
        ("base62", "LygHa16AHYF"),
        ("base62", "LygHa16AHYG"),
        ("base62", "zzzzzzzzzzz"),
        ("base62", "0000000000"),
        ("base62", "0000000000_"),
        ("hex", "ff"),
    ];
    let mut parse = Vec::new();
    for (fmt, input) in parse_inputs {
        let r = Format::from_name(fmt).and_then(|f| Id::parse(input, f));
        parse.push(match r {
            Ok(id) => json!({"format": fmt, "input": input, "expect": id.get().to_string()}),
            Err(e) => json!({"format": fmt, "input": input, "error": e.code()}),
        });
    }
    let numbers: &[f64] = &[
        0.0,
        42.0,
        9007199254740991.0,
        9007199254740992.0,
        1e300,
        -1.0,
        1.5,
        f64::NAN,
        f64::INFINITY,
    ];
    let mut js_numbers = Vec::new();
    for &n in numbers {
        let label = if n.is_nan() {
            "NaN".to_string()
        } else if n.is_infinite() {
            "Infinity".to_string()
        } else {
            format!("{n}")
        };
        js_numbers.push(match Id::from_f64(n) {
            Ok(id) => json!({"number": label, "expect": id.get().to_string()}),
            Err(e) => json!({"number": label, "error": e.code()}),
        });
    }
    json!({
        "_comment": "String forms. `encode`: for each `id` (decimal string), its `decimal`, `base32` (Crockford, \
            13 characters, upper case) and `base62` (11 characters, 0-9A-Za-z) forms. `parse`: reading `input` \
            in `format` gives `expect` (decimal string) or `error` (code); an unknown format name is an error \
            too. `js_numbers`: what the JavaScript bindings do with a `number` argument, written as JavaScript \
            source text (`NaN`, `Infinity`, `1e+300`): only safe integers are IDs, anything that may already \
            have been rounded is an error.",
        "encode": encode,
        "parse": parse,
        "js_numbers": js_numbers,
    })
}
