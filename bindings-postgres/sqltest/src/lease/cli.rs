//! An application holder that is a process of its own: the `snowmint` CLI
//! (`generate --lease postgres://...?namespace=N --print-lease --on-demand`,
//! its path in SNOWMINT_CLI) beside the database's generator with
//! `lease => 'database?namespace=N'` on the same database. They must hold
//! different node values, and no ID of either may be issued twice.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use postgres::Client;
use snowmint::Layout;

use super::{ids, node, wait_ready, Server, FAST, WIDE};
use crate::Run;

/// The CLI holding a lease of its own, minting on request.
struct Holder {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    /// Its node value, as `--print-lease` wrote it.
    worker: u64,
}

impl Holder {
    /// Starts the CLI and reads the lease it printed (or its error).
    fn start(cli: &str, url: &str) -> Result<Holder, String> {
        let mut child = Command::new(cli)
            .args(["generate", "--layout", WIDE, "--lease", url])
            .args(["--print-lease", "--on-demand"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {cli}: {e}"))?;
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .map_err(|e| format!("the CLI's stderr: {e}"))?;
        let info: serde_json::Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("the CLI did not lease: {}", line.trim()));
            }
        };
        let worker = info["nodes"]["worker"]
            .as_u64()
            .ok_or_else(|| format!("the CLI's lease line has no worker: {line}"))?;
        Ok(Holder {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            worker,
        })
    }

    /// `n` IDs, asked for on stdin.
    fn mint(&mut self, n: usize) -> Result<Vec<i64>, String> {
        writeln!(self.stdin, "{n}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("the CLI's stdin: {e}"))?;
        let mut out = Vec::with_capacity(n);
        let mut line = String::new();
        for _ in 0..n {
            line.clear();
            match self.stdout.read_line(&mut line) {
                Ok(0) | Err(_) => return Err(format!("the CLI stopped after {} IDs", out.len())),
                Ok(_) => {}
            }
            let id: u64 = line
                .trim()
                .parse()
                .map_err(|_| format!("the CLI wrote {line:?}, not an ID"))?;
            out.push(id as i64);
        }
        Ok(out)
    }

    /// End of input: the CLI releases its lease and exits 0.
    fn finish(mut self) -> Result<(), String> {
        drop(self.stdin);
        let status = self.child.wait().map_err(|e| e.to_string())?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("the CLI exited with {status}"))
        }
    }
}

pub(super) fn cli_beside_database(run: &mut Run, s: &Server, c: &mut Client) {
    let Ok(cli) = std::env::var("SNOWMINT_CLI") else {
        run.check(false, || "SNOWMINT_CLI is not set (the CLI's path)".into());
        return;
    };
    let layout = Layout::parse(WIDE).unwrap();
    let q = format!("namespace=cli&{FAST}&window_ms=5000");
    // The database's generator first, then the CLI: the CLI must find its
    // slot held and take another.
    c.execute(
        "SELECT snowmint.create_generator('cli_db', $1, lease => $2)",
        &[&WIDE, &format!("database?{q}")],
    )
    .unwrap();
    if let Err(e) = wait_ready(c, "cli_db", Duration::from_secs(20)) {
        run.check(false, || e);
        return;
    }
    let mut holder = match Holder::start(&cli, &s.url(&q)) {
        Ok(h) => h,
        Err(e) => {
            run.check(false, || e);
            return;
        }
    };
    let mut cli_ids: Vec<i64> = Vec::new();
    let mut db_ids: Vec<i64> = Vec::new();
    // Both at once, as an application and the database mint.
    for round in 0..3 {
        let (cli_got, db_got) = std::thread::scope(|t| {
            let cli = t.spawn(|| holder.mint(20_000));
            let db = ids(c, "cli_db", 20_000);
            (cli.join().unwrap(), db)
        });
        match cli_got {
            Ok(v) => cli_ids.extend(v),
            Err(e) => run.check(false, || format!("CLI round {round}: {e}")),
        }
        match db_got {
            Ok(v) => db_ids.extend(v),
            Err(e) => run.check(false, || format!("cli_db round {round}: {e:?}")),
        }
    }
    let cli_nodes: HashSet<u64> = cli_ids.iter().map(|&id| node(&layout, id)).collect();
    let db_nodes: HashSet<u64> = db_ids.iter().map(|&id| node(&layout, id)).collect();
    // What the database lists as its slot.
    let listed: Option<i64> = c
        .query_one(
            "SELECT slot FROM snowmint.leases() WHERE generator = 'cli_db'",
            &[],
        )
        .unwrap()
        .get(0);
    run.check(
        cli_nodes == HashSet::from([holder.worker])
            && db_nodes.len() == 1
            && listed.map(|l| l as u64) == db_nodes.iter().next().copied()
            && !db_nodes.contains(&holder.worker),
        || {
            format!(
                "CLI beside database: the CLI's lease names node {}, its IDs carry {cli_nodes:?}; \
                 the database's IDs carry {db_nodes:?} (snowmint.leases(): {listed:?}); want two \
                 different node values",
                holder.worker
            )
        },
    );
    let total = cli_ids.len() + db_ids.len();
    let unique: HashSet<i64> = cli_ids.iter().chain(&db_ids).copied().collect();
    run.check(total == 120_000 && unique.len() == total, || {
        format!(
            "CLI beside database: {} of {total} IDs repeated (of 120000 asked for)",
            total - unique.len()
        )
    });
    let finished = holder.finish();
    run.check(finished.is_ok(), || {
        format!("CLI beside database: {finished:?}")
    });
    println!(
        "lease: a snowmint CLI process (node {cli_nodes:?}) beside the database's generator \
         (node {db_nodes:?}) in one namespace: {} IDs, all unique",
        unique.len()
    );
}
