//! Mints IDs with the thread-safe generator on the system clock, from four
//! threads sharing one generator: `cargo run --example generate`.
use snowmint::{Generator, Layout, Options};

fn main() -> Result<(), snowmint::Error> {
    let layout = Layout::preset("twitter")?;
    let nodes = layout.nodes_from_pairs([("datacenter", 1), ("worker", 3)])?;
    let generator = Generator::new(layout, nodes, Options::default())?;
    let mut ids: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| s.spawn(|| (0..10_000).map(|_| generator.next_id().map(u64::from))))
            .map(|h| h.join().unwrap().collect::<Result<Vec<_>, _>>())
            .collect();
        handles
            .into_iter()
            .collect::<Result<Vec<_>, _>>()
            .map(|v| v.concat())
    })?;
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n, "no ID twice");
    println!(
        "{n} distinct IDs from 4 threads, first {} last {}",
        ids[0],
        ids[n - 1]
    );
    Ok(())
}
