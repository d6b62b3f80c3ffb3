//! Redis: the server on 127.0.0.1:`SNOWMINT_REDIS_PORT` (6379) when it
//! answers PING without a password (DB 0; every test works in namespaces of
//! its own run, pid and time, and deletes their keys); otherwise Debian's
//! redis-server (installed if missing), a throwaway one without persistence
//! on a free port. `SNOWMINT_TEST_REDIS_URL`.
//!
//! Either way it is then vouched for by `snowmint lease init --store URL`
//! with the default settings ([`lease_init`], from [`super::Stores::start`]):
//! the tests' new spaces then start without a fence of their own, once the
//! init's fence has passed (max_window_ms 30,000 + 2 x max_skew_ms 5,000:
//! 40 s after init writes the key; a key that already names this server with
//! those settings is kept, and its fence is long past).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::net::{exchange, run_within};
use super::Stores;
use crate::step::Part;

/// Whether a Redis on 127.0.0.1:`port` answers PING with PONG.
pub fn answers(port: u16) -> bool {
    exchange(port, b"PING\r\n", Duration::from_secs(2), |r| {
        r.ends_with(b"\r\n")
    })
    .is_some_and(|r| r.starts_with(b"+PONG"))
}

pub fn start(p: &Part, s: &mut Stores) -> Result<(), String> {
    let port: u16 = match std::env::var("SNOWMINT_REDIS_PORT") {
        Ok(v) => v
            .parse()
            .map_err(|_| format!("SNOWMINT_REDIS_PORT={v} is not a port"))?,
        Err(_) => 6379,
    };
    let url = if answers(port) {
        p.say(&format!(
            "redis: using the server on 127.0.0.1:{port} (DB 0, namespaces of this run)"
        ));
        format!("redis://127.0.0.1:{port}/0")
    } else {
        p.say(&format!(
            "redis: nothing answers on 127.0.0.1:{port}; starting a throwaway redis-server"
        ));
        let port = throwaway(p, s, "redis", None)?;
        format!("redis://127.0.0.1:{port}/0")
    };
    s.set("SNOWMINT_TEST_REDIS_URL", url.clone());
    s.unvouched.push(url);
    if crate::tools::which("redis-server").is_none() {
        p.say("redis: no redis-server binary: the password test (authentication_problems_are_named) skips");
    }
    Ok(())
}

/// A throwaway redis-server (no persistence) in RUN/`name`, under the
/// preload library `preload` (with its offset file) if given; three tries,
/// each on a new port (taken meanwhile, or too slow). Its port.
pub fn throwaway(
    p: &Part,
    s: &mut Stores,
    name: &str,
    preload: Option<(&Path, &Path)>,
) -> Result<u16, String> {
    if crate::tools::which("redis-server").is_none() {
        crate::tools::apt(p, &["redis-server"])?;
    }
    if crate::tools::which("redis-server").is_none() {
        return Err("redis: redis-server could not be installed".into());
    }
    let dir = s.run.dir.join(name);
    crate::step::mkdir(&dir)?;
    let log = dir.join("redis.log");
    let mut last = String::new();
    for _ in 0..3 {
        let port = super::free_port()?;
        let mut cmd = Command::new("redis-server");
        cmd.args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .args(["--daemonize", "no", "--dir"])
        .arg(&dir)
        .arg("--logfile")
        .arg(&log);
        if let Some((lib, offset)) = preload {
            cmd.env("LD_PRELOAD", lib)
                .env("SNOWMINT_CLOCKSHIFT_FILE", offset);
        }
        let pid_file = dir.join(format!("pid-{port}"));
        let pid = s.run.spawn(
            &mut cmd,
            &dir.join("redis.out"),
            &pid_file,
            Duration::from_secs(5),
            true,
        )?;
        let what = format!("redis: the throwaway redis-server {name} on 127.0.0.1:{port}");
        match super::wait_for(
            &what,
            &log,
            Duration::from_secs(15),
            Duration::from_millis(50),
            || super::alive(pid),
            || answers(port),
        ) {
            Ok(()) => {
                p.say(&format!(
                    "redis: throwaway redis-server {name} (pid {pid}) on 127.0.0.1:{port}"
                ));
                return Ok(port);
            }
            Err(e) => {
                super::stop_pid(pid, Duration::from_secs(5));
                last = e;
                if crate::proc::stopped_by().is_some() {
                    break;
                }
            }
        }
    }
    Err(format!("{last}; its log's end:\n{}", super::tail(&log, 20)))
}

/// `cli lease init --store URL --json` (the product's own init with the
/// default settings; or what else `cli` names): how long until its fence
/// passes (zero when there is none or it has passed).
pub fn lease_init(cli: &super::Voucher, url: &str) -> Result<Duration, String> {
    let mut cmd = Command::new(&cli.program);
    cmd.args(&cli.args).args(["--store", url, "--json"]);
    let out = run_within(&mut cmd, Duration::from_secs(30))
        .map_err(|e| format!("redis: could not vouch for {url} with lease init: {e}"))?;
    let v: serde_json::Value = out
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| format!("redis: lease init on {url} printed no JSON: {out}"))?;
    let fence = v["fence_ms"].as_u64().unwrap_or(0);
    let now = v["now_ms"].as_u64().unwrap_or(0);
    Ok(Duration::from_millis(fence.saturating_sub(now)))
}
