//! The `serde` feature: `Id` as a decimal string (or a number through
//! `snowmint::serde::as_number`), `Format`, `Layout` and `Parts`, with
//! serde_json. `cargo test -p snowmint --features serde` runs these.
#![cfg(feature = "serde")]

use serde::{Deserialize, Serialize};
use snowmint::{Format, Id, Layout};

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Row {
    id: Id,
    #[serde(with = "snowmint::serde::as_number")]
    number: Id,
    format: Format,
    layout: Layout,
}

#[test]
fn an_id_is_a_decimal_string_by_default_and_a_number_with_as_number() {
    let row = Row {
        id: Id::new(u64::MAX),
        number: Id::new(1541815603606036480),
        format: Format::Base32,
        layout: Layout::preset("twitter").unwrap(),
    };
    let json = serde_json::to_string(&row).unwrap();
    assert_eq!(
        json,
        r#"{"id":"18446744073709551615","number":1541815603606036480,"format":"base32","layout":"{\"epoch_ms\":1288834974657,\"time_unit_ms\":1,\"fields\":[[\"timestamp\",41],[\"datacenter\",5],[\"worker\",5],[\"sequence\",12]]}"}"#
    );
    assert_eq!(serde_json::from_str::<Row>(&json).unwrap(), row);
}

#[test]
fn an_id_reads_from_a_string_or_a_number() {
    for text in [
        r#""175928847299117063""#,
        "175928847299117063",
        r#""0175928847299117063""#,
    ] {
        let id: Id = serde_json::from_str(text).unwrap();
        assert_eq!(id.get(), 175928847299117063, "{text}");
    }
    // An exact float up to 2^53 is an ID; as_number reads strings too.
    assert_eq!(serde_json::from_str::<Id>("42.0").unwrap().get(), 42);
    #[derive(Deserialize)]
    struct N {
        #[serde(with = "snowmint::serde::as_number")]
        n: Id,
    }
    assert_eq!(
        serde_json::from_str::<N>(r#"{"n":"9"}"#).unwrap().n.get(),
        9
    );
    assert_eq!(serde_json::from_str::<N>(r#"{"n":9}"#).unwrap().n.get(), 9);
}

#[test]
fn bad_ids_fail_with_the_core_code() {
    for (text, code) in [
        (r#""oops""#, "invalid_id"),
        (r#""18446744073709551616""#, "invalid_id"),
        ("-1", "invalid_id"),
        ("1.5", "invalid_id"),
        ("9007199254740993.0", "invalid_id"),
        ("18446744073709551616", "invalid_id"),
    ] {
        let err = serde_json::from_str::<Id>(text).unwrap_err().to_string();
        assert!(err.contains(&format!("[{code}]")), "{text}: {err}");
    }
    let err = serde_json::from_str::<Id>("true").unwrap_err().to_string();
    assert!(
        err.contains("decimal string or a non-negative integer"),
        "{err}"
    );
}

#[test]
fn formats_and_layouts_by_name() {
    for f in [Format::Decimal, Format::Base32, Format::Base62] {
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(json, format!("\"{}\"", f.name()));
        assert_eq!(serde_json::from_str::<Format>(&json).unwrap(), f);
    }
    let err = serde_json::from_str::<Format>(r#""hex""#)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("[invalid_option]") || err.contains("[invalid_"),
        "{err}"
    );
    // A preset name or a descriptor; the output is the descriptor.
    for name in Layout::PRESETS {
        let l: Layout = serde_json::from_str(&format!("\"{name}\"")).unwrap();
        assert_eq!(l, Layout::preset(name).unwrap());
        let back: Layout = serde_json::from_str(&serde_json::to_string(&l).unwrap()).unwrap();
        assert_eq!(back, l);
    }
    let err = serde_json::from_str::<Layout>(
        r#""{\"epoch_ms\":0,\"fields\":[[\"timestamp\",37],[\"server\",20],[\"sequence\",16]]}""#,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("[invalid_layout]"), "{err}");
}

#[test]
fn parts_serialise_with_the_id_as_a_string() {
    let layout = Layout::preset("discord").unwrap();
    let parts = layout.decompose(175928847299117063u64).unwrap();
    assert_eq!(
        serde_json::to_value(parts).unwrap(),
        serde_json::json!({
            "id": "175928847299117063",
            "tick": 41944705796u64,
            "timestamp_ms": 1462015105796u64,
            "sequence": 7,
            "nodes": [1, 0],
        })
    );
}
