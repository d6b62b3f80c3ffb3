//! The `python` part: the Python package (bindings-python/, PyPI name
//! `snowmint`) on this host.
//!
//! 1. rustfmt on the binding crate (clippy as the wheel builds);
//! 2. a wheel for this host with maturin (`--profile ci`: optimised, no
//!    LTO; the workspace's target folder, so the core and the lease crate
//!    are built once for every part);
//! 3. the wheel installed into the test venv (.cache/py-test-venv: kept
//!    between runs with its pinned packages, the wheel reinstalled every
//!    run), and bindings-python/tests run from a folder where the source tree
//!    is not importable, so the tests see the installed package: every
//!    vector file, fork, threads, bad input, stubs, version, README,
//!    pickling, and the Django and SQLAlchemy recipes of
//!    docs/recipes/python-orms.md against a real PostgreSQL server (the one
//!    on 127.0.0.1:5432 with a database of this run's own, else a throwaway
//!    one); then mypy's stubtest: the stubs (__init__.pyi) against the
//!    installed package.
//!
//! The shipped wheels and the sdist: the release check's python part
//! (part_release_python.rs). Benchmarks are separate: bench/python/run.sh.

use crate::step::{glob, remove_dir, Part};
use crate::stores::Stores;
use crate::venv::{build_venv, python_test_venv, uv_install};

pub fn run(p: &Part) -> Result<(), String> {
    let root = &p.root;
    let dist = root.join("target/python-dev");
    let venv = root.join(".cache/py-test-venv");

    p.say("python: rustfmt (snowmint-python; clippy as the wheel builds)");
    p.check(
        p.cmd("cargo")
            .args(["fmt", "-p", "snowmint-python", "--check"]),
    )?;

    p.say("python: build venv (.venv: maturin, pytest)");
    let build = build_venv(p)?;

    p.say("python: a wheel for this host (maturin build --profile ci)");
    remove_dir(&dist)?;
    p.check(
        p.cmd(build.join("bin/maturin"))
            .args(["build", "--quiet", "--profile", "ci"])
            .args(["-m", "bindings-python/Cargo.toml", "--out"])
            .arg(&dist),
    )?;
    let wheels: Vec<_> = glob(&dist, ".whl")?
        .into_iter()
        .filter(|w| {
            let name = w
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            name.starts_with("snowmint-") && name.contains("-cp39-abi3-")
        })
        .collect();
    let [wheel] = &wheels[..] else {
        return Err(format!(
            "expected one snowmint-*-cp39-abi3-*.whl in target/python-dev, found {}",
            wheels.len()
        ));
    };
    println!(
        "wheel: {}",
        wheel.file_name().unwrap_or_default().to_string_lossy()
    );

    p.say(&format!(
        "python: the test venv {} (pinned packages), the wheel reinstalled",
        venv.display()
    ));
    let uv = python_test_venv(p, &venv, false)?;
    uv_install(
        p,
        &uv,
        &venv,
        &[
            "--reinstall".into(),
            "--no-deps".into(),
            wheel.display().to_string(),
        ],
    )?;

    let run_dir = std::env::temp_dir().join(format!("snowmint-python-{}", std::process::id()));
    crate::step::mkdir(&run_dir)?;
    let result = (|| {
        // PostgreSQL for the recipes' tests (SNOWMINT_TEST_POSTGRES_URL); not
        // the store tests' dedicated servers.
        let _stores = Stores::up(p, &["postgres"])?;
        std::env::set_var("SNOWMINT_ROOT", root);
        std::env::set_var("SNOWMINT_VECTORS", root.join("vectors"));

        p.say("python: pytest against the installed package");
        let tests = root.join("bindings-python/tests");
        p.check(
            p.cmd(venv.join("bin/python"))
                .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir"])
                .arg(&tests)
                .arg(&tests)
                .current_dir(&run_dir),
        )
        .map_err(|e| format!("pytest failed: {e}"))?;

        p.say("python: mypy stubtest (the stubs against the installed package)");
        p.check(
            p.cmd(venv.join("bin/python"))
                .args(["-m", "mypy.stubtest", "snowmint", "--allowlist"])
                .arg(root.join("bindings-python/stubtest-allowlist.txt"))
                .current_dir(&run_dir),
        )
    })();
    let _ = std::fs::remove_dir_all(&run_dir);
    result?;

    p.say("python: all tests passed");
    Ok(())
}
