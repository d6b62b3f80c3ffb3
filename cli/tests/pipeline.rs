//! The CLI in a pipeline: IDs from stdin, one error line per bad input,
//! `--json` everywhere, RFC 3339 times, completions, the man page, and
//! output on a terminal (a pseudo-terminal).

use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

mod bounded;
use bounded::{finish, Bounded};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_snowmint"));
    c.env_remove("NO_COLOR").stdin(Stdio::null());
    c
}

/// Runs with `input` on stdin.
fn with_stdin(args: &[&str], input: &str) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run snowmint");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    finish(child)
}

fn text(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap()
}

fn json_lines(out: &Output) -> Vec<Value> {
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn generate_piped_into_decode() {
    let mut generate = bin()
        .args(["generate", "--preset", "twitter", "--node", "datacenter=1"])
        .args(["--node", "worker=3", "-n", "1000"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let decode = bin()
        .args(["decode", "--preset", "twitter", "--json"])
        .stdin(generate.stdout.take().unwrap())
        .bounded_output();
    assert!(generate.wait().unwrap().success());
    assert!(decode.status.success(), "{}", text(&decode.stderr));
    let lines = json_lines(&decode);
    assert_eq!(lines.len(), 1000);
    let ids: Vec<u64> = lines
        .iter()
        .map(|v| {
            assert_eq!((&v["datacenter"], &v["worker"]), (&1.into(), &3.into()));
            v["id"].as_str().expect("IDs as strings").parse().unwrap()
        })
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    // `-` among arguments is stdin, in its place; words on a line split.
    let out = with_stdin(
        &["encode", "--format", "base32", "1", "-", "3"],
        "2 4\n\n5\n",
    );
    assert!(out.status.success());
    let decimal: Vec<u64> = text(&out.stdout)
        .lines()
        .map(|l| l.trim_start_matches('0').parse().unwrap())
        .collect();
    assert_eq!(decimal, [1, 2, 4, 5, 3]);
}

#[test]
fn a_bad_input_is_one_error_line_and_the_run_goes_on() {
    let out = with_stdin(
        &["decode", "--preset", "discord"],
        "175928847299117063\nnot-an-id\n18446744073709551616 1\n",
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout: Vec<&str> = text(&out.stdout).lines().collect();
    assert_eq!(stdout.len(), 2, "{stdout:?}");
    assert!(stdout[0].starts_with("175928847299117063  2016-04-30T11:18:25.796Z"));
    assert!(stdout[1].starts_with("1  2015-01-01T00:00:00.000Z"));
    let stderr: Vec<&str> = text(&out.stderr).lines().collect();
    assert_eq!(stderr.len(), 2, "{stderr:?}");
    assert!(stderr[0].starts_with("snowmint: error: 'not-an-id': "));
    assert!(stderr[1].starts_with("snowmint: error: '18446744073709551616': "));
    assert!(stderr.iter().all(|l| l.ends_with("[invalid_id]")));
    // With --json the error is also a line in its place on stdout.
    let out = bin()
        .args(["--json", "fits", "175928847299117063", "1e3", "7"])
        .bounded_output();
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["id"], "175928847299117063");
    assert!(lines[0]["presets"]
        .as_array()
        .unwrap()
        .contains(&"discord".into()));
    assert_eq!(lines[1]["input"], "1e3");
    assert_eq!(lines[1]["error"]["code"], "invalid_id");
    assert!(!lines[1]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("[invalid_id]"));
    assert_eq!(lines[2]["id"], "7");
    assert_eq!(text(&out.stderr).lines().count(), 1);
    // Every input good: status 0; all bad: status 1 and nothing on stdout.
    let out = with_stdin(&["parse", "--format", "base62"], "zz !!\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        text(&out.stderr).lines().count(),
        2,
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn json_on_every_subcommand() {
    let run = |args: &[&str]| -> Vec<Value> {
        let out = bin().args(args).arg("--json").bounded_output();
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let lines = json_lines(&out);
        assert!(
            !lines.is_empty() && lines.iter().all(Value::is_object),
            "{args:?}"
        );
        lines
    };
    let gen = run(&[
        "generate", "--preset", "tsid", "--node", "node=5", "-n", "3",
    ]);
    assert_eq!(gen.len(), 3);
    assert!(gen.iter().all(|v| v["id"].is_string()));
    let gen = run(&["generate", "--preset", "tsid", "--node", "node=5"]);
    let id = gen[0]["id"].as_str().unwrap();
    let b62 = run(&[
        "generate", "--preset", "tsid", "--node", "node=5", "--format", "base62",
    ]);
    assert!(b62[0]["id"].is_string() && b62[0]["base62"].is_string());
    let layout = run(&["layout", "--preset", "discord"]);
    assert_eq!(layout[0]["descriptor"]["epoch_ms"], 1420070400000u64);
    assert_eq!(layout[0]["descriptor"]["fields"][0][0], "timestamp");
    let presets = run(&["presets"]);
    assert_eq!(presets.len(), 10);
    assert_eq!(presets[0]["name"], "twitter");
    assert!(presets.iter().all(|p| p["descriptor"]["fields"].is_array()));
    let enc = run(&["encode", "--format", "base32", "1541815603606036480"]);
    assert_eq!(enc[0]["id"], "1541815603606036480");
    assert_eq!(enc[0]["base32"], "1ASD13XH1F800");
    let parsed = run(&["parse", "--format", "base32", "1asd13xh1f800"]);
    assert_eq!(parsed[0]["id"], "1541815603606036480");
    let bounds = run(&["bounds", "--preset", "twitter", "2022-06-28T16:07:40.105Z"]);
    assert_eq!(bounds[0]["time_ms"], 1656432460105u64);
    assert_eq!(bounds[0]["min"], "1541815603604488192");
    let decoded = run(&["decode", "--preset", "tsid", id]);
    assert_eq!(decoded[0]["id"], id);
    let fits = run(&["fits", id]);
    assert!(fits[0]["presets"]
        .as_array()
        .unwrap()
        .contains(&"tsid".into()));
    // The lease subcommands: init (new), list and release (as before).
    let dir = std::env::temp_dir().join(format!("snowmint-json-{}", std::process::id()));
    let url = format!("file:{}", dir.display());
    let init = run(&["lease", "init", "--store", &url]);
    assert_eq!(init[0]["ready"], true);
    run(&[
        "generate",
        "--preset",
        "twitter",
        "--node",
        "datacenter=1",
        "--lease",
        &url,
    ]);
    let list = run(&["lease", "list", "--store", &url]);
    assert_eq!(list[0]["type"], "space");
    assert_eq!(list[1]["type"], "slot");
    let slot = list[1]["slot"].as_u64().unwrap().to_string();
    let release = run(&["lease", "release", "--store", &url, "--slot", &slot]);
    assert_eq!(release[0]["slot"], list[1]["slot"]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn times_as_unix_ms_or_rfc_3339() {
    let bounds = |t: &str| -> Output {
        bin()
            .args(["bounds", "--preset", "twitter", t])
            .bounded_output()
    };
    let want = "1541815603604488192 1541815603608682495\n";
    for t in [
        "1656432460105",
        "2022-06-28T16:07:40.105Z",
        "2022-06-28t16:07:40.105z",
        "2022-06-28 16:07:40.105Z",
        "2022-06-28T18:07:40.105+02:00",
        "2022-06-28T12:37:40.105-03:30",
        "2022-06-28T16:07:40.1059999Z",
    ] {
        let out = bounds(t);
        assert!(out.status.success(), "{t}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), want, "{t}");
    }
    // The brief's example: whole seconds, and a date alone (midnight UTC).
    let v: Value = serde_json::from_slice(
        &bin()
            .args([
                "bounds",
                "--preset",
                "twitter",
                "2022-06-28T16:07:40Z",
                "--json",
            ])
            .bounded_output()
            .stdout,
    )
    .unwrap();
    assert_eq!(v["time_ms"], 1656432460000u64);
    let v: Value = serde_json::from_slice(
        &bin()
            .args(["bounds", "--preset", "twitter", "2024-02-29", "--json"])
            .bounded_output()
            .stdout,
    )
    .unwrap();
    assert_eq!(v["time"], "2024-02-29T00:00:00.000Z");
    // A leap second is the last millisecond of its minute.
    let v: Value = serde_json::from_slice(
        &bin()
            .args([
                "bounds",
                "--preset",
                "twitter",
                "2016-12-31T23:59:60.5Z",
                "--json",
            ])
            .bounded_output()
            .stdout,
    )
    .unwrap();
    assert_eq!(v["time"], "2016-12-31T23:59:59.999Z");
    // Not a time: a usage error naming it (exit 2); a time the layout cannot hold: its code.
    for t in [
        "2023-02-29",
        "2022-06-28T24:00:00Z",
        "2022-06-28T16:07:40",
        "2022-06-28T16:07:40.Z",
        "2022-6-28",
        "1969-12-31T23:59:59Z",
        "yesterday",
        "-5",
        "",
    ] {
        let out = bounds(t);
        assert_eq!(out.status.code(), Some(2), "{t}");
        assert!(
            text(&out.stderr).contains(&format!("'{t}'")),
            "{t}: {}",
            text(&out.stderr)
        );
    }
    let out = bounds("2000-01-01T00:00:00Z");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).ends_with("[time_before_epoch]\n"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = bin().args(["completions", shell]).bounded_output();
        assert!(out.status.success(), "{shell}");
        let script = text(&out.stdout);
        assert!(
            script.contains("snowmint") && script.contains("decode"),
            "{shell}"
        );
    }
    // The bash script loads and registers a completion for snowmint.
    let script = bin().args(["completions", "bash"]).bounded_output().stdout;
    let path =
        std::env::temp_dir().join(format!("snowmint-completion-{}.bash", std::process::id()));
    std::fs::write(&path, script).unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}' && complete -p snowmint",
            path.display()
        ))
        .bounded_output();
    std::fs::remove_file(&path).ok();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("snowmint"),
        "{}",
        text(&out.stdout)
    );
    let out = bin().arg("man").bounded_output();
    assert!(out.status.success());
    let page = text(&out.stdout);
    assert!(page.contains(".TH snowmint 1"), "{page}");
    for sub in ["generate", "decode", "bounds", "completions", "lease"] {
        assert!(page.contains(sub), "{sub} in the man page");
    }
    assert_eq!(
        bin()
            .args(["completions", "tcsh"])
            .bounded_output()
            .status
            .code(),
        Some(2)
    );
    // A subcommand's own page, with its options.
    let out = bin().args(["man", "decode"]).bounded_output();
    assert!(out.status.success());
    let page = text(&out.stdout);
    assert!(page.contains(".TH snowmint-decode 1"), "{page}");
    assert!(
        page.contains(r"\-\-from") && page.contains(r"\-\-preset"),
        "{page}"
    );
    assert_eq!(
        bin().args(["man", "nope"]).bounded_output().status.code(),
        Some(2)
    );
}

/// Runs with stdout and stderr on a pseudo-terminal; returns what the terminal got.
fn on_terminal(args: &[&str], no_color: Option<&str>) -> String {
    use std::os::fd::{FromRawFd, OwnedFd};
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two new descriptors into the two ints.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty");
    // SAFETY: both descriptors are new and owned here.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut cmd = bin();
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave);
    if let Some(v) = no_color {
        cmd.env("NO_COLOR", v);
    }
    let mut child = cmd.spawn().unwrap();
    // Close this process's copies of the slave side, so that reading the
    // master ends (EIO on Linux) when the child has exited.
    drop(cmd);
    let mut master = std::fs::File::from(master);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = master.read(&mut buf) {
            out.extend_from_slice(&buf[..n]);
        }
        tx.send(out).ok();
    });
    let out = match rx.recv_timeout(bounded::LIMIT) {
        Ok(out) => out,
        Err(_) => {
            child.kill().ok();
            panic!(
                "{args:?} on a terminal still running after {:?}",
                bounded::LIMIT
            );
        }
    };
    assert!(child.wait().unwrap().code().is_some());
    String::from_utf8(out).unwrap().replace("\r\n", "\n")
}

#[test]
fn columns_and_colour_only_on_a_terminal() {
    let args = [
        "decode",
        "--preset",
        "twitter",
        "1541815603606036480",
        "5",
        "bad",
    ];
    let screen = on_terminal(&args, None);
    assert!(screen.contains("\x1b[1m"), "bold headings: {screen:?}");
    assert!(
        screen.contains("\x1b[1;31merror\x1b[0m"),
        "red error: {screen:?}"
    );
    let plain = on_terminal(&args, Some("1"));
    assert!(!plain.contains('\x1b'), "NO_COLOR: {plain:?}");
    let lines: Vec<&str> = plain.lines().collect();
    assert_eq!(lines.len(), 4, "{plain:?}");
    assert_eq!(
        lines[0],
        "                 id  time                      sequence  datacenter  worker"
    );
    assert_eq!(
        lines[1],
        "1541815603606036480  2022-06-28T16:07:40.105Z         0          11      26"
    );
    assert_eq!(
        lines[2],
        "                  5  2010-11-04T01:42:54.657Z         5           0       0"
    );
    assert!(
        lines[3].starts_with("snowmint: error: 'bad': "),
        "{plain:?}"
    );
    // Piped: no heading, no padding, no colour (as before).
    let out = bin().args(args).bounded_output();
    assert_eq!(
        text(&out.stdout),
        "1541815603606036480  2022-06-28T16:07:40.105Z  sequence=0 datacenter=11 worker=26\n\
         5  2010-11-04T01:42:54.657Z  sequence=5 datacenter=0 worker=0\n"
    );
    assert!(!text(&out.stderr).contains('\x1b'));
    // `fits` on a terminal: the IDs right-aligned in one column.
    let fits = on_terminal(&["fits", "175928847299117063", "7"], Some("1"));
    let lines: Vec<&str> = fits.lines().collect();
    assert!(lines[0].starts_with("  175928847299117063  "), "{fits:?}");
    assert!(lines[1].starts_with("                   7  "), "{fits:?}");
    // An empty NO_COLOR does not count (no-color.org).
    assert!(on_terminal(&args, Some("")).contains("\x1b[1m"));
}
