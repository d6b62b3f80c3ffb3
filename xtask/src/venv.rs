//! Python environments: uv (pinned, from PyPI, once per machine), the build
//! venv `.venv` (maturin, pytest, ruff), the test venv of the python part,
//! and the pinned versions of what goes into them.
//!
//! Some versions are also in `bench/lib.sh`, which the benchmarks' scripts
//! read: a test below fails when the two disagree.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::step::{mkdir, remove_dir, Part};
use crate::tools::{executable, tools_dir, FileLock};

pub const UV_VERSION: &str = "0.13.9";
pub const PIP_VERSION: &str = "23.2.1";
pub const MATURIN_VERSION: &str = "1.16.0";
pub const RUFF_VERSION: &str = "0.17.6";
pub const PYTEST_VERSION: &str = "9.2.0";
pub const MYPY_VERSION: &str = "2.4.1";
pub const DJANGO_VERSION: &str = "5.2.19";
pub const SQLALCHEMY_VERSION: &str = "2.1.9";
pub const PSYCOPG_VERSION: &str = "3.3.9";
pub const TYPESCRIPT_VERSION: &str = "5.9.3";
pub const WASM_BINDGEN_VERSION: &str = "0.2.130";
pub const SCHEMATHESIS_VERSION: &str = "4.32.5";
pub const PROMETHEUS_CLIENT_VERSION: &str = "0.26.0";
/// The gRPC client's packages (the server part's Python client).
pub const GRPC_PY_PACKAGES: [&str; 5] = [
    "grpcio==1.85.3",
    "grpcio-tools==1.85.1",
    "grpcio-health-checking==1.85.1",
    "grpcio-reflection==1.85.1",
    "protobuf==7.36.2",
];
pub const ZIGLANG_VERSION: &str = "0.17.1";
pub const CARGO_ZIGBUILD_VERSION: &str = "0.24.1";

/// uv `UV_VERSION`, installed with pip into `TOOLS/uv-VERSION` once per
/// machine (under the lock `ensure_uv` of bench/lib.sh takes). The venvs'
/// packages are installed with it: from its cache a venv's packages are
/// linked in a second or two. A PyPI mirror is `UV_DEFAULT_INDEX`.
pub fn uv(p: &Part) -> Result<PathBuf, String> {
    let tools = tools_dir();
    let dir = tools.join(format!("uv-{UV_VERSION}"));
    let uv = dir.join("bin/uv");
    if executable(&uv) {
        return Ok(uv);
    }
    mkdir(&tools)?;
    let _lock = FileLock::acquire(&tools.join(format!(".uv-{UV_VERSION}.lock")))?;
    if !executable(&uv) {
        p.say(&format!(
            "installing uv {UV_VERSION} into {} (pip install --target)",
            dir.display()
        ));
        let partial = tools.join(format!("uv-{UV_VERSION}.partial-{}", std::process::id()));
        remove_dir(&partial)?;
        p.check(
            Command::new("python3")
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--root-user-action=ignore",
                    "--target",
                ])
                .arg(&partial)
                .arg(format!("uv=={UV_VERSION}")),
        )?;
        if std::fs::rename(&partial, &dir).is_err() {
            let _ = std::fs::remove_dir_all(&partial);
        }
    }
    Ok(uv)
}

/// A new venv at `dir` with pip (`PIP_VERSION`, for the scripts that call
/// it), installed by uv.
fn make_venv(p: &Part, uv: &Path, dir: &Path) -> Result<(), String> {
    p.check(
        Command::new("python3")
            .args(["-m", "venv", "--without-pip"])
            .arg(dir),
    )?;
    uv_install(p, uv, dir, &[format!("pip=={PIP_VERSION}")])
}

/// `uv pip install --quiet --python VENV/bin/python ARGS...`
pub fn uv_install(p: &Part, uv: &Path, venv: &Path, args: &[String]) -> Result<(), String> {
    p.check(
        Command::new(uv)
            .args(["pip", "install", "--quiet", "--python"])
            .arg(venv.join("bin/python"))
            .args(args),
    )
}

/// Installs `requirements` into the venv `venv` with uv, the venv made first
/// when missing, holding a lock on its folder (as `venv_pip` in
/// bench/lib.sh: the prefetch, the benchmarks and the lint, python and
/// server parts all install into `.venv`; two installs into one venv at once can leave it
/// half written).
pub fn venv_pip(p: &Part, venv: &Path, requirements: &[String]) -> Result<(), String> {
    let uv = uv(p)?;
    mkdir(venv)?;
    let _lock = FileLock::acquire(venv)?;
    if !executable(&venv.join("bin/python")) {
        p.say(&format!("creating {}", p.rel(venv)));
        make_venv(p, &uv, venv)?;
    }
    uv_install(p, &uv, venv, requirements)
}

/// The build venv `.venv` with maturin and pytest; its folder.
pub fn build_venv(p: &Part) -> Result<PathBuf, String> {
    let venv = p.root.join(".venv");
    venv_pip(
        p,
        &venv,
        &[
            format!("maturin=={MATURIN_VERSION}"),
            format!("pytest=={PYTEST_VERSION}"),
        ],
    )?;
    Ok(venv)
}

/// zig (PyPI's `ziglang`), cargo-zigbuild and maturin in one venv per
/// machine, `TOOLS/zig-ZIGLANG-CARGO_ZIGBUILD-MATURIN` (not a checkout's
/// `.venv`): cargo-zigbuild's linker wrappers live in a folder named after
/// the path of the program that made them (cargo-zigbuild, or maturin with
/// `--zig`), and that path is in every cross-built crate's linker setting,
/// so a per-checkout venv made a new clone rebuild every dependency of the
/// eight cross builds. Puts zig first on this process's PATH and the venv's
/// `bin` after it, and sets the linker of each of [`ZIG_TARGETS`] for this
/// process and its children ([`linkers`]); returns the venv, for its
/// `bin/maturin`.
pub fn zig(p: &Part) -> Result<PathBuf, String> {
    let venv = tools_dir().join(format!(
        "zig-{ZIGLANG_VERSION}-{CARGO_ZIGBUILD_VERSION}-{MATURIN_VERSION}"
    ));
    venv_pip(
        p,
        &venv,
        &[
            format!("ziglang=={ZIGLANG_VERSION}"),
            format!("cargo-zigbuild=={CARGO_ZIGBUILD_VERSION}"),
            format!("maturin=={MATURIN_VERSION}"),
        ],
    )?;
    let dir = p.output(Command::new(venv.join("bin/python")).args([
        "-c",
        "import os, ziglang; print(os.path.dirname(ziglang.__file__))",
    ]))?;
    crate::step::prepend_path(&venv.join("bin"));
    crate::step::prepend_path(Path::new(dir.trim()));
    linkers(&venv)?;
    Ok(venv)
}

/// The cross targets of the wheels and addons, each with zig's target (the
/// glibc version in it: manylinux2014's 2.17).
const ZIG_TARGETS: [(&str, &str); 4] = [
    ("x86_64-unknown-linux-gnu", "x86_64-linux-gnu.2.17"),
    ("aarch64-unknown-linux-gnu", "aarch64-linux-gnu.2.17"),
    ("x86_64-unknown-linux-musl", "x86_64-linux-musl"),
    ("aarch64-unknown-linux-musl", "aarch64-linux-musl"),
];

/// One linker per target for maturin's and napi's cross builds alike, at a
/// path of the venv: `CARGO_TARGET_<TRIPLE>_LINKER`, which both keep when it
/// is set. Otherwise each names the linker wrapper it generates itself, in
/// a folder named after its own program (maturin embeds cargo-zigbuild), and
/// cargo, which keys every crate's build on the linker's path, rebuilt every
/// dependency of the wheel's target for the addon and back again: measured
/// with `CARGO_LOG=cargo::core::compiler::fingerprint=info`, 195 crates
/// dirty with `ConfigSettingsChanged` for one addon after its wheel. Each
/// wrapper runs what cargo-zigbuild's own runs (`cargo-zigbuild zig cc`,
/// zig's target, no sanitizers); no crate of these builds compiles C, so
/// only the linker is set. With `SNOWMINT_ZIG_KEEP_SYMBOLS` set (the release
/// check's C library, whose valgrind suppressions name functions) it drops
/// rustc's `-Wl,--strip-debug`, for which zig strips the symbol table too.
/// (The variable is not in Cargo's fingerprint: only the final link sees it.)
fn linkers(venv: &Path) -> Result<(), String> {
    let dir = venv.join("linkers");
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let (python, zigbuild) = (venv.join("bin/python3"), venv.join("bin/cargo-zigbuild"));
    for (triple, zig_target) in ZIG_TARGETS {
        let path = dir.join(format!("zigcc-{triple}"));
        let script = format!(
            "#!/bin/sh\n\
             # The linker of {triple} for maturin and napi (xtask/src/venv.rs, linkers).\n\
             export CARGO_ZIGBUILD_ZIG_VERSION={ZIGLANG_VERSION}\n\
             export CARGO_ZIGBUILD_ZIG_COMMAND='{}'\n\
             export CARGO_ZIGBUILD_ZIG_COMMAND_ARGS='-m ziglang'\n\
             # zig strips the symbol table too for rustc's -Wl,--strip-debug (the\n\
             # release profile's strip = \"debuginfo\"): SNOWMINT_ZIG_KEEP_SYMBOLS drops it.\n\
             if [ -n \"$SNOWMINT_ZIG_KEEP_SYMBOLS\" ]; then\n\
             \x20 for a do shift; [ \"$a\" = -Wl,--strip-debug ] || set -- \"$@\" \"$a\"; done\n\
             fi\n\
             exec '{}' zig cc -- -g '-fno-sanitize=all' -target {zig_target} \"$@\"\n",
            python.display(),
            zigbuild.display(),
        );
        if fs::read_to_string(&path).ok().as_deref() != Some(script.as_str()) {
            // Written whole and renamed: a build running beside never sees
            // half a script.
            let tmp = dir.join(format!(".zigcc-{triple}.{}", std::process::id()));
            fs::write(&tmp, &script)
                .and_then(|()| fs::set_permissions(&tmp, fs::Permissions::from_mode(0o755)))
                .and_then(|()| fs::rename(&tmp, &path))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        let var = format!(
            "CARGO_TARGET_{}_LINKER",
            triple.to_uppercase().replace('-', "_")
        );
        std::env::set_var(var, &path);
    }
    Ok(())
}

/// A venv at `dir` with pytest, mypy and the recipes' ORMs at their pinned
/// versions (uv skips what is there already); `fresh` recreates it first.
/// Returns uv, for the caller's installs.
pub fn python_test_venv(p: &Part, dir: &Path, fresh: bool) -> Result<PathBuf, String> {
    let uv = uv(p)?;
    if fresh || !executable(&dir.join("bin/python")) {
        remove_dir(dir)?;
        make_venv(p, &uv, dir)?;
    }
    uv_install(
        p,
        &uv,
        dir,
        &[
            format!("pytest=={PYTEST_VERSION}"),
            format!("mypy=={MYPY_VERSION}"),
            format!("Django=={DJANGO_VERSION}"),
            format!("SQLAlchemy=={SQLALCHEMY_VERSION}"),
            format!("psycopg[binary]=={PSYCOPG_VERSION}"),
        ],
    )?;
    Ok(uv)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bench/lib.sh's `NAME=VALUE` lines: the benchmarks' scripts install
    /// what they say, the parts here what the constants say.
    #[test]
    fn versions_match_lib_sh() {
        let lib = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../bench/lib.sh"))
            .expect("bench/lib.sh");
        for (name, value) in [
            ("UV_VERSION", UV_VERSION),
            ("PIP_VERSION", PIP_VERSION),
            ("MATURIN_VERSION", MATURIN_VERSION),
            ("RUFF_VERSION", RUFF_VERSION),
            ("PYTEST_VERSION", PYTEST_VERSION),
            ("MYPY_VERSION", MYPY_VERSION),
            ("DJANGO_VERSION", DJANGO_VERSION),
            ("SQLALCHEMY_VERSION", SQLALCHEMY_VERSION),
            ("PSYCOPG_VERSION", PSYCOPG_VERSION),
            ("TYPESCRIPT_VERSION", TYPESCRIPT_VERSION),
            ("WASM_BINDGEN_VERSION", WASM_BINDGEN_VERSION),
        ] {
            let line = format!("{name}={value}");
            if lib.lines().any(|l| l.starts_with(&format!("{name}="))) {
                assert!(
                    lib.lines().any(|l| l == line),
                    "bench/lib.sh's {name} is not {value}"
                );
            }
        }
    }
}
