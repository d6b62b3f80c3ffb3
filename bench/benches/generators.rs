//! Criterion benchmarks: per-call cost of the thread-safe generators, decode
//! cost, batches, and the public-ID mask (mask/unmask per ID). `cargo bench -p snowmint-bench`.
//!
//! The Twitter-layout generators (snowmint's `twitter` preset, `snowflaked`,
//! `rs-snowflake`) are capped at 4,096 IDs per millisecond, so they are timed
//! in bursts under the cap (see `snowmint_bench::timed_bursts`); a plain loop
//! would report the cap (244 ns/ID), not the cost of a call. Sustained rates
//! and two-thread runs are in the `report` binary, which criterion does not
//! fit.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use snowmint::Layout;
use snowmint_bench::*;

fn config() -> Criterion {
    // Bursts wait for the next millisecond between them, so wall time is
    // many times the measured time: keep the measured time short.
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
}

fn per_call(c: &mut Criterion) {
    let mut g = c.benchmark_group("per_call");
    g.throughput(Throughput::Elements(1));

    let twitter = snowmint("twitter", &[3, 1], None, None);
    g.bench_function("snowmint/twitter/bursts", |b| {
        b.iter_custom(|iters| {
            timed_bursts(iters, |n| {
                for _ in 0..n {
                    black_box(snowmint_next(&twitter));
                }
            })
        })
    });

    let precise = snowmint_with("twitter", &[3, 2], None, None, PreciseClock);
    g.bench_function("snowmint/twitter-precise-clock/bursts", |b| {
        b.iter_custom(|iters| {
            timed_bursts(iters, |n| {
                for _ in 0..n {
                    black_box(snowmint_next(&precise));
                }
            })
        })
    });

    // 65,536 IDs per millisecond, and `borrow` lets it run ahead of the clock
    // should a fast machine exceed even that: never capped here.
    let mastodon = snowmint("mastodon", &[], Some("borrow:60000"), None);
    g.bench_function("snowmint/mastodon/loop", |b| {
        b.iter(|| snowmint_next(&mastodon))
    });

    let flaked = snowflaked_sync(1);
    g.bench_function("snowflaked/sync/bursts", |b| {
        b.iter_custom(|iters| {
            timed_bursts(iters, |n| {
                for _ in 0..n {
                    black_box(flaked.generate::<u64>());
                }
            })
        })
    });

    let mut rs = rs_snowflake(1, 1);
    g.bench_function("rs-snowflake/real_time_generate/bursts", |b| {
        b.iter_custom(|iters| {
            timed_bursts(iters, |n| {
                for _ in 0..n {
                    black_box(rs.real_time_generate());
                }
            })
        })
    });

    let rs_mutex = rs_snowflake_mutex(1, 2);
    g.bench_function("rs-snowflake/mutex/bursts", |b| {
        b.iter_custom(|iters| {
            timed_bursts(iters, |n| {
                for _ in 0..n {
                    black_box(rs_snowflake_mutex_next(&rs_mutex));
                }
            })
        })
    });
    g.finish();
}

fn decode(c: &mut Criterion) {
    let ids = twitter_ids(1024);
    let layout = Layout::preset("twitter").expect("preset");
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Elements(ids.len() as u64));
    g.bench_function("snowmint/decompose", |b| {
        b.iter(|| {
            black_box(&ids)
                .iter()
                .fold(0, |a, &id| a ^ snowmint_decode(&layout, id))
        })
    });
    g.bench_function("snowflaked/parts", |b| {
        b.iter(|| {
            black_box(&ids)
                .iter()
                .fold(0, |a, &id| a ^ snowflaked_decode(id))
        })
    });
    g.finish();
}

fn batch(c: &mut Criterion) {
    let mut g = c.benchmark_group("batch");
    g.throughput(Throughput::Elements(BURST));
    let mut out = vec![0u64; BURST as usize];

    let mastodon = snowmint("mastodon", &[], Some("borrow:60000"), None);
    g.bench_function("snowmint/mastodon/next_ids", |b| {
        b.iter(|| {
            mastodon.next_ids(&mut out).expect("batch");
            black_box(&out);
        })
    });

    let twitter = snowmint("twitter", &[4, 1], None, None);
    g.bench_function("snowmint/twitter/next_ids/bursts", |b| {
        b.iter_custom(|iters| {
            timed_bursts(iters * BURST, |n| {
                twitter.next_ids(&mut out[..n as usize]).expect("batch");
                black_box(&out);
            })
        })
    });
    g.finish();
}

fn mask(c: &mut Criterion) {
    let ids = twitter_ids(1024);
    let layout = Layout::preset("twitter").expect("preset");
    let key: Vec<u8> = (0u8..32).collect();
    let mut g = c.benchmark_group("mask");
    g.throughput(Throughput::Elements(ids.len() as u64));
    for (name, key) in [("aes128", &key[..16]), ("aes256", &key[..])] {
        let m = snowmint::IdMask::new(layout, key, b"orders").expect("mask");
        let public: Vec<u64> = ids
            .iter()
            .map(|&id| m.mask(id).expect("mask").get())
            .collect();
        g.bench_function(format!("snowmint/twitter/{name}/mask"), |b| {
            b.iter(|| {
                black_box(&ids)
                    .iter()
                    .fold(0, |a, &id| a ^ m.mask(id).expect("mask").get())
            })
        });
        g.bench_function(format!("snowmint/twitter/{name}/unmask"), |b| {
            b.iter(|| {
                black_box(&public)
                    .iter()
                    .fold(0, |a, &p| a ^ m.unmask(p).expect("unmask").get())
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = per_call, decode, batch, mask
}
criterion_main!(benches);
