//! PostgreSQL: the server on 127.0.0.1:`SNOWMINT_STORES_POSTGRES_PORT` (5432)
//! if it answers (user postgres, trust authentication), with a database of
//! this run's own, dropped at the end; otherwise a throwaway server from
//! Debian's package on a free port (initdb and the server refuse root: they
//! run as the postgres user then). `SNOWMINT_TEST_POSTGRES_URL`.
//!
//! With the tests' servers also a dedicated throwaway server for the restart
//! test (`SNOWMINT_TEST_POSTGRES_RESTART_URL`, and `..._RESTART_CMD`, a shell
//! command that restarts it keeping its data) and another cluster (its own
//! initdb, so its own system identifier) that a test restores the lease
//! tables into and reconfigures (`SNOWMINT_TEST_POSTGRES_RESTORE_URL`).

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use super::net::{output_within, run_within, shell_word};
use super::{Extra, Stop, Stores};
use crate::step::Part;

pub fn start(p: &Part, s: &mut Stores, extra: Extra) -> Result<(), String> {
    let port: u16 = match std::env::var("SNOWMINT_STORES_POSTGRES_PORT") {
        Ok(v) => v
            .parse()
            .map_err(|_| format!("SNOWMINT_STORES_POSTGRES_PORT={v} is not a port"))?,
        Err(_) => 5432,
    };
    let db = format!("snowmint_stores_{}", std::process::id());
    if answers(port) {
        p.say(&format!(
            "postgres: the server on 127.0.0.1:{port}, database {db}"
        ));
        run_within(
            &mut psql("psql", port, &format!("CREATE DATABASE {db}")),
            Duration::from_secs(30),
        )
        .map_err(|e| format!("postgres: {e}"))?;
        s.run.stops.push(Stop::Cmd {
            argv: psql_argv("psql", port, &format!("DROP DATABASE IF EXISTS {db}")),
            within: Duration::from_secs(30),
        });
        s.set(
            "SNOWMINT_TEST_POSTGRES_URL",
            format!("postgres://postgres@127.0.0.1:{port}/{db}"),
        );
    } else {
        p.say(&format!(
            "postgres: nothing answers on 127.0.0.1:{port}; starting a throwaway server"
        ));
        let tw = throwaway(p, s, "postgres", &[])?;
        s.set("SNOWMINT_TEST_POSTGRES_URL", tw.url());
    }
    if extra == Extra::No {
        return Ok(());
    }
    let tw = throwaway(p, s, "postgres-restart", &[])?;
    s.set("SNOWMINT_TEST_POSTGRES_RESTART_URL", tw.url());
    s.set("SNOWMINT_TEST_POSTGRES_RESTART_CMD", tw.restart);
    let tw = throwaway(p, s, "postgres-restore", &[])?;
    s.set("SNOWMINT_TEST_POSTGRES_RESTORE_URL", tw.url());
    Ok(())
}

/// Whether a server on 127.0.0.1:`port` answers `SELECT 1` (10 s at most).
fn answers(port: u16) -> bool {
    crate::tools::which("psql").is_some()
        && output_within(&mut psql("psql", port, "SELECT 1"), Duration::from_secs(10))
            .is_ok_and(|o| o.status.success())
}

fn psql_argv(psql: &str, port: u16, sql: &str) -> Vec<std::ffi::OsString> {
    let port = port.to_string();
    [
        psql,
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        "-U",
        "postgres",
        "-d",
        "postgres",
        "-Atqc",
        sql,
    ]
    .iter()
    .map(Into::into)
    .collect()
}

fn psql(psql: &str, port: u16, sql: &str) -> Command {
    let argv = psql_argv(psql, port, sql);
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    cmd
}

/// A throwaway server started by [`throwaway`].
pub struct Throwaway {
    pub port: u16,
    /// A shell command restarting it with its data.
    pub restart: String,
}

impl Throwaway {
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/test", self.port)
    }
}

/// The newest server binaries Debian installed (`/usr/lib/postgresql/N/bin`).
pub fn bin_dir(p: &Part) -> Result<PathBuf, String> {
    crate::tools::apt(p, &["postgresql"])?;
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|e| format!("postgres: /usr/lib/postgresql: {e}"))?
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, b)| b.join("initdb").is_file())
        .collect();
    found.sort();
    found
        .pop()
        .map(|(_, b)| b)
        .ok_or_else(|| "postgres: no server binaries under /usr/lib/postgresql/*/bin".to_string())
}

/// The command prefix running a server program: `runuser -u postgres --` as root.
fn as_user() -> Vec<String> {
    if super::is_root() {
        ["runuser", "-u", "postgres", "--"]
            .map(String::from)
            .to_vec()
    } else {
        Vec::new()
    }
}

fn command(words: &[String]) -> Command {
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..]);
    cmd
}

/// A throwaway server with its data in RUN/`name`, a database `test`, its
/// stop added; `env` (NAME=VALUE words) for the server (libfaketime's).
pub fn throwaway(
    p: &Part,
    s: &mut Stores,
    name: &str,
    env: &[String],
) -> Result<Throwaway, String> {
    let bin = bin_dir(p)?;
    let dir = s.run.dir.join(name);
    crate::step::mkdir(&dir)?;
    let as_user = as_user();
    if !as_user.is_empty() {
        crate::step::mkdir(&dir)?;
        let ok = Command::new("chown")
            .args(["postgres:postgres"])
            .arg(&dir)
            .status()
            .is_ok_and(|st| st.success());
        if !ok {
            return Err(format!(
                "postgres ({name}): cannot chown {} to postgres",
                dir.display()
            ));
        }
    }
    let d = |f: &str| dir.join(f).to_string_lossy().into_owned();
    let b = |f: &str| bin.join(f).to_string_lossy().into_owned();
    let mut initdb = as_user.clone();
    initdb.extend([
        b("initdb"),
        "-D".into(),
        d("data"),
        "--auth=trust".into(),
        "-U".into(),
        "postgres".into(),
    ]);
    initdb.extend(["-E", "UTF8", "--no-sync"].map(String::from));
    let out = output_within(&mut command(&initdb), Duration::from_secs(120))?;
    std::fs::write(dir.join("initdb.log"), [out.stdout, out.stderr].concat()).ok();
    if !out.status.success() {
        return Err(format!(
            "postgres ({name}): initdb failed (log: {})",
            d("initdb.log")
        ));
    }
    let mut stop = as_user.clone();
    stop.extend([
        b("pg_ctl"),
        "-D".into(),
        d("data"),
        "-m".into(),
        "fast".into(),
    ]);
    stop.extend(["-w", "-t", "30", "stop"].map(String::from));
    s.run.stops.push(Stop::Cmd {
        argv: stop.iter().map(Into::into).collect(),
        within: Duration::from_secs(40),
    });
    // The free port can be taken before the server binds it (another run's
    // server, or a client's local port on a busy machine): then another port.
    let log = dir.join("server.log");
    let mut port = super::free_port()?;
    for attempt in 1..=5 {
        let mut start = as_user.clone();
        if !env.is_empty() {
            start.push("env".into());
            start.extend(env.iter().cloned());
        }
        start.extend([
            b("pg_ctl"),
            "-D".into(),
            d("data"),
            "-l".into(),
            d("server.log"),
        ]);
        start.extend(["-w", "-t", "30", "-o"].map(String::from));
        start.push(format!(
            "-k {} -p {port} -c listen_addresses=127.0.0.1 -c max_connections=300",
            dir.display()
        ));
        start.push("start".into());
        let ok = output_within(&mut command(&start), Duration::from_secs(45))
            .is_ok_and(|o| o.status.success());
        if ok {
            break;
        }
        let taken =
            std::fs::read_to_string(&log).is_ok_and(|l| l.contains("Address already in use"));
        if attempt == 5 || !taken {
            return Err(format!(
                "postgres ({name}): the throwaway server did not start within 30 s (log: {}):\n{}",
                log.display(),
                super::tail(&log, 20)
            ));
        }
        port = super::free_port()?;
    }
    run_within(
        &mut psql(&b("psql"), port, "CREATE DATABASE test"),
        Duration::from_secs(30),
    )
    .map_err(|e| format!("postgres ({name}): {e}"))?;
    p.say(&format!(
        "postgres: throwaway server on 127.0.0.1:{port} ({})",
        dir.display()
    ));
    let mut restart: Vec<String> = as_user;
    restart.extend([
        b("pg_ctl"),
        "-D".into(),
        d("data"),
        "-l".into(),
        d("server.log"),
    ]);
    restart.extend(["-m", "fast", "-w", "-t", "30", "restart"].map(String::from));
    let restart = restart
        .iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ")
        + " >/dev/null";
    Ok(Throwaway { port, restart })
}
