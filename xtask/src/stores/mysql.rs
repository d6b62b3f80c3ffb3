//! MySQL/MariaDB: the server on 127.0.0.1:`SNOWMINT_STORES_MYSQL_PORT` (3306)
//! if it answers (root without a password), with a database of this run's
//! own, dropped at the end; otherwise a throwaway MariaDB from Debian's
//! package on a free port. `SNOWMINT_TEST_MYSQL_URL`.
//!
//! With the tests' servers also a dedicated throwaway MariaDB for the
//! restart test (`SNOWMINT_TEST_MYSQL_RESTART_URL`, `..._RESTART_CMD`: a
//! shell command that restarts it keeping its data); one started with
//! `--autocommit=0` (a server default some DBAs set; the store must commit
//! every write itself), whose connections the test kills
//! (`SNOWMINT_TEST_MYSQL_AUTOCOMMIT0_URL`); and one started with
//! `--innodb-flush-log-at-trx-commit=2` (refused unless the URL allows it),
//! which a test also makes a replica and gives another server_id
//! (`SNOWMINT_TEST_MYSQL_FLUSH2_URL`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::net::{output_within, run_within, shell_word};
use super::{Extra, Stop, Stores};
use crate::step::Part;

/// The first of the given programs that exists (also looked up in /usr/sbin).
fn tool(names: &[&str]) -> Option<PathBuf> {
    names.iter().find_map(|n| {
        crate::tools::which(n).or_else(|| {
            let p = Path::new("/usr/sbin").join(n);
            crate::tools::executable(&p).then_some(p)
        })
    })
}

fn client(client: &Path, port: u16, sql: &str) -> Command {
    let mut cmd = Command::new(client);
    cmd.args([
        "--no-defaults",
        "-h",
        "127.0.0.1",
        "-P",
        &port.to_string(),
        "-u",
        "root",
        "-Ne",
        sql,
    ]);
    cmd
}

pub fn start(p: &Part, s: &mut Stores, extra: Extra) -> Result<(), String> {
    let port: u16 = match std::env::var("SNOWMINT_STORES_MYSQL_PORT") {
        Ok(v) => v
            .parse()
            .map_err(|_| format!("SNOWMINT_STORES_MYSQL_PORT={v} is not a port"))?,
        Err(_) => 3306,
    };
    let db = format!("snowmint_stores_{}", std::process::id());
    let shared = tool(&["mariadb", "mysql"]).filter(|c| {
        output_within(&mut client(c, port, "SELECT 1"), Duration::from_secs(10))
            .is_ok_and(|o| o.status.success())
    });
    if let Some(c) = shared {
        p.say(&format!(
            "mysql: the server on 127.0.0.1:{port}, database {db}"
        ));
        run_within(
            &mut client(&c, port, &format!("CREATE DATABASE {db}")),
            Duration::from_secs(30),
        )
        .map_err(|e| format!("mysql: {e}"))?;
        let drop = client(&c, port, &format!("DROP DATABASE IF EXISTS {db}"));
        let mut argv = vec![drop.get_program().to_owned()];
        argv.extend(drop.get_args().map(ToOwned::to_owned));
        s.run.stops.push(Stop::Cmd {
            argv,
            within: Duration::from_secs(30),
        });
        s.set(
            "SNOWMINT_TEST_MYSQL_URL",
            format!("mysql://root@127.0.0.1:{port}/{db}"),
        );
    } else {
        p.say(&format!(
            "mysql: nothing answers on 127.0.0.1:{port}; starting a throwaway MariaDB"
        ));
        let (port, _) = throwaway(p, s, "mysql", &[])?;
        s.set("SNOWMINT_TEST_MYSQL_URL", url(port));
    }
    if extra == Extra::No {
        return Ok(());
    }
    let (port, restart) = throwaway(p, s, "mysql-restart", &[])?;
    s.set("SNOWMINT_TEST_MYSQL_RESTART_URL", url(port));
    s.set("SNOWMINT_TEST_MYSQL_RESTART_CMD", restart);
    let (port, _) = throwaway(p, s, "mysql-autocommit0", &["--autocommit=0"])?;
    s.set("SNOWMINT_TEST_MYSQL_AUTOCOMMIT0_URL", url(port));
    let (port, _) = throwaway(
        p,
        s,
        "mysql-flush2",
        &["--innodb-flush-log-at-trx-commit=2"],
    )?;
    s.set("SNOWMINT_TEST_MYSQL_FLUSH2_URL", url(port));
    Ok(())
}

fn url(port: u16) -> String {
    format!("mysql://root@127.0.0.1:{port}/test")
}

/// A throwaway MariaDB with its data in RUN/`name`, a database `test`, its
/// stop added; `extra`: more server options. Writes RUN/`name`/{start, stop,
/// restart} (the restart test runs the last). Returns its port and the
/// restart command.
fn throwaway(
    p: &Part,
    s: &mut Stores,
    name: &str,
    extra: &[&str],
) -> Result<(u16, String), String> {
    crate::tools::apt(p, &["mariadb-server"])?;
    let (Some(install), Some(server), Some(admin), Some(client_bin)) = (
        tool(&["mariadb-install-db", "mysql_install_db"]),
        tool(&["mariadbd", "mysqld"]),
        tool(&["mariadb-admin", "mysqladmin"]),
        tool(&["mariadb", "mysql"]),
    ) else {
        return Err("mysql: MariaDB's programs are missing after installing mariadb-server".into());
    };
    let dir = s.run.dir.join(name);
    crate::step::mkdir(&dir)?;
    let user = String::from_utf8_lossy(
        &Command::new("id")
            .arg("-un")
            .output()
            .map_err(|e| format!("id: {e}"))?
            .stdout,
    )
    .trim()
    .to_string();
    let port = super::free_port()?;
    let d = |f: &str| dir.join(f).to_string_lossy().into_owned();
    let out = output_within(
        Command::new(&install).args([
            "--no-defaults".to_string(),
            format!("--datadir={}", d("data")),
            format!("--user={user}"),
            "--auth-root-authentication-method=normal".into(),
            "--skip-test-db".into(),
            "--innodb-log-file-size=8M".into(),
        ]),
        Duration::from_secs(180),
    )?;
    std::fs::write(dir.join("install.log"), [out.stdout, out.stderr].concat()).ok();
    if !out.status.success() {
        return Err(format!(
            "mysql ({name}): mariadb-install-db failed (log: {})",
            d("install.log")
        ));
    }
    let mut args: Vec<String> = vec![
        "--no-defaults".into(),
        format!("--datadir={}", d("data")),
        format!("--socket={}", d("sock")),
        format!("--pid-file={}", d("pid")),
        format!("--port={port}"),
        "--bind-address=127.0.0.1".into(),
        format!("--user={user}"),
        format!("--log-error={}", d("err.log")),
        "--skip-log-bin".into(),
        "--innodb-log-file-size=8M".into(),
        "--innodb-flush-log-at-trx-commit=1".into(),
        "--max-connections=300".into(),
        "--character-set-server=utf8mb4".into(),
        "--collation-server=utf8mb4_general_ci".into(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    write_scripts(&dir, &server, &admin, port, &args)?;
    // Started here (a process group of this run's); the scripts restart it.
    let mut cmd = Command::new(&server);
    cmd.args(&args);
    let pid = s.run.spawn(
        &mut cmd,
        &dir.join("server.out"),
        &dir.join("server.pid"),
        Duration::from_secs(10),
        true,
    )?;
    let ping = || {
        output_within(
            Command::new(&admin).args([
                "--no-defaults",
                "-h",
                "127.0.0.1",
                "-P",
                &port.to_string(),
                "-u",
                "root",
                "ping",
            ]),
            Duration::from_secs(5),
        )
        .is_ok_and(|o| o.status.success())
    };
    super::wait_for(
        &format!("mysql: the throwaway MariaDB {name} on 127.0.0.1:{port}"),
        &dir.join("err.log"),
        Duration::from_secs(30),
        Duration::from_millis(50),
        || super::alive(pid),
        ping,
    )?;
    run_within(
        &mut client(&client_bin, port, "CREATE DATABASE test"),
        Duration::from_secs(30),
    )
    .map_err(|e| format!("mysql ({name}): {e}"))?;
    p.say(&format!(
        "mysql: throwaway MariaDB on 127.0.0.1:{port} ({})",
        dir.display()
    ));
    Ok((port, d("restart")))
}

/// DIR/start (the server in the background, waiting at most 30 s until it
/// answers), DIR/stop (SIGTERM, a clean shutdown keeping the data, SIGKILL
/// after 10 s) and DIR/restart, for the restart test.
fn write_scripts(
    dir: &Path,
    server: &Path,
    admin: &Path,
    port: u16,
    args: &[String],
) -> Result<(), String> {
    let q = |p: &Path| shell_word(&p.to_string_lossy());
    let pid = q(&dir.join("server.pid"));
    let words: Vec<String> = args.iter().map(|a| shell_word(a)).collect();
    let start = format!(
        "#!/usr/bin/env bash\n# Starts the server in the background and waits (at most 30 s) until it answers.\n\
{} {} </dev/null >/dev/null 2>&1 &\necho $! >{pid}\n\
for ((i = 0; i < 600; i++)); do\n  {} --no-defaults -h 127.0.0.1 -P {port} -u root ping >/dev/null 2>&1 && exit 0\n\
  kill -0 \"$(cat {pid})\" 2>/dev/null || break\n  sleep 0.05\ndone\n\
cat {} >&2\necho \"mysql: the throwaway server ({}) did not answer within 30 s\" >&2\nexit 1\n",
        q(server),
        words.join(" "),
        q(admin),
        q(&dir.join("err.log")),
        dir.display()
    );
    let stop = format!(
        "#!/usr/bin/env bash\n# SIGTERM (a clean shutdown, the data kept), then SIGKILL after 10 s.\n\
pid=$(cat {pid} 2>/dev/null) || exit 0\nkill -TERM \"$pid\" 2>/dev/null || exit 0\n\
for ((i = 0; i < 200; i++)); do\n  kill -0 \"$pid\" 2>/dev/null || exit 0\n  sleep 0.05\ndone\n\
kill -KILL \"$pid\" 2>/dev/null || true\n"
    );
    let restart = format!(
        "#!/usr/bin/env bash\n{} && exec {}\n",
        q(&dir.join("stop")),
        q(&dir.join("start"))
    );
    for (name, text) in [("start", start), ("stop", stop), ("restart", restart)] {
        super::write_script(&dir.join(name), &text)?;
    }
    Ok(())
}
