//! A test probe: leases a node value, issues IDs, prints them. The lease
//! tests spawn many of these as real processes.
//!
//! ```text
//! snowmint-lease-probe URL [--layout PRESET] [--fixed NAME=VALUE]... [--prefer SLOT]
//!     [--clock-offset-ms MS] [--clock-backwards POLICY] [--count N] [--interval-ms MS]
//!     [--until-error] [--run-ms MS] [--hold-until-file PATH] [--no-close]
//!     [--start-at-ms UNIX_MS]
//! ```
//!
//! Output, one line each: `slot N`, `id ID` per ID, `error CODE MESSAGE` when a
//! call fails, `reserved_end MS` and `hwm MS` at the end, `closed` after release.
//! Exit status 0, or 2 when the lease could not be had.
//!
//! `--start-at-ms` waits until that wall time before the claim: probes
//! started one after another claim at the same moment.
//!
//! `--run-ms MS` issues for MS milliseconds and goes on past errors (a store
//! that comes back lets the holder issue again): the first error of each run
//! of failed calls is printed, followed by `error_reserved_end MS` (the
//! generator's reservation end at that moment) and `error_hwm MS` (the `hwm`
//! the store last confirmed).

use std::io::Write;
use std::time::{Duration, Instant};

use snowmint::{Clock, Layout, Options, SystemClock};
use snowmint_lease::{LeaseUrl, LeasedGenerator};

/// The system clock moved by a fixed offset: a process whose clock is behind
/// or ahead, without touching the machine's clock.
struct OffsetClock(i64);

impl Clock for OffsetClock {
    fn now_ms(&self) -> u64 {
        SystemClock.now_ms().saturating_add_signed(self.0)
    }
    fn wait_until(&self, ms: u64) -> bool {
        SystemClock.wait_until(ms.saturating_add_signed(-self.0))
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .expect("usage: snowmint-lease-probe URL [options]");
    let mut layout = "twitter".to_string();
    let mut fixed: Vec<(String, u64)> = Vec::new();
    let (mut prefer, mut offset, mut count, mut interval) = (None, 0i64, 10u64, 0u64);
    let (mut until_error, mut hold, mut close) = (false, None, true);
    let mut run_ms: Option<u64> = None;
    let mut start_at_ms: Option<u64> = None;
    let mut options = Options::default();
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--layout" => layout = val(),
            "--fixed" => {
                let v = val();
                let (n, x) = v.split_once('=').expect("--fixed NAME=VALUE");
                fixed.push((n.to_string(), x.parse().expect("a number")));
            }
            "--prefer" => prefer = Some(val().parse().expect("a number")),
            "--clock-offset-ms" => offset = val().parse().expect("a number"),
            "--clock-backwards" => {
                options.clock_backwards = snowmint::ClockBackwards::parse(&val()).expect("a policy")
            }
            "--count" => count = val().parse().expect("a number"),
            "--interval-ms" => interval = val().parse().expect("a number"),
            "--until-error" => until_error = true,
            "--run-ms" => run_ms = Some(val().parse().expect("a number")),
            "--hold-until-file" => hold = Some(std::path::PathBuf::from(val())),
            "--no-close" => close = false,
            "--start-at-ms" => start_at_ms = Some(val().parse().expect("a number")),
            _ => panic!("unknown argument {a}"),
        }
    }
    let out = std::io::stdout();
    let mut out = out.lock();
    let url = match LeaseUrl::parse(&url) {
        Ok(u) => u,
        Err(e) => {
            writeln!(out, "error {} {e}", e.code()).unwrap();
            std::process::exit(2);
        }
    };
    let layout = Layout::preset(&layout).expect("a preset");
    let pairs: Vec<(&str, u64)> = fixed.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    if let Some(at) = start_at_ms {
        // Sleep most of the wait, spin the last 2 ms.
        let left = at.saturating_sub(SystemClock.now_ms());
        std::thread::sleep(Duration::from_millis(left.saturating_sub(2)));
        while SystemClock.now_ms() < at {}
    }
    let g = match LeasedGenerator::open_with(
        &url,
        layout,
        &pairs,
        options,
        prefer,
        OffsetClock(offset),
    ) {
        Ok(g) => g,
        Err(e) => {
            writeln!(out, "error {} {e}", e.code()).unwrap();
            std::process::exit(2);
        }
    };
    writeln!(out, "slot {}", g.slot()).unwrap();
    out.flush().unwrap();
    let mut issued = 0u64;
    let run_until = run_ms.map(|ms| Instant::now() + Duration::from_millis(ms));
    let mut failing = false;
    loop {
        match run_until {
            Some(t) if Instant::now() >= t => break,
            None if !until_error && issued >= count => break,
            _ => {}
        }
        match g.next_id() {
            Ok(id) => {
                writeln!(out, "id {}", id.get()).unwrap();
                issued += 1;
                failing = false;
            }
            Err(e) if run_until.is_some() => {
                if !failing {
                    writeln!(out, "error {} {e}", e.code()).unwrap();
                    let info = g.info();
                    let end = info.reserved_end_ms.unwrap_or(0);
                    writeln!(out, "error_reserved_end {end}").unwrap();
                    writeln!(out, "error_hwm {}", info.hwm_ms).unwrap();
                }
                failing = true;
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => {
                writeln!(out, "error {} {e}", e.code()).unwrap();
                break;
            }
        }
        out.flush().unwrap();
        if interval > 0 {
            std::thread::sleep(Duration::from_millis(interval));
        }
    }
    let info = g.info();
    writeln!(out, "reserved_end {}", info.reserved_end_ms.unwrap_or(0)).unwrap();
    writeln!(out, "hwm {}", info.hwm_ms).unwrap();
    out.flush().unwrap();
    if let Some(path) = hold {
        // Bounded: the tests create the file within seconds.
        let deadline = Instant::now() + Duration::from_secs(30);
        while !path.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    if close {
        match g.close() {
            Ok(()) => writeln!(out, "closed").unwrap(),
            Err(e) => writeln!(out, "error {} {e}", e.code()).unwrap(),
        }
    } else {
        std::mem::forget(g);
    }
}
