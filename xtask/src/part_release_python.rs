//! The release check's `python` part: the Python package's shipped
//! distributions (the behaviour on this host is the `python` test part's).
//!
//! 1. the four abi3 wheels (manylinux2014 and musllinux_1_2, x86_64 and
//!    aarch64, with maturin and zig) and the sdist, into target/dist
//!    ([`build_wheels`], also `cargo xtask build-wheels`); each wheel checked
//!    with auditwheel (manylinux) and abi3audit, its machine and its libc;
//! 2. the x86_64 manylinux2014 wheel in a FRESH venv, the whole pytest suite;
//! 3. the aarch64 manylinux2014 wheel for Debian's arm64 CPython 3.11 (its
//!    packages unpacked into .cache/python-arm64), the suite under
//!    qemu-aarch64; the musllinux wheels are not run (no musl CPython here);
//! 4. the licences and the README in the wheel and the sdist; `pip install`
//!    of the sdist into a fresh venv.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::step::{glob, mkdir, remove_dir, Part};
use crate::stores::Stores;
use crate::tools::{apt, arm64_dpkg, rust_target};
use crate::venv::{build_venv, python_test_venv, uv_install, venv_pip, zig, PYTEST_VERSION};

const ABI3AUDIT_VERSION: &str = "0.0.26";
const AUDITWHEEL_VERSION: &str = "6.8.2";

/// The Linux wheels' targets and their platform tags' compatibility names.
const WHEELS: [(&str, &str); 4] = [
    ("x86_64-unknown-linux-gnu", "manylinux2014"),
    ("aarch64-unknown-linux-gnu", "manylinux2014"),
    ("x86_64-unknown-linux-musl", "musllinux_1_2"),
    ("aarch64-unknown-linux-musl", "musllinux_1_2"),
];

/// Debian's arm64 CPython 3.11 and what it loads.
const ARM64_DEBS: [&str; 11] = [
    "python3.11-minimal",
    "libpython3.11-minimal",
    "libpython3.11-stdlib",
    "libexpat1",
    "zlib1g",
    "libffi8",
    "libbz2-1.0",
    "liblzma5",
    "libuuid1",
    "libssl3",
    "libcrypt1",
];

/// Not run under qemu: the README and recipe tests (documentation,
/// PostgreSQL; run natively), the test that starts another interpreter
/// (sys.executable is an arm64 binary, which only qemu runs), and the two
/// whose fork() child starts a thread (the core's clock ticker) after the
/// parent had one: Debian 12's qemu-user (7.2) aborts there in its own code
/// (qemu_plugin_vcpu_init_hook), in plain Python too. All run natively.
const ARM64_SKIP: &str = "not (test_unpickled_in_another_interpreter \
or test_fork_parent_and_child_generate_concurrently \
or test_fork_child_creates_its_own_leased_generator)";

/// Builds the wheels for `targets` and (`sdist`) the sdist into `dist`
/// (release profile, `maturin --zig`).
pub fn build_wheels(p: &Part, dist: &Path, targets: &[&str], sdist: bool) -> Result<(), String> {
    let venv = zig(p)?;
    mkdir(dist)?;
    for &(target, compat) in WHEELS.iter().filter(|(t, _)| targets.contains(t)) {
        rust_target(p, target)?;
        // maturin says "failed to find tool x86_64-linux-musl-gcc" for the
        // musl targets and then links with zig: harmless.
        p.say(&format!(
            "python: wheel for {target} ({compat}, maturin --zig{})",
            crate::parts::unrun_note(target)
        ));
        p.check(
            p.cmd(venv.join("bin/maturin"))
                .args([
                    "build",
                    "--quiet",
                    "--release",
                    "--zig",
                    "--compatibility",
                    compat,
                ])
                .args([
                    "--target",
                    target,
                    "-m",
                    "bindings-python/Cargo.toml",
                    "--out",
                ])
                .arg(dist)
                .envs(crate::parts::unrun_profile(target).iter().copied())
                .env(
                    "CARGO_TARGET_DIR",
                    std::env::var_os("CARGO_TARGET_DIR")
                        .unwrap_or_else(|| p.root.join("target").into()),
                ),
        )?;
    }
    if sdist {
        p.say("python: sdist (maturin sdist)");
        p.check(
            p.cmd(venv.join("bin/maturin"))
                .args(["sdist", "-m", "bindings-python/Cargo.toml", "--out"])
                .arg(dist),
        )?;
    }
    Ok(())
}

/// `cargo xtask build-wheels [all|x86_64|others]`: the four wheels and the
/// sdist, the x86_64 manylinux2014 wheel alone, or the three others and the
/// sdist, into target/dist. (macOS and Windows wheels are built by
/// .github/workflows/release.yml only.)
pub fn build_wheels_command(root: &Path, args: &[String]) -> u8 {
    let targets: Vec<&str> = match args.first().map(String::as_str).unwrap_or("all") {
        "all" => WHEELS.iter().map(|(t, _)| *t).collect(),
        "x86_64" => vec![WHEELS[0].0],
        "others" => WHEELS[1..].iter().map(|(t, _)| *t).collect(),
        _ => {
            eprintln!("usage: cargo xtask build-wheels [all|x86_64|others]");
            return 2;
        }
    };
    let p = Part::new(root);
    let dist = root.join("target/dist");
    // "others" adds the sdist: every wheel but one is built then.
    let with_sdist = targets.len() >= WHEELS.len() - 1;
    match build_wheels(&p, &dist, &targets, with_sdist) {
        Ok(()) => {
            for f in glob(&dist, "").unwrap_or_default() {
                println!("{}", p.rel(&f));
            }
            0
        }
        Err(e) => {
            eprintln!("build-wheels: {e}");
            1
        }
    }
}

pub fn run(p: &Part) -> Result<(), String> {
    let root = &p.root;
    let dist = root.join("target/dist");
    let venv = root.join(".cache/py-release-venv");

    p.say("python release: build venv (.venv: maturin, pytest, auditwheel, abi3audit)");
    let build = build_venv(p)?;
    venv_pip(
        p,
        &build,
        &[
            format!("auditwheel=={AUDITWHEEL_VERSION}"),
            format!("abi3audit=={ABI3AUDIT_VERSION}"),
        ],
    )?;

    p.say("python release: the four wheels and the sdist");
    remove_dir(&dist)?;
    let all: Vec<&str> = WHEELS.iter().map(|(t, _)| *t).collect();
    build_wheels(p, &dist, &all, true)?;
    let wheel = one(&dist, "-cp39-abi3-manylinux2014_x86_64")?;
    let arm_wheel = one(&dist, "-cp39-abi3-manylinux2014_aarch64")?;
    check_wheel(p, &build, &wheel, "manylinux_2_17_x86_64")?;
    check_wheel(p, &build, &arm_wheel, "manylinux_2_17_aarch64")?;
    let run_dir = std::env::temp_dir().join(format!("snowmint-py-release-{}", std::process::id()));
    remove_dir(&run_dir)?;
    mkdir(&run_dir)?;
    let result = (|| -> Result<(), String> {
        for arch in ["x86_64", "aarch64"] {
            let w = one(&dist, &format!("-cp39-abi3-musllinux_1_2_{arch}"))?;
            check_wheel(p, &build, &w, &format!("musllinux_1_2_{arch}"))?;
            check_musl(p, &build, &w, arch, &run_dir.join("musl"))?;
        }

        p.say(&format!(
            "python release: fresh venv {} with the x86_64 manylinux2014 wheel, the whole suite",
            p.rel(&venv)
        ));
        let uv = python_test_venv(p, &venv, true)?;
        uv_install(p, &uv, &venv, &[wheel.display().to_string()])?;
        {
            let _stores = Stores::up(p, &["postgres"])?;
            let tests = root.join("bindings-python/tests");
            p.check(
                p.cmd(venv.join("bin/python"))
                    .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir"])
                    .arg(&tests)
                    .arg(&tests)
                    .env("SNOWMINT_ROOT", root)
                    .env("SNOWMINT_VECTORS", root.join("vectors"))
                    .current_dir(&run_dir),
            )
            .map_err(|e| format!("pytest failed: {e}"))?;
        }

        arm64_suite(p, &build, &arm_wheel, &run_dir)?;
        licences(p, &build, &wheel, &one(&dist, ".tar.gz")?)?;
        sdist_install(p, &venv, &one(&dist, ".tar.gz")?, &run_dir)?;

        p.say("python release: sizes");
        for f in glob(&dist, "")? {
            let size = std::fs::metadata(&f).map(|m| m.len()).unwrap_or(0);
            println!("{size:>10}  {}", p.rel(&f));
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&run_dir);
    result?;
    p.say("python release: all checks passed");
    Ok(())
}

/// The one file of `dist` whose name starts with `snowmint-` and contains
/// `part` (or ends with it).
fn one(dist: &Path, part: &str) -> Result<PathBuf, String> {
    let found: Vec<PathBuf> = glob(dist, "")?
        .into_iter()
        .filter(|f| {
            let name = f.file_name().unwrap_or_default().to_string_lossy();
            name.starts_with("snowmint-") && name.contains(part)
        })
        .collect();
    match &found[..] {
        [f] => Ok(f.clone()),
        _ => Err(format!(
            "expected one snowmint-*{part}* in {}, found {}",
            dist.display(),
            found.len()
        )),
    }
}

/// auditwheel (manylinux only: it crashes on musllinux wheels on a glibc
/// host) and abi3audit; the tag in the file name.
fn check_wheel(p: &Part, build: &Path, wheel: &Path, tag: &str) -> Result<(), String> {
    let name = wheel.file_name().unwrap_or_default().to_string_lossy();
    if !name.contains(tag) {
        return Err(format!("{name}: not tagged {tag}"));
    }
    if tag.starts_with("manylinux") {
        let shown = p.output(
            Command::new(build.join("bin/auditwheel"))
                .arg("show")
                .arg(wheel),
        )?;
        print!("{shown}");
        let flat = shown.replace('\n', "");
        let confirmed = flat
            .split_once("platform tag:")
            .is_some_and(|(_, r)| r.trim_start().starts_with("\"manylinux_2_17_"));
        if !shown.contains("consistent with the following platform tag:") || !confirmed {
            return Err(format!(
                "{name}: auditwheel does not confirm manylinux_2_17"
            ));
        }
    }
    p.check(
        Command::new(build.join("bin/abi3audit"))
            .args(["--strict", "--verbose"])
            .arg(wheel),
    )
}

/// A musllinux wheel's extension: linked against musl (no glibc symbol
/// versions), for the right machine.
fn check_musl(p: &Part, build: &Path, wheel: &Path, arch: &str, dir: &Path) -> Result<(), String> {
    remove_dir(dir)?;
    mkdir(dir)?;
    p.check(
        Command::new(build.join("bin/python"))
            .args(["-m", "zipfile", "-e"])
            .arg(wheel)
            .arg(".")
            .current_dir(dir),
    )?;
    let so = glob(&dir.join("snowmint"), ".so")?
        .into_iter()
        .find(|f| {
            f.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .starts_with("_snowmint")
        })
        .ok_or_else(|| format!("{} has no snowmint/_snowmint*.so", wheel.display()))?;
    let header = p.output(Command::new("readelf").arg("-h").arg(&so))?;
    let machine = header
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Machine:")
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_default();
    let dynamic = p.output(Command::new("readelf").arg("-d").arg(&so))?;
    let needed: Vec<&str> = dynamic
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split_once('[').map(|(_, r)| r.trim_end_matches(']')))
        .collect();
    println!(
        "{}: {machine}, needs {}",
        wheel.file_name().unwrap_or_default().to_string_lossy(),
        needed.join(" ")
    );
    let right = match arch {
        "x86_64" => machine.contains("X86-64"),
        _ => machine.contains("AArch64"),
    };
    if !right {
        return Err(format!("{}: built for {machine}", wheel.display()));
    }
    let versions = p.output(Command::new("readelf").args(["-V", "-W"]).arg(&so))?;
    if versions.contains("GLIBC_") {
        return Err(format!("{}: uses glibc symbols", wheel.display()));
    }
    Ok(())
}

/// The aarch64 wheel for real: Debian's arm64 CPython 3.11, its packages
/// unpacked (not installed: they would replace the host's python3.11) into
/// .cache/python-arm64, run by qemu-aarch64 with the cross toolchain's glibc
/// first (part_release_c says why); pip puts the wheel and pytest into a
/// folder for that interpreter.
fn arm64_suite(p: &Part, build: &Path, wheel: &Path, run_dir: &Path) -> Result<(), String> {
    let root = &p.root;
    p.say("python release: the aarch64 manylinux2014 wheel's tests in Debian's arm64 CPython 3.11 under qemu-aarch64");
    apt(p, &["qemu-user", "libc6-arm64-cross"])?;
    arm64_dpkg(p)?;
    let py = root.join(".cache/python-arm64");
    let python = py.join("root/usr/bin/python3.11");
    if !crate::tools::executable(&python) {
        remove_dir(&py)?;
        let debs = py.join("debs");
        mkdir(&debs)?;
        // (-o ...Sandbox::User=root: apt's _apt user may not write here.)
        p.check(
            Command::new("apt-get")
                .args(["download", "-qq", "-o", "APT::Sandbox::User=root"])
                .args(ARM64_DEBS.iter().map(|d| format!("{d}:arm64")))
                .current_dir(&debs),
        )?;
        let partial = py.join("root.partial");
        for deb in glob(&debs, ".deb")? {
            p.check(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&partial))?;
        }
        std::fs::rename(&partial, py.join("root")).map_err(|e| format!("{}: {e}", py.display()))?;
    }
    let site = py.join("site-packages");
    remove_dir(&site)?;
    p.check(
        Command::new(build.join("bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--target",
            ])
            .arg(&site)
            .args([
                "--platform",
                "manylinux2014_aarch64",
                "--implementation",
                "cp",
            ])
            .args(["--python-version", "3.11", "--only-binary=:all:"])
            .arg(wheel)
            .arg(format!("pytest=={PYTEST_VERSION}")),
    )?;
    let libs = format!(
        "LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib:{0}/root/usr/lib/aarch64-linux-gnu:{0}/root/lib/aarch64-linux-gnu",
        py.display()
    );
    let arm64_python = || {
        let mut cmd = Command::new("timeout");
        cmd.args(["900", "qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", "-E"])
            .arg(&libs)
            .arg("-E")
            .arg(format!("PYTHONHOME={}", py.join("root/usr").display()))
            .arg("-E")
            .arg(format!("PYTHONPATH={}", site.display()))
            .arg(&python)
            .current_dir(run_dir);
        cmd
    };
    p.check(arm64_python().args([
        "-c",
        "import platform, snowmint\n\
         assert platform.machine() == 'aarch64', platform.machine()\n\
         print(platform.machine(), platform.python_version(), 'snowmint', snowmint.__version__, snowmint.__file__)",
    ]))?;
    let tests = root.join("bindings-python/tests");
    p.check(
        arm64_python()
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir"])
            .arg(&tests)
            .arg("--ignore")
            .arg(tests.join("test_readme.py"))
            .arg("--ignore")
            .arg(tests.join("test_recipes.py"))
            .args(["-k", ARM64_SKIP])
            .arg(&tests),
    )
}

/// The licences in the wheel and the sdist; the README and the licence
/// expression in the wheel's METADATA.
fn licences(p: &Part, build: &Path, wheel: &Path, sdist: &Path) -> Result<(), String> {
    p.say("python release: the wheel and the sdist carry the licences and the README");
    const CHECK: &str = r#"
import sys, tarfile, zipfile
wheel = zipfile.ZipFile(sys.argv[1]).namelist()
sdist = tarfile.open(sys.argv[2]).getnames()
for f in ("LICENSE-MIT", "LICENSE-APACHE"):
    assert any(n.endswith(".dist-info/licenses/" + f) for n in wheel), f"wheel has no {f}"
    assert any(n.endswith("/" + f) for n in sdist), f"sdist has no {f}"
meta = next(n for n in wheel if n.endswith(".dist-info/METADATA"))
text = zipfile.ZipFile(sys.argv[1]).read(meta).decode()
assert "License-Expression: MIT OR Apache-2.0" in text, "no License-Expression in METADATA"
assert "Description-Content-Type: text/markdown" in text, "no README in METADATA"
print("licences in", sys.argv[1].rsplit("/", 1)[-1], "and", sys.argv[2].rsplit("/", 1)[-1])
"#;
    p.check(
        Command::new(build.join("bin/python"))
            .args(["-c", CHECK])
            .arg(wheel)
            .arg(sdist),
    )
}

/// `pip install` of the sdist's files into a fresh venv: it holds everything
/// a build needs. maturin builds it with the `ci` profile unoptimised
/// (MATURIN_PEP517_ARGS, `CARGO_PROFILE_CI_OPT_LEVEL=0`: what it checks, that
/// the sdist builds and imports, does not depend on optimisation) in a build
/// folder of its own beside the shared one (`<shared>-sdist`, kept between
/// runs). Its workspace (no tools/workspace-hack) shares no dependency build
/// with the others anyway, and its crates sit at the workspace's relative
/// paths: in the shared folder, a new machine's harness after this step
/// found the core, the lease crate, the CLI and the server stale and
/// compiled them again (CONTRIBUTING.md, "CI's time").
fn sdist_install(p: &Part, venv: &Path, sdist: &Path, run_dir: &Path) -> Result<(), String> {
    p.say("python release: pip install the sdist into a fresh venv (pip drives maturin: a Rust toolchain is all it needs)");
    let listing = p.output(Command::new("tar").arg("-tzf").arg(sdist))?;
    let mut manifests: Vec<&str> = listing
        .lines()
        .filter(|l| {
            l.split_once('/').is_some_and(|(_, rest)| {
                [
                    "pyproject.toml",
                    "Cargo.toml",
                    "core/Cargo.toml",
                    "lease/Cargo.toml",
                    "bindings-python/Cargo.toml",
                ]
                .contains(&rest)
            })
        })
        .collect();
    manifests.sort();
    if manifests.len() != 5 {
        return Err(format!("the sdist's manifests: {manifests:?}"));
    }
    println!("{}", manifests.join("\n"));
    // Unpacked here with new times, and pip given the folder: maturin
    // writes every file of an sdist with one fixed time (2006), which pip's
    // own unpacking keeps.
    let unpacked = run_dir.join("sdist");
    crate::step::unpack_touched(p, sdist, &unpacked)?;
    let top = manifests[0].split_once('/').map_or("", |(top, _)| top);
    remove_dir(venv)?;
    p.check(Command::new("python3").args(["-m", "venv"]).arg(venv))?;
    p.check(
        Command::new(venv.join("bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg(unpacked.join(top))
            .env("MATURIN_PEP517_ARGS", "--profile ci")
            .env("CARGO_PROFILE_CI_OPT_LEVEL", "0")
            .env("CARGO_TARGET_DIR", p.root.join("target/sdist"))
            .envs(
                crate::step::beside_shared_build_dir("-sdist")
                    .map(|dir| ("CARGO_BUILD_BUILD_DIR", dir)),
            ),
    )?;
    p.check(
        Command::new(venv.join("bin/python"))
            .args([
                "-c",
                "import snowmint\n\
                 g = snowmint.Generator('twitter', datacenter=1, worker=1)\n\
                 assert snowmint.decode(g.next_id()).worker == 1\n\
                 print('pip install of the sdist: ok, snowmint', snowmint.__version__)",
            ])
            .current_dir(run_dir),
    )
}
