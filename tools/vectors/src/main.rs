//! Writes `vectors/*.json`. Run from anywhere: `cargo run -p snowmint-vectors`.

use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../vectors");
    std::fs::create_dir_all(&dir).expect("create vectors/");
    for (name, value) in snowmint_vectors::all() {
        let path = dir.join(name);
        std::fs::write(&path, snowmint_vectors::render(&value))
            .unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        println!("wrote vectors/{name}");
    }
}
