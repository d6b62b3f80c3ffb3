//! The release check's `c` part: the C library for release (the behaviour on
//! this host is the `c` test part's). `scripts/install-c --prefix` with the
//! release profile, the CMake/ctest suite against it natively and all of it
//! again under valgrind; then the library cross-built for aarch64 Linux
//! (`install-c --target`) with the C suite (vectors static and shared, every
//! function, threads, the file lease, C++) run under qemu-aarch64.
//!
//! With the release check's [`crate::parts::FAST_RELEASE`] (its default),
//! each library is built as the wheels and addons of its target are: the
//! same profile overrides, by `cargo zigbuild` (`install-c --zig`: maturin
//! and napi build with it too, and it links build scripts apart from the
//! target) with the same linker (zig's, `crate::venv::zig`), and `--target`
//! named for the host too, so the `python` and `node` parts after this one
//! reuse every dependency it compiled: one build of the lease stack per
//! target, not two. Its symbol table is kept (`SNOWMINT_ZIG_KEEP_SYMBOLS`,
//! `crate::venv`): the valgrind suppressions name functions. With
//! `SNOWMINT_RELEASE_LTO=1` it is built as it ships (fat LTO, one codegen
//! unit, the system's linkers).

use std::path::Path;
use std::process::Command;

use crate::step::{mkdir, read, remove_dir, Part};
use crate::tools::{apt, arm64_dpkg, rust_target};

const ARM_TARGET: &str = "aarch64-unknown-linux-gnu";
/// The targets as the addons' builds name them (`cargo zigbuild`: zig's
/// glibc version after the triple).
const HOST_ZIG_TARGET: &str = "x86_64-unknown-linux-gnu.2.17";
const ARM_ZIG_TARGET: &str = "aarch64-unknown-linux-gnu.2.17";

pub fn run(p: &Part) -> Result<(), String> {
    let root = &p.root;
    let c_dir = root.join("target/c-release");
    let prefix = c_dir.join("prefix");
    let build = c_dir.join("tests-build");

    p.say("tools: cmake, cJSON, pkg-config, valgrind, a C/C++ compiler");
    apt(
        p,
        &[
            "cmake",
            "libcjson-dev",
            "pkg-config",
            "valgrind",
            "gcc",
            "g++",
            "make",
        ],
    )?;

    // The wheels' targets, linkers and profile (see the module's comment):
    // install-c's arguments for the host's library and the arm64 one.
    let (host_args, arm_args): (&[&str], &[&str]) = if crate::parts::fast_release() {
        p.say("zig's linkers, as the wheels and addons link");
        crate::venv::zig(p)?;
        (
            &["--target", HOST_ZIG_TARGET, "--zig"],
            &["--target", ARM_ZIG_TARGET, "--zig"],
        )
    } else {
        (&[], &["--target", ARM_TARGET])
    };
    p.say(&format!(
        "scripts/install-c --prefix {} {}",
        p.rel(&prefix),
        host_args.join(" ")
    ));
    remove_dir(&prefix)?;
    p.check(&mut install_c(p, &prefix, host_args))?;
    let version = header_version(root)?;
    let major = version.split('.').next().unwrap_or_default().to_string();

    p.say("CMake project (find_package(snowmint)): build and ctest, with valgrind");
    crate::part_c::cmake_suite(p, &build, &prefix, true)?;

    p.say(&format!(
        "arm64: scripts/install-c {}, then the C suite under qemu-aarch64",
        arm_args.join(" ")
    ));
    // apt skips recommended packages, so the arm64 C library's headers and
    // start files (libc6-dev-arm64-cross: crti.o) and the C++ compiler are
    // named. cJSON for arm64 (test_vectors.c reads the vector files with it)
    // is Debian's multiarch package.
    apt(
        p,
        &[
            "gcc-aarch64-linux-gnu",
            "g++-aarch64-linux-gnu",
            "libc6-dev-arm64-cross",
            "qemu-user",
        ],
    )?;
    rust_target(p, ARM_TARGET)?;
    arm64_dpkg(p)?;
    apt(p, &["libcjson-dev:arm64"])?;
    let arm_prefix = c_dir.join("prefix-aarch64");
    remove_dir(&arm_prefix)?;
    p.check(&mut install_c(p, &arm_prefix, arm_args))?;
    let arm_so = arm_prefix.join(format!("lib/libsnowmint.so.{version}"));
    let header = p.output(Command::new("readelf").arg("-h").arg(&arm_so))?;
    let machine = field(&header, "Machine:");
    if machine != "AArch64" {
        return Err(format!("the arm64 library is for '{machine}'"));
    }
    let dynamic = p.output(Command::new("readelf").arg("-d").arg(&arm_so))?;
    let soname = bracketed(&dynamic, "Library soname: [");
    if soname != format!("libsnowmint.so.{major}") {
        return Err(format!("arm64 SONAME is '{soname}'"));
    }

    let arm = c_dir.join("tests-aarch64");
    remove_dir(&arm)?;
    mkdir(&arm)?;
    let include = format!("-I{}", arm_prefix.join("include").display());
    let cjson_flags = p.output(Command::new("pkg-config").args(["--cflags", "libcjson"]))?;
    let cjson: Vec<&str> = cjson_flags.split_whitespace().collect();
    let static_lib = arm_prefix.join("lib/libsnowmint.a");
    let system_libs = ["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl"];
    let c_flags = ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror"];
    // The vector suite (every case of every vector file through the C API),
    // linked statically and, through the soname link, to the shared library.
    p.check(
        Command::new("aarch64-linux-gnu-gcc")
            .args(c_flags)
            .arg(&include)
            .args(&cjson)
            .arg(root.join("bindings-c/tests/test_vectors.c"))
            .arg(&static_lib)
            .arg("-lcjson")
            .args(system_libs)
            .arg("-o")
            .arg(arm.join("test_vectors")),
    )?;
    let lib_dir = arm_prefix.join("lib");
    p.check(
        Command::new("aarch64-linux-gnu-gcc")
            .args(c_flags)
            .arg(&include)
            .args(&cjson)
            .arg(root.join("bindings-c/tests/test_vectors.c"))
            .arg(format!("-L{}", lib_dir.display()))
            .arg("-lsnowmint")
            .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
            .arg("-lcjson")
            .arg("-o")
            .arg(arm.join("test_vectors_shared")),
    )?;
    // The rest of the C suite, statically linked: every function with good
    // and bad arguments, fork, 8 threads sharing generators, the file lease.
    for t in ["test_api", "test_threads", "test_lease"] {
        p.check(
            Command::new("aarch64-linux-gnu-gcc")
                .args(c_flags)
                .arg(&include)
                .arg(root.join(format!("bindings-c/tests/{t}.c")))
                .arg(&static_lib)
                .args(system_libs)
                .arg("-o")
                .arg(arm.join(t)),
        )?;
    }
    p.check(
        Command::new("aarch64-linux-gnu-g++")
            .args(["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror"])
            .arg(&include)
            .arg(root.join("bindings-c/tests/test_cpp.cpp"))
            .arg(&static_lib)
            .args(system_libs)
            .arg("-o")
            .arg(arm.join("test_cpp")),
    )?;
    let kind = p.output(Command::new("file").arg(arm.join("test_vectors")))?;
    if !kind.contains("ARM aarch64") {
        return Err(format!(
            "test_vectors is not an arm64 program: {}",
            kind.trim()
        ));
    }
    let deps = p.output(
        Command::new("aarch64-linux-gnu-readelf")
            .arg("-d")
            .arg(arm.join("test_vectors_shared")),
    )?;
    if !deps.contains(&format!("Shared library: [libsnowmint.so.{major}]")) {
        return Err(format!(
            "test_vectors_shared does not link libsnowmint.so.{major}"
        ));
    }
    let vectors = root.join("vectors");
    let vectors = vectors.to_string_lossy();
    for (prog, args) in [
        ("test_vectors", vec![vectors.as_ref()]),
        ("test_vectors_shared", vec![vectors.as_ref()]),
        ("test_api", vec![]),
        ("test_threads", vec!["200000"]),
        ("test_lease", vec![]),
        ("test_cpp", vec![]),
    ] {
        println!("qemu-aarch64 {prog} {}", args.join(" "));
        p.check(qemu_arm64(&arm.join(prog)).args(&args).current_dir(&arm))?;
    }

    p.say("artifact sizes (bytes)");
    for f in [
        prefix.join("lib/libsnowmint.a"),
        prefix.join(format!("lib/libsnowmint.so.{version}")),
        arm_prefix.join("lib/libsnowmint.a"),
        arm_so.clone(),
    ] {
        let size = std::fs::metadata(&f)
            .map_err(|e| format!("{}: {e}", f.display()))?
            .len();
        println!("{size:>10}  {}", p.rel(&f));
    }
    p.say("C release checks passed");
    Ok(())
}

/// `scripts/install-c --prefix PREFIX ARGS...`, the symbol table kept when
/// zig links (`SNOWMINT_ZIG_KEEP_SYMBOLS`; other linkers ignore it).
fn install_c(p: &Part, prefix: &Path, args: &[&str]) -> Command {
    let mut cmd = p.cmd("bash");
    cmd.args(["scripts/install-c", "--prefix"])
        .arg(prefix)
        .args(args)
        .env("SNOWMINT_ZIG_KEEP_SYMBOLS", "1");
    cmd
}

/// An arm64 program under qemu, five minutes at most. The loader is the
/// cross toolchain's (-L), so its own glibc must come first: with
/// libcjson-dev:arm64 installed, the multiarch folder holds a libc6:arm64 of
/// another build, and that pair hangs at the first pthread_create;
/// libcjson.so.1 is found in the multiarch folder after it.
fn qemu_arm64(program: &Path) -> Command {
    let mut cmd = Command::new("timeout");
    cmd.args(["300", "qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", "-E"])
        .arg("LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib:/usr/lib/aarch64-linux-gnu")
        .arg(program);
    cmd
}

/// The version the committed header declares.
fn header_version(root: &Path) -> Result<String, String> {
    read(&root.join("bindings-c/include/snowmint.h"))?
        .lines()
        .find_map(|l| {
            l.strip_prefix("#define SNOWMINT_VERSION_STRING \"")
                .and_then(|r| r.strip_suffix('"'))
                .map(str::to_string)
        })
        .ok_or_else(|| "the header has no SNOWMINT_VERSION_STRING".to_string())
}

/// The value after `label` on its line of readelf's output.
fn field(text: &str, label: &str) -> String {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(label).map(|v| v.trim().to_string()))
        .unwrap_or_default()
}

/// What stands between `open` and the next `]` on the first line having it.
fn bracketed(text: &str, open: &str) -> String {
    text.lines()
        .find_map(|l| {
            l.split_once(open)
                .map(|(_, r)| r.split(']').next().unwrap_or_default().to_string())
        })
        .unwrap_or_default()
}
