//! `snowmint mask` / `unmask` through the built binary: every case of
//! vectors/mask.json, keys from a file or the environment (never an
//! argument), stdin, --json, per-ID error lines and the exit status.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const VAR: &str = "SNOWMINT_MASK_KEY";
const KEY: &str = "000102030405060708090a0b0c0d0e0f";

fn vectors() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/mask.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Runs snowmint with the key in the environment (or none), and `stdin`.
fn run(args: &[&str], key: Option<&str>, stdin: &str) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_snowmint"));
    cmd.args(args).env_remove(VAR);
    if let Some(k) = key {
        cmd.env(VAR, k);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn ok(args: &[&str], key: Option<&str>, stdin: &str) -> String {
    let out = run(args, key, stdin);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `--preset NAME` or `--layout JSON` for a vector's layout.
fn layout_args(layout: &str) -> [&str; 2] {
    if layout.starts_with('{') {
        ["--layout", layout]
    } else {
        ["--preset", layout]
    }
}

fn key_file(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!("mask-key-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn every_vector_case() {
    let v = vectors();
    for (i, case) in v["cases"].as_array().unwrap().iter().enumerate() {
        let name = case["name"].as_str().unwrap();
        let pairs = case["pairs"].as_array().unwrap();
        let field =
            |k: &str| -> Vec<&str> { pairs.iter().map(|p| p[k].as_str().unwrap()).collect() };
        let (ids, publics) = (field("id"), field("public"));
        let key = case["key"].as_str().unwrap();
        let tweak = case["tweak"].as_str().unwrap();
        let la = layout_args(case["layout"].as_str().unwrap());
        let base = [la[0], la[1], "--tweak", tweak];
        // The key from the environment, IDs as arguments.
        let mut args = vec!["mask"];
        args.extend(base);
        args.extend(&ids);
        assert_eq!(
            ok(&args, Some(key), "").lines().collect::<Vec<_>>(),
            publics,
            "{name}"
        );
        // The key from a file (upper-case hex, a newline), IDs on stdin.
        let path = key_file(&i.to_string(), &format!("{}\n", key.to_uppercase()));
        let mut args = vec!["unmask", "--key-file", path.to_str().unwrap()];
        args.extend(base);
        let out = ok(&args, None, &publics.join("\n"));
        assert_eq!(out.lines().collect::<Vec<_>>(), ids, "{name}");
        // The string forms: out with --format, back in with --from.
        for form in ["base32", "base62"] {
            let mut args = vec!["mask", "--format", form];
            args.extend(base);
            let out = ok(&args, Some(key), &ids.join(" "));
            assert_eq!(
                out.lines().collect::<Vec<_>>(),
                field(form),
                "{name} {form}"
            );
            let mut args = vec!["unmask", "--from", form];
            args.extend(base);
            let out = ok(&args, Some(key), &field(form).join(" "));
            assert_eq!(out.lines().collect::<Vec<_>>(), ids, "{name} {form}");
        }
        std::fs::remove_file(path).unwrap();
    }
}

#[test]
fn every_vector_error() {
    let v = vectors();
    for case in v["errors"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let code = case["error"].as_str().unwrap();
        let la = layout_args(case["layout"].as_str().unwrap());
        let op = case["op"].as_str().unwrap();
        let (cmd, value) = match op {
            "new" => ("mask", "1"),
            op => (op, case["value"].as_str().unwrap()),
        };
        let args = [
            cmd,
            la[0],
            la[1],
            "--tweak",
            case["tweak"].as_str().unwrap(),
            value,
        ];
        let out = run(&args, Some(case["key"].as_str().unwrap()), "");
        assert_eq!(out.status.code(), Some(1), "{name}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(&format!("[{code}]")), "{name}: {err}");
        assert!(out.stdout.is_empty(), "{name}");
    }
}

#[test]
fn json_lines_and_per_id_errors() {
    let out = run(
        &[
            "--json",
            "mask",
            "--preset",
            "twitter",
            "--tweak",
            "6f7264657273",
            "--format",
            "base62",
        ],
        Some(KEY),
        "3074457345618258602 x 9223372036854775808 3074457345618258603",
    );
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(
        lines[0],
        serde_json::json!({"id": "3074457345618258602", "public": "8116193323352231441", "public_base62": "9fYFas3V3Oz"})
    );
    assert_eq!(lines[1]["input"], "x");
    assert_eq!(lines[1]["error"]["code"], "invalid_id");
    assert_eq!(lines[2]["error"]["code"], "invalid_id");
    assert_eq!(lines[3]["public_base62"], "6L6mf4P1gPs");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 2, "{err}");
    // unmask --json names the ID's form.
    let out = ok(
        &[
            "--json",
            "unmask",
            "--preset",
            "twitter",
            "--tweak",
            "6f7264657273",
            "--from",
            "base62",
            "--format",
            "base32",
            "9fYFas3V3Oz",
        ],
        Some(KEY),
        "",
    );
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["id"], "3074457345618258602");
    assert_eq!(v["public"], "8116193323352231441");
    assert_eq!(v["id_base32"], "2NANANANANANA");
}

#[test]
fn the_key_never_comes_from_an_argument_nor_shows() {
    // No key at all.
    let out = run(&["mask", "--preset", "twitter", "1"], None, "");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("SNOWMINT_MASK_KEY") && err.contains("[invalid_option]"),
        "{err}"
    );
    // There is no --key option.
    let out = run(
        &["mask", "--preset", "twitter", "--key", KEY, "1"],
        None,
        "",
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "clap refuses the unknown option"
    );
    // A key that is not hex, or too short: the message never repeats it.
    for bad in ["00112233445566778899aabbccddeeZZ", "0011223344556677"] {
        let out = run(&["mask", "--preset", "twitter", "1"], Some(bad), "");
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("[invalid_option]"), "{err}");
        assert!(!err.contains("00112233"), "{err}");
    }
    let missing = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-such-key-file");
    let out = run(
        &[
            "mask",
            "--preset",
            "twitter",
            "--key-file",
            missing.to_str().unwrap(),
            "1",
        ],
        Some(KEY),
        "",
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "the file is asked for: no fallback to the environment"
    );
    // A bad tweak.
    let out = run(
        &["mask", "--preset", "twitter", "--tweak", "xyz", "1"],
        Some(KEY),
        "",
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("[invalid_option]"), "{err}");
}

#[test]
fn masked_consecutive_ids_show_no_order() {
    let ids: Vec<String> = (1_000_000u64..1_002_000).map(|i| i.to_string()).collect();
    let out = ok(&["mask", "--preset", "twitter"], Some(KEY), &ids.join("\n"));
    let publics: Vec<u64> = out.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(publics.len(), ids.len());
    let down = publics.windows(2).filter(|w| w[1] < w[0]).count();
    assert!((800..1200).contains(&down), "{down} of 1999 pairs decrease");
    let back = ok(&["unmask", "--preset", "twitter"], Some(KEY), &out);
    assert_eq!(back.lines().collect::<Vec<_>>(), ids);
}
