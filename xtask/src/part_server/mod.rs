//! The `server` part: the ID service (server/).
//!
//! 1. rustfmt; the benchmarks' crates (the core's against peer crates, the
//!    gRPC and the paced HTTP load generators) under clippy -D warnings, and
//!    bench/pace's response reader test;
//! 2. the server's tests, built once (`cargo test --no-run`, clippy as they
//!    build) and run directly from server/ (as cargo runs them): the
//!    integration tests and the unit tests on file leases, in name order;
//! 3. the fault tests (server/tests/faults.rs, `--ignored`) on PostgreSQL,
//!    MariaDB, Redis, etcd and ZooKeeper (the servers already running, else
//!    throwaway ones) and under a wall clock step (libfaketime): two servers
//!    per store called over HTTP, gRPC and Thrift at once for
//!    `SNOWMINT_TEST_HAMMER_SECS` (default 10), SIGKILL under load and
//!    restart, the store cut off past the reservation by a proxy, SIGTERM
//!    under load; and a server paused past its TTL while others take its
//!    slot, which claims again (server/tests/heal.rs);
//! 4. the READMEs' service examples, run as written
//!    (server/tests/readme_example.py);
//! 5. a live server called by clients in four languages ([`clients`]):
//!    curl, Python (urllib), Node (fetch), Java (java.net.http, compiled
//!    here with javac), gRPC from Python (grpcio, stubs from grpcio-tools);
//!    schemathesis checks server/openapi.yaml against it, Prometheus'
//!    parsers and naming rules its /metrics (server/tests/metrics_format.py);
//!    every ID any client got is unique; SIGTERM exits 0, the lease released;
//! 6. Twitter's Thrift service called by the clients the official compiler
//!    generates, in Python and Java ([`thrift`]);
//! 7. TLS with HTTP/1.1 and HTTP/2, and two servers on one Redis store
//!    ([`tls`]).

mod clients;
mod server;
mod thrift;
mod tls;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cargo_json::test_build;
use crate::step::Part;
use crate::stores::Stores;

/// The network stores of the fault tests.
const STORES: [&str; 5] = ["postgres", "mysql", "redis", "etcd", "zookeeper"];

pub fn run(p: &Part) -> Result<(), String> {
    let root = &p.root;
    p.run(
        "cargo fmt --check (server)",
        "cargo",
        &["fmt", "-p", "snowmint-server", "--check"],
        &[],
    )?;

    // The stores come up (or are found) while the builds run: a Redis
    // server started since the last run fences new spaces for 40 s, waited
    // out beside the builds rather than before them. Joined before the tests
    // run: a store's start (ZooKeeper's JVM) competes with their timing.
    let (stores, bins) = std::thread::scope(|s| {
        let stores = s.spawn(|| Stores::up(p, &STORES));
        let bins = build(p);
        if !stores.is_finished() {
            p.say("stores: waiting for them (and for the Redis init fence)");
        }
        let stores = stores
            .join()
            .map_err(|_| "the stores' thread panicked".to_string())?;
        Ok::<_, String>((stores, bins))
    })?;
    let test_bins = bins?;
    let stores = stores?;
    file_lease_tests(p, &test_bins)?;
    let server_dir = root.join("server");

    p.say("server fault tests on the network stores and under a wall clock step (server/tests/faults.rs, --ignored)");
    // The wall clock step: libfaketime's preload library.
    crate::tools::apt(p, &["libfaketime"])?;
    let hammer = std::env::var("SNOWMINT_TEST_HAMMER_SECS")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "10".into());
    // One test at a time: each runs its stores at once, and the timing
    // checks should not compete with another test's load.
    p.check(
        Command::new(test_bins.test("faults")?)
            .args(["-q", "--ignored", "--test-threads=1", "--nocapture"])
            .env("SNOWMINT_TEST_HAMMER_SECS", &hammer)
            .envs(stores.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&server_dir),
    )?;

    p.say("a lost lease claimed again, on every network store (server/tests/heal.rs, --ignored, two at a time)");
    p.check(
        Command::new(test_bins.test("heal")?)
            .args(["-q", "--ignored", "--test-threads=2", "--nocapture"])
            .envs(stores.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&server_dir),
    )?;

    // The binary the tests above ran (cargo test --no-run builds the
    // package's binary for its integration tests): a `cargo build` here
    // would compile the server and its gRPC stack again, without the
    // dev-dependencies' features.
    let bin = test_bins.server.clone();

    p.say("the READMEs' service examples, run as written (server/tests/readme_example.py)");
    p.check(
        p.cmd("python3")
            .arg("server/tests/readme_example.py")
            .arg(&bin)
            .args(["README.md", "server/README.md"]),
    )?;

    let work = Work::new()?;
    clients::run(p, &bin, &work.0)?;
    thrift::run(p, &bin, &work.0)?;
    tls::run(p, &bin, &work.0)?;
    tls::two_servers_on_redis(p, &bin, &work.0, stores.url("redis")?)?;
    println!("server ok");
    Ok(())
}

/// The server package's test executables and its binary.
struct TestBins {
    tests: std::collections::BTreeMap<String, PathBuf>,
    server: PathBuf,
}

impl TestBins {
    fn test(&self, name: &str) -> Result<&Path, String> {
        self.tests
            .get(name)
            .map(PathBuf::as_path)
            .ok_or_else(|| format!("cargo test --no-run built no {name} test"))
    }
}

/// The builds: the benchmarks' lints, bench/pace's tests, the server's
/// tests (built once, run by [`file_lease_tests`] and the fault steps).
fn build(p: &Part) -> Result<TestBins, String> {
    // The first two are only checked (cargo clippy): the test command
    // builds neither. bench/pace's build lints it (scripts/lint-rustc).
    p.say("clippy -D warnings (bench, bench/grpc); bench/pace's tests");
    p.check(
        p.cmd("cargo")
            .args(["clippy", "--quiet", "--profile", "ci"])
            .args(["-p", "snowmint-bench", "-p", "snowmint-grpc-bench"])
            .args(["--all-targets", "--", "-D", "warnings"]),
    )?;
    p.check(
        p.cmd("cargo")
            .args(["test", "--quiet", "--profile", "ci", "-p", "snowmint-pace"]),
    )?;

    // Built once, then run directly, from the package's folder as cargo
    // test runs them: cargo would hold the shared build folder's lock for
    // the minutes the fault tests take, and another checkout's build in the
    // same build folder would wait for them.
    p.say("server tests: building them (cargo test --no-run), clippy -D warnings as they build");
    let built = test_build(p, &["-p", "snowmint-server"])?;
    let server = built
        .bins
        .get("snowmint-server")
        .filter(|b| crate::tools::executable(b))
        .cloned()
        .ok_or("cargo test --no-run built no snowmint-server binary")?;
    let bins = TestBins {
        tests: built.tests,
        server,
    };
    bins.test("faults")?;
    bins.test("heal")?;
    // The doctests (none today) are compiled by rustdoc: only cargo runs them.
    p.check(
        p.cmd("cargo")
            .args(["test", "--quiet", "--profile", "ci"])
            .args(["-p", "snowmint-server", "--doc"]),
    )?;
    Ok(bins)
}

/// The server's tests on file leases, run directly from server/ (as cargo
/// test runs them), two binaries at a time (each waits mostly on the
/// processes it starts); their output is printed in name order once each
/// ends.
fn file_lease_tests(p: &Part, bins: &TestBins) -> Result<(), String> {
    // In name order: the integration tests (faults.rs and heal.rs without
    // their --ignored ones) and the unit tests (snowmint_server, the
    // library; snowmint-server, the binary).
    p.say("server tests (real processes, file leases), two binaries at a time");
    let queue = std::sync::Mutex::new(bins.tests.iter());
    let results = std::sync::Mutex::new(std::collections::BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some((name, exe)) = queue.lock().map(|mut q| q.next()).ok().flatten() else {
                    return;
                };
                let out = Command::new(exe)
                    .arg("-q")
                    .current_dir(p.root.join("server"))
                    .stdin(std::process::Stdio::null())
                    .output();
                if let Ok(mut r) = results.lock() {
                    r.insert(name.clone(), (exe.clone(), out));
                }
            });
        }
    });
    let results = results
        .into_inner()
        .map_err(|_| "a test thread panicked".to_string())?;
    let mut failed = Vec::new();
    for (name, (exe, out)) in results {
        println!("{name}:");
        let out = out.map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        print!("{}", String::from_utf8_lossy(&out.stdout));
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        if !out.status.success() {
            failed.push(format!("{} ({})", exe.display(), out.status));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("failed: {}", failed.join(", ")))
    }
}

/// The part's temporary folder (servers' logs, leases, clients' builds),
/// removed when dropped.
struct Work(PathBuf);

impl Work {
    fn new() -> Result<Work, String> {
        let dir = std::env::temp_dir().join(format!("snowmint-test-server.{}", nonce()));
        crate::step::mkdir(&dir)?;
        Ok(Work(dir))
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A string no other run has: this process's id and the clock's nanoseconds.
fn nonce() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{}-{nanos}", std::process::id())
}
