//! The `interop` part: Python, Node and CLI processes together. 40 of them
//! lease one 5-bit node field from one store (tests/lease/mixed_processes.py),
//! once per store: a directory, then PostgreSQL, MariaDB, Redis, etcd and
//! ZooKeeper (the servers already running, else throwaway ones). It uses the
//! packages the python and node parts installed (the wheel's venv, the npm
//! consumer project), so it also proves that the installed packages carry
//! every network store. Then the README's "Leases across machines" examples
//! run against the same servers (tests/lease/readme_stores.py: the CLI line,
//! the Python and JavaScript lines, the C lines linked against the C part's
//! install).

use crate::step::Part;
use crate::stores::Stores;

const STORES: [&str; 5] = ["postgres", "mysql", "redis", "etcd", "zookeeper"];

pub fn run(p: &Part) -> Result<(), String> {
    let root = &p.root;
    let venv = root.join(".cache/py-test-venv");
    let consumer = root.join(".cache/node-consumer");
    let prefix = root.join("target/c/prefix");
    if !crate::tools::executable(&venv.join("bin/python"))
        || !consumer.join("node_modules/snowmint").is_dir()
        || !prefix.join("lib/libsnowmint.a").is_file()
    {
        return Err("the installed packages are missing: run the python, node and c parts first (cargo xtask test python node c interop)".into());
    }

    p.say("interop: the CLI (cargo build --profile ci -p snowmint-cli)");
    p.check(
        p.cmd("cargo")
            .args(["build", "--quiet", "--profile", "ci", "-p", "snowmint-cli"]),
    )?;
    let cli = root.join("target/ci/snowmint");

    let stores = Stores::up(p, &STORES)?;

    p.say("interop: 40 Python, Node and CLI processes lease from each store");
    let mut cmd = p.cmd(venv.join("bin/python"));
    cmd.arg("tests/lease/mixed_processes.py")
        .arg("--node-project")
        .arg(&consumer)
        .arg("--cli")
        .arg(&cli);
    for s in STORES {
        cmd.args(["--store", stores.url(s)?]);
    }
    p.check(&mut cmd)?;

    p.say("interop: the README's store examples, against the same servers");
    p.check(
        p.cmd(venv.join("bin/python"))
            .arg("tests/lease/readme_stores.py")
            .arg("--node-project")
            .arg(&consumer)
            .arg("--cli")
            .arg(&cli)
            .arg("--prefix")
            .arg(&prefix),
    )
}
