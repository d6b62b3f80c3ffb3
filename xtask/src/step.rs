//! What a part written in Rust needs: the build environment every part uses
//! (as `scripts/lib.sh` sets it for the parts still in shell), its step
//! headings, and commands run as steps.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// A part run in this process (`cargo xtask run-part NAME`, started by the
/// test runner as a child of its own).
#[derive(Debug)]
pub struct Part {
    pub root: PathBuf,
    started: Instant,
}

impl Part {
    /// Sets the environment of `scripts/lib.sh`: one shared build directory
    /// per machine (`~/.cache/snowmint/build`, `SNOWMINT_BUILD_DIR` moves it,
    /// `target` keeps the checkout's `target/`; an explicit
    /// `CARGO_BUILD_BUILD_DIR` wins), clippy as the workspace's compiler
    /// (`scripts/lint-rustc`, unless `RUSTC_WORKSPACE_WRAPPER` is set), the
    /// cargo tools on PATH and no colour in the logs.
    pub fn new(root: &Path) -> Part {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".cache"));
        if std::env::var_os("CARGO_BUILD_BUILD_DIR").is_none_or(|v| v.is_empty()) {
            match std::env::var("SNOWMINT_BUILD_DIR").as_deref() {
                Ok("target") => {}
                Ok(dir) if !dir.is_empty() => std::env::set_var("CARGO_BUILD_BUILD_DIR", dir),
                _ => std::env::set_var("CARGO_BUILD_BUILD_DIR", cache.join("snowmint/build")),
            }
        }
        if std::env::var_os("RUSTC_WORKSPACE_WRAPPER").is_none() {
            std::env::set_var("RUSTC_WORKSPACE_WRAPPER", root.join("scripts/lint-rustc"));
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![home.join(".cargo/bin")];
        dirs.extend(std::env::split_paths(&path));
        if let Ok(joined) = std::env::join_paths(dirs) {
            std::env::set_var("PATH", joined);
        }
        std::env::set_var("CARGO_TERM_COLOR", "never");
        Part {
            root: root.to_path_buf(),
            started: Instant::now(),
        }
    }

    /// A step's heading, with the seconds since the part started.
    pub fn say(&self, what: &str) {
        println!("\n==> [{}s] {what}", self.started.elapsed().as_secs());
    }

    /// Runs `program args...` in the workspace root as a step; its failure
    /// ends the part with a line naming the step.
    pub fn run(
        &self,
        what: &str,
        program: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<(), String> {
        self.say(what);
        let status = Command::new(program)
            .args(args)
            .envs(env.iter().copied())
            .current_dir(&self.root)
            .status()
            .map_err(|e| format!("{what}: cannot run {program}: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!(
                "{what}: {program} {} failed ({status})",
                args.join(" ")
            ))
        }
    }

    /// Runs `cmd` (its program, arguments, folder and environment set by the
    /// caller) as a step: its standard output is printed and returned, its
    /// standard error goes to the part's. Its failure is an error naming the
    /// step, with that output.
    pub fn capture(&self, what: &str, cmd: &mut Command) -> Result<String, String> {
        self.say(what);
        let out = cmd
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("{what}: cannot run {:?}: {e}", cmd.get_program()))?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        print!("{text}");
        if out.status.success() {
            Ok(text)
        } else {
            Err(format!("{what}: failed ({})", out.status))
        }
    }
}
