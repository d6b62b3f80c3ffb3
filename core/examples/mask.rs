//! Public IDs: a keyed permutation of a layout's IDs that hides their order
//! and time, and its inverse: `cargo run --example mask --features mask`.
use snowmint::{IdMask, Layout};

fn main() -> Result<(), snowmint::Error> {
    let layout = Layout::preset("twitter")?;
    // A real key comes from a secret store; 16 bytes: AES-128, 32: AES-256.
    let key = [7u8; 16];
    let mask = IdMask::new(layout, &key, b"users")?;
    let nodes = layout.nodes_from_pairs([("datacenter", 1), ("worker", 3)])?;
    for seq in 0..3 {
        let id = layout.compose(1_700_000_000_000, seq, &nodes)?;
        let public = mask.mask(id)?;
        assert_eq!(mask.unmask(public)?, id);
        println!("{id} -> {public}");
    }
    Ok(())
}
