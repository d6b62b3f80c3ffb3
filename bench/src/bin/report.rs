//! Measures snowmint's thread-safe generator against `snowflaked` and
//! `rs-snowflake` in one run and prints markdown tables of medians over
//! several repeats, with ratios against the peers.
//!
//! `cargo run --release -p snowmint-bench --bin report [-- --repeats 5 --seconds 1 --bursts 300]`
//!
//! Each repeat measures every workload once, in a fixed order, so that noise
//! from other processes (the benchmark machines are shared) lands on all of
//! them; a ratio is computed within each repeat and the median ratio is
//! reported.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use snowmint::{Iso8601, Layout};
use snowmint_bench::*;

struct Args {
    repeats: usize,
    seconds: f64,
    bursts: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        repeats: 5,
        seconds: 1.0,
        bursts: 300,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = || format!("bad value for {flag}: {value}");
        match flag.as_str() {
            "--repeats" => a.repeats = value.parse().map_err(|_| bad())?,
            "--seconds" => a.seconds = value.parse().map_err(|_| bad())?,
            "--bursts" => a.bursts = value.parse().map_err(|_| bad())?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if a.repeats == 0 || a.bursts == 0 || !a.seconds.is_finite() || a.seconds <= 0.0 {
        return Err("repeats, bursts and seconds must be positive".into());
    }
    Ok(a)
}

/// Named series of one value per repeat, in the order first recorded.
#[derive(Default)]
struct Series(Vec<(&'static str, Vec<f64>)>);

impl Series {
    fn add(&mut self, name: &'static str, v: f64) {
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some((_, vs)) => vs.push(v),
            None => self.0.push((name, vec![v])),
        }
    }
    fn get(&self, name: &str) -> &[f64] {
        self.0
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_slice())
            .unwrap_or(&[])
    }
    /// Median of the per-repeat ratios a/b.
    fn ratio(&self, a: &str, b: &str) -> f64 {
        let r: Vec<f64> = self
            .get(a)
            .iter()
            .zip(self.get(b))
            .map(|(x, y)| x / y)
            .collect();
        median(&r)
    }
}

fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let m = s.len() / 2;
    if s.len() % 2 == 1 {
        s[m]
    } else {
        (s[m - 1] + s[m]) / 2.0
    }
}

fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

// Names of the series (one per workload).
const PC_TWITTER: &str = "snowmint `twitter`, `next_id`, bursts";
const PC_PRECISE: &str = "snowmint `twitter`, `next_id`, precise clock per call, bursts";
const PC_MASTODON: &str = "snowmint `mastodon` (16-bit sequence), `next_id`, loop";
const PC_FLAKED: &str = "snowflaked `sync::Generator::generate`, bursts";
const PC_RS: &str = "rs-snowflake `real_time_generate` (`&mut`, not thread-safe), bursts";
const PC_RS_MUTEX: &str = "rs-snowflake in a `Mutex`, bursts";

const SUS_DEFAULT: &str = "snowmint `twitter`, default options";
const SUS_ZERO: &str = "snowmint `twitter`, `sequence_start: zero`";
const SUS_FLAKED: &str = "snowflaked `sync::Generator`";
const SUS_RS: &str = "rs-snowflake in a `Mutex`";

const T1_TWITTER: &str = "snowmint `twitter` 1 thread";
const T2_TWITTER: &str = "snowmint `twitter` 2 threads";
const T1_MASTODON: &str = "snowmint `mastodon` 1 thread";
const T2_MASTODON: &str = "snowmint `mastodon` 2 threads";
const T1_FLAKED: &str = "snowflaked 1 thread";
const T2_FLAKED: &str = "snowflaked 2 threads";
const T1_ATOMIC: &str = "reference: bare `AtomicU64::fetch_add` 1 thread";
const T2_ATOMIC: &str = "reference: bare `AtomicU64::fetch_add` 2 threads";
const T1_RS: &str = "rs-snowflake `Mutex` 1 thread";
const T2_RS: &str = "rs-snowflake `Mutex` 2 threads";

const DEC_SNOWMINT: &str = "snowmint `Layout::decompose` (`twitter`)";
const DEC_FLAKED: &str = "snowflaked `Snowflake::{timestamp,instance,sequence}`";

const BATCH_MASTODON: &str = "snowmint `mastodon`, `next_ids` of 1000, loop";
const BATCH_TWITTER: &str = "snowmint `twitter`, `next_ids` of 1000, bursts";

fn measure(args: &Args) -> Series {
    let mut s = Series::default();
    let dur = Duration::from_secs_f64(args.seconds);

    // Each configuration has its own node values: equal values would share
    // one state (by design), mixing the workloads.
    let twitter = snowmint("twitter", &[5, 1], None, None);
    let precise = snowmint_with("twitter", &[5, 2], None, None, PreciseClock);
    // `borrow` lets the generator run ahead of the clock should one thread
    // ever exceed 65,536 IDs per millisecond: the uncapped case.
    let mastodon = snowmint("mastodon", &[], Some("borrow:600000"), None);
    let flaked = snowflaked_sync(7);
    let mut rs = rs_snowflake(7, 1);
    let rs_mutex = rs_snowflake_mutex(7, 2);

    let sus_default = snowmint("twitter", &[6, 1], None, None);
    let sus_zero = snowmint("twitter", &[6, 2], None, Some("zero"));
    let sus_flaked = snowflaked_sync(8);
    let sus_rs = rs_snowflake_mutex(8, 1);

    let thr_twitter = snowmint("twitter", &[9, 1], None, None);
    let thr_flaked = snowflaked_sync(9);
    let thr_rs = rs_snowflake_mutex(9, 1);
    let counter = AtomicU64::new(0);

    let batch_twitter = snowmint("twitter", &[10, 1], None, None);
    let mut out = vec![0u64; BURST as usize];

    let ids = twitter_ids(1024);
    let layout = Layout::preset("twitter").expect("preset");

    for r in 0..args.repeats {
        eprintln!("repeat {}/{}", r + 1, args.repeats);
        let b = args.bursts;

        // 1. Per-call cost under the cap.
        s.add(
            PC_TWITTER,
            burst_ns_per_id(b, |n| {
                for _ in 0..n {
                    black_box(snowmint_next(&twitter));
                }
            }),
        );
        s.add(
            PC_PRECISE,
            burst_ns_per_id(b, |n| {
                for _ in 0..n {
                    black_box(snowmint_next(&precise));
                }
            }),
        );
        s.add(
            PC_MASTODON,
            loop_ns_per_id(b * BURST, || snowmint_next(&mastodon)),
        );
        s.add(
            PC_FLAKED,
            burst_ns_per_id(b, |n| {
                for _ in 0..n {
                    black_box(flaked.generate::<u64>());
                }
            }),
        );
        s.add(
            PC_RS,
            burst_ns_per_id(b, |n| {
                for _ in 0..n {
                    black_box(rs.real_time_generate());
                }
            }),
        );
        s.add(
            PC_RS_MUTEX,
            burst_ns_per_id(b, |n| {
                for _ in 0..n {
                    black_box(rs_snowflake_mutex_next(&rs_mutex));
                }
            }),
        );

        // 2. Sustained rate of the Twitter layout, one thread.
        s.add(SUS_DEFAULT, rate(1, dur, || snowmint_next(&sus_default)));
        s.add(SUS_ZERO, rate(1, dur, || snowmint_next(&sus_zero)));
        s.add(SUS_FLAKED, rate(1, dur, || sus_flaked.generate::<u64>()));
        s.add(SUS_RS, rate(1, dur, || rs_snowflake_mutex_next(&sus_rs)));

        // 3. One thread vs two threads on one generator.
        s.add(T1_TWITTER, rate(1, dur, || snowmint_next(&thr_twitter)));
        s.add(T2_TWITTER, rate(2, dur, || snowmint_next(&thr_twitter)));
        s.add(T1_MASTODON, rate(1, dur, || snowmint_next(&mastodon)));
        s.add(T2_MASTODON, rate(2, dur, || snowmint_next(&mastodon)));
        // The hardware's floor for "one shared word, two cores": a counter
        // that cannot fail its update (a compare-and-swap can, and retries).
        s.add(
            T1_ATOMIC,
            rate(1, dur, || counter.fetch_add(1, Ordering::Relaxed)),
        );
        s.add(
            T2_ATOMIC,
            rate(2, dur, || counter.fetch_add(1, Ordering::Relaxed)),
        );
        s.add(T1_FLAKED, rate(1, dur, || thr_flaked.generate::<u64>()));
        s.add(T2_FLAKED, rate(2, dur, || thr_flaked.generate::<u64>()));
        s.add(T1_RS, rate(1, dur, || rs_snowflake_mutex_next(&thr_rs)));
        s.add(T2_RS, rate(2, dur, || rs_snowflake_mutex_next(&thr_rs)));

        // 4. Decode.
        let loops = 2000;
        let n = (loops * ids.len()) as f64;
        let t = Instant::now();
        for _ in 0..loops {
            black_box(
                black_box(&ids)
                    .iter()
                    .fold(0, |a, &id| a ^ snowmint_decode(&layout, id)),
            );
        }
        s.add(DEC_SNOWMINT, t.elapsed().as_nanos() as f64 / n);
        let t = Instant::now();
        for _ in 0..loops {
            black_box(
                black_box(&ids)
                    .iter()
                    .fold(0, |a, &id| a ^ snowflaked_decode(id)),
            );
        }
        s.add(DEC_FLAKED, t.elapsed().as_nanos() as f64 / n);

        // 5. Batches.
        let t = Instant::now();
        for _ in 0..b {
            mastodon.next_ids(&mut out).expect("batch");
            black_box(&out);
        }
        s.add(
            BATCH_MASTODON,
            t.elapsed().as_nanos() as f64 / (b * BURST) as f64,
        );
        s.add(
            BATCH_TWITTER,
            burst_ns_per_id(b, |n| {
                batch_twitter
                    .next_ids(&mut out[..n as usize])
                    .expect("batch");
                black_box(&out);
            }),
        );
    }
    s
}

fn table(s: &Series, title: &str, unit: &str, names: &[&str], scale: f64, digits: usize) {
    println!("**{title}**\n");
    println!("| workload | median {unit} | min | max |");
    println!("|---|---:|---:|---:|");
    for name in names {
        let v: Vec<f64> = s.get(name).iter().map(|x| x / scale).collect();
        let (lo, hi) = min_max(&v);
        println!(
            "| {name} | {:.d$} | {:.d$} | {:.d$} |",
            median(&v),
            lo,
            hi,
            d = digits
        );
    }
    println!();
}

fn ratios(s: &Series, rows: &[(&str, &str, &str, &str)]) {
    println!("| ratio (median of per-repeat ratios) | value | target | met |");
    println!("|---|---:|---|---|");
    for (label, a, b, target) in rows {
        let r = s.ratio(a, b);
        let met = match *target {
            t if t.starts_with("<= ") => t[3..].parse::<f64>().map(|x| r <= x).ok(),
            t if t.starts_with(">= ") => t[3..].parse::<f64>().map(|x| r >= x).ok(),
            _ => None,
        };
        let met = match met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "",
        };
        println!("| {label} | {r:.3} | {target} | {met} |");
    }
    println!();
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("report: {e}\nusage: report [--repeats N] [--seconds S] [--bursts B]");
            std::process::exit(2);
        }
    };
    let started = Iso8601(wall_ms());
    let load_before = loadavg();
    let s = measure(&args);
    let load_after = loadavg();
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let passed: Vec<String> = std::env::args().skip(1).collect();
    println!(
        "Command: `cargo run --release -p snowmint-bench --bin report{}{}`\n",
        if passed.is_empty() { "" } else { " -- " },
        passed.join(" ")
    );

    println!(
        "Run {started} on {cpus} CPUs ({}), load average {load_before} before, \
         {load_after} after. Medians of {} repeats; rates over {} s each; bursts: {} \
         bursts of {} IDs, each starting in a new millisecond, only the bursts timed.\n",
        cpu_model(),
        args.repeats,
        args.seconds,
        args.bursts,
        BURST
    );

    table(
        &s,
        "1. Per-call cost, single thread, not capped by the sequence",
        "ns/ID",
        &[
            PC_TWITTER,
            PC_MASTODON,
            PC_PRECISE,
            PC_FLAKED,
            PC_RS,
            PC_RS_MUTEX,
        ],
        1.0,
        1,
    );
    ratios(
        &s,
        &[
            (
                "snowmint `twitter` / snowflaked",
                PC_TWITTER,
                PC_FLAKED,
                "<= 0.6",
            ),
            (
                "snowmint `mastodon` / snowflaked",
                PC_MASTODON,
                PC_FLAKED,
                "<= 0.6",
            ),
            (
                "snowmint `twitter`, precise clock / snowflaked",
                PC_PRECISE,
                PC_FLAKED,
                "",
            ),
            (
                "snowmint `twitter` / rs-snowflake `&mut`",
                PC_TWITTER,
                PC_RS,
                "",
            ),
            (
                "snowmint `twitter` / rs-snowflake `Mutex`",
                PC_TWITTER,
                PC_RS_MUTEX,
                "",
            ),
        ],
    );

    table(
        &s,
        "2. Sustained rate, Twitter layout, 1 thread (cap 4,096,000 IDs/s)",
        "M IDs/s",
        &[SUS_DEFAULT, SUS_ZERO, SUS_FLAKED, SUS_RS],
        1e6,
        3,
    );
    println!("| share of the cap | median | best repeat | target (median) | met |");
    println!("|---|---:|---:|---|---|");
    for name in [SUS_DEFAULT, SUS_ZERO, SUS_FLAKED, SUS_RS] {
        let v = s.get(name);
        let c = median(v) / TWITTER_CAP_PER_S;
        let best = min_max(v).1 / TWITTER_CAP_PER_S;
        let (target, met) = if name.starts_with("snowmint") {
            (">= 99%", if c >= 0.99 { "yes" } else { "**no**" })
        } else {
            ("", "")
        };
        println!(
            "| {name} | {:.2}% | {:.2}% | {target} | {met} |",
            c * 100.0,
            best * 100.0
        );
    }
    println!();
    ratios(
        &s,
        &[
            ("snowmint default / snowflaked", SUS_DEFAULT, SUS_FLAKED, ""),
            ("snowmint `zero` / snowflaked", SUS_ZERO, SUS_FLAKED, ""),
        ],
    );

    table(
        &s,
        "3. One generator shared by 2 threads vs 1 thread (total)",
        "M IDs/s",
        &[
            T1_TWITTER,
            T2_TWITTER,
            T1_MASTODON,
            T2_MASTODON,
            T1_ATOMIC,
            T2_ATOMIC,
            T1_FLAKED,
            T2_FLAKED,
            T1_RS,
            T2_RS,
        ],
        1e6,
        3,
    );
    ratios(
        &s,
        &[
            (
                "snowmint `twitter` (capped): 2 threads / 1",
                T2_TWITTER,
                T1_TWITTER,
                ">= 0.99",
            ),
            (
                "snowmint `mastodon` (uncapped): 2 threads / 1",
                T2_MASTODON,
                T1_MASTODON,
                ">= 1.0",
            ),
            (
                "reference `fetch_add`: 2 threads / 1",
                T2_ATOMIC,
                T1_ATOMIC,
                "",
            ),
            ("snowflaked: 2 threads / 1", T2_FLAKED, T1_FLAKED, ""),
            ("rs-snowflake `Mutex`: 2 threads / 1", T2_RS, T1_RS, ""),
        ],
    );

    table(
        &s,
        "4. Decode, per ID",
        "ns/ID",
        &[DEC_SNOWMINT, DEC_FLAKED],
        1.0,
        2,
    );
    ratios(
        &s,
        &[(
            "snowmint decompose / snowflaked parts",
            DEC_SNOWMINT,
            DEC_FLAKED,
            "",
        )],
    );
    println!("rs-snowflake has no decoder.\n");

    table(
        &s,
        "5. Batches (`next_ids`), per ID",
        "ns/ID",
        &[BATCH_MASTODON, BATCH_TWITTER],
        1.0,
        2,
    );
    ratios(
        &s,
        &[
            (
                "`mastodon` `next_ids` / `next_id`",
                BATCH_MASTODON,
                PC_MASTODON,
                "",
            ),
            (
                "`twitter` `next_ids` / `next_id` (bursts)",
                BATCH_TWITTER,
                PC_TWITTER,
                "",
            ),
        ],
    );
}
