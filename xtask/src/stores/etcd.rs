//! etcd v3: `SNOWMINT_TEST_ETCD_URL`, an etcd without authentication: the
//! one at 127.0.0.1:`SNOWMINT_ETCD_PORT` (2379) if it answers (the tests use
//! namespaces of their own run), else a throwaway member.
//!
//! With the tests' servers also:
//! - `SNOWMINT_TEST_ETCD_AUTH_URL`: a throwaway member with authentication
//!   enabled (user root, a random password): never a shared server, whose
//!   clients would all need credentials;
//! - `SNOWMINT_TEST_ETCD_RESTART_URL`, `..._RESTART_CMD`: a throwaway member
//!   for the restart test, and a command that restarts it with its data kept;
//! - `SNOWMINT_TEST_ETCD_RESTORE_URL`, `..._RESTORE_CMD`: the same for the
//!   restore test, which stops the member (pid in the command's folder),
//!   copies its data and later restarts it from the copy;
//! - `SNOWMINT_TEST_ETCD_SNAPSHOT_URL`, `..._SNAPSHOT_CMD`: a throwaway
//!   member for the snapshot test, and a command that saves a snapshot of it
//!   (`save`, `etcdctl snapshot save`) or replaces it with a member restored
//!   from that snapshot into a new cluster (`restore`, `etcdctl snapshot
//!   restore` with another cluster token);
//! - `SNOWMINT_TEST_ETCD_CLUSTER_URL`, `..._CLUSTER_FIRST_PID_FILE`: a
//!   throwaway 3-member cluster (the URL lists the three), and the file
//!   holding the first member's pid, which the cluster test kills.
//!
//! Throwaway members run Debian's etcd-server (installed if missing), on free
//! 127.0.0.1 ports, with their data in this run's folder; the snapshot
//! command runs the etcdctl of Debian's etcd-client (installed if missing;
//! etcd 3.4 has no etcdutl: its etcdctl restores snapshots).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::net::{http, shell_word};
use super::{Extra, Stop, Stores};
use crate::step::Part;

/// Whether the member on 127.0.0.1:`port` reports itself healthy.
fn healthy(port: u16) -> bool {
    http(port, "/health", None, Duration::from_secs(1))
        .is_some_and(|(status, body)| status == 200 && body.contains("\"health\":\"true\""))
}

fn member(
    name: &str,
    dir: &Path,
    client: u16,
    peer: u16,
    cluster: Option<(&str, &str)>,
) -> Vec<String> {
    let mut cmd: Vec<String> = vec![
        "etcd".into(),
        "--name".into(),
        name.into(),
        "--data-dir".into(),
        dir.join("data").to_string_lossy().into_owned(),
        "--listen-client-urls".into(),
        format!("http://127.0.0.1:{client}"),
        "--advertise-client-urls".into(),
        format!("http://127.0.0.1:{client}"),
        "--listen-peer-urls".into(),
        format!("http://127.0.0.1:{peer}"),
        "--initial-advertise-peer-urls".into(),
        format!("http://127.0.0.1:{peer}"),
    ];
    match cluster {
        None => cmd.extend([
            "--initial-cluster".into(),
            format!("{name}=http://127.0.0.1:{peer}"),
        ]),
        Some((initial, token)) => cmd.extend([
            "--initial-cluster".into(),
            initial.into(),
            "--initial-cluster-state".into(),
            "new".into(),
            "--initial-cluster-token".into(),
            token.into(),
        ]),
    }
    cmd
}

fn command(words: &[String]) -> Command {
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..]);
    cmd
}

/// A member with its data in RUN/`name`, healthy within 30 s (three tries,
/// each on new ports: one taken between the probe and etcd's bind fails
/// it); its stop added (through RUN/`name`/pid, which the restart script
/// rewrites) and RUN/`name`/restart and RUN/`name`/snapshot written. Its
/// client port.
fn start_member(s: &mut Stores, name: &str) -> Result<u16, String> {
    let dir = s.run.dir.join(name);
    crate::step::mkdir(&dir)?;
    let pid_file = dir.join("pid");
    let log = dir.join("etcd.log");
    s.run.stops.push(Stop::Pid {
        file: pid_file.clone(),
        grace: Duration::from_secs(5),
    });
    let mut last = String::new();
    for attempt in 1..=3 {
        let (client, peer) = (super::free_port()?, super::free_port()?);
        let words = member(name, &dir, client, peer, None);
        let pid = s.run.spawn(
            &mut command(&words),
            &log,
            &pid_file,
            Duration::from_secs(5),
            false,
        )?;
        let what = format!("etcd: the member {name} on 127.0.0.1:{client} (try {attempt})");
        match super::wait_for(
            &what,
            &log,
            Duration::from_secs(30),
            Duration::from_millis(100),
            || super::alive(pid),
            || healthy(client),
        ) {
            Ok(()) => {
                restart_script(&dir, client, &words)?;
                snapshot_script(&dir, name, client, peer)?;
                return Ok(client);
            }
            Err(e) => {
                super::stop_pid(pid, Duration::from_secs(5));
                eprintln!("{e}; its log's end:\n{}", super::tail(&log, 5));
                last = e;
                let _ = std::fs::remove_dir_all(dir.join("data"));
                if crate::proc::stopped_by().is_some() {
                    break;
                }
            }
        }
    }
    Err(last)
}

/// DIR/restart: stops the member (its pid in DIR/pid), starts `words` again
/// on the same data and ports, and waits (at most 30 s) for /health.
fn restart_script(dir: &Path, client: u16, words: &[String]) -> Result<(), String> {
    let pid = shell_word(&dir.join("pid").to_string_lossy());
    let log = shell_word(&dir.join("etcd.log").to_string_lossy());
    let cmd: Vec<String> = words.iter().map(|w| shell_word(w)).collect();
    let text = format!(
        "#!/usr/bin/env bash\npid=$(cat {pid})\nkill -TERM \"$pid\" 2>/dev/null\n\
for ((i = 0; i < 200; i++)); do kill -0 \"$pid\" 2>/dev/null || break; sleep 0.05; done\n\
kill -KILL \"$pid\" 2>/dev/null\n{} >>{log} 2>&1 </dev/null &\necho $! >{pid}\n\
for ((i = 0; i < 300; i++)); do\n  curl -sf --max-time 1 'http://127.0.0.1:{client}/health' 2>/dev/null | grep -q '\"health\":\"true\"' && exit 0\n  sleep 0.1\ndone\n\
echo 'etcd: the member in {} did not come back within 30 s' >&2\nexit 1\n",
        cmd.join(" "),
        dir.display()
    );
    super::write_script(&dir.join("restart"), &text)
}

/// DIR/snapshot: `save` writes a snapshot of the member (DIR/snapshot.db,
/// at most 30 s); `restore` stops the member, restores the snapshot into a
/// new data directory as a new cluster (the same member name and peer URL,
/// another cluster token: another cluster ID, as an operator restoring a
/// lost cluster would do) and starts it there through DIR/restart.
fn snapshot_script(dir: &Path, name: &str, client: u16, peer: u16) -> Result<(), String> {
    let q = |p: &Path| shell_word(&p.to_string_lossy());
    let (pid, db) = (q(&dir.join("pid")), q(&dir.join("snapshot.db")));
    let (data, restored) = (q(&dir.join("data")), q(&dir.join("restored")));
    let restart = q(&dir.join("restart"));
    let peer_url = format!("http://127.0.0.1:{peer}");
    let text = format!(
        "#!/usr/bin/env bash
set -u
case \"${{1:-}}\" in
save)
  exec etcdctl --endpoints=http://127.0.0.1:{client} --dial-timeout=5s --command-timeout=30s \
snapshot save {db}
  ;;
restore)
  pid=$(cat {pid})
  kill -TERM \"$pid\" 2>/dev/null
  for ((i = 0; i < 200; i++)); do kill -0 \"$pid\" 2>/dev/null || break; sleep 0.05; done
  kill -KILL \"$pid\" 2>/dev/null
  : >{pid}
  rm -rf {restored}
  etcdctl snapshot restore {db} --data-dir {restored} --name {name} \
--initial-cluster {name}={peer_url} --initial-advertise-peer-urls {peer_url} \
--initial-cluster-token snowmint-restored-$$ || exit 1
  rm -rf {data} && mv {restored} {data} && exec {restart}
  ;;
*)
  echo \"usage: $0 save|restore\" >&2
  exit 2
  ;;
esac
",
        name = shell_word(name),
    );
    super::write_script(&dir.join("snapshot"), &text)
}

/// A cluster of 3 members (data in RUN/etcd-cluster-N), every member healthy
/// within 30 s; three tries on new ports. Their client ports.
fn start_cluster(s: &mut Stores) -> Result<[u16; 3], String> {
    let dirs: Vec<_> = (1..=3)
        .map(|n| s.run.dir.join(format!("etcd-cluster-{n}")))
        .collect();
    // One after another: stopped at once, the leader waits 5 s to hand its
    // leadership to a member that is going away, and is killed.
    s.run.stops.push(Stop::Seq(
        dirs.iter()
            .map(|d| Stop::Pid {
                file: d.join("pid"),
                grace: Duration::from_secs(5),
            })
            .collect(),
    ));
    for attempt in 1..=3 {
        let clients = [
            super::free_port()?,
            super::free_port()?,
            super::free_port()?,
        ];
        let peers = [
            super::free_port()?,
            super::free_port()?,
            super::free_port()?,
        ];
        let initial = (0..3)
            .map(|i| format!("m{}=http://127.0.0.1:{}", i + 1, peers[i]))
            .collect::<Vec<_>>()
            .join(",");
        let token = format!("snowmint-{}-{attempt}", std::process::id());
        let mut pids = Vec::new();
        for i in 0..3 {
            crate::step::mkdir(&dirs[i])?;
            let words = member(
                &format!("m{}", i + 1),
                &dirs[i],
                clients[i],
                peers[i],
                Some((&initial, &token)),
            );
            pids.push(s.run.spawn(
                &mut command(&words),
                &dirs[i].join("etcd.log"),
                &dirs[i].join("pid"),
                Duration::from_secs(5),
                false,
            )?);
        }
        let end = Instant::now() + Duration::from_secs(30);
        while Instant::now() < end {
            if clients.iter().all(|&c| healthy(c)) {
                return Ok(clients);
            }
            if let Some(sig) = crate::proc::stopped_by() {
                return Err(format!("etcd: the cluster: stopped by signal {sig}"));
            }
            // A member that exited (a port taken) will not come: new ports.
            if !pids.iter().all(|&p| super::alive(p)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        eprintln!("etcd: the 3-member cluster did not become healthy within 30 s (try {attempt}); the members' logs:");
        for (d, &pid) in dirs.iter().zip(&pids) {
            eprintln!("{}", super::tail(&d.join("etcd.log"), 3));
            super::stop_pid(pid, Duration::from_secs(5));
            let _ = std::fs::remove_dir_all(d.join("data"));
        }
    }
    Err(format!(
        "etcd: the 3-member cluster could not be started (logs: {}/etcd-cluster-N/etcd.log)",
        s.run.dir.display()
    ))
}

/// A gateway call that must succeed.
fn post(port: u16, path: &str, json: &str) -> Result<(), String> {
    match http(
        port,
        &format!("/v3/{path}"),
        Some(json),
        Duration::from_secs(5),
    ) {
        Some((200, body)) if !body.contains("\"error\"") => Ok(()),
        Some((status, body)) => Err(format!("etcd /v3/{path}: HTTP {status} {body}")),
        None => Err(format!("etcd /v3/{path}: no answer from 127.0.0.1:{port}")),
    }
}

pub fn start(p: &Part, s: &mut Stores, extra: Extra) -> Result<(), String> {
    let port: u16 = match std::env::var("SNOWMINT_ETCD_PORT") {
        Ok(v) => v
            .parse()
            .map_err(|_| format!("SNOWMINT_ETCD_PORT={v} is not a port"))?,
        Err(_) => 2379,
    };
    let mut client = None;
    if healthy(port) {
        p.say(&format!(
            "etcd: using the one at 127.0.0.1:{port} (namespaces of this run)"
        ));
        client = Some(port);
    }
    // The throwaway members need the binary even when a server answers.
    if crate::tools::which("etcd").is_none() {
        crate::tools::apt(p, &["etcd-server"])?;
    }
    // The snapshot test's script runs etcdctl.
    if crate::tools::which("etcdctl").is_none() {
        crate::tools::apt(p, &["etcd-client"])?;
    }
    // The restart scripts the tests run speak curl.
    if crate::tools::which("curl").is_none() {
        crate::tools::apt(p, &["curl"])?;
    }
    if crate::tools::which("etcd").is_none() {
        return Err("etcd: no etcd binary, even after installing etcd-server".into());
    }
    let client = match client {
        Some(c) => c,
        None => {
            let c = start_member(s, "etcd").map_err(|e| {
                format!("etcd: nothing answers at 127.0.0.1:{port} and no throwaway member could be started: {e}")
            })?;
            p.say(&format!("etcd: throwaway member at 127.0.0.1:{c}"));
            c
        }
    };
    s.set(
        "SNOWMINT_TEST_ETCD_URL",
        format!("etcd://127.0.0.1:{client}"),
    );
    if extra == Extra::No {
        return Ok(());
    }

    let auth = start_member(s, "etcd-auth")
        .map_err(|e| format!("etcd: the member with authentication could not be started: {e}"))?;
    let password = format!("pw{}", super::net::random());
    post(
        auth,
        "auth/user/add",
        &format!("{{\"name\":\"root\",\"password\":\"{password}\"}}"),
    )
    .and_then(|()| {
        post(
            auth,
            "auth/user/grant",
            "{\"user\":\"root\",\"role\":\"root\"}",
        )
    })
    .and_then(|()| post(auth, "auth/enable", "{}"))
    .map_err(|e| format!("etcd: enabling authentication failed: {e}"))?;
    p.say(&format!(
        "etcd: throwaway member with authentication at 127.0.0.1:{auth}"
    ));
    s.set(
        "SNOWMINT_TEST_ETCD_AUTH_URL",
        format!("etcd://root:{password}@127.0.0.1:{auth}"),
    );

    for (name, what, var) in [
        ("etcd-restart", "restart", "RESTART"),
        ("etcd-restore", "restore", "RESTORE"),
        ("etcd-snapshot", "snapshot", "SNAPSHOT"),
    ] {
        let port = start_member(s, name).map_err(|e| {
            format!("etcd: the member for the {what} test could not be started: {e}")
        })?;
        p.say(&format!(
            "etcd: throwaway member for the {what} test at 127.0.0.1:{port}"
        ));
        s.set(
            &format!("SNOWMINT_TEST_ETCD_{var}_URL"),
            format!("etcd://127.0.0.1:{port}"),
        );
        let script = if var == "SNAPSHOT" {
            "snapshot"
        } else {
            "restart"
        };
        let cmd = s.run.dir.join(name).join(script);
        s.set(
            &format!("SNOWMINT_TEST_ETCD_{var}_CMD"),
            cmd.to_string_lossy(),
        );
    }

    let c = start_cluster(s)?;
    p.say(&format!(
        "etcd: throwaway 3-member cluster at 127.0.0.1:{}, :{}, :{}",
        c[0], c[1], c[2]
    ));
    s.set(
        "SNOWMINT_TEST_ETCD_CLUSTER_URL",
        format!(
            "etcd://127.0.0.1:{},127.0.0.1:{},127.0.0.1:{}",
            c[0], c[1], c[2]
        ),
    );
    // The first listed member (the one a new client talks to first): the
    // cluster test kills it.
    let first = s.run.dir.join("etcd-cluster-1/pid");
    s.set(
        "SNOWMINT_TEST_ETCD_CLUSTER_FIRST_PID_FILE",
        first.to_string_lossy(),
    );
    Ok(())
}
