//! The CLI as a user runs it.

use std::process::{Command, Output};

use serde_json::Value;

fn snowmint(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(args)
        .output()
        .expect("run snowmint")
}

fn ok(args: &[&str]) -> String {
    let out = snowmint(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn fails(args: &[&str], code: &str) {
    let out = snowmint(args);
    assert_eq!(out.status.code(), Some(1), "{args:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains(&format!("[{code}]")), "{args:?}: {err}");
}

#[test]
fn generate_then_decode_round_trip() {
    let ids = ok(&[
        "generate",
        "--preset",
        "twitter",
        "--node",
        "datacenter=1",
        "--node",
        "worker=3",
        "-n",
        "5",
    ]);
    let ids: Vec<&str> = ids.lines().collect();
    assert_eq!(ids.len(), 5);
    let nums: Vec<u64> = ids.iter().map(|s| s.parse().unwrap()).collect();
    assert!(nums.windows(2).all(|w| w[0] < w[1]));
    let mut args = vec!["decode", "--preset", "twitter", "--json"];
    args.extend(&ids);
    let out = ok(&args);
    for (line, id) in out.lines().zip(&ids) {
        let v: Value = serde_json::from_str(line).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "id",
                "timestamp_ms",
                "time",
                "sequence",
                "datacenter",
                "worker"
            ]
        );
        assert_eq!(v["id"], *id);
        assert_eq!(v["datacenter"], 1);
        assert_eq!(v["worker"], 3);
    }
}

#[test]
fn decode_discords_documented_example() {
    let out = ok(&[
        "decode",
        "--preset",
        "discord",
        "175928847299117063",
        "--json",
    ]);
    assert_eq!(
        out.trim(),
        r#"{"id":"175928847299117063","timestamp_ms":1462015105796,"time":"2016-04-30T11:18:25.796Z","sequence":7,"worker":1,"process":0}"#
    );
    let out = ok(&["decode", "--preset", "discord", "175928847299117063"]);
    assert!(out.contains("2016-04-30T11:18:25.796Z") && out.contains("worker=1"));
}

#[test]
fn layout_reports_lifetimes() {
    let v: Value =
        serde_json::from_str(&ok(&["layout", "--preset", "sonyflake", "--json"])).unwrap();
    assert_eq!(v["time_end"], "2188-11-16T03:28:58.880Z");
    assert_eq!(v["time_unit_ms"], 10);
    let v: Value = serde_json::from_str(&ok(&["layout", "--preset", "baidu", "--json"])).unwrap();
    assert_eq!(v["time_end"], "2024-11-20T13:24:16.000Z");
    let text = ok(&["layout", "--preset", "twitter"]);
    assert!(text.contains("2080-07-10T17:30:30.209Z"), "{text}");
}

#[test]
fn string_forms_both_ways() {
    assert_eq!(
        ok(&["encode", "--format", "base32", "1541815603606036480"]).trim(),
        "1ASD13XH1F800"
    );
    assert_eq!(
        ok(&["parse", "--format", "base32", "1asd13xh1f800"]).trim(),
        "1541815603606036480"
    );
    let b62 = ok(&["encode", "--format", "base62", "18446744073709551615"]);
    assert_eq!(
        ok(&["parse", "--format", "base62", b62.trim()]).trim(),
        "18446744073709551615"
    );
    let out = ok(&[
        "decode",
        "--preset",
        "twitter",
        "--from",
        "base32",
        "1ASD13XH1F800",
        "--json",
    ]);
    assert!(out.contains("\"timestamp_ms\":1656432460105"));
}

#[test]
fn custom_layout_from_json_and_bounds() {
    let layout =
        r#"{"epoch_ms":1700000000000,"fields":[["timestamp",41],["server",12],["sequence",10]]}"#;
    let ids = ok(&[
        "generate",
        "--layout",
        layout,
        "--node",
        "server=4095",
        "-n",
        "3",
        "--sequence-start",
        "zero",
    ]);
    assert_eq!(ids.lines().count(), 3);
    assert_eq!(
        ok(&["bounds", "--preset", "twitter", "1656432460105"]).trim(),
        "1541815603604488192 1541815603608682495"
    );
}

#[test]
fn errors_name_the_problem_and_the_code() {
    fails(
        &["generate", "--preset", "baidu", "--node", "worker=1"],
        "time_overflow",
    );
    fails(
        &["generate", "--preset", "twitter", "--node", "worker=3"],
        "missing_node",
    );
    fails(
        &[
            "generate",
            "--preset",
            "twitter",
            "--node",
            "worker=32",
            "--node",
            "datacenter=1",
        ],
        "node_out_of_range",
    );
    fails(
        &["generate", "--preset", "twitter", "--node", "rack=1"],
        "unknown_field",
    );
    fails(&["generate", "--preset", "nope"], "unknown_preset");
    fails(
        &[
            "generate",
            "--layout",
            r#"{"epoch_ms":0,"fields":[["timestamp",37],["server",20],["sequence",16]]}"#,
        ],
        "invalid_layout",
    );
    fails(
        &[
            "generate",
            "--preset",
            "mastodon",
            "--clock-backwards",
            "sometimes",
        ],
        "invalid_option",
    );
    fails(
        &["decode", "--preset", "twitter", "18446744073709551616"],
        "invalid_id",
    );
    fails(
        &["decode", "--preset", "twitter", "9223372036854775808"],
        "invalid_id",
    );
    fails(
        &["parse", "--format", "base32", "U000000000000"],
        "invalid_id",
    );
    // Usage errors are clap's (exit 2), not snowmint's.
    assert_eq!(snowmint(&["decode", "1"]).status.code(), Some(2));
}

#[test]
fn generate_with_a_lease() {
    let dir = std::env::temp_dir().join(format!("snowmint-cli-lease-{}", std::process::id()));
    let url = format!("file:{}?namespace=cli", dir.display());
    let run = || {
        let out = snowmint(&[
            "generate",
            "--preset",
            "twitter",
            "--node",
            "datacenter=1",
            "--lease",
            &url,
            "--print-lease",
            "-n",
            "3",
        ]);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(out.status.success(), "{stderr}");
        let info: Value = serde_json::from_str(stderr.trim()).expect("one JSON line on stderr");
        let ids: Vec<u64> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        (info, ids)
    };
    let (info, first) = run();
    let worker = info["nodes"]["worker"].as_u64().expect("the leased worker");
    assert!(worker < 32, "{info}");
    assert_eq!(info["nodes"]["datacenter"], 1);
    assert_eq!(info["lease"]["field"], "worker");
    assert_eq!(info["lease"]["slot"], worker);
    assert!(info["lease"]["store"]
        .as_str()
        .unwrap()
        .contains("snowmint-cli-lease"));
    assert!(
        info["lease"]["reserved_until_ms"].as_u64().is_some(),
        "{info}"
    );
    assert_eq!(first.len(), 3);
    // The first run released its slot on exit; the next run's IDs are above.
    let (_, second) = run();
    assert!(second[0] > first[2], "{second:?} after {first:?}");
    // Every node field fixed leaves nothing to lease.
    fails(
        &[
            "generate",
            "--preset",
            "twitter",
            "--node",
            "datacenter=1",
            "--node",
            "worker=2",
            "--lease",
            &url,
        ],
        "invalid_option",
    );
    fails(
        &[
            "generate",
            "--preset",
            "twitter",
            "--node",
            "datacenter=1",
            "--lease",
            "ftp://x",
        ],
        "invalid_option",
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `--lease-lines`: after each line's IDs, the lease as it stood once they
/// were written (slot and confirmed reservation), in order with them: every
/// ID carries the slot and a time within the reservation.
#[test]
fn generate_on_demand_lease_lines() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    let dir = std::env::temp_dir().join(format!("snowmint-cli-lines-{}", std::process::id()));
    let url = format!(
        "file:{}?namespace=cli&window_ms=2000&renew_ms=500",
        dir.display()
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(["generate", "--preset", "twitter", "--node", "datacenter=1"])
        .args(["--lease", &url, "--on-demand", "--lease-lines"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run snowmint");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut last_until = 0;
    for _ in 0..3 {
        stdin.write_all(b"5\n").unwrap();
        let ids: Vec<u64> = (0..5)
            .map(|_| lines.next().unwrap().unwrap().parse().unwrap())
            .collect();
        let v: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        let lease = &v["lease"];
        let (slot, until) = (
            lease["slot"].as_u64().unwrap(),
            lease["reserved_until_ms"].as_u64().unwrap(),
        );
        assert!(until >= last_until, "{v}");
        last_until = until;
        for id in ids {
            assert_eq!((id >> 12) & 31, slot, "{id} {v}");
            assert!((id >> 22) + 1_288_834_974_657 <= until, "{id} {v}");
        }
        std::thread::sleep(std::time::Duration::from_millis(600));
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    // Only with --on-demand.
    let out = Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args([
            "generate",
            "--preset",
            "twitter",
            "--lease",
            &url,
            "--lease-lines",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

/// `--on-demand` holds one generator (and its lease) while a caller asks for
/// IDs line by line, as a shell coprocess would.
#[test]
fn generate_on_demand() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    let dir = std::env::temp_dir().join(format!("snowmint-cli-demand-{}", std::process::id()));
    let url = format!("file:{}?namespace=cli", dir.display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(["generate", "--preset", "twitter", "--node", "datacenter=1"])
        .args(["--lease", &url, "--on-demand"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run snowmint");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut read = |n: usize| -> Vec<u64> {
        (0..n)
            .map(|_| lines.next().unwrap().unwrap().parse().unwrap())
            .collect()
    };
    // Each request is answered before the next is written: the IDs come as asked.
    stdin.write_all(b"3\n").unwrap();
    let first = read(3);
    // While it holds its slot, a second process on the same space gets another.
    let other = ok(&[
        "generate",
        "--preset",
        "twitter",
        "--node",
        "datacenter=1",
        "--lease",
        &url,
    ]);
    let other: u64 = other.trim().parse().unwrap();
    let worker = |id: u64| (id >> 12) & 31;
    assert_ne!(worker(other), worker(first[0]));
    stdin.write_all(b"\n").unwrap();
    let second = read(1);
    assert!(second[0] > first[2]);
    assert!(first
        .iter()
        .chain(&second)
        .all(|&i| worker(i) == worker(first[0])));
    drop(stdin);
    assert!(child.wait().unwrap().success());
    // A line that is not a count stops with invalid_option.
    let mut child = Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(["generate", "--preset", "twitter", "--node", "datacenter=1"])
        .args(["--node", "worker=1", "--on-demand"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run snowmint");
    child.stdin.take().unwrap().write_all(b"2\nmany\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("'many' is not a count") && err.contains("[invalid_option]"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
