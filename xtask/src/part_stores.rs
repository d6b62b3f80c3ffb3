//! The `stores` part: the lease stores across machines against real servers:
//! PostgreSQL, MariaDB, Redis, etcd and ZooKeeper, each the server already
//! answering on its standard port (with a database or namespace of this
//! run's own), else a throwaway one from Debian's packages (xtask/src/stores/);
//! a store that can be neither reached nor started fails the run. PostgreSQL,
//! MariaDB, etcd and ZooKeeper also get dedicated throwaway servers for the
//! restart and restore tests (a shared server is never restarted), and
//! PostgreSQL and Redis one whose clock the fault tests step.
//!
//! Then the store tests (lease/tests/store_*.rs) run against them: the
//! contract suite every store runs (lease/test-support: the store's contract,
//! unreachable servers, racing claimers, a paused holder, and the scenarios):
//! 40 holders on 32 slots plus a second namespace, a holder killed with
//! SIGKILL and replaced after the TTL, a clock skewed past max_skew_ms refused
//! at claim, the server cut off and restored by a TCP proxy while holders
//! issue, a holder cut off past its TTL while another takes its slot, and
//! (not Redis) the hwm kept across a server restart; then what only that
//! store has (credentials, data loss, restores). Each store's fault suite
//! follows (its tests `faults::`, the scenarios in
//! lease/test-support/src/faults.rs and rate.rs): a live holder paused past
//! its TTL and resumed inside its reservation while its successor runs, a
//! one-way partition and replies held back past the TTL, holders at a high
//! rate with next_ids and borrow:N, a 16-bit ID space, 40 claimers racing for
//! expired slots, and (PostgreSQL, Redis) the store's clock stepped forward
//! and back. Then the operations tests (lease/tests/ops_stores.rs) and the
//! CLI's (cli/tests/lease_stores.rs) of the stores under test, and the lease
//! crate's unit tests.
//!
//! ```text
//! cargo xtask test stores                         every store
//! SNOWMINT_STORES="redis" cargo xtask test stores  one store (about 90 s)
//! SNOWMINT_STORES_JOBS=1 cargo xtask test stores   one suite at a time
//! STORES_EXTRA=0 cargo xtask test stores           without the tests' own servers
//! ```

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::parts::STORES;
use crate::proc::{stopped_by, Group};
use crate::step::Part;
use crate::stores::{Artifact, Extra, Stores};

/// Seconds each suite took on 2026-11-27 (three at a time, quiet machine):
/// the queue's order, longest first, so that the last to start are short.
const TOOK: [(&str, u32); 8] = [
    ("redis", 77),
    ("postgres", 52),
    ("etcd", 50),
    ("mysql", 45),
    ("zookeeper", 45),
    ("ops", 12),
    ("cli", 1),
    ("units", 0),
];

pub fn run(p: &Part) -> Result<(), String> {
    let chosen = std::env::var("SNOWMINT_STORES").unwrap_or_default();
    let mut names: Vec<&str> = Vec::new();
    for s in chosen
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
    {
        let Some(&known) = STORES.iter().find(|&&k| k == s) else {
            return Err(format!(
                "SNOWMINT_STORES: no such store: {s} ({})",
                STORES.join(" ")
            ));
        };
        names.push(known);
    }
    if names.is_empty() {
        names = STORES.to_vec();
    }
    let extra = match std::env::var("STORES_EXTRA").as_deref() {
        Ok("0") => Extra::No,
        _ => Extra::Yes,
    };
    let jobs: usize = match std::env::var("SNOWMINT_STORES_JOBS") {
        Ok(v) => v
            .parse()
            .map_err(|_| format!("SNOWMINT_STORES_JOBS={v} is not a number"))?,
        Err(_) => 3,
    };

    // The test binaries are built once, then run directly: cargo holds the
    // build folder's lock while it runs tests, so two `cargo test` runs
    // would take turns. The build lints them (clippy: scripts/lint-rustc).
    // Always with every store's feature (`stores`, as the CLI, the service
    // and the bindings name it, so their builds of the lease crate are this
    // one: tools/workspace-hack): a run for one store then rebuilds only what
    // a change touched, never a variant of the lease crate and its clients of
    // its own; the test filters below pick that store's tests. The build runs
    // while the servers start; the CLI comes first (its binary is the one
    // cli/tests/lease_stores.rs runs): `snowmint lease init` vouches for Redis.
    p.say("stores: building the store tests, clippy -D warnings (features stores), while the servers start");
    let cli_features = [
        "-p",
        "snowmint-cli",
        "--no-default-features",
        "--features",
        "stores,store-tests",
    ];
    let mut lease_args = vec![
        "test",
        "--profile",
        "ci",
        "--no-run",
        "-p",
        "snowmint-lease",
        "--features",
        "stores",
        "--lib",
    ];
    let tests: Vec<String> = names.iter().map(|s| format!("store_{s}")).collect();
    for t in &tests {
        lease_args.extend(["--test", t]);
    }
    lease_args.extend(["--test", "ops_stores"]);
    let mut cli_bin = vec!["build", "--profile", "ci", "--bin", "snowmint"];
    cli_bin.extend(cli_features);
    let mut cli_test = vec![
        "test",
        "--profile",
        "ci",
        "--no-run",
        "--test",
        "lease_stores",
    ];
    cli_test.extend(cli_features);
    let work = std::env::temp_dir().join(format!("snowmint-stores-build-{}", std::process::id()));
    crate::step::mkdir(&work)?;
    let mut build = Build::start(
        &p.root,
        &work.join("log"),
        vec![args(&cli_bin), args(&lease_args), args(&cli_test)],
    )?;

    // Redis starts first and is vouched for once the CLI is built, while
    // the other servers start; its init fence (40 s after `lease init` on
    // a server the key does not name yet) is waited out after the build.
    let cli = build
        .first
        .take()
        .ok_or("the build's CLI channel is gone")?;
    let stores = Stores::start(p, &names, extra, cli)?;
    let built = build.wait()?;
    p.say("stores: built");
    let bins: HashMap<String, PathBuf> = built
        .into_iter()
        .filter(|a| a.test)
        .map(|a| (a.name, a.path))
        .collect();
    let bin = |name: &str| {
        bins.get(name)
            .cloned()
            .ok_or_else(|| format!("the build gave no test binary {name}"))
    };

    // The suites mostly wait out TTLs, so they run side by side, at most
    // SNOWMINT_STORES_JOBS (default 3) at once, longest first. Each store's
    // suite is its own tests (lease/tests/store_<store>.rs), then its fault
    // tests (the same binary's faults::, one at a time: each pauses, cuts off
    // or slows down its holders, and their timing is what they test); then
    // the operations tests and the CLI's of the stores under test, and the
    // lease crate's unit tests. Every test uses namespaces, databases or
    // throwaway servers of its own. The suites that use Redis wait for its
    // init fence ([`Gate`]): the Redis suite's own tests and those of the
    // operations and the CLI that of the shared server (usually long past),
    // its fault tests that of the clock-stepped throwaway one (40 s from
    // its start); the others start as soon as they are built.
    // A store's fault tests follow its own tests rather than run as a suite
    // of their own: tried so on 2026-11-27, the PostgreSQL and Redis fault
    // suites started in the same second, beside the Redis suite, and ran
    // their 40 racing claimers at once: one racer's PostgreSQL claims missed
    // their 2 s timeout fifty times; the 40 racers of one store then missed
    // theirs beside the others' (etcd's, 2026-11-28), so that test takes a
    // machine-wide lock and the stores race one at a time; and with three
    // suites and every store's operations tests at once, ZooKeeper's release
    // came a second late (2026-11-28): two at a time then. With four suites
    // on a machine loaded by other builds, the timing of the cut-off tests
    // slipped. Since no build runs beside this part, three at a time (the
    // operations tests a suite of their own, after the stores') kept each
    // suite within 3 s of its time two at a time, and all the suites took
    // 109-113 s in three runs against 159 s two at a time (2026-12-01).
    // Each suite writes its own log, printed when it ends, with its wall
    // time. A test binary runs from its package's folder, as cargo test runs
    // it.
    let mut ops_filters = vec!["unreachable_store_is_lease_unavailable".to_string()];
    ops_filters.extend(names.iter().map(|s| format!("{s}_operations")));
    let lease = p.root.join("lease");
    let mut suites = Vec::new();
    for (name, _) in TOOK {
        let suite = match name {
            "units" => Suite::new(
                name,
                "the lease crate's unit tests".into(),
                vec![(lease.clone(), bin("snowmint_lease")?, vec!["-q".into()])],
            ),
            "ops" => {
                let mut a = vec![
                    "-q".to_string(),
                    format!("--test-threads={}", ops_filters.len()),
                ];
                a.extend(ops_filters.iter().cloned());
                Suite::new(
                    name,
                    format!("lease/tests/ops_stores.rs {}", ops_filters.join(" ")),
                    vec![(lease.clone(), bin("ops_stores")?, a)],
                )
            }
            "cli" => {
                let mut a = vec!["-q".to_string()];
                a.extend(names.iter().map(|s| s.to_string()));
                Suite::new(
                    name,
                    format!("cli/tests/lease_stores.rs {}", names.join(" ")),
                    vec![(p.root.join("cli"), bin("lease_stores")?, a)],
                )
            }
            store if names.contains(&store) => {
                let b = bin(&format!("store_{store}"))?;
                let own = vec!["-q".into(), "--skip".into(), "faults::".into()];
                let faults = vec!["-q".into(), "faults::".into(), "--test-threads=1".into()];
                Suite::new(
                    name,
                    format!("lease/tests/store_{store}.rs, then its faults::"),
                    vec![(lease.clone(), b.clone(), own), (lease.clone(), b, faults)],
                )
            }
            _ => continue,
        };
        suites.push(suite);
    }
    // What uses Redis waits for its init fence: the Redis suite's own tests
    // and the operations and CLI tests for the shared (or first throwaway)
    // server's, the Redis fault tests for the clock-stepped one's too.
    if names.contains(&"redis") {
        for s in &mut suites {
            for (i, c) in s.cmds.iter_mut().enumerate() {
                c.gate = match (s.name, i) {
                    ("redis", 0) | ("ops" | "cli", _) => Gate::Redis,
                    ("redis", _) => Gate::EveryRedis,
                    _ => Gate::Open,
                };
            }
        }
    }
    let failed = run_suites(p, &stores, suites, jobs.max(1))?;
    if !failed.is_empty() {
        return Err(format!(
            "store suites failed: {} (one alone: SNOWMINT_STORES=STORE cargo xtask test stores, or SNOWMINT_STORES_JOBS=1)",
            failed.join(" ")
        ));
    }
    Ok(())
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// One suite: its commands, one after another, into one log.
struct Suite {
    name: &'static str,
    what: String,
    cmds: Vec<Cmd>,
}

/// A command of a suite: its folder, program and arguments, and the Redis
/// init fence it waits for.
struct Cmd {
    dir: PathBuf,
    exe: PathBuf,
    args: Vec<String>,
    gate: Gate,
}

/// The Redis init fence a command waits for before it starts
/// ([`Stores::redis_ready_at`], [`Stores::ready_at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gate {
    /// It uses no Redis.
    Open,
    /// It uses the Redis of `SNOWMINT_TEST_REDIS_URL`.
    Redis,
    /// It uses the clock-stepped Redis too (the Redis fault tests).
    EveryRedis,
}

impl Gate {
    fn passed(self, stores: &Stores) -> bool {
        let at = match self {
            Gate::Open => None,
            Gate::Redis => stores.redis_ready_at(),
            Gate::EveryRedis => stores.ready_at(),
        };
        at.is_none_or(|t| Instant::now() >= t)
    }
}

impl Suite {
    fn new(name: &'static str, what: String, cmds: Vec<(PathBuf, PathBuf, Vec<String>)>) -> Suite {
        let cmds = cmds
            .into_iter()
            .map(|(dir, exe, args)| Cmd {
                dir,
                exe,
                args,
                gate: Gate::Open,
            })
            .collect();
        Suite { name, what, cmds }
    }

    /// Whether its next command may start now.
    fn may_start(&self, next: usize, stores: &Stores) -> bool {
        self.cmds.get(next).is_none_or(|c| c.gate.passed(stores))
    }
}

/// A suite running: its current command (killed with its group if dropped).
struct Running {
    suite: Suite,
    next: usize,
    group: Option<Group>,
    log: PathBuf,
    started: Instant,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(g) = self.group.as_mut() {
            g.kill_now();
        }
    }
}

impl Running {
    /// Starts the next command; false when there is none.
    fn spawn_next(&mut self, env: &[(String, String)]) -> Result<bool, String> {
        let Some(Cmd { dir, exe, args, .. }) = self.suite.cmds.get(self.next) else {
            return Ok(false);
        };
        self.next += 1;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(|e| format!("{}: {e}", self.log.display()))?;
        let err = log
            .try_clone()
            .map_err(|e| format!("{}: {e}", self.log.display()))?;
        let mut cmd = Command::new(exe);
        cmd.args(args)
            .current_dir(dir)
            .envs(env.iter().cloned())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err);
        self.group =
            Some(Group::spawn(&mut cmd).map_err(|e| format!("cannot run {}: {e}", exe.display()))?);
        Ok(true)
    }
}

/// Runs the suites, `jobs` at once, in their order; the names of those that
/// failed. A suite whose filters picked no test fails: it would pass having
/// tested nothing.
fn run_suites(
    p: &Part,
    stores: &Stores,
    suites: Vec<Suite>,
    jobs: usize,
) -> Result<Vec<&'static str>, String> {
    let mut queue = suites;
    let mut running: Vec<Running> = Vec::new();
    let mut failed = Vec::new();
    let mut said_fence = false;
    loop {
        while running.len() < jobs {
            // The first in the queue's order that may start now.
            let Some(at) = queue.iter().position(|s| s.may_start(0, stores)) else {
                if !queue.is_empty() && !said_fence {
                    said_fence = true;
                    stores.say_fence_left(p);
                }
                break;
            };
            let suite = queue.remove(at);
            p.say(&format!("stores: starting {} ({})", suite.name, suite.what));
            let log = stores.dir().join(format!("suite-{}.log", suite.name));
            File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
            let mut r = Running {
                suite,
                next: 0,
                group: None,
                log,
                started: Instant::now(),
            };
            r.spawn_next(&stores.env)?;
            running.push(r);
        }
        if running.is_empty() && queue.is_empty() {
            return Ok(failed);
        }
        if let Some(sig) = stopped_by() {
            return Err(format!(
                "stopped by signal {sig}; the suites running were stopped"
            ));
        }
        let mut i = 0;
        while i < running.len() {
            let r = &mut running[i];
            if r.group.is_none() {
                // Between two commands: the next starts once its Redis init
                // fence (if any) has passed.
                if r.suite.may_start(r.next, stores) {
                    r.spawn_next(&stores.env)?;
                }
                i += 1;
                continue;
            }
            let ended = r.group.as_mut().and_then(Group::poll);
            let Some(f) = ended else {
                i += 1;
                continue;
            };
            r.group = None;
            if f.success() && r.next < r.suite.cmds.len() {
                // Its next command starts on the next turn, once its gate
                // has passed (above).
                i += 1;
                continue;
            }
            let r = running.remove(i);
            let mut text = std::fs::read_to_string(&r.log).unwrap_or_default();
            let mut ok = f.success();
            if ok && text.lines().any(|l| l.starts_with("running 0 tests")) {
                text.push_str(
                    "no test ran: a test filter matches none (xtask/src/part_stores.rs)\n",
                );
                ok = false;
            }
            let how = if ok {
                "passed".to_string()
            } else {
                format!("FAILED ({})", f.status)
            };
            p.say(&format!(
                "stores: {} ({}) {how} in {}s",
                r.suite.name,
                r.suite.what,
                r.started.elapsed().as_secs()
            ));
            print!("{text}");
            if !ok {
                failed.push(r.suite.name);
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The store tests' build in the background: cargo commands one after
/// another, each leading a process group of its own (killed if the part
/// ends first), their diagnostics into a log printed when the build ends.
struct Build {
    pid: Arc<AtomicI32>,
    cancel: Arc<AtomicBool>,
    /// The CLI, once the first command has built it (closed if it failed).
    first: Option<mpsc::Receiver<PathBuf>>,
    thread: Option<JoinHandle<Result<Vec<Artifact>, String>>>,
    log: PathBuf,
}

impl Build {
    fn start(root: &Path, log: &Path, cmds: Vec<Vec<String>>) -> Result<Build, String> {
        let pid = Arc::new(AtomicI32::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, first) = mpsc::channel();
        let (root, logf) = (root.to_path_buf(), log.to_path_buf());
        let (pid2, cancel2) = (Arc::clone(&pid), Arc::clone(&cancel));
        let thread = std::thread::spawn(move || {
            let mut all = Vec::new();
            for (n, args) in cmds.iter().enumerate() {
                if cancel2.load(Ordering::SeqCst) {
                    return Err("the build was stopped".to_string());
                }
                let found = cargo(&root, &logf, args, &pid2)?;
                if n == 0 {
                    if let Some(cli) = found.iter().find(|a| a.name == "snowmint" && !a.test) {
                        let _ = tx.send(cli.path.clone());
                    }
                }
                all.extend(found);
            }
            Ok(all)
        });
        Ok(Build {
            pid,
            cancel,
            first: Some(first),
            thread: Some(thread),
            log: log.to_path_buf(),
        })
    }

    /// Waits for the whole build; prints its diagnostics.
    fn wait(mut self) -> Result<Vec<Artifact>, String> {
        while self.thread.as_ref().is_some_and(|t| !t.is_finished()) {
            if let Some(sig) = stopped_by() {
                return Err(format!("stopped by signal {sig}"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let result = match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            _ => Err("the build's thread panicked".into()),
        };
        eprint!("{}", std::fs::read_to_string(&self.log).unwrap_or_default());
        result.map_err(|e| format!("stores: the build of the store tests failed: {e}"))
    }
}

impl Drop for Build {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::SeqCst);
        let pid = self.pid.load(Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: signalling the cargo process group this build started.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if let Some(dir) = self.log.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// One cargo command of the build (its JSON messages read for the
/// executables, its diagnostics appended to `log`).
fn cargo(
    root: &Path,
    log: &Path,
    args: &[String],
    pid: &AtomicI32,
) -> Result<Vec<Artifact>, String> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    let err = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let mut cmd = Command::new("cargo");
    cmd.args(args)
        .args(["--quiet", "--message-format=json-render-diagnostics"])
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(err)
        .process_group(0);
    let what = format!("cargo {}", args.join(" "));
    let mut child = cmd.spawn().map_err(|e| format!("cannot run {what}: {e}"))?;
    pid.store(i32::try_from(child.id()).unwrap_or(0), Ordering::SeqCst);
    let mut out = String::new();
    if let Some(mut s) = child.stdout.take() {
        let _ = s.read_to_string(&mut out);
    }
    let status = child.wait().map_err(|e| format!("{what}: {e}"))?;
    pid.store(0, Ordering::SeqCst);
    if !status.success() {
        return Err(format!("{what} failed ({status})"));
    }
    Ok(crate::stores::artifacts(&out))
}
