//! Timings of the lease, per store: `next_id` with a lease held against the
//! same generator without one (interleaved rounds in one run); the claim and
//! the release through the driver; one holder's renewal; and many holders
//! renewing at once (throughput, latency, and the store server's CPU time per
//! renewal, from which the cost of 1,000 holders renewing every 10 s follows).
//!
//! ```text
//! cargo run --release -p snowmint-lease --features stores --example lease-bench -- [URL]...
//! ```
//!
//! URL: a store without a query (`file:/tmp/x`, `postgres://postgres@127.0.0.1/test`,
//! `mysql://...`, `redis://...`, `etcd://...`,
//! `zookeeper://...`); default a fresh directory. Each
//! run works in a namespace of its own. `bench/stores/run.sh` runs it on the
//! five network stores and the file store. The server's CPU time is the sum of
//! user + system time over the processes named like the server
//! (`postgres`, `mariadbd`/`mysqld`, `redis-server`, `etcd`, `java`) in /proc, read
//! while the holders' connections are open.

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use snowmint::{Generator, Layout, Options, SystemClock};
use snowmint_lease::{ClaimRequest, LeaseUrl, LeasedGenerator, SlotSpace};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() - 1) as f64 * p).round() as usize]
}

static FIRST_ERROR: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

fn ns_per_call(n: u32, mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_nanos() as f64 / f64::from(n)
}

/// User + system CPU seconds of every process whose name is one of `names`.
fn server_cpu_s(names: &[&str]) -> Option<f64> {
    if names.is_empty() {
        return None;
    }
    let tick = 100.0; // USER_HZ on Linux
    let mut total = 0u64;
    let mut found = false;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        if !names.contains(&&stat[open + 1..close]) {
            continue;
        }
        let rest: Vec<&str> = stat[close + 2..].split(' ').collect();
        // Fields 14 and 15 of /proc/PID/stat (utime, stime); `rest` starts at field 3.
        let (Ok(u), Ok(s)) = (rest[11].parse::<u64>(), rest[12].parse::<u64>()) else {
            continue;
        };
        total += u + s;
        found = true;
    }
    found.then(|| total as f64 / tick)
}

fn server_names(kind: &str) -> &'static [&'static str] {
    match kind {
        "postgres" => &["postgres"],
        "mysql" => &["mariadbd", "mysqld"],
        "redis" => &["redis-server"],
        "etcd" => &["etcd"],
        // The JVM: every java process (on the bench machine, only the
        // throwaway ZooKeeper servers run on it).
        "zookeeper" => &["java"],
        _ => &[],
    }
}

fn main() {
    let mut urls: Vec<String> = std::env::args().skip(1).collect();
    let dir = std::env::temp_dir().join(format!("snowmint-lease-bench-{}", std::process::id()));
    if urls.is_empty() {
        urls.push(format!("file:{}", dir.display()));
    }
    let holders: usize = std::env::var("LEASE_BENCH_HOLDERS")
        .ok()
        .map_or(48, |v| v.parse().expect("LEASE_BENCH_HOLDERS: a number"));
    let namespace = format!("bench-{}-{}", std::process::id(), SystemClock.precise_ms());
    for base in &urls {
        assert!(!base.contains('?'), "{base}: give the URL without a query");
        let url = LeaseUrl::parse(&format!("{base}?namespace={namespace}")).unwrap();
        println!("\n## {} ({})", url.store.describe(), url.store.kind());
        bench_store(&url, holders);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn bench_store(url: &LeaseUrl, holders: usize) {
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
            url,
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

    // Claim (connect, skew check, claim, generator) and release through the driver.
    let layout = Layout::preset("twitter").unwrap();
    let (mut open, mut close) = (Vec::new(), Vec::new());
    for _ in 0..30 {
        let t = Instant::now();
        let g = LeasedGenerator::open_with(
            url,
            layout,
            &[("datacenter", 2)],
            Options::default(),
            None,
            SystemClock,
        )
        .unwrap();
        open.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        g.close().unwrap();
        close.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!(
        "open (connect + claim) median {:7.3} ms   close (release) median {:7.3} ms",
        median(open),
        median(close)
    );

    // The store calls alone, on one open connection.
    let store = url.open_store().unwrap();
    let ns = url.settings.namespace.as_deref();
    let space = SlotSpace::new(layout, &[("datacenter", 3)], ns).unwrap();
    let req = ClaimRequest::new(None, 30_000, 20_000);
    let claims: Vec<f64> = (0..30)
        .map(|_| {
            let t = Instant::now();
            let c = store.claim(&space, &req).unwrap();
            let ms = t.elapsed().as_secs_f64() * 1e3;
            store.release(&space, &c.holder, c.prev_hwm_ms).unwrap();
            ms
        })
        .collect();
    let claim = store.claim(&space, &req).unwrap();
    let renew: Vec<f64> = (0..100)
        .map(|_| {
            let t = Instant::now();
            store.renew(&space, &claim.holder, 30_000, 20_000).unwrap();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    store
        .release(&space, &claim.holder, claim.prev_hwm_ms)
        .unwrap();
    println!(
        "Store::claim median {:7.3} ms   Store::renew median {:7.3} ms (one holder, connected)",
        median(claims),
        median(renew)
    );
    many_holders(url, holders);
}

/// `holders` simulated holders, each with its own store connection and slot
/// (in a 10-bit space), renew flat out for a few seconds.
fn many_holders(url: &LeaseUrl, holders: usize) {
    let layout = Layout::preset("leaf").unwrap();
    let ns = url.settings.namespace.as_deref();
    let space = Arc::new(SlotSpace::new(layout, &[], ns).unwrap());
    let req = ClaimRequest::new(None, 60_000, 20_000);
    let run = Duration::from_secs(3);
    let barrier = Arc::new(Barrier::new(holders + 1));
    let workers: Vec<_> = (0..holders)
        .map(|_| {
            let (store, space, barrier) =
                (url.open_store().unwrap(), space.clone(), barrier.clone());
            std::thread::spawn(move || {
                let claim = store.claim(&space, &req).unwrap();
                barrier.wait(); // every holder connected and claimed
                barrier.wait(); // the CPU reading is taken: go
                let start = Instant::now();
                let mut lat = Vec::new();
                while start.elapsed() < run {
                    let t = Instant::now();
                    let r = store.renew(&space, &claim.holder, 60_000, 20_000);
                    // A failed renewal counts as NaN; the first is reported.
                    lat.push(match r {
                        Ok(_) => t.elapsed().as_secs_f64() * 1e3,
                        Err(e) => {
                            FIRST_ERROR.lock().unwrap().get_or_insert(format!("{e:?}"));
                            f64::NAN
                        }
                    });
                }
                barrier.wait(); // done: the CPU reading is taken
                barrier.wait();
                store
                    .release(&space, &claim.holder, claim.prev_hwm_ms)
                    .unwrap();
                lat
            })
        })
        .collect();
    let names = server_names(url.store.kind());
    barrier.wait();
    let cpu0 = server_cpu_s(names);
    let t = Instant::now();
    barrier.wait();
    barrier.wait();
    let wall = t.elapsed().as_secs_f64();
    let cpu1 = server_cpu_s(names);
    barrier.wait();
    let lat: Vec<f64> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    let failed = lat.iter().filter(|x| x.is_nan()).count();
    if let Some(e) = FIRST_ERROR.lock().unwrap().take() {
        println!("first failed renewal: {e}");
    }
    let lat: Vec<f64> = lat.into_iter().filter(|x| !x.is_nan()).collect();
    let n = lat.len() as f64;
    let per_s = n / wall;
    print!(
        "{holders} holders renewing flat out: {per_s:8.0} renewals/s ({failed} failed), latency median {:.2} ms, p99 {:.2} ms",
        median(lat.clone()),
        percentile(lat, 0.99)
    );
    match (cpu0, cpu1) {
        (Some(a), Some(b)) => {
            let us = (b - a) / n * 1e6;
            // 1,000 holders renewing every 10 s: 100 renewals per second.
            println!(
                "; server CPU {us:.1} us per renewal -> 1,000 holders every 10 s: {:.2}% of one core",
                us * 100.0 / 1e6 * 100.0
            );
        }
        _ => println!(
            "; 1,000 holders every 10 s need 100 renewals/s: {:.1}% of this throughput",
            100.0 / per_s * 100.0
        ),
    }
}
