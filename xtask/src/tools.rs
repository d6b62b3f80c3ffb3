//! Tools the parts install, each once: Debian packages, Rust targets and the
//! pinned cargo tools (one folder per crate and version under
//! `~/.cache/snowmint/tools`, shared by every checkout; `SNOWMINT_TOOLS`
//! moves it). Installs take file locks, the same files as `bench/lib.sh`
//! (`ensure_cargo_tool`, `ensure_apt`), so that the prefetch and a part, or
//! two checkouts, take turns: the second finds what the first installed.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::step::{prepend_path, remove_dir, Part};

/// An exclusive `flock(2)` on a file, released when dropped (the file is
/// closed).
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

impl FileLock {
    /// Waits for the lock on `path`, created when missing (for a folder:
    /// the folder itself, opened for reading).
    pub fn acquire(path: &Path) -> Result<FileLock, String> {
        let file = lock_file(path)?;
        flock(&file, libc::LOCK_EX).map_err(|e| format!("lock {}: {e}", path.display()))?;
        Ok(FileLock { _file: file })
    }
}

/// A lock file opened (created when missing), or a folder opened for
/// reading, for [`flock`].
pub fn lock_file(path: &Path) -> Result<File, String> {
    if path.is_dir() {
        File::open(path)
    } else {
        OpenOptions::new().create(true).append(true).open(path)
    }
    .map_err(|e| format!("lock {}: {e}", path.display()))
}

/// `flock(2)` on `file` (`op`: `LOCK_EX` or `LOCK_SH`, with `LOCK_NB` not to
/// wait), retried when a signal interrupts it: false when it would have had
/// to wait.
pub fn flock(file: &File, op: libc::c_int) -> Result<bool, String> {
    loop {
        // SAFETY: the descriptor is the open file's, valid for the whole
        // call; flock touches no memory of ours.
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return Ok(true);
        }
        let err = std::io::Error::last_os_error();
        match err.kind() {
            std::io::ErrorKind::Interrupted => {}
            std::io::ErrorKind::WouldBlock if op & libc::LOCK_NB != 0 => return Ok(false),
            _ => return Err(format!("flock: {err}")),
        }
    }
}

/// The folder of the pinned cargo tools and uv: `SNOWMINT_TOOLS`, else
/// `$XDG_CACHE_HOME/snowmint/tools` (`~/.cache` without it).
pub fn tools_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SNOWMINT_TOOLS").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    cache_dir().join("snowmint/tools")
}

/// `$XDG_CACHE_HOME`, else `~/.cache`.
pub fn cache_dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default()
                .join(".cache")
        })
}

pub fn executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `command -v NAME`: the first executable `NAME` on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| executable(p))
}

/// Whether `program --version` runs and prints `version` somewhere.
fn says_version(program: &Path, version: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains(version))
}

/// Where a cargo tool comes from.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// crates.io, the crate named as the tool's folder.
    Registry,
    /// A folder of this repository (`cargo install --path`): always that
    /// build, never another copy on PATH; linted as it builds, being ours.
    Path(&'a Path),
}

/// Puts `name`@`version`'s `bin` first on PATH and returns its path: the one
/// on PATH when its `--version` says `version` (a registry tool only), else
/// `TOOLS/name-version/bin/bin`, installed there by `cargo install` unless an
/// earlier run of any checkout did (`ensure_cargo_tool` in bench/lib.sh).
pub fn cargo_tool(
    p: &Part,
    bin: &str,
    version: &str,
    name: &str,
    source: Source<'_>,
    extra: &[&str],
) -> Result<PathBuf, String> {
    let tools = tools_dir();
    let dir = tools.join(format!("{name}-{version}"));
    let ours = dir.join("bin").join(bin);
    if executable(&ours) {
        prepend_path(&dir.join("bin"));
    }
    let any_copy = matches!(source, Source::Registry) || executable(&ours);
    if any_copy {
        if let Some(found) = which(bin).filter(|b| says_version(b, version)) {
            return Ok(found);
        }
    }
    // One install of a tool at a time: the prefetch may be installing it in
    // the background; waiting for it and finding its copy is quicker than
    // compiling a second one.
    crate::step::mkdir(&tools)?;
    let _lock = FileLock::acquire(&tools.join(format!(".{name}-{version}.lock")))?;
    if executable(&ours) && says_version(&ours, version) {
        prepend_path(&dir.join("bin"));
        return Ok(ours);
    }
    p.say(&format!(
        "installing {name} {version} into {} (cargo install)",
        dir.display()
    ));
    // Into a folder of this run's own first: an interrupted install leaves
    // no half folder behind, and a checkout installing the same tool without
    // the lock does not delete ours (the first to finish keeps its copy).
    let partial = tools.join(format!("{name}-{version}.partial-{}", std::process::id()));
    remove_dir(&partial)?;
    let mut cmd = Command::new("cargo");
    cmd.args(["install", "--quiet", "--root"]).arg(&partial);
    let lint = match source {
        Source::Registry => {
            cmd.args([name, "--version", version]);
            PathBuf::new()
        }
        Source::Path(folder) => {
            cmd.arg("--path").arg(folder);
            p.root.join("scripts/lint-rustc")
        }
    };
    // Not optimised and without the crate's own release LTO: a tool is built
    // once per machine, its build time matters, its speed hardly
    // (SNOWMINT_TOOL_OPT_LEVEL sets another level).
    let opt = std::env::var("SNOWMINT_TOOL_OPT_LEVEL").unwrap_or_else(|_| "0".into());
    cmd.args(extra)
        .env("CARGO_PROFILE_RELEASE_LTO", "off")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", opt)
        .env("RUSTC_WORKSPACE_WRAPPER", lint)
        .current_dir(&p.root);
    if let Err(e) = p.check(&mut cmd) {
        let _ = fs::remove_dir_all(&partial);
        return Err(e);
    }
    // A folder without the binary is a broken one: replace it. rename(2)
    // onto a complete folder (another checkout's, finished meanwhile) fails:
    // keep that one.
    if !executable(&ours) {
        remove_dir(&dir)?;
    }
    if fs::rename(&partial, &dir).is_err() {
        let _ = fs::remove_dir_all(&partial);
    }
    prepend_path(&dir.join("bin"));
    Ok(ours)
}

/// wasm-bindgen (`WASM_BINDGEN_VERSION`), built from tools/wasm-bindgen's
/// lock file; its folder's name carries the hash of that folder's files
/// (the same folder every checkout uses).
pub fn wasm_bindgen(p: &Part) -> Result<PathBuf, String> {
    let src = p.root.join("tools/wasm-bindgen");
    let mut bytes = Vec::new();
    for f in ["Cargo.toml", "Cargo.lock", "main.rs"] {
        bytes.extend(fs::read(src.join(f)).map_err(|e| format!("tools/wasm-bindgen/{f}: {e}"))?);
    }
    let hash = sha256_hex(&bytes)?;
    cargo_tool(
        p,
        "wasm-bindgen",
        crate::venv::WASM_BINDGEN_VERSION,
        &format!("wasm-bindgen-{}", &hash[..12]),
        Source::Path(&src),
        &["--locked"],
    )
}

/// `sha256sum`'s hex digest of `bytes`.
fn sha256_hex(bytes: &[u8]) -> Result<String, String> {
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run sha256sum: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(bytes)
            .map_err(|e| format!("sha256sum: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("sha256sum: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    match text.split_whitespace().next() {
        Some(h) if out.status.success() && h.len() == 64 => Ok(h.to_string()),
        _ => Err(format!("sha256sum failed ({})", out.status)),
    }
}

/// `rustup target add TRIPLE` unless it is installed.
pub fn rust_target(p: &Part, triple: &str) -> Result<(), String> {
    let installed = p
        .output(Command::new("rustup").args(["target", "list", "--installed"]))
        .unwrap_or_default();
    if installed.lines().any(|l| l == triple) {
        return Ok(());
    }
    p.check(Command::new("rustup").args(["target", "add", triple]))
}

/// The host's target triple (`rustc -vV`'s `host:` line).
pub fn host_triple(p: &Part) -> Result<String, String> {
    let out = p.output(Command::new("rustc").arg("-vV"))?;
    out.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_string)
        .ok_or_else(|| "rustc -vV printed no host line".to_string())
}

/// Installs the Debian packages that are missing (needs root or sudo). One
/// apt run of this project's scripts at a time (`/tmp/snowmint-apt.lock`,
/// the prefetch's too): after waiting, the missing ones are looked up again.
pub fn apt(p: &Part, packages: &[&str]) -> Result<(), String> {
    if apt_missing(packages)?.is_empty() {
        return Ok(());
    }
    let _lock = FileLock::acquire(Path::new("/tmp/snowmint-apt.lock"))?;
    let missing = apt_missing(packages)?;
    if missing.is_empty() {
        return Ok(());
    }
    p.say(&format!(
        "installing Debian packages: {}",
        missing.join(" ")
    ));
    if std::env::var_os("SNOWMINT_APT_UPDATED").is_none() {
        apt_update(p)?;
    }
    let mut args = vec![
        "apt-get",
        "-o",
        "DPkg::Lock::Timeout=600",
        "install",
        "-y",
        "-qq",
        "--no-install-recommends",
    ];
    args.extend(missing.iter().map(String::as_str));
    let mut cmd = as_root(&args);
    // In a process group of its own: a stopped run (its group signalled)
    // never interrupts dpkg midway, which would want `dpkg --configure -a`
    // by hand; apt-get finishes and the run's wait for it ends then.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.env("DEBIAN_FRONTEND", "noninteractive")
        .stdout(Stdio::null());
    p.check(&mut cmd)
}

/// The packages not installed; a name without `:ARCH` is the machine's own
/// architecture's package (or an architecture-independent one).
fn apt_missing(packages: &[&str]) -> Result<Vec<String>, String> {
    let out = Command::new("dpkg")
        .arg("--print-architecture")
        .output()
        .map_err(|e| format!("cannot run dpkg: {e}"))?;
    let native = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let mut missing = Vec::new();
    for &pkg in packages {
        let wanted: Vec<&str> = match pkg.split_once(':') {
            Some((_, arch)) => vec![arch],
            None => vec![native.as_str(), "all"],
        };
        let out = Command::new("dpkg-query")
            .args(["-W", "-f=${Status} ${Architecture}\\n", pkg])
            .stderr(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run dpkg-query: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let installed = text.lines().any(|l| {
            l.strip_prefix("install ok installed ")
                .is_some_and(|a| wanted.contains(&a))
        });
        if !installed {
            missing.push(pkg.to_string());
        }
    }
    Ok(missing)
}

/// `args` as a command, through sudo unless this is root already.
fn as_root(args: &[&str]) -> Command {
    // SAFETY: geteuid has no preconditions and touches no memory.
    let root = unsafe { libc::geteuid() } == 0;
    let mut cmd = if root {
        Command::new(args[0])
    } else {
        let mut c = Command::new("sudo");
        c.arg(args[0]);
        c
    };
    cmd.args(&args[1..]);
    cmd
}

/// dpkg and apt take arm64 packages too (multiarch), with their package
/// lists (the release check's arm64 libraries: cJSON for the C suite).
pub fn arm64_dpkg(p: &Part) -> Result<(), String> {
    let foreign = p.output(Command::new("dpkg").arg("--print-foreign-architectures"))?;
    if foreign.lines().any(|a| a.trim() == "arm64") {
        return Ok(());
    }
    let _lock = FileLock::acquire(Path::new("/tmp/snowmint-apt.lock"))?;
    p.check(&mut as_root(&["dpkg", "--add-architecture", "arm64"]))?;
    // The arm64 package lists are new.
    apt_update(p)
}

/// `apt-get update`, noted for this process and its children (one per run).
fn apt_update(p: &Part) -> Result<(), String> {
    p.check(&mut as_root(&[
        "apt-get",
        "-o",
        "DPkg::Lock::Timeout=600",
        "update",
        "-qq",
    ]))?;
    std::env::set_var("SNOWMINT_APT_UPDATED", "1");
    Ok(())
}
