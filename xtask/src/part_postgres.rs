//! The `postgres` part: the PostgreSQL extension (bindings-postgres/, its own
//! cargo workspace) built and installed with cargo-pgrx into the machine's
//! PostgreSQL 15, then tested in SQL against a throwaway cluster of its own
//! started with `shared_preload_libraries = snowmint` (never the machine's
//! server on 5432): the shared vectors, 16 connections minting at once, bad
//! input, convert_sequence (bindings-postgres/sqltest); then the leased
//! generators on a third cluster of its own, which the tests restart and
//! kill (`snowmint-pg-sqltest lease`, bindings-postgres/sqltest/src/lease.rs;
//! last there, leased generators on MySQL/MariaDB, Redis, etcd, ZooKeeper);
//! beside them, a failover (a primary and a streaming replica the SQL tests
//! start, `snowmint-pg-sqltest failover`,
//! bindings-postgres/sqltest/src/lease/failover.rs), then wall-clock steps on
//! a fourth, running under libfaketime (`snowmint-pg-sqltest clock`,
//! bindings-postgres/sqltest/src/clock.rs).
//!
//! `cargo xtask install-pg [--pg-config PATH]` (scripts/install-pg) is the
//! install step alone, for users.
//!
//! The extension's builds go to their own persistent directory
//! (`~/.cache/snowmint/postgres`, or `$SNOWMINT_BUILD_DIR-postgres`): the
//! separate workspace shares no artifacts with the main one, and a one-line
//! change rebuilds only the extension.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::proc::Group;
use crate::step::{mkdir, remove_dir, Part};
use crate::stores::{Extra, Stores, Voucher};
use crate::tools::{apt, cargo_tool, FileLock, Source};

/// pgrx and cargo-pgrx, pinned together (bindings-postgres/Cargo.toml; 0.19
/// needs Rust 1.96, CONTRIBUTING.md).
pub const PGRX_VERSION: &str = "0.18.1";

/// The flags `cargo pgrx install` builds with on Linux (cargo-pgrx 0.18 adds
/// them as a `--config` of target rustflags: the linker then keeps the
/// section the extension's schema is read from). The SQL tests are built
/// with the same flags, and ask for the same features of what both link
/// (the build-time-only lines of bindings-postgres/Cargo.toml and its
/// sqltest's, checked by `cargo tree` before the build), so that the crates
/// they share are compiled once, not once per set of flags or features (a
/// new machine's first build of the extension after them: 289 s without
/// the flags, 204 s with them and 149 crates still compiled twice).
const PGRX_RUSTFLAGS: &str = "-C link-arg=-Wl,--no-gc-sections";

/// The PostgreSQL the part builds for (Debian's packages).
const PG_MAJOR: &str = "15";

fn build_dir() -> PathBuf {
    match std::env::var("SNOWMINT_BUILD_DIR").as_deref() {
        Ok(dir) if !dir.is_empty() && dir != "target" => PathBuf::from(format!("{dir}-postgres")),
        _ => crate::tools::cache_dir().join("snowmint/postgres"),
    }
}

/// A cargo command in the extension's workspace, building into its directory.
fn cargo(p: &Part, target: &Path) -> Command {
    let mut cmd = p.cmd("cargo");
    cmd.current_dir(p.root.join("bindings-postgres"))
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_BUILD_BUILD_DIR", target)
        .env("NO_COLOR", "1");
    cmd
}

fn pg_config_output(pg_config: &Path, arg: &str) -> Result<String, String> {
    let out = Command::new(pg_config)
        .arg(arg)
        .output()
        .map_err(|e| format!("cannot run {} {arg}: {e}", pg_config.display()))?;
    if !out.status.success() {
        return Err(format!("{} {arg} failed", pg_config.display()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Builds the extension (release profile) and installs it into the
/// PostgreSQL `pg_config` names, with cargo-pgrx `PGRX_VERSION` (installed
/// first if missing). cargo-pgrx is configured with that pg_config alone
/// (a config.toml of our own): it never downloads or builds a PostgreSQL.
pub fn install(p: &Part, pg_config: &Path) -> Result<(), String> {
    let version = pg_config_output(pg_config, "--version")?;
    let major = version
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').next())
        .filter(|m| m.chars().all(|c| c.is_ascii_digit()) && !m.is_empty())
        .ok_or_else(|| {
            format!(
                "{}: cannot read the major version of {version:?}",
                pg_config.display()
            )
        })?
        .to_string();
    // On PATH from here on (`cargo pgrx` below finds it there).
    cargo_tool(
        p,
        "cargo-pgrx",
        PGRX_VERSION,
        "cargo-pgrx",
        Source::Registry,
        &["--locked"],
    )?;
    let target = build_dir();
    let pgrx_home = target.join("pgrx-home");
    mkdir(&pgrx_home)?;
    // Written only when it changes: pgrx-pg-sys's build script reruns (bindgen,
    // then everything above it) whenever the file's time does.
    let config = pgrx_home.join("config.toml");
    let text = format!(
        "[configs]\npg{major} = {:?}\n",
        pg_config.display().to_string()
    );
    if std::fs::read_to_string(&config).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&config, text).map_err(|e| format!("writing {}: {e}", config.display()))?;
    }
    p.say(&format!(
        "cargo pgrx install --release --pg-config {} (PostgreSQL {major}, build in {})",
        pg_config.display(),
        target.display()
    ));
    let mut cmd = cargo(p, &target);
    cmd.env("PGRX_HOME", &pgrx_home)
        .env("PGRX_PG_CONFIG_PATH", pg_config)
        .args([
            "pgrx",
            "install",
            "--release",
            "--no-default-features",
            "--features",
        ])
        .arg(format!("pg{major}"))
        .arg("--pg-config")
        .arg(pg_config);
    p.check(&mut cmd)
}

/// `cargo xtask install-pg [--pg-config PATH]` (scripts/install-pg).
pub fn install_command(root: &Path, args: &[String]) -> u8 {
    let pg_config = match args {
        [] => crate::tools::which("pg_config"),
        [flag, path] if flag == "--pg-config" => Some(PathBuf::from(path)),
        _ => {
            eprintln!("usage: cargo xtask install-pg [--pg-config PATH]");
            return 2;
        }
    };
    let Some(pg_config) = pg_config else {
        eprintln!("install-pg: no pg_config on PATH (Debian: postgresql-server-dev-NN), or pass --pg-config PATH");
        return 2;
    };
    let p = Part::new(root);
    match install(&p, &pg_config) {
        Ok(()) => {
            println!(
                "\nInstalled. Add snowmint to shared_preload_libraries in postgresql.conf, restart \
                 the server, then: CREATE EXTENSION snowmint;"
            );
            0
        }
        Err(e) => {
            eprintln!("install-pg: {e}");
            1
        }
    }
}

/// A throwaway cluster of the part's own, stopped when dropped (after a
/// failure or an early return too).
struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    as_postgres: bool,
    /// The server options it was started with (`pg_ctl -o`).
    opts: String,
}

/// The environment of a server under libfaketime reading its offset from
/// `offset` on every clock call ("+0", "-1.5": seconds), its monotonic
/// clocks real (as the stores part's clockshift.rs runs one).
fn faketime_env(lib: &Path, offset: &Path) -> Vec<(String, String)> {
    vec![
        ("LD_PRELOAD".into(), lib.display().to_string()),
        (
            "FAKETIME_TIMESTAMP_FILE".into(),
            offset.display().to_string(),
        ),
        ("FAKETIME_NO_CACHE".into(), "1".into()),
        ("FAKETIME_DONT_FAKE_MONOTONIC".into(), "1".into()),
    ]
}

impl Cluster {
    fn command(&self, program: &str) -> Command {
        let exe = self.bin.join(program);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        }
    }

    fn stop(&self, mode: &str) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", mode, "-w", "-t", "30", "stop"])
            .output();
    }

    /// initdb in `dir` (emptied first; a server left running there by an
    /// interrupted run is stopped) and a server on a free port with the
    /// extension preloaded. Returns the cluster and its port.
    fn start(p: &Part, bin: &Path, dir: &Path, preload: bool) -> Result<(Cluster, u16), String> {
        Self::start_with(p, bin, dir, preload, " -c fsync=off", &[])
    }

    /// [`start`](Self::start) with `extra` server options and the server's
    /// environment `env` besides the runner's.
    fn start_with(
        p: &Part,
        bin: &Path,
        dir: &Path,
        preload: bool,
        extra: &str,
        env: &[(String, String)],
    ) -> Result<(Cluster, u16), String> {
        // SAFETY: geteuid cannot fail.
        let as_postgres = unsafe { libc::geteuid() } == 0;
        let mut cluster = Cluster {
            bin: bin.to_path_buf(),
            data: dir.join("data"),
            as_postgres,
            opts: String::new(),
        };
        if cluster.data.join("postmaster.pid").is_file() {
            cluster.stop("immediate");
        }
        remove_dir(dir)?;
        mkdir(dir)?;
        if as_postgres {
            p.check(Command::new("chown").arg("postgres:postgres").arg(dir))?;
        }
        p.check(
            cluster
                .command("initdb")
                .arg("-D")
                .arg(&cluster.data)
                .args(["--auth=trust", "-U", "postgres", "-E", "UTF8", "--no-sync"])
                .stdout(std::process::Stdio::null()),
        )?;
        let mut port = crate::stores::free_port()?;
        for attempt in 1..=5 {
            cluster.opts = format!(
                "-k {} -p {port} -c listen_addresses=127.0.0.1 -c max_connections=100{extra}{}",
                dir.display(),
                if preload {
                    " -c shared_preload_libraries=snowmint"
                } else {
                    ""
                }
            );
            let ok = cluster
                .command("pg_ctl")
                .arg("-D")
                .arg(&cluster.data)
                .arg("-l")
                .arg(dir.join("server.log"))
                .args(["-w", "-t", "30", "-o"])
                .arg(&cluster.opts)
                .arg("start")
                .envs(env.iter().map(|(k, v)| (k, v)))
                .stdout(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return Ok((cluster, port));
            }
            let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
            if attempt == 5 || !log.contains("Address already in use") {
                let tail: Vec<&str> = log.lines().rev().take(20).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                return Err(format!(
                    "the test cluster did not start (log {}):\n{}",
                    dir.join("server.log").display(),
                    tail.join("\n")
                ));
            }
            port = crate::stores::free_port()?;
        }
        unreachable!("the loop returns")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop("fast");
    }
}

/// The Debian packages the part builds and runs with.
fn tools(p: &Part) -> Result<(), String> {
    p.say(&format!(
        "tools: PostgreSQL {PG_MAJOR} server and headers, libclang (bindgen), cargo-pgrx {PGRX_VERSION}"
    ));
    apt(
        p,
        &[
            &format!("postgresql-{PG_MAJOR}"),
            &format!("postgresql-server-dev-{PG_MAJOR}"),
            "libclang-dev",
        ],
    )
}

fn pg_bin() -> PathBuf {
    PathBuf::from(format!("/usr/lib/postgresql/{PG_MAJOR}/bin"))
}

/// Builds the SQL tests; their binary.
fn build_sqltest(p: &Part, target: &Path) -> Result<PathBuf, String> {
    p.say(&format!(
        "building the SQL tests (bindings-postgres/sqltest, RUSTFLAGS={PGRX_RUSTFLAGS:?})"
    ));
    p.check(cargo(p, target).env("RUSTFLAGS", PGRX_RUSTFLAGS).args([
        "build",
        "--release",
        "--quiet",
        "-p",
        "snowmint-pg-sqltest",
    ]))?;
    Ok(target.join("release/snowmint-pg-sqltest"))
}

/// Takes the machine's install lock: the extension goes into that
/// PostgreSQL's own folders, which every checkout on the machine shares.
fn install_lock(p: &Part) -> Result<FileLock, String> {
    let lock = std::env::temp_dir().join(format!("snowmint-postgres-{PG_MAJOR}.lock"));
    p.say(&format!(
        "the install lock {} (one checkout at a time)",
        lock.display()
    ));
    FileLock::acquire(&lock)
}

/// `run-part postgres-build`: what the part builds, ahead of it (the test
/// command's second lane, `parts::LANE`): the tools, the SQL tests and the
/// extension, built and installed as the part then does again, finding
/// every build fresh (the part installs again under the lock: another
/// checkout may have installed since).
pub fn build(p: &Part) -> Result<(), String> {
    tools(p)?;
    let target = build_dir();
    build_sqltest(p, &target)?;
    let _installed = install_lock(p)?;
    install(p, &pg_bin().join("pg_config"))
}

pub fn run(p: &Part) -> Result<(), String> {
    tools(p)?;
    let bin = pg_bin();
    let pg_config = bin.join("pg_config");
    let target = build_dir();

    p.say("cargo fmt --check (bindings-postgres)");
    p.check(cargo(p, &target).args(["fmt", "--all", "--", "--check"]))?;
    p.say("one feature set for what the extension and the SQL tests both link (cargo tree)");
    let shared = crate::part_core::consistency::unified_in(
        p,
        &p.root.join("bindings-postgres"),
        &[("snowmint-postgres", &[]), ("snowmint-pg-sqltest", &[])],
        "the build-time-only lines of bindings-postgres/Cargo.toml (their comment says why)",
    )?;
    println!("one feature set for each of the {shared} packages both link");

    // First: it vouches for a Redis (its init fence runs out meanwhile).
    let sqltest = build_sqltest(p, &target)?;
    // The CLI, an application holder of its own beside the database's
    // generator (the lease tests, SNOWMINT_CLI).
    p.say("the CLI (cargo build --profile ci -p snowmint-cli)");
    let cli = crate::stores::build_cli(&p.root, &[])?;
    // The stores across machines start (or are found) while the extension
    // builds and the first clusters' tests run.
    std::thread::scope(|s| {
        let stores = s.spawn(|| lease_stores(p, &sqltest));
        tests(p, &bin, &pg_config, &sqltest, &cli, stores)
    })
}

/// MySQL/MariaDB, Redis, etcd and ZooKeeper for the leased generators on
/// them: the servers answering on their standard ports (MariaDB with a
/// database of this run's own), else throwaway ones (xtask/src/stores/);
/// a Redis vouched for with the SQL tests' `init` (the lease crate's own,
/// as `snowmint lease init` runs it).
fn lease_stores(p: &Part, sqltest: &Path) -> Result<Stores, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let _ = tx.send(Voucher {
        program: sqltest.to_path_buf(),
        args: vec!["init".into()],
    });
    Stores::start(p, &["redis", "mysql", "etcd", "zookeeper"], Extra::No, rx)
}

fn tests(
    p: &Part,
    bin: &Path,
    pg_config: &Path,
    sqltest: &Path,
    cli: &Path,
    stores: std::thread::ScopedJoinHandle<'_, Result<Stores, String>>,
) -> Result<(), String> {
    // From the install to the end of the tests one run at a time, so that
    // each tests what it installed.
    let _installed = install_lock(p)?;
    install(p, pg_config)?;

    // The clusters live where the `postgres` user can reach them (a build
    // directory under root's home is not: /root is private).
    // One folder per run (checkouts may test at once), removed at the end.
    let clusters = std::env::temp_dir().join(format!("snowmint-postgres-{}", std::process::id()));
    mkdir(&clusters)?;
    let dir = clusters.join("cluster");
    p.say(&format!(
        "a throwaway cluster with shared_preload_libraries=snowmint ({})",
        dir.display()
    ));
    let (cluster, port) = Cluster::start(p, bin, &dir, true)?;
    // And one without the preload: next_id must say what is missing.
    let (bare, bare_port) = Cluster::start(p, bin, &clusters.join("cluster-bare"), false)?;
    p.say(&format!(
        "SQL tests on 127.0.0.1:{port} (and 127.0.0.1:{bare_port}, not preloaded)"
    ));
    // A group of its own, stopped with the runner; the clusters are stopped
    // by their drops below on every way out.
    let result = run_sqltest(
        Command::new(sqltest)
            .env("SNOWMINT_PG_DUMP", bin.join("pg_dump"))
            .arg(conninfo(port))
            .arg(p.root.join("vectors"))
            .arg(conninfo(bare_port)),
        "SQL tests",
    );
    drop(bare);
    drop(cluster);
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&clusters);
        return result;
    }

    let stores = match stores.join() {
        Ok(Ok(stores)) => stores,
        Ok(Err(e)) => {
            let _ = std::fs::remove_dir_all(&clusters);
            return Err(e);
        }
        Err(_) => return Err("the thread starting the stores panicked".into()),
    };
    // The lease tests, and beside them the failover and then the clock-step
    // tests, each on clusters of their own: all three mostly wait (the part
    // used 15 s of CPU in 90), and one after another they took 58, 13 and
    // 10 s. The side's output goes to a log printed after the lease tests'.
    let faketime =
        apt(p, &["libfaketime"]).and_then(|()| crate::stores::clockshift::faketime_lib());
    let faketime = match faketime {
        Ok(lib) => lib,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&clusters);
            return Err(e);
        }
    };
    let side_log = clusters.join("failover-and-clock.log");
    let (result, side) = std::thread::scope(|s| {
        let side = s.spawn(|| failover_and_clock(p, bin, &clusters, sqltest, &faketime, &side_log));
        let result = lease_tests(p, bin, &clusters, sqltest, cli, &stores);
        let side = side
            .join()
            .unwrap_or_else(|_| Err("the failover and clock-step thread panicked".into()));
        (result, side)
    });
    print!("{}", std::fs::read_to_string(&side_log).unwrap_or_default());
    drop(stores);
    let _ = std::fs::remove_dir_all(&clusters);
    result.and(side)
}

fn conninfo(port: u16) -> String {
    format!("host=127.0.0.1 port={port} user=postgres dbname=postgres")
}

/// The leased generators on a cluster of their own (restarted and killed by
/// the tests), then on the stores across machines.
fn lease_tests(
    p: &Part,
    bin: &Path,
    clusters: &Path,
    sqltest: &Path,
    cli: &Path,
    stores: &Stores,
) -> Result<(), String> {
    // With fsync on (the lease store refuses a server without it), and
    // background worker slots for the launcher and a lease worker in each
    // of the 8 databases one test fills (besides PostgreSQL's own).
    let dir = clusters.join("cluster-lease");
    let (lease, port) =
        Cluster::start_with(p, bin, &dir, true, " -c max_worker_processes=16", &[])?;
    p.say(&format!(
        "lease tests on 127.0.0.1:{port} (pg_ctl restart, SIGKILL of the postmaster, a stolen slot, \
         nine databases; then MySQL/MariaDB, Redis, etcd, ZooKeeper)"
    ));
    // Their Redis test is last: the init fence, if any, runs out meanwhile
    // (the tests wait for what is left of it then: the Unix ms it passes).
    stores.say_fence_left(p);
    let fence_left = stores.ready_at().map_or(Duration::ZERO, |at| {
        at.saturating_duration_since(Instant::now())
    });
    let ready_at_ms = (SystemTime::now() + fence_left)
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let result = run_sqltest(
        Command::new(sqltest)
            .envs(stores.env.iter().map(|(k, v)| (k, v)))
            .env("SNOWMINT_TEST_REDIS_READY_AT_MS", ready_at_ms.to_string())
            .env("SNOWMINT_CLI", cli)
            .env("SNOWMINT_PG_BIN", bin)
            .env("SNOWMINT_PG_DATA", &lease.data)
            .env("SNOWMINT_PG_LOG", dir.join("server.log"))
            .env("SNOWMINT_PG_OPTS", &lease.opts)
            .env(
                "SNOWMINT_PG_AS_POSTGRES",
                if lease.as_postgres { "1" } else { "0" },
            )
            .arg("lease")
            .arg(conninfo(port))
            .arg(port.to_string()),
        "lease tests",
    );
    drop(lease);
    result
}

/// A failover (a primary and a streaming replica the tests start under
/// their folder, synchronous then asynchronous, the primary shut down
/// immediately, the replica promoted); then a wall-clock step (a cluster
/// under libfaketime, fsync on for its leased generator, its offset in a
/// file the tests rewrite). Their output into `log`.
fn failover_and_clock(
    p: &Part,
    bin: &Path,
    clusters: &Path,
    sqltest: &Path,
    faketime: &Path,
    log: &Path,
) -> Result<(), String> {
    let out = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let to_log = || {
        out.try_clone()
            .map_err(|e| format!("{}: {e}", log.display()))
    };
    let dir = clusters.join("cluster-failover");
    mkdir(&dir)?;
    p.say(&format!(
        "failover tests beside the lease tests, in {} (a primary and a streaming replica, the replica promoted; their output after the lease tests')",
        dir.display()
    ));
    // SAFETY: geteuid cannot fail.
    let as_postgres = unsafe { libc::geteuid() } == 0;
    run_sqltest(
        Command::new(sqltest)
            .env("SNOWMINT_PG_BIN", bin)
            .env(
                "SNOWMINT_PG_AS_POSTGRES",
                if as_postgres { "1" } else { "0" },
            )
            .arg("failover")
            .arg(&dir)
            .stdout(to_log()?)
            .stderr(to_log()?),
        "failover tests",
    )?;

    // Readable by the postgres user (the clusters' folder is).
    let offset = clusters.join("clock-offset");
    std::fs::write(&offset, "+0\n").map_err(|e| format!("{}: {e}", offset.display()))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&offset, std::fs::Permissions::from_mode(0o644))
            .map_err(|e| format!("{}: {e}", offset.display()))?;
    }
    let dir = clusters.join("cluster-clock");
    let (clock, port) =
        Cluster::start_with(p, bin, &dir, true, "", &faketime_env(faketime, &offset))?;
    p.say(&format!(
        "clock-step tests beside the lease tests, on 127.0.0.1:{port} (libfaketime, offset in {})",
        offset.display()
    ));
    let result = run_sqltest(
        Command::new(sqltest)
            .arg("clock")
            .arg(conninfo(port))
            .arg(&offset)
            .stdout(to_log()?)
            .stderr(to_log()?),
        "clock-step tests",
    );
    drop(clock);
    result
}

/// Runs the SQL test driver `cmd` in a process group of its own (stopped
/// with the runner); `what` names it in the error.
fn run_sqltest(cmd: &mut Command, what: &str) -> Result<(), String> {
    let exe = std::path::PathBuf::from(cmd.get_program());
    let tests = Group::spawn(cmd).map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    match tests.wait() {
        Ok(f) if f.success() => Ok(()),
        Ok(f) => Err(format!("the {what} failed ({})", f.status)),
        Err(sig) => Err(format!("stopped by signal {sig}")),
    }
}
