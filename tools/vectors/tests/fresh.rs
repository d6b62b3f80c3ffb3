//! The checked-in vectors must be exactly what the builder writes today.

use std::path::PathBuf;

#[test]
fn checked_in_vectors_are_fresh() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../vectors");
    let mut stale = Vec::new();
    for (name, value) in snowmint_vectors::all() {
        let want = snowmint_vectors::render(&value);
        let have = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        if have != want {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "stale vectors {stale:?}: regenerate with `{}` and commit them",
        snowmint_vectors::REGEN
    );
}
