//! The commands: the test command's parts one after another (with the
//! prefetch beside the first), the release check's parts, the harness and
//! throwaway stores.

use std::collections::VecDeque;
use std::fs::{self, File};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::parts::{self, TestPart, BUILDS_ONLY, LANE, RELEASE_PARTS, STORES, TEST_PARTS};
use crate::proc::{secs, Finished, Group};
use crate::times::{self, PartTime};

/// The exit code for a run stopped by `sig`, as a shell reports it.
fn signalled(sig: i32) -> u8 {
    eprintln!("xtask: stopped by signal {sig}; the running part and what it started were stopped");
    u8::try_from(128 + sig).unwrap_or(1)
}

/// The test parts' names, for messages.
fn test_part_names() -> String {
    let names: Vec<&str> = TEST_PARTS.iter().map(|p| p.name).collect();
    names.join(" ")
}

/// A test part as a child: this program again, `run-part NAME`.
fn part_command(root: &Path, name: &str) -> Command {
    in_rust(root, name)
}

/// This program again as a child: `run-part PART`. Through `cargo xtask`
/// when this program's file is gone (rebuilt while the run went on: Linux
/// then names it "... (deleted)").
fn in_rust(root: &Path, part: &str) -> Command {
    let mut cmd = match std::env::current_exe() {
        Ok(exe) if exe.is_file() => Command::new(exe),
        _ => {
            let mut c = Command::new("cargo");
            c.arg("xtask");
            c
        }
    };
    cmd.args(["run-part", part]).current_dir(root);
    cmd
}

/// `cargo xtask test [PART...]`: the parts run one after another; the first
/// failure ends the run. Beside the first parts, which only compile and run
/// tests without timing checks (`BUILDS_ONLY`), two things run under
/// `nice -n 19`, with what the parts' builds leave idle:
/// - the prefetch: it downloads and installs what the later parts would
///   install themselves (the network, apt and the tools' compiles);
/// - the second lane (`LANE`): the selected parts, or halves of parts, that
///   build in a cargo workspace of their own (the fuzz part; the postgres
///   part's build), one after another, each with its log printed when the
///   lane is waited for. It runs only beside another part.
///
/// The run waits for both before the first part with timing checks (no
/// test with a timeout runs beside a build: measured, the store tests missed
/// their 1 s timeouts there). The prefetch's log is printed and its failure
/// fails nothing; a lane item's failure fails the run.
/// `SNOWMINT_TEST_PREFETCH=0` turns the prefetch off, `SNOWMINT_TEST_LANE=0`
/// the lane (its parts then run in their turn). Each part's line gives its
/// wall time and CPU seconds (its own processes only) and its budget.
pub fn test(root: &Path, names: &[String]) -> u8 {
    let mut selected: Vec<&'static TestPart> = Vec::new();
    for name in names {
        match parts::test_part(name) {
            Some(p) => selected.push(p),
            None => {
                let all: Vec<&str> = TEST_PARTS.iter().map(|p| p.name).collect();
                eprintln!(
                    "xtask test: unknown part '{name}' (parts: {})",
                    all.join(" ")
                );
                return 2;
            }
        }
    }
    if selected.is_empty() {
        selected = TEST_PARTS.iter().collect();
    }
    let start = Instant::now();
    let work = root.join("target/xtask");
    if let Err(e) = fs::create_dir_all(&work) {
        eprintln!("xtask: cannot create {}: {e}", work.display());
        return 1;
    }
    let beside_first = BUILDS_ONLY.contains(&selected[0].name);
    let mut lane = None;
    let lane_on = std::env::var("SNOWMINT_TEST_LANE").map_or(true, |v| v != "0");
    if let Some(items) = lane_plan(&selected).filter(|_| lane_on) {
        lane = Some(Lane::start(root, &work, &items));
        selected.retain(|p| !LANE.contains(&(p.name, p.name)));
    }
    let mut prefetch = None;
    let prefetch_on = std::env::var("SNOWMINT_TEST_PREFETCH").map_or(true, |v| v != "0");
    if prefetch_on && selected.len() > 1 && beside_first {
        let later: Vec<&str> = selected[1..].iter().map(|p| p.name).collect();
        match start_prefetch(root, &work, &later) {
            Ok(g) => prefetch = Some(g),
            Err(e) => eprintln!(
                "xtask: the prefetch did not start ({e}); each part installs what it needs"
            ),
        }
    }
    let mut cpu_total = Duration::ZERO;
    let mut took = Vec::new();
    for part in &selected {
        if !BUILDS_ONLY.contains(&part.name) {
            match wait_beside(&work, &mut prefetch, &mut lane, &mut took, &mut cpu_total) {
                Ok(true) => {}
                Ok(false) => return 1,
                Err(sig) => return signalled(sig),
            }
        }
        println!("\n######## {} ########", part.name);
        let run = Group::spawn(&mut part_command(root, part.name));
        let finished = match run.map(Group::wait) {
            Ok(Ok(f)) => f,
            Ok(Err(sig)) => return signalled(sig),
            Err(e) => {
                eprintln!("xtask: cannot start the part {}: {e}", part.name);
                return 1;
            }
        };
        cpu_total += finished.cpu;
        if !finished.success() {
            println!(
                "######## {} FAILED ({}) in {}s (CPU {}s) ########",
                part.name,
                finished.status,
                secs(finished.wall),
                secs(finished.cpu)
            );
            return 1;
        }
        println!(
            "######## {} passed in {}s (CPU {}s){} ########",
            part.name,
            secs(finished.wall),
            secs(finished.cpu),
            over_budget(part, finished.wall)
        );
        took.push(PartTime {
            name: part.name,
            wall_s: secs(finished.wall),
            cpu_s: secs(finished.cpu),
        });
    }
    match wait_beside(&work, &mut prefetch, &mut lane, &mut took, &mut cpu_total) {
        Ok(true) => {}
        Ok(false) => return 1,
        Err(sig) => return signalled(sig),
    }
    let names: Vec<&str> = took.iter().map(|p| p.name).collect();
    println!(
        "\nall parts passed ({}) in {}s (CPU {}s)",
        names.join(" "),
        secs(start.elapsed()),
        secs(cpu_total)
    );
    if took.len() == TEST_PARTS.len() {
        // A full run's times: what `cargo xtask times --write` puts into CONTRIBUTING.md.
        took.sort_by_key(|t| TEST_PARTS.iter().position(|p| p.name == t.name));
        if let Err(e) = times::record(root, &took, secs(start.elapsed()), secs(cpu_total)) {
            eprintln!("xtask: the times were not recorded: {e}");
        }
    }
    0
}

/// ", over its budget of Ns" when `wall` is past the part's budget.
fn over_budget(part: &TestPart, wall: Duration) -> String {
    if secs(wall) > part.budget_s {
        format!(", over its budget of {}s", part.budget_s)
    } else {
        String::new()
    }
}

/// The second lane's items for a run of `selected` (in their order), or
/// None when it does not run: nothing of `LANE` selected, or no part left
/// to run beside (the run must begin with a part of `BUILDS_ONLY` that
/// stays in the sequence). The parts that are lane items themselves then
/// leave the sequence.
fn lane_plan(selected: &[&TestPart]) -> Option<Vec<&'static str>> {
    let first = selected.first()?.name;
    let items: Vec<&'static str> = LANE
        .iter()
        .filter(|(part, _)| selected.iter().any(|p| p.name == *part))
        .map(|&(_, item)| item)
        .collect();
    let begins_beside = BUILDS_ONLY.contains(&first) && !items.contains(&first);
    (begins_beside && !items.is_empty()).then_some(items)
}

/// Waits for what runs beside the first parts: the prefetch, then the
/// second lane; false if a lane item failed.
fn wait_beside(
    work: &Path,
    prefetch: &mut Option<Group>,
    lane: &mut Option<Lane>,
    took: &mut Vec<PartTime>,
    cpu_total: &mut Duration,
) -> Result<bool, i32> {
    if let Some(g) = prefetch.take() {
        *cpu_total += wait_prefetch(g, work)?;
    }
    match lane.take() {
        Some(l) => l.wait(took, cpu_total),
        None => Ok(true),
    }
}

/// What a lane's runner returns: each item it ran and how it ended, or the
/// signal that stopped it.
type LaneDone = Result<Vec<(String, Finished)>, i32>;

/// The second lane: a thread that runs its items one after another, each
/// `nice -n 19 xtask run-part ITEM` in a group of its own with its output in
/// target/xtask/lane-ITEM.log. The items wait in a queue: when the runner
/// reaches the lane (its parts that only compile are done), it runs those
/// the thread has not started, beside the thread's (on a new machine the
/// lane took minutes longer than those parts, one item after another). The
/// first failure stops both. Dropped before it is waited for (a part
/// failed, the runner was stopped), it stops the running item's group and
/// joins the thread.
struct Lane {
    thread: Option<std::thread::JoinHandle<LaneDone>>,
    queue: LaneQueue,
    work: PathBuf,
}

/// The lane's items not yet started, the root and the log folder, and the
/// flag that stops whoever runs them.
#[derive(Clone)]
struct LaneQueue {
    items: Arc<Mutex<VecDeque<String>>>,
    cancel: Arc<AtomicBool>,
    root: PathBuf,
    dir: PathBuf,
}

impl LaneQueue {
    /// Runs items from the queue until it is empty, an item fails (which
    /// stops the other runner too) or the flag is set.
    fn run(&self) -> LaneDone {
        let mut done = Vec::new();
        loop {
            if self.cancel.load(Ordering::SeqCst) {
                return Ok(done);
            }
            let Some(item) = self.items.lock().ok().and_then(|mut q| q.pop_front()) else {
                return Ok(done);
            };
            let log = self.dir.join(format!("lane-{item}.log"));
            let finished = match lane_item(&self.root, &item, &log) {
                Ok(mut g) => loop {
                    if let Some(f) = g.poll() {
                        break f;
                    }
                    if let Some(sig) = crate::proc::stopped_by() {
                        return Err(sig); // the drop stops the group
                    }
                    if self.cancel.load(Ordering::SeqCst) {
                        return Ok(done);
                    }
                    std::thread::sleep(Duration::from_millis(50));
                },
                Err(e) => {
                    let _ = fs::write(&log, format!("xtask: cannot start {item}: {e}\n"));
                    Finished {
                        status: ExitStatus::from_raw(1 << 8),
                        wall: Duration::ZERO,
                        cpu: Duration::ZERO,
                    }
                }
            };
            let failed = !finished.success();
            done.push((item, finished));
            if failed {
                self.cancel.store(true, Ordering::SeqCst);
                return Ok(done);
            }
        }
    }
}

impl Lane {
    fn start(root: &Path, work: &Path, items: &[&str]) -> Lane {
        println!(
            "\n######## the second lane (background, nice 19): {} ########",
            items.join(", then ")
        );
        let queue = LaneQueue {
            items: Arc::new(Mutex::new(items.iter().map(|s| s.to_string()).collect())),
            cancel: Arc::new(AtomicBool::new(false)),
            root: root.to_path_buf(),
            dir: work.to_path_buf(),
        };
        let theirs = queue.clone();
        let thread = std::thread::spawn(move || theirs.run());
        Lane {
            thread: Some(thread),
            queue,
            work: work.to_path_buf(),
        }
    }

    /// Runs the items the lane has not started, waits for the lane, prints
    /// each item's log and line (in the lane's order); the test parts among
    /// them go into `took`. False if an item failed.
    fn wait(mut self, took: &mut Vec<PartTime>, cpu_total: &mut Duration) -> Result<bool, i32> {
        println!("\n######## waiting for the second lane (background) ########");
        let Some(thread) = self.thread.take() else {
            return Ok(false);
        };
        let mine = self.queue.run();
        let Ok(theirs) = thread.join() else {
            println!("######## the second lane panicked ########");
            return Ok(false);
        };
        let (mine, theirs) = (mine?, theirs?);
        let taken: Vec<&str> = mine.iter().map(|(item, _)| item.as_str()).collect();
        if !taken.is_empty() {
            println!(
                "(taken from the lane once the parts that only compile were done: {})",
                taken.join(", ")
            );
        }
        let mut done: Vec<(String, Finished)> = theirs.into_iter().chain(mine).collect();
        done.sort_by_key(|(item, _)| LANE.iter().position(|(_, i)| i == item));
        let mut ok = true;
        for (item, f) in &done {
            println!("\n######## {item} (second lane) ########");
            print!(
                "{}",
                fs::read_to_string(self.work.join(format!("lane-{item}.log"))).unwrap_or_default()
            );
            *cpu_total += f.cpu;
            if !f.success() {
                println!(
                    "######## {item} FAILED ({}) in {}s (CPU {}s), in the second lane ########",
                    f.status,
                    secs(f.wall),
                    secs(f.cpu)
                );
                ok = false;
                continue;
            }
            // Beside other parts and under nice: its wall time is not held
            // against a budget.
            println!(
                "######## {item} passed in {}s (CPU {}s), in the second lane ########",
                secs(f.wall),
                secs(f.cpu)
            );
            if let Some(part) = parts::test_part(item) {
                took.push(PartTime {
                    name: part.name,
                    wall_s: secs(f.wall),
                    cpu_s: secs(f.cpu),
                });
            }
        }
        Ok(ok)
    }
}

impl Drop for Lane {
    fn drop(&mut self) {
        self.queue.cancel.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts a lane item: `nice -n 19 xtask run-part ITEM`, its output to `log`.
fn lane_item(root: &Path, item: &str, log: &Path) -> std::io::Result<Group> {
    let out = File::create(log)?;
    let inner = in_rust(root, item);
    let mut cmd = Command::new("nice");
    cmd.args(["-n", "19"])
        .arg(inner.get_program())
        .args(inner.get_args())
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out);
    Group::spawn(&mut cmd)
}

fn start_prefetch(root: &Path, work: &Path, later: &[&str]) -> std::io::Result<Group> {
    let log = File::create(work.join("prefetch.log"))?;
    let mut cmd = Command::new("nice");
    cmd.args(["-n", "19"]);
    match std::env::current_exe() {
        Ok(exe) => cmd.arg(exe),
        Err(_) => cmd.args(["cargo", "xtask"]),
    };
    cmd.args(["run-part", "prefetch"])
        .args(later)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    Group::spawn(&mut cmd)
}

/// Waits for the prefetch, prints its log and how it went; its CPU time.
fn wait_prefetch(g: Group, work: &Path) -> Result<Duration, i32> {
    println!("\n######## waiting for the prefetch (background) ########");
    let f: Finished = g.wait()?;
    print!(
        "{}",
        fs::read_to_string(work.join("prefetch.log")).unwrap_or_default()
    );
    if f.success() {
        println!(
            "######## prefetch done in {}s (CPU {}s) ########",
            secs(f.wall),
            secs(f.cpu)
        );
    } else {
        println!(
            "######## prefetch: some steps failed ({}) in {}s (CPU {}s); the parts install those themselves ########",
            f.status,
            secs(f.wall),
            secs(f.cpu)
        );
    }
    Ok(f.cpu)
}

/// `cargo xtask release-check [PART...]`: every part runs, also after one
/// failed; the summary names the failed ones. Its builds use plain rustc
/// unless RUSTC_WORKSPACE_WRAPPER is set (the test command lints).
pub fn release_check(root: &Path, names: &[String]) -> u8 {
    let selected: Vec<String> = if names.is_empty() {
        RELEASE_PARTS.iter().map(|s| s.to_string()).collect()
    } else {
        names.to_vec()
    };
    let in_rust_part = parts::is_release_part;
    for name in &selected {
        if !in_rust_part(name) {
            eprintln!(
                "release-check: unknown part '{name}' (parts: {} harness)",
                RELEASE_PARTS.join(" ")
            );
            return 2;
        }
    }
    let start = Instant::now();
    let mut failed = Vec::new();
    for name in &selected {
        if !in_rust_part(name) {
            continue;
        }
        let (mut cmd, what) = (
            in_rust(root, &format!("release-{name}")),
            format!("the part {name}"),
        );
        println!("\n######## release: {name} ########");
        if std::env::var_os("RUSTC_WORKSPACE_WRAPPER").is_none() {
            // Plain rustc: the release check builds what ships, not lints.
            cmd.env("RUSTC_WORKSPACE_WRAPPER", "");
        }
        let ship_profile = std::env::var("SNOWMINT_RELEASE_LTO").is_ok_and(|v| v == "1");
        if !ship_profile && parts::FAST_RELEASE_PARTS.contains(&name.as_str()) {
            println!("(the release profile without fat LTO, 16 codegen units: SNOWMINT_RELEASE_LTO=1 builds as it ships)");
            cmd.envs(parts::FAST_RELEASE);
        }
        let finished = match Group::spawn(&mut cmd).map(Group::wait) {
            Ok(Ok(f)) => f,
            Ok(Err(sig)) => return signalled(sig),
            Err(e) => {
                eprintln!("release-check: cannot start {what}: {e}");
                failed.push(name.clone());
                continue;
            }
        };
        if finished.success() {
            let budget = parts::release_budget(name);
            let over = if secs(finished.wall) > budget {
                format!(", over its budget of {budget}s")
            } else {
                String::new()
            };
            println!(
                "######## release: {name} passed in {}s{over} ########",
                secs(finished.wall)
            );
        } else {
            println!(
                "######## release: {name} FAILED in {}s ########",
                secs(finished.wall)
            );
            failed.push(name.clone());
        }
    }
    let failed_list = if failed.is_empty() {
        String::new()
    } else {
        format!(", failed: {}", failed.join(" "))
    };
    println!(
        "\nrelease check ({}) in {}s{failed_list}",
        selected.join(" "),
        secs(start.elapsed())
    );
    println!(
        "release-check: {} passed, {} failed",
        selected.len() - failed.len(),
        failed.len()
    );
    u8::from(!failed.is_empty())
}

/// `cargo xtask harness ARGS...`: the fault harness (xtask/src/harness.rs).
pub fn harness(root: &Path, args: &[String]) -> u8 {
    crate::harness::run(root, args)
}

/// `cargo xtask stores up STORE...`: the stores as the other parts start
/// them (the shared server where one answers, with a database or namespace
/// of this run's own, else a throwaway one: xtask/src/stores/), Redis
/// vouched for by `snowmint lease init` and its fence waited out, their
/// `SNOWMINT_TEST_*` variables printed as `export` lines, until Ctrl-C or
/// the end of standard input; then everything started is stopped.
pub fn stores_up(root: &Path, names: &[String]) -> u8 {
    for name in names {
        if !STORES.contains(&name.as_str()) {
            eprintln!(
                "xtask stores up: no such store '{name}' (stores: {})",
                STORES.join(" ")
            );
            return 2;
        }
    }
    let part = crate::step::Part::new(root);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let stores = match crate::stores::Stores::up(&part, &names) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("xtask stores up: {e}");
            return 1;
        }
    };
    println!();
    let mut lines: Vec<String> = stores
        .env
        .iter()
        .map(|(k, v)| format!("export {k}={}", crate::stores::shell_word(v)))
        .collect();
    lines.sort();
    for l in &lines {
        println!("{l}");
    }
    println!("# the stores are up: copy the lines above into another shell, then cargo test ...;");
    println!("# Ctrl-C (or the end of standard input) stops them");
    // Standard input is read on a thread of its own; the signal is polled
    // here (a read is not interrupted by the runner's handler).
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        let _ = tx.send(());
    });
    while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
        rx.recv_timeout(Duration::from_millis(100))
    {
        if crate::proc::stopped_by().is_some() {
            break;
        }
    }
    println!("# stopping the stores");
    drop(stores);
    0
}

/// `cargo xtask run-part NAME`: a part written in Rust, in this process.
pub fn part_in_process(root: &Path, name: &str) -> u8 {
    let part = crate::step::Part::new(root);
    let result = match name {
        "lease" => crate::part_lease::run(&part),
        "stores" => crate::part_stores::run(&part),
        "server" => crate::part_server::run(&part),
        "js" => crate::part_js::run(&part),
        "lint" => crate::part_lint::run(&part),
        "c" => crate::part_c::run(&part),
        "postgres" => crate::part_postgres::run(&part),
        "python" => crate::part_python::run(&part),
        "wasm" => crate::part_wasm::run(&part),
        "interop" => crate::part_interop::run(&part),
        "fuzz" => crate::part_fuzz::run(&part),
        "postgres-build" => crate::part_postgres::build(&part),
        "core" => crate::part_core::run(&part),
        "node" => crate::part_node::run(&part),
        "release-shell" => crate::part_release_lint::shell(&part),
        "release-workflows" => crate::part_release_lint::workflows(&part),
        "release-deny" => crate::part_release_rust::deny(&part),
        "release-msrv" => crate::part_release_rust::msrv(&part),
        "release-platforms" => crate::part_release_rust::platforms(&part),
        "release-crate" => crate::part_release_rust::packaged_crate(&part),
        "release-c" => crate::part_release_c::run(&part),
        "release-python" => crate::part_release_python::run(&part),
        "release-node" => crate::part_release_node::run(&part),
        "release-fuzz" => crate::part_fuzz::campaign(&part),
        "release-harness" => crate::harness::release_part(&part),
        _ => {
            eprintln!(
                "xtask run-part: no part '{name}' (test parts: {}; release: release-NAME)",
                test_part_names()
            );
            return 2;
        }
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{name}: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::lane_plan;
    use crate::parts::{test_part, TestPart};

    fn parts(names: &[&str]) -> Vec<&'static TestPart> {
        names.iter().map(|n| test_part(n).unwrap()).collect()
    }

    #[test]
    fn the_lane_runs_beside_a_part_that_only_compiles() {
        let all: Vec<&str> = crate::parts::TEST_PARTS.iter().map(|p| p.name).collect();
        assert_eq!(
            lane_plan(&parts(&all)),
            Some(vec!["postgres-build", "fuzz"])
        );
        assert_eq!(
            lane_plan(&parts(&["core", "postgres"])),
            Some(vec!["postgres-build"])
        );
        assert_eq!(lane_plan(&parts(&["c", "fuzz"])), Some(vec!["fuzz"]));
        // Nothing to run beside, or a part with timing checks first.
        assert_eq!(lane_plan(&parts(&["fuzz"])), None);
        assert_eq!(lane_plan(&parts(&["postgres"])), None);
        assert_eq!(lane_plan(&parts(&["fuzz", "core"])), None);
        assert_eq!(lane_plan(&parts(&["stores", "core", "fuzz"])), None);
        assert_eq!(lane_plan(&parts(&["core", "lease"])), None);
    }
}
