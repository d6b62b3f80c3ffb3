//! `cargo xtask harness ARGS...` (`./scripts/harness`): the multi-host fault
//! harness (docs/HARNESS.md, tools/harness/). Hosts as network namespaces on
//! one bridge, store clusters on three of them, CLI holders and
//! snowmint-server instances on the others, a seeded schedule of partitions,
//! one-way loss, kills, pauses and clock steps, then a checker over every
//! ID. Each store's real configuration must pass (and issue IDs in every
//! phase between faults); each control run (a build or a configuration with
//! a protection removed) must be caught issuing duplicates, IDs past a
//! confirmed reservation, or (holders starved) too few IDs.
//!
//! ```text
//! ./scripts/harness --short                 # about a minute per run
//! ./scripts/harness --short --jobs 2        # two stores at a time (the release check's part)
//! ./scripts/harness --minutes 30 --store etcd
//! ./scripts/harness --replay target/harness/RUN/schedule.json
//! ./scripts/harness --cleanup               # namespaces/links left by a killed run
//! ./scripts/harness --table target/harness  # the results table of runs (no root, no builds)
//! ```
//!
//! Results: target/harness/<run>/result.json and record.txt. Runs need root,
//! iproute2, nftables, etcd (and etcdctl), redis-server, libfaketime, PostgreSQL 15,
//! MariaDB and ZooKeeper (installed with apt-get when missing). Before a run
//! this builds the CLI and the server (the test command's `ci` profile, into
//! target/ci), the control build when a control run needs it
//! (target/harness/bin: the same build with snowmint-lease's
//! `harness-controls` feature, which removes the one protection
//! `SNOWMINT_HARNESS_CONTROL` names, in a target folder of its own so that
//! target/ci never holds an unsafe binary; it refuses to start outside the
//! harness), the Python binding's wheel for the Python holder
//! (target/harness/wheel, installed into target/harness/venv), and the Node
//! package for the Node holder (packed into target/npm as the node part
//! packs it, installed into target/harness/node).

use std::path::Path;
use std::process::Command;

use crate::part_node;
use crate::proc::Group;
use crate::step::{copy, glob, mkdir, remove_dir, Part};
use crate::tools::{apt, executable, which};
use crate::venv::build_venv;

/// The control builds: each removes one protection.
const CONTROLS: [&str; 5] = [
    "no-successor-fence",
    "no-redis-fence",
    "no-sql-fence",
    "past-reservation",
    "no-etcd-fence",
];

/// Runs the harness with `args`; its exit code (a signal: 128 + it).
pub fn run(root: &Path, args: &[String]) -> u8 {
    let main = root.join("tools/harness/main.py");
    let has = |flag: &str| {
        args.iter()
            .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
    };
    // The seed fixed here, not by main.py: the control builds are chosen by
    // it (`--controls`) before the run starts.
    let mut args = args.to_vec();
    if !has("--seed") && !has("--replay") {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        args.extend(["--seed".to_string(), now.to_string()]);
    }
    let args = &args[..];
    // The results table reads result.json files only, and the help is
    // main.py's: no root, no builds.
    if !has("--table") && !has("--help") && !has("-h") {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("harness: needs root (network namespaces and nftables)");
            return 2;
        }
        if !has("--cleanup") {
            let p = Part::new(root);
            if let Err(e) = prepare(&p, &main, args) {
                eprintln!("harness: {e}");
                return 1;
            }
            p.say(&format!("harness {}", args.join(" ")));
        }
    }
    // In a process group of its own: a SIGTERM reaches Python's handler,
    // which stops every process and removes every namespace before exiting.
    let mut cmd = Command::new("python3");
    cmd.arg(main).args(args).current_dir(root);
    match Group::spawn(&mut cmd).map(Group::wait) {
        Ok(Ok(f)) => u8::try_from(f.status.code().unwrap_or(1)).unwrap_or(1),
        Ok(Err(sig)) => 128u8.saturating_add(u8::try_from(sig).unwrap_or(0)),
        Err(e) => {
            eprintln!("harness: cannot start python3: {e}");
            1
        }
    }
}

/// The release check's `harness` part: the short schedule, two stores at a
/// time (`--short --jobs 2`).
pub fn release_part(p: &Part) -> Result<(), String> {
    let args = ["--short", "--jobs", "2"].map(String::from);
    match run(&p.root, &args) {
        0 => Ok(()),
        code => Err(format!("the harness exited {code}")),
    }
}

/// The control build must refuse to start unless `SNOWMINT_HARNESS_CONTROL`
/// names one of its controls, and start when it does (`--version`).
fn refuses_outside_the_harness(exe: &Path, control: &str) -> Result<(), String> {
    let run = |value: Option<&str>| {
        let mut cmd = Command::new(exe);
        cmd.arg("--version").env_remove("SNOWMINT_HARNESS_CONTROL");
        if let Some(v) = value {
            cmd.env("SNOWMINT_HARNESS_CONTROL", v);
        }
        cmd.output()
            .map_err(|e| format!("cannot run {}: {e}", exe.display()))
    };
    let outside = run(None)?;
    let inside = run(Some(control))?;
    let said = String::from_utf8_lossy(&outside.stderr);
    if outside.status.code() != Some(2) || !said.contains(control) {
        return Err(format!(
            "{} (control {control}) started without SNOWMINT_HARNESS_CONTROL ({}): {said}",
            exe.display(),
            outside.status
        ));
    }
    if !inside.status.success() {
        return Err(format!(
            "{} (control {control}) does not start with SNOWMINT_HARNESS_CONTROL={control}: {}",
            exe.display(),
            String::from_utf8_lossy(&inside.stderr)
        ));
    }
    Ok(())
}

/// The Debian packages, the builds (the control builds that `args` need:
/// `main.py --builds`) and the Python holder's venv.
fn prepare(p: &Part, main: &Path, args: &[String]) -> Result<(), String> {
    let mut missing = Vec::new();
    for (present, package) in [
        (which("nft").is_some(), "nftables"),
        (which("etcd").is_some(), "etcd-server"),
        // etcdctl: the etcd control's snapshot and restore.
        (which("etcdctl").is_some(), "etcd-client"),
        (which("redis-server").is_some(), "redis-server"),
        (
            Path::new("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1").exists(),
            "libfaketime",
        ),
        // ZooKeeper 3.8 (Debian's package, on its JDK): the members run
        // QuorumPeerMain.
        (
            Path::new("/usr/share/java/zookeeper.jar").exists() && which("java").is_some(),
            "zookeeper",
        ),
        (
            executable(Path::new("/usr/lib/postgresql/15/bin/postgres")),
            "postgresql-15",
        ),
        (which("mariadbd").is_some(), "mariadb-server"),
    ] {
        if !present {
            missing.push(package);
        }
    }
    apt(p, &missing)?;

    // Each with the test command's own helper, so that their dependencies
    // are the ones it compiled: the CLI alone (`stores::build_cli`, as the
    // interop and postgres parts build it), the server in a test build
    // (`cargo_json::test_build`, as the server part takes its binary; here
    // with one small test, whose build has the features the server's tests
    // add to its dependencies). Built together, the two made a third set of
    // dependencies' features, compiled on a new machine for the harness
    // alone (137 s of CI's). The CLI's and the server's paths.
    let build = |extra: &[&str]| -> Result<[std::path::PathBuf; 2], String> {
        let cli = crate::stores::build_cli(&p.root, extra)?;
        let mut server_args = vec!["-p", "snowmint-server", "--test", "issued_log"];
        server_args.extend(extra);
        let server = crate::cargo_json::test_build(p, &server_args)?
            .bins
            .remove("snowmint-server")
            .ok_or("cargo test --no-run -p snowmint-server built no server binary")?;
        Ok([cli, server])
    };
    p.say("build: CLI and server (--profile ci, as the test command builds them)");
    build(&[])?;
    // The control build goes to a target folder of its own, so that
    // target/ci never holds an unsafe binary (its dependencies are the
    // normal build's, in the shared build folder: only the lease crate and
    // what links it are compiled again). One build for every control: it
    // removes the protection SNOWMINT_HARNESS_CONTROL names, and refuses to
    // start when that names none (snowmint_lease::control_build_refusal),
    // checked here for each control.
    let listed = p.output(
        Command::new("python3")
            .arg(main)
            .args(args)
            .arg("--builds")
            .current_dir(&p.root),
    )?;
    let listed: Vec<&str> = listed
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if let Some(other) = listed.iter().find(|c| !CONTROLS.contains(c)) {
        return Err(format!(
            "main.py --builds named {other}, not a control build"
        ));
    }
    if !listed.is_empty() {
        p.say(&format!(
            "control build: CLI and server with harness-controls, for {} (target/harness/bin)",
            listed.join(", ")
        ));
        let built = build(&[
            "--target-dir",
            "target/harness/control",
            "--features",
            "snowmint-lease/harness-controls",
        ])?;
        let bin = p.root.join("target/harness/bin");
        mkdir(&bin)?;
        for (exe, from) in ["snowmint", "snowmint-server"].into_iter().zip(&built) {
            // A new file, not the old one rewritten: a run of another
            // harness process may be executing it ("Text file busy").
            let _ = std::fs::remove_file(bin.join(exe));
            copy(from, &bin.join(exe))?;
            for control in CONTROLS {
                refuses_outside_the_harness(&bin.join(exe), control)?;
            }
        }
    }

    // The Python holder (tools/harness/pyholder.py) runs on the binding: a
    // wheel for this host, built as the python test part builds its own, in
    // a venv of the harness's own. The normal build in every run, controls
    // too (the controls remove a protection from the CLI's and the server's
    // builds).
    p.say("build: the Python binding (maturin build --profile ci), into target/harness/venv");
    let venv = build_venv(p)?;
    let wheels = p.root.join("target/harness/wheel");
    remove_dir(&wheels)?;
    p.check(
        p.cmd("nice")
            .arg(venv.join("bin/maturin"))
            .args(["build", "--quiet", "--profile", "ci"])
            .args(["-m", "bindings-python/Cargo.toml", "--out"])
            .arg(&wheels),
    )?;
    let harness_venv = p.root.join("target/harness/venv");
    if !executable(&harness_venv.join("bin/python")) {
        p.check(
            Command::new("python3")
                .args(["-m", "venv"])
                .arg(&harness_venv),
        )?;
    }
    let wheel = glob(&wheels, ".whl")?
        .into_iter()
        .find(|w| {
            let n = w.file_name().unwrap_or_default().to_string_lossy();
            n.starts_with("snowmint-") && n.contains("-cp39-abi3-")
        })
        .ok_or("maturin wrote no snowmint-*-cp39-abi3-*.whl into target/harness/wheel")?;
    p.check(
        Command::new(harness_venv.join("bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(["--force-reinstall", "--no-deps"])
            .arg(wheel),
    )?;

    // The Node holder (tools/harness/nodeholder.mjs) runs on the npm
    // package as the node part packs it (target/npm), installed as users
    // install it into a project of the harness's own, target/harness/node.
    let packed = part_node::build_and_pack(p)?;
    let project = p.root.join("target/harness/node");
    p.say(&format!(
        "the Node package's tarballs, installed into {}",
        project.display()
    ));
    remove_dir(&project)?;
    let platform = part_node::host_tarball(&p.root)?;
    part_node::consumer_project(p, &project, &packed, &[&platform], &[])
}
