//! Timings of the lease: `next_id` with a lease held against the same
//! generator without one (interleaved rounds in one run), the claim, the
//! renewal and the release on the file store.
//!
//! `cargo run --release -p snowmint-lease --example lease-bench [DIR]`
//! (DIR: the store directory, default a fresh one under the temp directory).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use snowmint::{Generator, Layout, Options, SystemClock};
use snowmint_lease::{ClaimRequest, FileStore, LeaseUrl, LeasedGenerator, SlotSpace, Store};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn ns_per_call(n: u32, mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_nanos() as f64 / f64::from(n)
}

fn main() {
    let dir = std::env::args().nth(1).map_or_else(
        || std::env::temp_dir().join(format!("snowmint-lease-bench-{}", std::process::id())),
        std::path::PathBuf::from,
    );
    let url = LeaseUrl::parse(&format!("file:{}", dir.display())).unwrap();

    // next_id: a 20-bit sequence (1M IDs per ms) so that neither side waits
    // for the clock, and twitter (4,096 per ms), where both do.
    let wide = Layout::new(
        1288834974657,
        1,
        &[
            ("timestamp", 39),
            ("datacenter", 1),
            ("worker", 4),
            ("sequence", 20),
        ],
    )
    .unwrap();
    for (name, layout, n) in [
        ("wide", wide, 2_000_000u32),
        ("twitter", Layout::preset("twitter").unwrap(), 400_000),
    ] {
        let leased = LeasedGenerator::open_with(
            &url,
            layout,
            &[("datacenter", 1)],
            Options::default(),
            None,
            SystemClock,
        )
        .unwrap();
        // The same generator without a lease: the same layout and options, another node value.
        let plain = Generator::new(
            layout,
            layout
                .nodes_from_pairs([("datacenter", 0), ("worker", 0)])
                .unwrap(),
            Options::default(),
        )
        .unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..2 {
            ns_per_call(n, || {
                black_box(plain.next_id().unwrap());
            });
            ns_per_call(n, || {
                black_box(leased.next_id().unwrap());
            });
        }
        for _ in 0..9 {
            a.push(ns_per_call(n, || {
                black_box(plain.next_id().unwrap());
            }));
            b.push(ns_per_call(n, || {
                black_box(leased.next_id().unwrap());
            }));
        }
        let (a, b) = (median(a), median(b));
        println!(
            "next_id {name:8} without lease {a:7.2} ns  with lease {b:7.2} ns  ratio {:.3}",
            b / a
        );
        leased.close().unwrap();
    }

    // Claim (skew check, claim, generator) and release through the driver.
    let layout = Layout::preset("twitter").unwrap();
    let (mut open, mut close) = (Vec::new(), Vec::new());
    for _ in 0..30 {
        let t = Instant::now();
        let g = LeasedGenerator::open_with(
            &url,
            layout,
            &[("datacenter", 2)],
            Options::default(),
            None,
            SystemClock,
        )
        .unwrap();
        open.push(t.elapsed().as_secs_f64() * 1e6);
        let t = Instant::now();
        g.close().unwrap();
        close.push(t.elapsed().as_secs_f64() * 1e6);
    }
    println!(
        "open (claim) median {:8.1} us   close (release) median {:8.1} us",
        median(open),
        median(close)
    );

    // The store calls alone.
    let store = Arc::new(FileStore::new(&dir));
    let space = SlotSpace::new(layout, &[("datacenter", 3)], None).unwrap();
    let req = ClaimRequest {
        prefer: None,
        ttl_ms: 30_000,
        window_ms: 20_000,
    };
    let claim = store.claim(&space, &req).unwrap();
    let renew: Vec<f64> = (0..50)
        .map(|_| {
            let t = Instant::now();
            store.renew(&space, &claim.holder, 30_000, 20_000).unwrap();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    store
        .release(&space, &claim.holder, claim.prev_hwm_ms)
        .unwrap();
    println!(
        "FileStore::renew median {:8.1} us (per renewal, every renew_ms = 10 s by default)",
        median(renew)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
