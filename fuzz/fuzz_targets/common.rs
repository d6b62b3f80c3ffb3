//! Checks every target applies to an error and a layout.

use snowmint::{Error, ErrorClass, Layout};

/// Every error renders, has a code from the table and a class, and its
/// message ends with the code; `write_message` writes the same text as
/// `Display`.
pub fn check_error(e: &Error) -> &'static str {
    let i = e.code_index();
    assert!(
        i < Error::ALL_CODES.len(),
        "code_index {i} out of the table: {e:?}"
    );
    let code = e.code();
    assert_eq!(code, Error::ALL_CODES[i]);
    let text = e.to_string();
    assert!(!text.is_empty(), "{e:?} renders as nothing");
    assert!(
        text.ends_with(&format!(" [{code}]")),
        "{e:?}: message {text:?} does not end with its code"
    );
    let mut written = String::new();
    e.write_message(&mut written).unwrap();
    assert_eq!(written, text);
    let _: ErrorClass = e.class();
    code
}

/// A layout that was accepted is well formed, its canonical JSON reads back
/// to an equal layout, and a preset name it reports names it.
#[allow(dead_code)]
pub fn check_layout(l: &Layout) {
    let json = l.to_json();
    let back =
        Layout::from_json(&json).unwrap_or_else(|e| panic!("{json} does not read back: {e}"));
    assert_eq!(&back, l, "{json} reads back to a different layout");
    assert_eq!(Layout::parse(&json).as_ref(), Ok(l));
    assert_eq!(back.to_json(), json, "the canonical JSON is not stable");
    let mut via_writer = String::new();
    l.write_json(&mut via_writer).unwrap();
    assert_eq!(via_writer, json);
    if let Some(name) = l.preset_name() {
        assert_eq!(Layout::preset(name).as_ref(), Ok(l));
    }
    let fields = l.fields();
    assert!(fields.len() >= 2 && fields.len() <= snowmint::MAX_FIELDS);
    assert_eq!(fields[0].name(), "timestamp");
    let bits: u32 = fields.iter().map(|f| f.bits()).sum();
    assert_eq!(bits, l.total_bits());
    assert!(bits <= 64);
    assert_eq!(l.node_count(), fields.len() - 2);
    let max = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    assert_eq!(l.max_id(), max);
    // Fields tile the bits from the top, without gaps or overlaps.
    let mut shift = bits;
    for f in fields {
        shift -= f.bits();
        assert_eq!(f.shift(), shift, "{json}: field {} shift", f.name());
    }
    assert_eq!(shift, 0);
}

/// Decoding `id` then composing its parts gives `id` back.
#[allow(dead_code)]
pub fn check_roundtrip(l: &Layout, id: u64) {
    match l.decompose(id) {
        Ok(p) => {
            assert_eq!(p.id().get(), id);
            assert_eq!(p.nodes().len(), l.node_count());
            let nodes = l
                .nodes_from_values(p.nodes())
                .unwrap_or_else(|e| panic!("decoded nodes {:?} refused: {e}", p.nodes()));
            // Every layout ends its time field by 2^53 ms, so every decoded
            // time composes again.
            let back = l
                .compose(p.timestamp_ms(), p.sequence(), &nodes)
                .unwrap_or_else(|e| panic!("{l:?}: compose(decompose({id})) failed: {e}"));
            assert_eq!(back, id, "{l:?}: compose(decompose({id}))");
        }
        Err(e) => {
            assert!(id > l.max_id(), "{l:?}: decompose({id}) failed: {e}");
            assert_eq!(check_error(&e), "invalid_id");
        }
    }
}
