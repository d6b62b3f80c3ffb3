//! `vectors/codes.json`: every error code, in the core's order.

use serde_json::{json, Value};

/// The contents of `vectors/codes.json`.
pub(crate) fn codes() -> Value {
    json!({
        "_comment": "Every error code, in a fixed order. Each binding checks that it maps every one of them \
            (to an exception class, an Error code, a C status).",
        "codes": snowmint::Error::ALL_CODES,
    })
}
