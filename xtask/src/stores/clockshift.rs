//! A throwaway PostgreSQL server and a throwaway Redis whose clocks the fault
//! tests step (lease/test-support: `store_clock_steps`). A shared server's
//! clock is never touched.
//!
//! The PostgreSQL server runs under libfaketime (Debian's libfaketime,
//! installed when missing) reading its offset from a file on every clock
//! call (`FAKETIME_TIMESTAMP_FILE`, `FAKETIME_NO_CACHE=1`; "+0", "+3",
//! "-2.5": seconds, fractions allowed), which the test rewrites to step the
//! store's wall clock forward and back; its monotonic clocks stay real
//! (`FAKETIME_DONT_FAKE_MONOTONIC=1`), so its timeouts are not disturbed.
//! `SNOWMINT_TEST_POSTGRES_FAKETIME_URL`, `..._FAKETIME_FILE`.
//!
//! Redis runs under tools/clockshift/clockshift.c instead, built with gcc
//! into the run folder: redis-server 7.0.15 does not start under Debian's
//! libfaketime 0.9.10 ("libfaketime: Cannot recover from unexpected
//! recursive calls to clock_gettime()": its allocator, jemalloc, reads the
//! clock before libfaketime has looked up the real clock_gettime with
//! dlsym). Tried (2026-11-25), each with `FAKETIME_TIMESTAMP_FILE` and
//! `FAKETIME_NO_CACHE=1`, and `FAKETIME=+3` alone:
//! `FAKETIME_DONT_FAKE_MONOTONIC=1`; plus `DONT_FAKE_MONOTONIC=1`; plus
//! `FAKETIME_DISABLE_SHM=1`; the single-threaded libfaketime.so.1;
//! libjemalloc.so.2 preloaded before libfaketimeMT;
//! `MALLOC_CONF=background_thread:false,dirty_decay_ms:-1,muzzy_decay_ms:-1`:
//! the server never accepted a connection. clockshift.so reads the real
//! clock with the clock_gettime system call, so it has nothing to look up;
//! it reads the same offset format from `SNOWMINT_CLOCKSHIFT_FILE` (at most
//! once a millisecond). It is vouched for by `lease init` like the other
//! Redis. `SNOWMINT_TEST_REDIS_CLOCK_URL`, `..._CLOCK_FILE`.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use super::net::run_within;
use super::Stores;
use crate::step::Part;

/// libfaketime's multi-threaded preload library.
pub(crate) fn faketime_lib() -> Result<PathBuf, String> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib")
        .map_err(|e| format!("/usr/lib: {e}"))?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("faketime/libfaketimeMT.so.1"))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found
        .into_iter()
        .next()
        .ok_or_else(|| "faketime: no libfaketimeMT.so.1 under /usr/lib/*/faketime".to_string())
}

/// A file holding "+0", readable by the postgres user.
fn offset_file(dir: &std::path::Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let f = dir.join("offset");
    std::fs::write(&f, "+0\n").map_err(|e| format!("{}: {e}", f.display()))?;
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644))
        .map_err(|e| format!("{}: {e}", f.display()))?;
    Ok(f)
}

pub fn start_postgres(p: &Part, s: &mut Stores) -> Result<(), String> {
    crate::tools::apt(p, &["libfaketime", "postgresql"])?;
    let lib = faketime_lib()?;
    let dir = s.run.dir.join("postgres-faketime");
    crate::step::mkdir(&dir)?;
    let offset = offset_file(&dir)?;
    let env = vec![
        format!("LD_PRELOAD={}", lib.display()),
        format!("FAKETIME_TIMESTAMP_FILE={}", offset.display()),
        "FAKETIME_NO_CACHE=1".to_string(),
        "FAKETIME_DONT_FAKE_MONOTONIC=1".to_string(),
    ];
    let tw = super::postgres::throwaway(p, s, "postgres-faketime", &env)
        .map_err(|e| format!("faketime: the PostgreSQL server under libfaketime: {e}"))?;
    p.say(&format!(
        "faketime: PostgreSQL on 127.0.0.1:{}, clock offset in {}",
        tw.port,
        offset.display()
    ));
    s.set("SNOWMINT_TEST_POSTGRES_FAKETIME_URL", tw.url());
    s.set(
        "SNOWMINT_TEST_POSTGRES_FAKETIME_FILE",
        offset.to_string_lossy(),
    );
    Ok(())
}

pub fn start_redis(p: &Part, s: &mut Stores) -> Result<(), String> {
    if crate::tools::which("gcc").is_none() {
        crate::tools::apt(p, &["gcc"])?;
    }
    let dir = s.run.dir.join("redis-clockshift");
    crate::step::mkdir(&dir)?;
    let so = dir.join("clockshift.so");
    let mut gcc = Command::new("gcc");
    gcc.args(["-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o"])
        .arg(&so)
        .arg(p.root.join("tools/clockshift/clockshift.c"));
    run_within(&mut gcc, Duration::from_secs(120)).map_err(|e| {
        format!("clockshift: gcc could not build tools/clockshift/clockshift.c: {e}")
    })?;
    let offset = offset_file(&dir)?;
    let port = super::redis::throwaway(p, s, "redis-clockshift", Some((&so, &offset)))
        .map_err(|e| format!("clockshift: the redis-server under clockshift.so: {e}"))?;
    let url = format!("redis://127.0.0.1:{port}/0");
    p.say(&format!(
        "clockshift: Redis on 127.0.0.1:{port}, clock offset in {}",
        offset.display()
    ));
    s.set("SNOWMINT_TEST_REDIS_CLOCK_URL", url.clone());
    s.set("SNOWMINT_TEST_REDIS_CLOCK_FILE", offset.to_string_lossy());
    s.unvouched.push(url);
    Ok(())
}
