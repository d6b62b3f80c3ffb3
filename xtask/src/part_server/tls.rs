//! TLS (curl with a CA made here by openssl, HTTP/1.1 and HTTP/2 by ALPN),
//! and two servers on one Redis store (server/tests/two_servers.py).

use std::path::Path;
use std::process::{Command, Stdio};

use super::server::{check_exit, Server};
use crate::step::{read, Part};

pub fn run(p: &Part, bin: &Path, work: &Path) -> Result<(), String> {
    p.say("TLS: curl with a CA, HTTP/1.1 and HTTP/2 (ALPN)");
    // A CA and a server certificate for 127.0.0.1 and localhost.
    let f = |name: &str| work.join(name).display().to_string();
    let (ca_key, ca, key, csr, san, cert) = (
        f("ca.key"),
        f("ca.pem"),
        f("tls.key"),
        f("tls.csr"),
        f("san.ext"),
        f("tls.pem"),
    );
    let openssl = |args: &[&str]| p.check(Command::new("openssl").args(args).stderr(Stdio::null()));
    let ec = "ec_paramgen_curve:P-256";
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        ec,
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=snowmint-test-ca",
        "-keyout",
        &ca_key,
        "-out",
        &ca,
    ])?;
    openssl(&[
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        ec,
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        &key,
        "-out",
        &csr,
    ])?;
    std::fs::write(&san, "subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        .map_err(|e| format!("{san}: {e}"))?;
    openssl(&[
        "x509",
        "-req",
        "-in",
        &csr,
        "-CA",
        &ca,
        "-CAkey",
        &ca_key,
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        &san,
        "-out",
        &cert,
    ])?;

    let server = Server::start(
        bin,
        &work.join("tls.log"),
        &[
            "--preset",
            "leaf",
            "--node",
            "worker=5",
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
        ],
        &[],
    )?;
    for version in ["1.1", "2"] {
        let out = p.output(Command::new("curl").args([
            "-sf",
            "--max-time",
            "10",
            "--cacert",
            &ca,
            &format!("--http{version}"),
            "-w",
            "\n%{http_version}",
            &format!("https://{}/v1/ids?count=2", server.addr),
        ]))?;
        let first = out.lines().next().unwrap_or_default();
        let last = out.lines().last().unwrap_or_default();
        println!("HTTP/{last}: {first}");
        if last != version {
            return Err(format!("not HTTP/{version} over TLS"));
        }
        if !out.contains("\"ids\"") {
            return Err("no IDs over TLS".into());
        }
    }
    let trusted = Command::new("curl")
        .args(["-sf", "--max-time", "10"])
        .arg(format!("https://{}/healthz", server.addr))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run curl: {e}"))?;
    if trusted.success() {
        return Err("curl trusted the server without its CA".into());
    }
    let log = server.log.clone();
    let status = server.stop()?;
    let text = read(&log)?;
    check_exit(status, &text, false)?;
    if text.contains("PRIVATE KEY") {
        return Err("the key reached the log".into());
    }
    Ok(())
}

/// Two servers leasing Leaf's worker from one namespace of the Redis store
/// `redis`: different leased values, every ID unique; both release their
/// lease at SIGTERM.
pub fn two_servers_on_redis(p: &Part, bin: &Path, work: &Path, redis: &str) -> Result<(), String> {
    p.say("two servers on one Redis store: different leased values, every ID unique");
    let url = format!("{redis}?namespace=test-server-{}", super::nonce());
    let args = ["--preset", "leaf", "--lease", &url];
    let mut r1 = Server::start(bin, &work.join("r1.log"), &args, &[])?;
    let mut r2 = Server::start(bin, &work.join("r2.log"), &args, &[])?;
    p.check(
        p.cmd("python3")
            .arg("server/tests/two_servers.py")
            .args([&r1.addr, &r2.addr]),
    )?;
    r1.term();
    r2.term();
    for server in [r1, r2] {
        let log = server.log.clone();
        let status = server.stop()?;
        check_exit(status, &read(&log)?, true)?;
    }
    Ok(())
}
