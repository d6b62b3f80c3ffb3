//! `snowmint lease init|list|release` on the file store.

mod lease_cli;
use lease_cli::*;

#[test]
fn lease_commands_on_the_file_store() {
    let dir = std::env::temp_dir().join(format!("snowmint-cli-ops-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let url = format!(
        "file:{}?namespace={}&renew_ms=200&window_ms=1500",
        dir.display(),
        unique_ns("file")
    );
    scenario(&url, false);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn lease_command_errors() {
    fails(
        &["lease", "list", "--store", "consul://h:8500"],
        "invalid_option",
    );
    fails(
        &["lease", "init", "--store", "file:/tmp/x?ttl_ms=oops"],
        "invalid_option",
    );
    // A file where the directory should be: the store cannot be read.
    let file = std::env::temp_dir().join(format!("snowmint-cli-ops-file-{}", std::process::id()));
    std::fs::write(&file, "x").unwrap();
    fails(
        &[
            "lease",
            "list",
            "--store",
            &format!("file:{}", file.display()),
        ],
        "lease_unavailable",
    );
    std::fs::remove_file(&file).unwrap();
    // Arguments clap refuses (exit 2).
    assert_eq!(
        snowmint(&["lease", "release", "--store", "file", "--slot", "x"])
            .status
            .code(),
        Some(2)
    );
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// `release --reset-hwm TIME` on a slot whose hwm is ten years ahead (the
/// hwm a claim writes on a store whose clock jumped ten years: here a claim
/// with a ten-year window): refused while held, TIME checked (form and
/// bounds), then the repair as JSON and as text.
#[test]
fn reset_hwm_repairs_a_poisoned_slot() {
    use snowmint_lease::{ClaimRequest, LeaseUrl, SlotSpace};
    const TEN_YEARS_MS: u64 = 10 * 365 * 86_400_000;
    let dir = std::env::temp_dir().join(format!("snowmint-cli-reset-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let url = format!(
        "file:{}?namespace={}&renew_ms=200&window_ms=1500",
        dir.display(),
        unique_ns("reset")
    );
    let u = LeaseUrl::parse(&url).unwrap();
    let store = u.open_store().unwrap();
    let layout = snowmint::Layout::preset("twitter").unwrap();
    let space = SlotSpace::new(
        layout,
        &[("datacenter", 1)],
        u.settings.namespace.as_deref(),
    )
    .unwrap();
    let c = store
        .claim(&space, &ClaimRequest::new(None, 1000, TEN_YEARS_MS))
        .unwrap();
    let slot = c.holder.slot.to_string();
    // now + window_ms + max_skew_ms (default 5,000) + a margin.
    let good = || now_ms() + 1500 + 5000 + 2000;
    let reset = |time: &str| {
        vec![
            "lease".to_string(),
            "release".into(),
            "--store".into(),
            url.clone(),
            "--slot".into(),
            slot.clone(),
            "--reset-hwm".into(),
            time.to_string(),
        ]
    };

    // Held (this process holds the slot's lock): refused.
    let held = reset(&good().to_string());
    let m = fails(&args(&held), "invalid_option");
    assert!(m.contains("even with --force"), "{m}");
    let mut forced = held.clone();
    forced.push("--force".into());
    assert_eq!(
        snowmint(&args(&forced)).status.code(),
        Some(2),
        "clap refuses --force with it"
    );
    drop(store);

    // TIME: its form, then its bounds.
    let m = fails(&args(&reset("yesterday")), "invalid_option");
    assert!(m.contains("--reset-hwm takes an RFC 3339 date"), "{m}");
    let m = fails(&args(&reset("2020-01-01T00:00:00Z")), "invalid_option");
    assert!(m.contains("is below now + window_ms + max_skew_ms"), "{m}");
    let m = fails(
        &args(&reset(&(good() + 7_200_000).to_string())),
        "invalid_option",
    );
    assert!(m.contains("the slot would stay unusable"), "{m}");

    // The repair, TIME as RFC 3339, --json.
    let t = good();
    let mut json = reset(&snowmint::Iso8601(t).to_string());
    json.push("--json".into());
    let v: serde_json::Value = serde_json::from_str(&ok(&args(&json))).unwrap();
    assert_eq!(v["released"], true, "{v}");
    assert_eq!(v["reset_hwm_ms"], t, "{v}");
    assert!(v["before"]["hwm_ms"].as_u64().unwrap() > now_ms() + TEN_YEARS_MS - 600_000);
    let list = ok(&["lease", "list", "--store", &url, "--json"]);
    let rec: serde_json::Value = serde_json::from_str(list.lines().nth(1).unwrap()).unwrap();
    assert_eq!(
        (rec["state"].as_str(), rec["hwm_ms"].as_u64()),
        (Some("free"), Some(t))
    );

    // Again as text, TIME as Unix ms.
    let t2 = good();
    let text = ok(&args(&reset(&t2.to_string())));
    assert!(text.contains("hwm reset from"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A generator that lost its lease (an operator released its slot) says so
/// on the command line: why, and that it issues no more, under
/// `lease_expired`; never a reservation ending at the layout's epoch.
#[test]
fn a_lost_lease_says_lost_on_the_command_line() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let dir = std::env::temp_dir().join(format!("snowmint-cli-lost-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let url = format!(
        "file:{}?namespace={}&renew_ms=50&window_ms=1500",
        dir.display(),
        unique_ns("lost")
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(["generate", "--preset", "leaf", "--lease", &url])
        .args(["--on-demand", "--lease-lines"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run snowmint");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    stdin.write_all(b"1\n").unwrap();
    lines.next().unwrap().unwrap().parse::<u64>().unwrap();
    let lease: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let slot = lease["lease"]["slot"].as_u64().unwrap().to_string();
    let space = lease["lease"]["space"].as_str().unwrap().to_string();
    ok(&[
        "lease", "release", "--store", &url, "--space", &space, "--slot", &slot, "--force",
    ]);
    // Its next renewal (every 50 ms) finds the slot gone; then it is asked.
    std::thread::sleep(std::time::Duration::from_millis(1000));
    stdin.write_all(b"1\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "lease lost: another holder has the slot (the lease went unrenewed past its TTL, or \
             an operator released it); this generator issues no more IDs: open a new lease \
             [lease_expired]"
        ) && !err.contains("ends before"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
