//! The `lint` part: lints of the hand-written code that no compiler checks.
//!
//! 1. ESLint over the JavaScript (tools/lint/eslint.config.mjs: both npm
//!    packages' own files, their tests, the shared suite in tests/js, the
//!    decoder page, the benchmarks; generated files left out), installed
//!    from tools/lint/package-lock.json into tools/lint/node_modules;
//! 2. ruff over the Python (ruff.toml), installed into .venv;
//! 3. the fault harness's checker's and results table's self-tests
//!    (tools/harness/check.py, table.py: no root, no builds, under a second).
//!
//! Each tool is installed only when missing or at another version.

use std::fs;
use std::process::Command;

use crate::step::{copy, Part};
use crate::venv::{venv_pip, RUFF_VERSION};

pub fn run(p: &Part) -> Result<(), String> {
    let root = &p.root;
    p.say("lint: eslint (tools/lint)");
    // npm ci only when the lockfile differs from the one of the last install
    // (a copy kept in node_modules).
    let lock = root.join("tools/lint/package-lock.json");
    let installed = root.join("tools/lint/node_modules/.installed-lock.json");
    if fs::read(&lock).ok() != fs::read(&installed).ok() || !installed.exists() {
        p.check(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(root.join("tools/lint")),
        )?;
        copy(&lock, &installed)?;
    }
    p.check(
        p.cmd(root.join("tools/lint/node_modules/.bin/eslint"))
            .args([
                "--config",
                "tools/lint/eslint.config.mjs",
                "--max-warnings",
                "0",
                ".",
            ]),
    )?;

    p.say(&format!("lint: ruff {RUFF_VERSION} (ruff.toml)"));
    let ruff = root.join(".venv/bin/ruff");
    let version = Command::new(&ruff)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    if !version.lines().any(|l| l == format!("ruff {RUFF_VERSION}")) {
        venv_pip(p, &root.join(".venv"), &[format!("ruff=={RUFF_VERSION}")])?;
    }
    p.check(p.cmd(&ruff).args(["check", "--no-cache", "."]))?;

    p.say("lint: the harness checker's and results table's self-tests");
    for script in ["tools/harness/check.py", "tools/harness/table.py"] {
        p.check(p.cmd("python3").args([script, "--self-test"]))?;
    }

    p.say("lint: all clean");
    Ok(())
}
