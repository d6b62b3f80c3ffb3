//! What a part written in Rust needs: the build environment every part uses
//! (as `bench/lib.sh` sets it for the benchmarks' scripts), its step
//! headings, and commands run as steps.

use std::ffi::OsStr;
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
    /// Sets the environment of `bench/lib.sh`: one shared build directory
    /// per machine (`~/.cache/snowmint/build`, `SNOWMINT_BUILD_DIR` moves it,
    /// `target` keeps the checkout's `target/`; an explicit
    /// `CARGO_BUILD_BUILD_DIR` wins), clippy as the workspace's compiler
    /// (`scripts/lint-rustc`, unless `RUSTC_WORKSPACE_WRAPPER` is set), the
    /// artifacts in the checkout's `target/` (whatever `CARGO_TARGET_DIR`
    /// said), the cargo tools on PATH and no colour in the logs.
    pub fn new(root: &Path) -> Part {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        if std::env::var_os("CARGO_BUILD_BUILD_DIR").is_none_or(|v| v.is_empty()) {
            match std::env::var("SNOWMINT_BUILD_DIR").as_deref() {
                Ok("target") => {}
                Ok(dir) if !dir.is_empty() => std::env::set_var("CARGO_BUILD_BUILD_DIR", dir),
                _ => std::env::set_var(
                    "CARGO_BUILD_BUILD_DIR",
                    crate::tools::cache_dir().join("snowmint/build"),
                ),
            }
            if std::env::var_os("SNOWMINT_BUILD_DIR_CHECKED").is_none() {
                if let Some(dir) = std::env::var_os("CARGO_BUILD_BUILD_DIR") {
                    empty_if_over_limit(Path::new(&dir));
                }
            }
            std::env::set_var("SNOWMINT_BUILD_DIR_CHECKED", "1");
        }
        if std::env::var_os("RUSTC_WORKSPACE_WRAPPER").is_none() {
            std::env::set_var("RUSTC_WORKSPACE_WRAPPER", root.join("scripts/lint-rustc"));
        }
        // The artifacts go to the checkout's target/, where the parts read
        // them (a CARGO_TARGET_DIR of the caller's would move them out from
        // under the parts); SNOWMINT_BUILD_DIR moves the intermediate files.
        std::env::set_var("CARGO_TARGET_DIR", root.join("target"));
        prepend_path(&home.join(".cargo/bin"));
        std::env::set_var("CARGO_TERM_COLOR", "never");
        Part {
            root: root.to_path_buf(),
            started: Instant::now(),
        }
    }

    /// A part that keeps the caller's environment as it is: a command run
    /// by hand (`cargo xtask build-wasm`), not a test part.
    pub fn keeping_env(root: &Path) -> Part {
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

impl Part {
    /// `program` as a command in the workspace root (the caller adds its
    /// arguments, folder and environment), for [`Part::check`] and
    /// [`Part::capture`].
    pub fn cmd(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(&self.root);
        cmd
    }

    /// Runs `cmd` (output inherited) without a heading of its own: one more
    /// command of the step whose heading [`Part::say`] printed. Its failure
    /// is an error naming the command.
    pub fn check(&self, cmd: &mut Command) -> Result<(), String> {
        let status = cmd
            .status()
            .map_err(|e| format!("cannot run {}: {e}", show(cmd)))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("{} failed ({status})", show(cmd)))
        }
    }

    /// Runs `cmd` and returns its standard output (not printed); standard
    /// error goes to the part's. Its failure is an error naming the command.
    pub fn output(&self, cmd: &mut Command) -> Result<String, String> {
        let out = cmd
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", show(cmd)))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!("{} failed ({})", show(cmd), out.status))
        }
    }

    /// A path inside the workspace, as the steps' messages print it.
    pub fn rel<'a>(&self, path: &'a Path) -> std::borrow::Cow<'a, str> {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
    }
}

/// A command as a message names it: its program and arguments.
pub fn show(cmd: &Command) -> String {
    let mut words = vec![cmd.get_program().to_string_lossy().into_owned()];
    words.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    words.join(" ")
}

/// Puts `dir` first on this process's PATH (its children inherit it).
pub fn prepend_path(dir: &Path) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![dir.to_path_buf()];
    dirs.extend(std::env::split_paths(&path).filter(|d| d != dir));
    if let Ok(joined) = std::env::join_paths(dirs) {
        std::env::set_var("PATH", joined);
    }
}

/// Reads a file, the error naming it.
pub fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Removes a folder if it is there, the error naming it.
pub fn remove_dir(path: &Path) -> Result<(), String> {
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("removing {}: {e}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Creates a folder and its parents, the error naming it.
pub fn mkdir(path: &Path) -> Result<(), String> {
    std::fs::create_dir_all(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Copies a file, the error naming both.
pub fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map(drop)
        .map_err(|e| format!("copying {} to {}: {e}", from.display(), to.display()))
}

/// Fails unless the two files have the same bytes (`cmp`).
pub fn same_file(a: &Path, b: &Path) -> Result<(), String> {
    let (x, y) = (std::fs::read(a), std::fs::read(b));
    match (x, y) {
        (Ok(x), Ok(y)) if x == y => Ok(()),
        (Ok(_), Ok(_)) => Err(format!("{} and {} differ", a.display(), b.display())),
        (Err(e), _) => Err(format!("{}: {e}", a.display())),
        (_, Err(e)) => Err(format!("{}: {e}", b.display())),
    }
}

/// The files of `dir` whose names end with `suffix`, sorted (a shell glob).
pub fn glob(dir: &Path, suffix: &str) -> Result<Vec<PathBuf>, String> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(suffix))
        })
        .collect();
    found.sort();
    Ok(found)
}

/// The build folders some builds keep beside the shared one (its path with
/// the suffix): the fuzz part's (coverage flags) and the sdist's install
/// (a workspace of its own at the workspace's relative paths).
pub const BESIDE_SHARED: [&str; 2] = ["-fuzz", "-sdist"];

/// The build folder beside the shared one with `suffix` (one of
/// [`BESIDE_SHARED`]), if the shared one (`CARGO_BUILD_BUILD_DIR`) is set.
pub fn beside_shared_build_dir(suffix: &str) -> Option<PathBuf> {
    debug_assert!(BESIDE_SHARED.contains(&suffix));
    let dir = std::env::var_os("CARGO_BUILD_BUILD_DIR").filter(|d| !d.is_empty())?;
    Some(with_suffix(Path::new(&dir), suffix))
}

/// `path` with `suffix` added to its last component (`build` + `-fuzz`).
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Unpacks the gzipped tar `archive` into `into` (emptied first) with its
/// files' times set to now (`tar -m`): a .crate's and an sdist's files all
/// carry one fixed old time, so unpacked as they are, cargo takes the
/// shared build folder's units of an earlier run for fresh, whatever the
/// archive holds.
pub fn unpack_touched(p: &Part, archive: &Path, into: &Path) -> Result<(), String> {
    remove_dir(into)?;
    mkdir(into)?;
    p.check(
        Command::new("tar")
            .arg("-xzmf")
            .arg(archive)
            .arg("-C")
            .arg(into),
    )
}

/// Units of checkouts since removed stay behind in the shared build
/// directory: past 30 GiB it is emptied, and so is each beside it
/// ([`BESIDE_SHARED`]); the next build fills them (as bench/lib.sh does).
fn empty_if_over_limit(dir: &Path) {
    let beside = BESIDE_SHARED.iter().map(|suffix| with_suffix(dir, suffix));
    for d in std::iter::once(dir.to_path_buf()).chain(beside) {
        if !d.is_dir() {
            continue;
        }
        let mib = Command::new("du")
            .arg("-sm")
            .arg(&d)
            .stderr(Stdio::null())
            .output()
            .ok()
            .and_then(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse::<u64>().ok())
            })
            .unwrap_or(0);
        if mib > 30 * 1024 {
            eprintln!(
                "the shared build directory {} is over 30 GiB: emptied",
                d.display()
            );
            let _ = std::fs::remove_dir_all(&d);
        }
    }
}
