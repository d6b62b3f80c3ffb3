//! ZooKeeper: `SNOWMINT_TEST_ZOOKEEPER_URL`, a ZooKeeper without
//! authentication: the one at 127.0.0.1:`SNOWMINT_ZOOKEEPER_PORT` (2181) if it
//! answers `srvr` (the tests use namespaces of their own run), else a
//! throwaway standalone server.
//!
//! With the tests' servers also `SNOWMINT_TEST_ZOOKEEPER_RESTART_URL` and
//! `..._RESTART_CMD` (a throwaway server for the restart test, and a command
//! that restarts it with its dataDir kept), and `..._RESTORE_URL`,
//! `..._RESTORE_CMD`, the same for the restore test, which stops the server
//! (pid in the command's folder), copies its dataDir and later restarts it
//! from the copy.
//!
//! Throwaway servers run Debian's zookeeper package (installed if missing) on
//! the JDK, standalone (QuorumPeerMain with a zoo.cfg of their own: no
//! server list), on free 127.0.0.1 ports, with their dataDir in this run's
//! folder.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::net::{exchange, shell_word};
use super::{Extra, Stop, Stores};
use crate::step::Part;

const JAR: &str = "/usr/share/java/zookeeper.jar";

/// Whether a ZooKeeper on 127.0.0.1:`port` answers `srvr` (whitelisted by
/// default) as a serving standalone server or ensemble member.
fn answers(port: u16) -> bool {
    exchange(port, b"srvr", Duration::from_secs(3), |_| false).is_some_and(|r| {
        String::from_utf8_lossy(&r).lines().any(|l| {
            ["Mode: standalone", "Mode: leader", "Mode: follower"]
                .iter()
                .any(|m| l.starts_with(m))
        })
    })
}

/// A standalone server with its dataDir in RUN/`name`, serving within 60 s
/// (the JVM starts slowly on a loaded machine); three tries, each on a new
/// port. Its stop added (through RUN/`name`/pid), RUN/`name`/restart
/// written. Its port.
fn start_server(s: &mut Stores, name: &str) -> Result<u16, String> {
    let dir = s.run.dir.join(name);
    crate::step::mkdir(&dir.join("data"))?;
    let pid_file = dir.join("pid");
    let log = dir.join("zookeeper.log");
    s.run.stops.push(Stop::Pid {
        file: pid_file.clone(),
        grace: Duration::from_secs(5),
    });
    let mut last = String::new();
    for attempt in 1..=3 {
        let port = super::free_port()?;
        // tickTime 500: sessions of 1 to 10 s. forceSync stays yes (the
        // default): a write is answered once it is on disk.
        let cfg = format!(
            "tickTime=500\ninitLimit=10\nsyncLimit=5\ndataDir={}\nclientPort={port}\n\
clientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n\
4lw.commands.whitelist=srvr,ruok,mntr\n",
            dir.join("data").display()
        );
        std::fs::write(dir.join("zoo.cfg"), cfg).map_err(|e| format!("{}: {e}", dir.display()))?;
        let words: Vec<String> = vec![
            "java".into(),
            "-Xmx256m".into(),
            format!("-Dzookeeper.log.dir={}", dir.display()),
            "-Dlog4j.configuration=none".into(),
            "-cp".into(),
            format!("{JAR}:/usr/share/java/*"),
            "org.apache.zookeeper.server.quorum.QuorumPeerMain".into(),
            dir.join("zoo.cfg").to_string_lossy().into_owned(),
        ];
        let mut cmd = Command::new(&words[0]);
        cmd.args(&words[1..]);
        let pid = s
            .run
            .spawn(&mut cmd, &log, &pid_file, Duration::from_secs(5), false)?;
        let what = format!("zookeeper: the server {name} on 127.0.0.1:{port} (try {attempt})");
        match super::wait_for(
            &what,
            &log,
            Duration::from_secs(60),
            Duration::from_millis(100),
            || super::alive(pid),
            || answers(port),
        ) {
            Ok(()) => {
                restart_script(&dir, port, &words)?;
                return Ok(port);
            }
            Err(e) => {
                super::stop_pid(pid, Duration::from_secs(5));
                eprintln!("{e}; its log's end:\n{}", super::tail(&log, 5));
                last = e;
                let _ = std::fs::remove_dir_all(dir.join("data"));
                crate::step::mkdir(&dir.join("data"))?;
                if crate::proc::stopped_by().is_some() {
                    break;
                }
            }
        }
    }
    Err(last)
}

/// DIR/restart: stops the server (its pid in DIR/pid), starts `words` again
/// on the same dataDir and port, and waits (at most 60 s) until it serves.
fn restart_script(dir: &Path, port: u16, words: &[String]) -> Result<(), String> {
    let pid = shell_word(&dir.join("pid").to_string_lossy());
    let log = shell_word(&dir.join("zookeeper.log").to_string_lossy());
    let cmd: Vec<String> = words.iter().map(|w| shell_word(w)).collect();
    let text = format!(
        "#!/usr/bin/env bash\npid=$(cat {pid})\nkill -TERM \"$pid\" 2>/dev/null\n\
for ((i = 0; i < 200; i++)); do kill -0 \"$pid\" 2>/dev/null || break; sleep 0.05; done\n\
kill -KILL \"$pid\" 2>/dev/null\n{} >>{log} 2>&1 </dev/null &\necho $! >{pid}\n\
for ((i = 0; i < 600; i++)); do\n  timeout 3 bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port} && printf srvr >&3 && grep -q \"^Mode: standalone\" <&3' 2>/dev/null && exit 0\n  sleep 0.1\ndone\n\
echo 'zookeeper: the server in {} did not come back within 60 s' >&2\nexit 1\n",
        cmd.join(" "),
        dir.display()
    );
    super::write_script(&dir.join("restart"), &text)
}

pub fn start(p: &Part, s: &mut Stores, extra: Extra) -> Result<(), String> {
    let port: u16 = match std::env::var("SNOWMINT_ZOOKEEPER_PORT") {
        Ok(v) => v
            .parse()
            .map_err(|_| format!("SNOWMINT_ZOOKEEPER_PORT={v} is not a port"))?,
        Err(_) => 2181,
    };
    let mut client = None;
    if answers(port) {
        p.say(&format!(
            "zookeeper: using the one at 127.0.0.1:{port} (namespaces of this run)"
        ));
        client = Some(port);
    }
    if !Path::new(JAR).is_file() {
        crate::tools::apt(p, &["zookeeper"])?;
    }
    if crate::tools::which("java").is_none() || !Path::new(JAR).is_file() {
        return Err(format!(
            "zookeeper: no java or no {JAR}, even after installing zookeeper"
        ));
    }
    let client = match client {
        Some(c) => c,
        None => {
            let c = start_server(s, "zookeeper").map_err(|e| {
                format!("zookeeper: nothing answers at 127.0.0.1:{port} and no throwaway server could be started: {e}")
            })?;
            p.say(&format!("zookeeper: throwaway server at 127.0.0.1:{c}"));
            c
        }
    };
    s.set(
        "SNOWMINT_TEST_ZOOKEEPER_URL",
        format!("zookeeper://127.0.0.1:{client}"),
    );
    if extra == Extra::No {
        return Ok(());
    }
    for (name, what, var) in [
        ("zookeeper-restart", "restart", "RESTART"),
        ("zookeeper-restore", "restore", "RESTORE"),
    ] {
        let port = start_server(s, name).map_err(|e| {
            format!("zookeeper: the server for the {what} test could not be started: {e}")
        })?;
        p.say(&format!(
            "zookeeper: throwaway server for the {what} test at 127.0.0.1:{port}"
        ));
        s.set(
            &format!("SNOWMINT_TEST_ZOOKEEPER_{var}_URL"),
            format!("zookeeper://127.0.0.1:{port}"),
        );
        let cmd = s.run.dir.join(name).join("restart");
        s.set(
            &format!("SNOWMINT_TEST_ZOOKEEPER_{var}_CMD"),
            cmd.to_string_lossy(),
        );
    }
    Ok(())
}
