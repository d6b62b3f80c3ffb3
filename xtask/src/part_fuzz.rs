//! The `fuzz` part: coverage-guided fuzzing on the stable toolchain
//! (cargo-fuzz with `--sanitizer none`: no -Z flags, no nightly). Builds
//! every target (and lints the fuzz crate as it does), replays the
//! regression inputs (fuzz/regressions/TARGET/), then fuzzes each target for
//! a bounded time and fails if any finds a crash, a failed property, a hang
//! or a memory blow-up.
//!
//! The test command's run is a smoke test (4 s per target: the corpora
//! replayed, then new inputs); the release check's `fuzz` part, which CI
//! runs, is the campaign (30 s per target).
//!
//! ```text
//! cargo xtask test fuzz                               4 s per target, two at once
//! cargo xtask release-check fuzz                      30 s per target
//! SNOWMINT_FUZZ_SECONDS=720 cargo xtask test fuzz     a longer campaign
//! SNOWMINT_FUZZ_JOBS=1 cargo xtask test fuzz          one target at a time
//! SNOWMINT_FUZZ_TARGETS="id layout" cargo xtask test fuzz   only some targets
//! ```
//!
//! The committed seed corpus (fuzz/corpus/TARGET/) is read, never written:
//! new inputs go to target/fuzz/corpus/TARGET/, kept between runs so a
//! campaign can go on where the last one stopped; crashes to
//! target/fuzz/artifacts/TARGET/.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::step::{mkdir, Part};
use crate::tools::{cargo_tool, host_triple, Source};

const TARGETS: [&str; 8] = [
    "layout",
    "id",
    "policy",
    "value",
    "c_abi",
    "thrift",
    "server_query",
    "server_config",
];

/// -timeout: one input taking longer is a hang; -rss_limit_mb: a blow-up.
const FLAGS: [&str; 3] = ["-timeout=10", "-rss_limit_mb=2048", "-print_final_stats=1"];

/// The test command's fuzz part: 4 s per target.
pub fn run(p: &Part) -> Result<(), String> {
    fuzz(p, 4)
}

/// The release check's: 30 s per target.
pub fn campaign(p: &Part) -> Result<(), String> {
    fuzz(p, 30)
}

fn fuzz(p: &Part, default_seconds: u64) -> Result<(), String> {
    let root = &p.root;
    // Each seed corpus (10-30 inputs) and the inputs kept from earlier runs
    // are replayed within the first second (libFuzzer's INITED line); the
    // rest is new inputs. Two targets run at once (one core each).
    let seconds: u64 = env_number("SNOWMINT_FUZZ_SECONDS", default_seconds)?;
    let jobs: usize = env_number("SNOWMINT_FUZZ_JOBS", 2)?.max(1);
    let chosen = std::env::var("SNOWMINT_FUZZ_TARGETS").unwrap_or_default();
    let some: Vec<String> = chosen.split_whitespace().map(str::to_string).collect();
    let targets: Vec<String> = if some.is_empty() {
        TARGETS.iter().map(|t| t.to_string()).collect()
    } else {
        some.clone()
    };
    // Its own target folder (the fuzz binaries, the corpora kept between
    // runs, the logs) and, beside the shared build directory, a build
    // directory of its own, shared by every checkout too: cargo-fuzz builds
    // for the host triple with coverage flags (RUSTFLAGS), where the release
    // check's zig builds of the same triple would otherwise rebuild every
    // crate (a unit's file name does not depend on RUSTFLAGS).
    let target_dir = root.join("target/fuzz");
    std::env::set_var("CARGO_TARGET_DIR", &target_dir);
    if let Some(fuzz) = crate::step::beside_shared_build_dir("-fuzz") {
        std::env::set_var("CARGO_BUILD_BUILD_DIR", fuzz);
    }
    let manifest = root.join("fuzz/Cargo.toml");

    p.say("tools: cargo-fuzz 0.13.2");
    cargo_tool(
        p,
        "cargo-fuzz",
        "0.13.2",
        "cargo-fuzz",
        Source::Registry,
        &["--locked"],
    )?;

    p.say("cargo fmt --check (fuzz crate)");
    p.check(
        p.cmd("cargo")
            .arg("fmt")
            .arg("--manifest-path")
            .arg(&manifest)
            .args(["--", "--check"]),
    )?;

    // The build lints the fuzz crate, the only member of its workspace
    // (clippy -D warnings: scripts/lint-rustc); the crates it fuzzes are
    // linted by the main workspace's builds.
    p.say(&format!(
        "cargo fuzz build --sanitizer none, clippy -D warnings ({})",
        targets.join(" ")
    ));
    // Every target: one cargo run that builds them all; some: one per target.
    if some.is_empty() {
        fuzz_build(p, None)?;
    } else {
        for t in &targets {
            fuzz_build(p, Some(t))?;
        }
    }
    let bin = target_dir.join(host_triple(p)?).join("release");
    for t in &targets {
        if !crate::tools::executable(&bin.join(t)) {
            return Err(format!(
                "fuzz target {t} was not built ({})",
                bin.join(t).display()
            ));
        }
    }

    p.say("regression inputs (fuzz/regressions/<target>/)");
    for t in &targets {
        let dir = root.join("fuzz/regressions").join(t);
        let mut inputs = Vec::new();
        files_under(&dir, &mut inputs);
        if inputs.is_empty() {
            continue;
        }
        inputs.sort();
        let log = target_dir.join(format!("regressions-{t}.log"));
        let ok = to_log(p.cmd(bin.join(t)).args(FLAGS).args(&inputs), &log)?
            .wait()
            .is_ok_and(|s| s.success());
        if !ok {
            eprint!("{}", tail(&log, 40));
            return Err(format!(
                "fuzz target {t} fails on a regression input in fuzz/regressions/{t}"
            ));
        }
        println!("{t}: {} regression input(s) pass", inputs.len());
    }

    p.say(&format!(
        "fuzzing {} for {seconds}s each, {jobs} at once",
        targets.join(" ")
    ));
    let mut queue = targets.iter();
    let mut running: Vec<(String, Child)> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    loop {
        while running.len() < jobs {
            let Some(t) = queue.next() else { break };
            let new = target_dir.join("corpus").join(t);
            let artifacts = target_dir.join("artifacts").join(t);
            mkdir(&new)?;
            mkdir(&artifacts)?;
            // libFuzzer writes new inputs into the first corpus folder only.
            let child = to_log(
                p.cmd(bin.join(t))
                    .args(FLAGS)
                    .arg(format!("-max_total_time={seconds}"))
                    .arg(format!("-artifact_prefix={}/", artifacts.display()))
                    .arg(&new)
                    .arg(root.join("fuzz/corpus").join(t)),
                &target_dir.join(format!("fuzz-{t}.log")),
            )?;
            running.push((t.clone(), child));
        }
        if running.is_empty() {
            break;
        }
        let mut i = 0;
        while i < running.len() {
            let status = running[i]
                .1
                .try_wait()
                .map_err(|e| format!("waiting for a fuzz target: {e}"))?;
            match status {
                None => i += 1,
                Some(status) => {
                    let (t, _) = running.swap_remove(i);
                    let log = target_dir.join(format!("fuzz-{t}.log"));
                    if status.success() {
                        print!(
                            "{}",
                            summary(&t, &fs::read_to_string(&log).unwrap_or_default())
                        );
                    } else {
                        print!("{}", tail(&log, 40));
                        println!(
                            "fuzz target {t} FAILED: see {}; the input is in {}/",
                            log.display(),
                            target_dir.join("artifacts").join(&t).display()
                        );
                        println!("reproduce: {}/{t} <input>   (or: cargo fuzz run --fuzz-dir fuzz --sanitizer none {t} <input>)", bin.display());
                        failed.push(t);
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if !failed.is_empty() {
        return Err(format!("fuzzing found problems in: {}", failed.join(" ")));
    }

    p.say(&format!(
        "fuzz part passed ({}, {seconds}s each)",
        targets.join(" ")
    ));
    Ok(())
}

/// `cargo fuzz build` (of `target`, or of every target), its progress lines
/// left out; on failure its whole output (an old binary is never fuzzed).
fn fuzz_build(p: &Part, target: Option<&str>) -> Result<(), String> {
    let out = p
        .cmd("cargo")
        .args(["fuzz", "build", "--fuzz-dir"])
        .arg(p.root.join("fuzz"))
        .args(["--sanitizer", "none"])
        .args(target)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run cargo fuzz: {e}"))?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        eprint!("{text}");
        return Err(format!(
            "cargo fuzz build {} failed",
            target.unwrap_or_default()
        ));
    }
    for line in text.lines() {
        let t = line.trim_start();
        if !(t.starts_with("Compiling") || t.starts_with("Finished")) {
            println!("{line}");
        }
    }
    Ok(())
}

/// Starts `cmd` with its standard output and error into `log`.
fn to_log(cmd: &mut Command, log: &Path) -> Result<Child, String> {
    let file = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = file
        .try_clone()
        .map_err(|e| format!("{}: {e}", log.display()))?;
    cmd.stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", crate::step::show(cmd)))
}

/// The files under `dir`, recursively (`find DIR -type f`).
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => files_under(&path, out),
            Ok(t) if t.is_file() => out.push(path),
            _ => {}
        }
    }
}

/// A passing target's summary: the corpus replayed (INITED), the last
/// status line (cov, ft, corp) and the final counters.
fn summary(t: &str, log: &str) -> String {
    let status = |l: &str, kinds: &[&str]| -> bool {
        let Some(rest) = l.strip_prefix('#') else {
            return false;
        };
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return false;
        }
        let after = &rest[digits..];
        let word = after.trim_start_matches([' ', '\t']);
        word.len() < after.len() && kinds.iter().any(|k| word.starts_with(k))
    };
    let mut out = format!("{t}:\n");
    for l in log.lines().filter(|l| status(l, &["INITED"])) {
        out += &format!("  {l}\n");
    }
    let last = log
        .lines()
        .rfind(|l| status(l, &["DONE", "INITED", "NEW", "REDUCE", "pulse"]))
        .unwrap_or_default();
    out += &format!("  {last}\n");
    for l in log.lines() {
        let mut f = l.split_whitespace();
        if let (Some(k), Some(v)) = (f.next(), f.next()) {
            if [
                "stat::number_of_executed_units",
                "stat::average_exec_per_sec",
                "stat::new_units_added",
                "stat::peak_rss_mb",
            ]
            .iter()
            .any(|s| k.starts_with(s))
            {
                out += &format!("{k} {v}  ");
            }
        }
    }
    out + "\n"
}

/// The last `n` lines of a file.
fn tail(path: &Path, n: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = lines[lines.len().saturating_sub(n)..].join("\n");
    out.push('\n');
    out
}

fn env_number<T: std::str::FromStr>(name: &str, default: T) -> Result<T, String> {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => v.parse().map_err(|_| format!("{name}={v} is not a number")),
        _ => Ok(default),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn summary_as_awk_prints_it() {
        let log = "INFO: x\n#2\tINITED cov: 10 ft: 11\n#40\tNEW    cov: 12\n#99\tpulse  cov: 12\n#1000\tDONE   cov: 13\nDone 1000 runs\nstat::number_of_executed_units: 1000\nstat::average_exec_per_sec:     99\nstat::peak_rss_mb:              40\n";
        assert_eq!(
            super::summary("id", log),
            "id:\n  #2\tINITED cov: 10 ft: 11\n  #1000\tDONE   cov: 13\nstat::number_of_executed_units: 1000  stat::average_exec_per_sec: 99  stat::peak_rss_mb: 40  \n"
        );
    }
}
