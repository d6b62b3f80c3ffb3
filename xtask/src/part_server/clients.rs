//! A live server on a file lease with a bearer token, called by clients in
//! four languages: curl, Python (urllib, server/tests/clients/http_client.py),
//! Node (fetch, http_client.mjs) and Java (java.net.http, HttpIdClient.java,
//! compiled here with javac, no dependencies), and gRPC from Python (grpcio
//! with stubs grpcio-tools generates, grpc_client.py); schemathesis checks
//! server/openapi.yaml against it, Prometheus' parsers and naming rules its
//! /metrics. Every ID any client got is unique; SIGTERM exits 0, the lease
//! released, and the token never reached the log.

use std::collections::HashSet;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::Command;

use super::server::{check_exit, Server};
use crate::step::Part;
use crate::venv::{venv_pip, GRPC_PY_PACKAGES, PROMETHEUS_CLIENT_VERSION, SCHEMATHESIS_VERSION};

/// The IDs the clients get: curl 100 + 1, Python 100, Node 100, Java 50,
/// gRPC 101 (grpc_client.py).
const ALL_IDS: usize = 452;

pub fn run(p: &Part, bin: &Path, work: &Path) -> Result<(), String> {
    let root = &p.root;
    let token = format!("client-test-{}", super::nonce());
    let tokens = work.join("tokens");
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tokens)
        .and_then(|mut f| writeln!(f, "{token}"))
        .map_err(|e| format!("{}: {e}", tokens.display()))?;
    let lease = format!("file:{}/leases?namespace=clients", work.display());
    let server = Server::start(
        bin,
        &work.join("server.log"),
        &[
            "--preset",
            "leaf",
            "--lease",
            &lease,
            "--token-file",
            &tokens.to_string_lossy(),
        ],
        &[],
    )?;
    let base = format!("http://{}", server.addr);
    p.output(Command::new("curl").args(["-sf", "--max-time", "10", &format!("{base}/readyz")]))?;
    let auth = format!("Authorization: Bearer {token}");
    let env = [("BASE", base.as_str()), ("TOKEN", token.as_str())];
    let mut ids: Vec<(&str, Vec<String>)> = Vec::new();

    p.say("curl client");
    let curl = |args: &[&str]| {
        p.output(
            Command::new("curl")
                .args(["-sf", "--max-time", "10", "-H", &auth])
                .args(args),
        )
    };
    let mut got = lines(&curl(&[
        "-H",
        "Accept: text/plain",
        &format!("{base}/v1/ids?count=100"),
    ])?);
    got.extend(lines(&curl(&[&format!("{base}/api/snowflake/get/any")])?));
    ids.push(("curl", got));
    let code = p.output(Command::new("curl").args([
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "--max-time",
        "10",
        &format!("{base}/v1/ids"),
    ]))?;
    if code != "401" {
        return Err(format!("/v1/ids without a token answered {code}, not 401"));
    }

    p.say("Python client (urllib)");
    let out = p.output(
        p.cmd("python3")
            .arg("server/tests/clients/http_client.py")
            .envs(env),
    )?;
    ids.push(("python", lines(&out)));

    p.say("Node client (fetch)");
    let out = p.output(
        p.cmd("node")
            .arg("server/tests/clients/http_client.mjs")
            .envs(env),
    )?;
    ids.push(("node", lines(&out)));

    p.say("Java client (java.net.http)");
    let classes = work.join("java");
    p.check(
        p.cmd("javac")
            .arg("-d")
            .arg(&classes)
            .arg("server/tests/clients/HttpIdClient.java"),
    )?;
    let out = p.output(
        p.cmd("java")
            .arg("-cp")
            .arg(&classes)
            .arg("HttpIdClient")
            .envs(env),
    )?;
    ids.push(("java", lines(&out)));

    p.say("gRPC client (Python grpcio, stubs from grpcio-tools)");
    let venv = root.join(".venv");
    let python = venv.join("bin/python");
    let grpc: Vec<String> = GRPC_PY_PACKAGES.iter().map(|s| s.to_string()).collect();
    venv_pip(p, &venv, &grpc)?;
    let grpc_ids = work.join("ids.grpc");
    p.check(
        p.cmd(&python)
            .arg("server/tests/clients/grpc_client.py")
            .arg(&server.addr)
            .arg(&grpc_ids)
            .env("TOKEN", &token),
    )?;
    ids.push(("grpc", lines(&crate::step::read(&grpc_ids)?)));

    p.say("schemathesis: server/openapi.yaml against the live server");
    venv_pip(p, &venv, &[format!("schemathesis=={SCHEMATHESIS_VERSION}")])?;
    // -n 30: a few seconds here; every check, so a response outside the
    // file fails. Run from the work folder: schemathesis leaves a
    // .schemathesis/ folder where it runs. server/schemathesis.toml: the
    // decode operations' documented 400s for schema-valid text that is no
    // ID of the layout, or no layout.
    p.check(
        Command::new(venv.join("bin/schemathesis"))
            .arg("--config-file")
            .arg(root.join("server/schemathesis.toml"))
            .arg("run")
            .arg(root.join("server/openapi.yaml"))
            .args(["--url", &base, "-H", &auth, "--checks", "all", "-n", "30"])
            .args(["--request-timeout", "10", "--no-color"])
            .current_dir(work),
    )?;
    // Issued IDs, the largest ID and a descriptor against the file's
    // parameter schemas (a pattern or enum too narrow for them fails here).
    p.check(
        p.cmd(&python)
            .args(["server/tests/openapi_values.py", "server/openapi.yaml"])
            .args([&base, &token]),
    )?;

    p.say("/metrics: Prometheus' parsers (OpenMetrics and text 0.0.4) and naming rules");
    venv_pip(
        p,
        &venv,
        &[format!("prometheus-client=={PROMETHEUS_CLIENT_VERSION}")],
    )?;
    // Broken copies of the page must fail first; then the live page must pass.
    p.check(
        p.cmd(&python)
            .arg("server/tests/metrics_format.py")
            .args([&base, &token]),
    )?;

    p.say("every client's IDs are unique");
    let mut seen = HashSet::new();
    let mut total = 0;
    for (client, got) in &ids {
        println!("{client}: {} IDs", got.len());
        total += got.len();
        seen.extend(got.iter());
    }
    if total != ALL_IDS || seen.len() != total {
        return Err(format!(
            "total {total} (expected {ALL_IDS}), unique {}",
            seen.len()
        ));
    }

    p.say("SIGTERM: exit 0, lease released");
    let log = server.log.clone();
    let status = server.stop()?;
    let text = crate::step::read(&log)?;
    check_exit(status, &text, true)?;
    if text.contains(&token) {
        return Err("a token reached the log".into());
    }
    Ok(())
}

/// The non-empty lines of a client's output: its IDs.
fn lines(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}
