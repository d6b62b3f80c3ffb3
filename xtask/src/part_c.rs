//! The `c` part: the C/C++ library on this host.
//!
//! Rust checks (fmt, clippy as it builds, unit tests), the committed header
//! is what cbindgen generates, `scripts/install-c --prefix --profile ci`
//! (headers, static + shared libraries with a SONAME and its links,
//! pkg-config, CMake package, licences; optimised, without the release
//! profile's LTO), then against that prefix the CMake/ctest suite (every
//! vector, every function with NULL and bad arguments, threads, C++, the
//! game-server example; static and shared linking), the quickstart of
//! docs/C.md and the C++ example built on plain compiler lines through
//! pkg-config (shared and static). The release library, the suite under
//! valgrind and the aarch64 library under qemu: the release check's c part
//! (part_release_c.rs).

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::cargo_json::package_version;
use crate::step::{mkdir, read, remove_dir, same_file, Part};
use crate::tools::{apt, cargo_tool, Source};

pub fn run(p: &Part) -> Result<(), String> {
    let root = &p.root;
    // The workspace's target folder holds the build; target/c the prefix
    // (the interop part links against it) and the test programs.
    let c_dir = root.join("target/c");
    let prefix = c_dir.join("prefix");
    let build = c_dir.join("tests-build");

    p.say("tools: cmake, cJSON, pkg-config, a C/C++ compiler, cbindgen 0.29.4");
    apt(
        p,
        &["cmake", "libcjson-dev", "pkg-config", "gcc", "g++", "make"],
    )?;
    // Pinned: another cbindgen version may write a different header, and the
    // freshness check below would fail for that reason alone.
    let cbindgen = cargo_tool(
        p,
        "cbindgen",
        "0.29.4",
        "cbindgen",
        Source::Registry,
        &["--locked"],
    )?;

    p.say("cargo fmt --check (snowmint-c; clippy as it builds)");
    p.check(
        p.cmd("cargo")
            .args(["fmt", "-p", "snowmint-c", "--", "--check"]),
    )?;

    p.say("include/snowmint.h is fresh (cbindgen --verify)");
    let fresh = p.check(
        Command::new(&cbindgen)
            .args([
                "--quiet",
                "--config",
                "cbindgen.toml",
                "--crate",
                "snowmint-c",
            ])
            .args(["--output", "include/snowmint.h", "--verify"])
            .current_dir(root.join("bindings-c")),
    );
    if fresh.is_err() {
        return Err("bindings-c/include/snowmint.h is stale; regenerate it with:\n  cd bindings-c && cbindgen --config cbindgen.toml --crate snowmint-c --output include/snowmint.h".into());
    }

    p.say("Rust unit tests (status table, panic boundary, header version)");
    p.check(
        p.cmd("cargo")
            .args(["test", "--quiet", "--profile", "ci", "-p", "snowmint-c"]),
    )?;

    p.say(&format!(
        "scripts/install-c --prefix {} --profile ci (the install command users run)",
        prefix.display()
    ));
    remove_dir(&prefix)?;
    p.check(
        p.cmd("bash")
            .args(["scripts/install-c", "--prefix"])
            .arg(&prefix)
            .args(["--profile", "ci"]),
    )?;

    let header_text = read(&root.join("bindings-c/include/snowmint.h"))?;
    let version = header_text
        .lines()
        .find_map(|l| {
            l.strip_prefix("#define SNOWMINT_VERSION_STRING \"")
                .and_then(|r| r.strip_suffix('"'))
        })
        .ok_or("the header has no SNOWMINT_VERSION_STRING")?
        .to_string();
    let crate_version = package_version(p, "snowmint-c")?;
    if version != crate_version {
        return Err(format!("header says {version}, crate is {crate_version}"));
    }
    let major = version.split('.').next().unwrap_or_default();

    p.say("the installed tree: headers, libraries with their soname links, pkg-config, CMake, licences");
    let so_version = format!("lib/libsnowmint.so.{version}");
    for f in [
        "include/snowmint.h",
        "include/snowmint.hpp",
        "lib/libsnowmint.a",
        &so_version,
        "lib/pkgconfig/snowmint.pc",
        "lib/cmake/snowmint/snowmintConfig.cmake",
        "lib/cmake/snowmint/snowmintConfigVersion.cmake",
        "share/doc/snowmint/README.md",
    ] {
        if !prefix.join(f).is_file() {
            return Err(format!("the install has no {f}"));
        }
    }
    let lib = prefix.join("lib");
    for (link, target) in [
        (
            format!("libsnowmint.so.{major}"),
            format!("libsnowmint.so.{version}"),
        ),
        (
            "libsnowmint.so".to_string(),
            format!("libsnowmint.so.{major}"),
        ),
    ] {
        let is = fs::read_link(lib.join(&link)).map_err(|e| format!("lib/{link}: {e}"))?;
        if is != Path::new(&target) {
            return Err(format!(
                "lib/{link} points to {}, not {target}",
                is.display()
            ));
        }
    }
    for f in ["LICENSE-MIT", "LICENSE-APACHE"] {
        same_file(&prefix.join("share/doc/snowmint").join(f), &root.join(f))?;
    }
    for dir in [lib.join("pkgconfig"), lib.join("cmake")] {
        if let Some(f) = find_placeholder(&dir)? {
            return Err(format!(
                "an unsubstituted @...@ is left in the installed pkg-config or CMake files ({f})"
            ));
        }
    }

    p.say("the shared library: SONAME, exports = the header's functions");
    let so = lib.join("libsnowmint.so");
    let dynamic = p.output(Command::new("readelf").arg("-d").arg(&so))?;
    let soname = dynamic
        .lines()
        .find_map(|l| {
            l.split_once("Library soname: [")
                .map(|(_, r)| r.trim_end_matches(']'))
        })
        .unwrap_or_default()
        .to_string();
    if soname != format!("libsnowmint.so.{major}") {
        return Err(format!("SONAME is '{soname}'"));
    }
    let header_fns = header_functions(&header_text);
    let nm = p.output(Command::new("nm").args(["-D", "--defined-only"]).arg(&so))?;
    let exported: BTreeSet<String> = nm
        .lines()
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            [_, "T", name] if name.starts_with("snowmint_") => Some(name.to_string()),
            _ => None,
        })
        .collect();
    if header_fns != exported {
        let only_header: Vec<_> = header_fns.difference(&exported).collect();
        let only_lib: Vec<_> = exported.difference(&header_fns).collect();
        return Err(format!(
            "the header's functions and the library's exports differ: only in the header {only_header:?}, only exported {only_lib:?}"
        ));
    }
    println!("{} functions, SONAME {soname}", header_fns.len());

    p.say("every function of the header is exercised by tests/test_api.c or tests/test_lease.c");
    let tests = read(&root.join("bindings-c/tests/test_api.c"))?
        + &read(&root.join("bindings-c/tests/test_lease.c"))?;
    let untested: Vec<&String> = header_fns
        .iter()
        .filter(|f| !tests.contains(&format!("{f}(")))
        .collect();
    for f in &untested {
        eprintln!("no C test calls {f}");
    }
    if !untested.is_empty() {
        return Err(format!(
            "{} functions are called by no C test",
            untested.len()
        ));
    }

    p.say("the header compiles as C99 and C++11 (pedantic)");
    let include = format!("-I{}", prefix.join("include").display());
    for (cc, std, lang) in [("cc", "-std=c99", "c"), ("c++", "-std=c++11", "c++")] {
        let mut cmd = Command::new(cc);
        cmd.args([std, "-pedantic", "-Wall", "-Wextra", "-Werror", &include])
            .args(["-fsyntax-only", "-x", lang, "-"]);
        stdin_check(&mut cmd, "#include \"snowmint.h\"\n")?;
    }

    p.say("CMake project (find_package(snowmint)): build and ctest");
    cmake_suite(p, &build, &prefix, false)?;

    p.say("the C quickstart (docs/C.md) and the C++ game server, built with pkg-config on a plain compiler line");
    std::env::set_var("PKG_CONFIG_PATH", lib.join("pkgconfig"));
    let qs = c_dir.join("quickstart");
    remove_dir(&qs)?;
    mkdir(&qs)?;
    let source = quickstart(&read(&root.join("docs/C.md"))?)?;
    let qs_c = qs.join("quickstart.c");
    fs::write(&qs_c, source).map_err(|e| format!("{}: {e}", qs_c.display()))?;
    let libdir = p
        .output(Command::new("pkg-config").args(["--variable=libdir", "snowmint"]))?
        .trim()
        .to_string();
    let flags =
        words(&p.output(Command::new("pkg-config").args(["--cflags", "--libs", "snowmint"]))?);
    let cflags = words(&p.output(Command::new("pkg-config").args(["--cflags", "snowmint"]))?);
    let rpath = format!("-Wl,-rpath,{libdir}");
    let c11 = ["-std=c11", "-Wall", "-Wextra", "-Werror"];
    let cxx17 = ["-std=c++17", "-Wall", "-Wextra", "-Werror"];
    let game = root.join("bindings-c/examples/game_server.cpp");
    p.check(
        Command::new("cc")
            .args(c11)
            .arg(&qs_c)
            .args(&flags)
            .arg(&rpath)
            .arg("-o")
            .arg(qs.join("quickstart")),
    )?;
    let deps = p.output(Command::new("ldd").arg(qs.join("quickstart")))?;
    if !deps.contains(&format!("libsnowmint.so.{major}")) {
        return Err(format!(
            "quickstart is not linked to libsnowmint.so.{major}"
        ));
    }
    let out = p.output(&mut Command::new(qs.join("quickstart")))?;
    print!("{out}");
    expect_quickstart(&out)?;
    p.check(
        Command::new("c++")
            .args(cxx17)
            .arg(&game)
            .args(&flags)
            .args(["-pthread", &rpath, "-o"])
            .arg(qs.join("game_server")),
    )?;
    let out = p.output(Command::new(qs.join("game_server")).arg("7"))?;
    print!("{out}");
    fs::write(qs.join("game_server.out"), &out).map_err(|e| format!("game_server.out: {e}"))?;
    if !out.contains("server 7 spawned 100000 entities") {
        return Err("game_server 7 did not print 'server 7 spawned 100000 entities'".into());
    }

    p.say("the same two, linked statically through pkg-config (--static for the system libraries)");
    // -Bstatic around -lsnowmint: the linker would otherwise take the .so
    // beside the .a.
    let static_libs: Vec<String> = words(&p.output(Command::new("pkg-config").args([
        "--static",
        "--libs-only-l",
        "snowmint",
    ]))?)
    .into_iter()
    .filter(|w| w != "-lsnowmint")
    .collect();
    let static_link = [
        format!("-L{libdir}"),
        "-Wl,-Bstatic".into(),
        "-lsnowmint".into(),
        "-Wl,-Bdynamic".into(),
    ];
    p.check(
        Command::new("cc")
            .args(c11)
            .arg(&qs_c)
            .args(&cflags)
            .args(&static_link)
            .args(&static_libs)
            .arg("-o")
            .arg(qs.join("quickstart_static")),
    )?;
    p.check(
        Command::new("c++")
            .args(cxx17)
            .arg(&game)
            .args(&cflags)
            .args(&static_link)
            .args(&static_libs)
            .args(["-pthread", "-o"])
            .arg(qs.join("game_server_static")),
    )?;
    for prog in ["quickstart_static", "game_server_static"] {
        if p.output(Command::new("ldd").arg(qs.join(prog)))?
            .contains("libsnowmint")
        {
            return Err(format!("{prog} is linked to the shared library"));
        }
    }
    let out = p.output(&mut Command::new(qs.join("quickstart_static")))?;
    if !out.contains("datacenter 1, worker 3") {
        return Err(format!("quickstart_static printed: {out}"));
    }
    let out = p.output(Command::new(qs.join("game_server_static")).arg("3"))?;
    if !out.contains("server 3 spawned 100000 entities") {
        return Err(format!("game_server_static 3 printed: {out}"));
    }

    p.say("artifact sizes (bytes)");
    for f in [
        lib.join("libsnowmint.a"),
        lib.join(format!("libsnowmint.so.{version}")),
    ] {
        let size = fs::metadata(&f)
            .map_err(|e| format!("{}: {e}", f.display()))?
            .len();
        println!("{size:>10}  {}", p.rel(&f));
    }

    p.say("C part passed");
    Ok(())
}

/// The header's functions: every `snowmint_NAME(` (`NAME` of `[a-z0-9_]`)
/// not preceded by a word character (`grep -oE '\bsnowmint_[a-z0-9_]+\('`).
fn header_functions(header: &str) -> BTreeSet<String> {
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let bytes = header.as_bytes();
    let mut found = BTreeSet::new();
    let mut from = 0;
    while let Some(at) = header[from..].find("snowmint_").map(|i| i + from) {
        let mut end = at + "snowmint_".len();
        from = end;
        if at > 0 && word(bytes[at - 1]) {
            continue;
        }
        while end < bytes.len()
            && (bytes[end].is_ascii_lowercase()
                || bytes[end].is_ascii_digit()
                || bytes[end] == b'_')
        {
            end += 1;
        }
        if end > at + "snowmint_".len() && bytes.get(end) == Some(&b'(') {
            found.insert(header[at..end].to_string());
            from = end;
        }
    }
    found
}

/// The first ```c block between docs/C.md's quickstart markers.
fn quickstart(doc: &str) -> Result<String, String> {
    let section = doc
        .split("<!-- quickstart:c:start -->")
        .nth(1)
        .and_then(|s| s.split("<!-- quickstart:c:end -->").next())
        .ok_or("docs/C.md has no quickstart:c markers")?;
    let start = section
        .find("```c\n")
        .ok_or("no ```c block in docs/C.md's quickstart")?
        + "```c\n".len();
    let len = section[start..]
        .find("```")
        .ok_or("an unterminated ```c block in docs/C.md's quickstart")?;
    Ok(section[start..start + len].to_string())
}

fn expect_quickstart(out: &str) -> Result<(), String> {
    for want in [
        "datacenter 1, worker 3",
        "NULL out pointer: null_argument",
        "37+20+16 bits: invalid_layout",
    ] {
        if !out.contains(want) {
            return Err(format!("the quickstart did not print '{want}'"));
        }
    }
    Ok(())
}

/// A file under `dir` holding an `@NAME@` placeholder (`@[A-Z_]*@`).
fn find_placeholder(dir: &Path) -> Result<Option<String>, String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(f) = find_placeholder(&path)? {
                return Ok(Some(f));
            }
        } else if let Ok(text) = fs::read_to_string(&path) {
            let has = text.split('@').skip(1).collect::<Vec<_>>();
            // Text between two @ signs (any pair of neighbours) of capitals
            // and underscores only.
            if has.len() >= 2
                && has[..has.len() - 1]
                    .iter()
                    .any(|s| s.bytes().all(|c| c.is_ascii_uppercase() || c == b'_'))
            {
                return Ok(Some(path.display().to_string()));
            }
        }
    }
    Ok(None)
}

/// A command's output split as the shell splits an unquoted `$(...)`.
fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_string).collect()
}

/// Runs `cmd` with `input` on its standard input.
fn stdin_check(cmd: &mut Command, input: &str) -> Result<(), String> {
    use std::io::Write;
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", crate::step::show(cmd)))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(input.as_bytes())
            .map_err(|e| format!("{}: {e}", crate::step::show(cmd)))?;
    }
    let status = child.wait().map_err(|e| format!("{e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{} failed ({status})", crate::step::show(cmd)))
    }
}

/// The CMake project of bindings-c/tests (`find_package(snowmint)` from
/// `prefix`) configured in `build`, built, and its suite run by ctest; every
/// test under valgrind too when `valgrind` (the release check's).
pub fn cmake_suite(p: &Part, build: &Path, prefix: &Path, valgrind: bool) -> Result<(), String> {
    p.output(
        p.cmd("cmake")
            .args(["-S", "bindings-c/tests", "-B"])
            .arg(build)
            .arg("-DCMAKE_BUILD_TYPE=RelWithDebInfo")
            .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
            .arg(format!(
                "-DSNOWMINT_VECTORS_DIR={}",
                p.root.join("vectors").display()
            ))
            .arg(format!(
                "-DSNOWMINT_VALGRIND={}",
                if valgrind { "ON" } else { "OFF" }
            )),
    )?;
    p.output(
        p.cmd("cmake")
            .arg("--build")
            .arg(build)
            .args(["-j2", "--", "--no-print-directory"]),
    )?;
    p.check(
        p.cmd("ctest")
            .arg("--test-dir")
            .arg(build)
            .args(["--output-on-failure", "-j2"]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_functions_as_grep_finds_them() {
        let h = "int snowmint_a(void); x_snowmint_b(); snowmint_C(); snowmint_(); (snowmint_d_2(x)) snowmint_e ();";
        let got: Vec<String> = header_functions(h).into_iter().collect();
        assert_eq!(got, ["snowmint_a", "snowmint_d_2"]);
    }

    #[test]
    fn quickstart_block() {
        let doc = "x\n<!-- quickstart:c:start -->\n```sh\nno\n```\n```c\nint main(void) {}\n```\n```c\nsecond\n```\n<!-- quickstart:c:end -->";
        assert_eq!(quickstart(doc).unwrap(), "int main(void) {}\n");
    }

    #[test]
    fn placeholder_pairs() {
        let dir = std::env::temp_dir().join(format!("xtask-ph-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("a.pc"), "Version: 1.0\nx = user@host @ y\n").unwrap();
        assert_eq!(find_placeholder(&dir).unwrap(), None);
        fs::write(dir.join("b.pc"), "Version: @VERSION@\n").unwrap();
        assert!(find_placeholder(&dir).unwrap().is_some());
        fs::remove_dir_all(&dir).unwrap();
    }
}
