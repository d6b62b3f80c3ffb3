//! The lease stores for a part: each store the server already answering on
//! its standard port (with a database or namespace of this run's own), else
//! a throwaway one from Debian's packages (one module per store). With
//! [`Extra::Yes`] (the stores part) also the dedicated throwaway servers the
//! store tests restart, restore or break, and the servers whose clocks the
//! fault tests step (`clockshift`). Every `SNOWMINT_TEST_*` variable the
//! store tests read is in [`Stores::env`]; everything started here is
//! stopped, and every database created here dropped, when the [`Stores`]
//! are dropped: after a failure, an early return or Ctrl-C alike.

pub(crate) mod clockshift;
mod etcd;
mod mysql;
mod net;
mod postgres;
mod redis;
mod zookeeper;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::{sleep, JoinHandle};
use std::time::{Duration, Instant};

use crate::proc::{stopped_by, Group};
use crate::step::Part;

pub use net::{free_port, shell_word};

/// Whether the store tests' own throwaway servers start too (`STORES_EXTRA`
/// of the shell scripts: the stores part sets it, other parts do not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extra {
    No,
    Yes,
}

/// The stores of one part, up until dropped.
#[derive(Debug)]
pub struct Stores {
    /// Their `SNOWMINT_TEST_*` variables, for the part's commands.
    pub env: Vec<(String, String)>,
    run: Run,
    /// The Redis servers not yet vouched for by `snowmint lease init`.
    unvouched: Vec<String>,
    /// When the last Redis init fence passes.
    ready_at: Option<Instant>,
    /// When the fence of `SNOWMINT_TEST_REDIS_URL`'s server passes (the
    /// clock-stepped one's may pass later).
    redis_ready_at: Option<Instant>,
}

impl Stores {
    /// Starts (or finds) the stores `names` without the store tests'
    /// dedicated servers, vouches for Redis with `snowmint lease init` (the
    /// CLI built beside the servers' start: `cargo build --profile ci -p
    /// snowmint-cli`), waits for its init fence, and returns their
    /// variables, which are also set in this process.
    pub fn up(p: &Part, names: &[&str]) -> Result<Stores, String> {
        let (tx, rx) = mpsc::channel();
        if names.contains(&"redis") {
            p.say("stores: the CLI for `snowmint lease init` (cargo build --profile ci -p snowmint-cli), while the servers start");
            let root = p.root.clone();
            std::thread::spawn(move || match build_cli(&root, &[]) {
                Ok(cli) => drop(tx.send(cli)),
                Err(e) => eprintln!("stores: {e}"),
            });
        }
        let stores = Stores::start(p, names, Extra::No, rx)?;
        stores.fence_wait(p)?;
        for (k, v) in &stores.env {
            std::env::set_var(k, v);
        }
        Ok(stores)
    }

    /// Starts (or finds) the stores `names`, and with [`Extra::Yes`] their
    /// tests' own servers. Redis first (and its clock-stepped twin): once
    /// `cli` gives the CLI, a thread vouches for them with `snowmint lease
    /// init` while the other stores start, so that its fence runs out
    /// meanwhile; the fence is not waited for here ([`Stores::fence_wait`]).
    /// A closed `cli` (its build failed) fails the start if Redis needs it.
    pub fn start<V: Into<Voucher> + Send + 'static>(
        p: &Part,
        names: &[&str],
        extra: Extra,
        cli: mpsc::Receiver<V>,
    ) -> Result<Stores, String> {
        let mut stores = Stores {
            env: Vec::new(),
            run: Run::new()?,
            unvouched: Vec::new(),
            ready_at: None,
            redis_ready_at: None,
        };
        let mut vouching = None;
        if names.contains(&"redis") {
            p.say("stores: redis");
            redis::start(p, &mut stores)?;
            if extra == Extra::Yes {
                clockshift::start_redis(p, &mut stores)?;
            }
            let urls = std::mem::take(&mut stores.unvouched);
            vouching = Some(std::thread::spawn(move || vouch(&cli, urls)));
        }
        // The other stores start side by side, each on a thread of its own
        // with a share of the run ([`Stores::shard`]): PostgreSQL, MariaDB,
        // etcd and ZooKeeper each start up to four servers, one after
        // another, and one after the other they took 25-45 s. What a store
        // that failed had started is stopped by its share; what the others
        // started is taken over, and stopped with the run.
        let others: Vec<&str> = names.iter().copied().filter(|&n| n != "redis").collect();
        let started: Vec<Result<Stores, String>> = std::thread::scope(|scope| {
            let threads: Vec<_> = others
                .iter()
                .map(|&name| {
                    let mut share = stores.shard();
                    let thread = scope.spawn(move || {
                        start_one(p, name, &mut share, extra)?;
                        Ok(share)
                    });
                    (name, thread)
                })
                .collect();
            threads
                .into_iter()
                .map(|(name, t)| {
                    t.join()
                        .unwrap_or_else(|_| Err(format!("stores: starting {name} panicked")))
                })
                .collect()
        });
        let mut failed = Vec::new();
        for r in started {
            match r {
                Ok(share) => stores.absorb(share),
                Err(e) => failed.push(e),
            }
        }
        if !failed.is_empty() {
            return Err(failed.join("; "));
        }
        if let Some(sig) = stopped_by() {
            return Err(format!("stopped by signal {sig}"));
        }
        if let Some(v) = vouching {
            let fences = match v.join() {
                Ok(r) => r?,
                Err(_) => return Err("stores: the thread vouching for Redis panicked".into()),
            };
            for (url, at, wait) in fences {
                if wait.is_zero() {
                    p.say(&format!("redis: lease init on {url}: ready"));
                    continue;
                }
                // Whole seconds, rounded up: the margin the shell gave too.
                let until = at + Duration::from_secs(wait.as_millis().div_ceil(1000) as u64);
                stores.ready_at = Some(stores.ready_at.map_or(until, |t| t.max(until)));
                if stores.var("SNOWMINT_TEST_REDIS_URL") == Some(url.as_str()) {
                    stores.redis_ready_at = Some(until);
                }
                p.say(&format!(
                    "redis: lease init on {url}: new spaces fenced for {} ms from then",
                    wait.as_millis()
                ));
            }
        }
        Ok(stores)
    }

    /// When the last Redis init fence passes (`None`: no fence).
    pub fn ready_at(&self) -> Option<Instant> {
        self.ready_at
    }

    /// When the init fence of the Redis that `SNOWMINT_TEST_REDIS_URL`
    /// names passes (`None`: no fence); the tests that use only that server
    /// may start then.
    pub fn redis_ready_at(&self) -> Option<Instant> {
        self.redis_ready_at
    }

    /// Says how long the Redis init fence has to run.
    pub fn say_fence_left(&self, p: &Part) {
        if let Some(at) = self.ready_at {
            let left = at.saturating_duration_since(Instant::now());
            p.say(&format!(
                "stores: {}s more for the Redis init fence",
                left.as_secs_f64().ceil()
            ));
        }
    }

    /// Sleeps until every Redis init fence has passed (saying how long).
    pub fn fence_wait(&self, p: &Part) -> Result<(), String> {
        let Some(at) = self.ready_at else {
            return Ok(());
        };
        if at <= Instant::now() {
            return Ok(());
        }
        self.say_fence_left(p);
        while Instant::now() < at {
            if let Some(sig) = stopped_by() {
                return Err(format!("stopped by signal {sig}"));
            }
            sleep(Duration::from_millis(100).min(at.saturating_duration_since(Instant::now())));
        }
        Ok(())
    }

    /// A store's URL (`SNOWMINT_TEST_<STORE>_URL`).
    pub fn url(&self, store: &str) -> Result<&str, String> {
        let key = format!("SNOWMINT_TEST_{}_URL", store.to_ascii_uppercase());
        self.var(&key)
            .ok_or_else(|| format!("the stores gave no {key}"))
    }

    /// The folder of this run's servers (their data and logs).
    pub fn dir(&self) -> &Path {
        &self.run.dir
    }

    fn var(&self, key: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn set(&mut self, key: &str, value: impl Into<String>) {
        self.env.push((key.to_string(), value.into()));
    }

    /// A share of this run for one store's start on a thread of its own:
    /// the same folder and reaper, its own variables and stops, handed over
    /// by [`Stores::absorb`] (dropped instead, it stops what it started).
    fn shard(&self) -> Stores {
        Stores {
            env: Vec::new(),
            run: self.run.shard(),
            unvouched: Vec::new(),
            ready_at: None,
            redis_ready_at: None,
        }
    }

    /// Takes over what `share` started.
    fn absorb(&mut self, mut share: Stores) {
        self.env.append(&mut share.env);
        self.run.stops.append(&mut share.run.stops);
        self.unvouched.append(&mut share.unvouched);
    }
}

/// Starts (or finds) the store `name` (not Redis), and with [`Extra::Yes`]
/// its tests' own servers.
fn start_one(p: &Part, name: &str, s: &mut Stores, extra: Extra) -> Result<(), String> {
    p.say(&format!("stores: {name}"));
    match name {
        "postgres" => {
            postgres::start(p, s, extra)?;
            if extra == Extra::Yes {
                clockshift::start_postgres(p, s)?;
            }
        }
        "mysql" => mysql::start(p, s, extra)?,
        "etcd" => etcd::start(p, s, extra)?,
        "zookeeper" => zookeeper::start(p, s, extra)?,
        other => return Err(format!("no such store: {other}")),
    }
    match stopped_by() {
        Some(sig) => Err(format!("stopped by signal {sig}")),
        None => Ok(()),
    }
}

/// `snowmint lease init` on each of `urls`, with the CLI `cli` gives: for
/// each, when it ran and how long its fence has to run.
fn vouch<V: Into<Voucher>>(
    cli: &mpsc::Receiver<V>,
    urls: Vec<String>,
) -> Result<Vec<(String, Instant, Duration)>, String> {
    let cli: Voucher = cli
        .recv()
        .map_err(|_| {
            "stores: no CLI for `snowmint lease init` (its build failed: above)".to_string()
        })?
        .into();
    let mut fences = Vec::new();
    for url in urls {
        let at = Instant::now();
        let wait = redis::lease_init(&cli, &url)?;
        fences.push((url, at, wait));
    }
    Ok(fences)
}

/// What vouches for a Redis: a program run with its `args`, then `--store
/// URL --json`, printing the JSON of `snowmint lease init --json` (the CLI,
/// or a test program running the lease crate's same init).
#[derive(Debug, Clone)]
pub struct Voucher {
    pub program: PathBuf,
    pub args: Vec<String>,
}

/// The CLI: `snowmint lease init`.
impl From<PathBuf> for Voucher {
    fn from(cli: PathBuf) -> Voucher {
        Voucher {
            program: cli,
            args: vec!["lease".into(), "init".into()],
        }
    }
}

/// `cargo build --profile ci -p snowmint-cli` (every store: its default
/// features), as the interop part builds it, with `extra` arguments (the
/// harness's control builds: a feature, a target folder): the CLI's path.
pub fn build_cli(root: &Path, extra: &[&str]) -> Result<PathBuf, String> {
    let mut cmd = Command::new("cargo");
    cmd.args([
        "build",
        "--profile",
        "ci",
        "-p",
        "snowmint-cli",
        "--bin",
        "snowmint",
    ])
    .args(["--quiet", "--message-format=json-render-diagnostics"])
    .args(extra)
    .current_dir(root)
    .stdin(Stdio::null())
    .stderr(Stdio::inherit());
    let out = cmd.output().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo build -p snowmint-cli failed ({})",
            out.status
        ));
    }
    artifacts(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .find(|a| a.name == "snowmint" && !a.test)
        .map(|a| a.path)
        .ok_or_else(|| "cargo build -p snowmint-cli built no snowmint binary".to_string())
}

/// An executable cargo built.
#[derive(Debug, Clone)]
pub struct Artifact {
    pub name: String,
    pub path: PathBuf,
    /// A test harness (else a binary).
    pub test: bool,
}

/// The executables in cargo's JSON messages (`compiler-artifact`).
pub fn artifacts(json: &str) -> Vec<Artifact> {
    let mut found = Vec::new();
    for line in json.lines() {
        let Ok(m) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if m["reason"] != "compiler-artifact" {
            continue;
        }
        let (Some(exe), Some(name)) = (m["executable"].as_str(), m["target"]["name"].as_str())
        else {
            continue;
        };
        found.push(Artifact {
            name: name.to_string(),
            path: PathBuf::from(exe),
            test: m["profile"]["test"].as_bool().unwrap_or(false),
        });
    }
    found
}

/// How to undo one thing a store started or created.
#[derive(Debug)]
enum Stop {
    /// The process whose pid the file holds (a restart script may have
    /// replaced it): SIGTERM, then SIGKILL after `grace`.
    Pid { file: PathBuf, grace: Duration },
    /// A command (a server's own stop, a database's drop), bounded.
    Cmd {
        argv: Vec<OsString>,
        within: Duration,
    },
    /// These one after another (an etcd cluster: stopped at once, its
    /// leader waits for a member that is going away).
    Seq(Vec<Stop>),
}

impl Stop {
    fn run(self) {
        match self {
            Stop::Pid { file, grace } => {
                if let Some(pid) = read_pid(&file) {
                    stop_pid(pid, grace);
                }
            }
            Stop::Cmd { argv, within } => {
                let Some((prog, args)) = argv.split_first() else {
                    return;
                };
                let mut cmd = Command::new(prog);
                cmd.args(args).stdout(Stdio::null()).stderr(Stdio::null());
                let _ = net::output_within(&mut cmd, within);
            }
            Stop::Seq(stops) => stops.into_iter().for_each(Stop::run),
        }
    }
}

fn read_pid(file: &Path) -> Option<libc::pid_t> {
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

/// SIGTERM, then SIGKILL if `pid` still runs after `grace`.
fn stop_pid(pid: libc::pid_t, grace: Duration) {
    if pid <= 0 {
        return;
    }
    // SAFETY: signals to a pid this run started; no memory involved.
    if unsafe { libc::kill(pid, libc::SIGTERM) } != 0 {
        return;
    }
    let end = Instant::now() + grace;
    while Instant::now() < end {
        // SAFETY: as above (signal 0 only checks).
        if unsafe { libc::kill(pid, 0) } != 0 {
            return;
        }
        sleep(Duration::from_millis(50));
    }
    // SAFETY: as above.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

/// This run's folder, its servers' process groups and the stops.
#[derive(Debug)]
struct Run {
    dir: PathBuf,
    stops: Vec<Stop>,
    /// A share of another run ([`Run::shard`]): its drop runs its own stops
    /// only, leaving the folder, the reaper and the groups to that run.
    share: bool,
    /// The servers started here, each leading a process group: reaped as
    /// they exit (a restart script waits for its server to be gone, which
    /// an unreaped child never is), killed at the end if still there.
    groups: Arc<Mutex<Vec<Group>>>,
    done: Arc<AtomicBool>,
    reaper: Option<JoinHandle<()>>,
}

impl Run {
    fn new() -> Result<Run, String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = PathBuf::from(format!(
            "/tmp/snowmint-stores-{}-{nanos:x}",
            std::process::id()
        ));
        crate::step::mkdir(&dir)?;
        // Readable by the postgres user, who runs the PostgreSQL servers as root.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        let groups: Arc<Mutex<Vec<Group>>> = Arc::default();
        let done = Arc::new(AtomicBool::new(false));
        let (g, d) = (Arc::clone(&groups), Arc::clone(&done));
        let reaper = std::thread::spawn(move || {
            while !d.load(Ordering::SeqCst) {
                if let Ok(mut groups) = g.lock() {
                    for g in groups.iter_mut() {
                        let _ = g.poll();
                    }
                }
                sleep(Duration::from_millis(50));
            }
        });
        Ok(Run {
            dir,
            stops: Vec::new(),
            share: false,
            groups,
            done,
            reaper: Some(reaper),
        })
    }

    /// A share of this run ([`Stores::shard`]).
    fn shard(&self) -> Run {
        Run {
            dir: self.dir.clone(),
            stops: Vec::new(),
            share: true,
            groups: Arc::clone(&self.groups),
            done: Arc::clone(&self.done),
            reaper: None,
        }
    }

    /// Starts `cmd` as a server leading a process group of its own, its
    /// output to `log`, its pid written to `pid_file`, stopped at the end
    /// through that file (SIGTERM, SIGKILL after `grace`) unless `stop` is
    /// false (the caller adds a stop of its own). Returns its pid.
    fn spawn(
        &mut self,
        cmd: &mut Command,
        log: &Path,
        pid_file: &Path,
        grace: Duration,
        stop: bool,
    ) -> Result<libc::pid_t, String> {
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("{}: {e}", log.display()))?;
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        let group = Group::spawn(cmd)
            .map_err(|e| format!("cannot start {}: {e}", crate::step::show(cmd)))?;
        let pid = group.pid();
        std::fs::write(pid_file, format!("{pid}\n"))
            .map_err(|e| format!("{}: {e}", pid_file.display()))?;
        if let Ok(mut groups) = self.groups.lock() {
            groups.push(group);
        }
        if stop {
            self.stops.push(Stop::Pid {
                file: pid_file.to_path_buf(),
                grace,
            });
        }
        Ok(pid)
    }
}

impl Drop for Run {
    /// Every stop at once (each is its own server's or database's; a
    /// MariaDB stop alone takes 2 s), then what is left of the groups.
    fn drop(&mut self) {
        let threads: Vec<JoinHandle<()>> = std::mem::take(&mut self.stops)
            .into_iter()
            .map(|s| std::thread::spawn(move || s.run()))
            .collect();
        for t in threads {
            let _ = t.join();
        }
        if self.share {
            return;
        }
        self.done.store(true, Ordering::SeqCst);
        if let Some(r) = self.reaper.take() {
            let _ = r.join();
        }
        if let Ok(mut groups) = self.groups.lock() {
            groups.clear(); // each Group's drop stops what is left of it
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Polls `ready` every `every` until it holds, `within` passes (an error
/// naming `what` and its log), the runner is stopped, or `alive` says the
/// server has exited.
fn wait_for(
    what: &str,
    log: &Path,
    within: Duration,
    every: Duration,
    mut alive: impl FnMut() -> bool,
    mut ready: impl FnMut() -> bool,
) -> Result<(), String> {
    let end = Instant::now() + within;
    loop {
        if ready() {
            return Ok(());
        }
        if let Some(sig) = stopped_by() {
            return Err(format!("{what}: stopped by signal {sig}"));
        }
        if !alive() {
            return Err(format!(
                "{what} exited before it answered (log: {})",
                log.display()
            ));
        }
        if Instant::now() >= end {
            return Err(format!(
                "{what} did not answer within {} s (log: {})",
                within.as_secs(),
                log.display()
            ));
        }
        sleep(every);
    }
}

/// Whether the process `pid` still runs.
fn alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// The last lines of a log, for an error.
fn tail(log: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Whether this process runs as root (PostgreSQL then runs as postgres).
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Writes an executable script (a restart command the tests run).
fn write_script(path: &Path, text: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{}: {e}", path.display()))
}
