//! Twitter Snowflake's Thrift service (server/thrift/Snowflake.thrift)
//! called by clients the official compiler generates: Debian's
//! thrift-compiler 0.17.0 writes Python stubs into a temporary folder,
//! Debian's python3-thrift 0.17.0 (PyPI has no 0.17.0: 0.16.0, then 0.20.0)
//! runs them with Debian's /usr/bin/python3 over TFramedTransport +
//! TBinaryProtocol (server/tests/clients/thrift_client.py). Every method is
//! called; a bad user agent and an unknown method are application errors;
//! the Thrift IDs and the HTTP IDs of the same server are unique together
//! and carry the generator's node values; /metrics counts the IDs per agent;
//! SIGTERM closes the Thrift listener with the HTTP one. A Java client
//! (server/tests/clients/ThriftClient.java) with the stubs `thrift --gen
//! java` writes, compiled by JDK 17's javac against Debian's libthrift-java
//! 0.16.0, calls every method too; its IDs join the uniqueness check.

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::server::{check_exit, logged, Server};
use crate::step::{glob, mkdir, read, Part};

/// Debian's python3-thrift is Debian's Python's.
const PYTHON: &str = "/usr/bin/python3";

pub fn run(p: &Part, bin: &Path, work: &Path) -> Result<(), String> {
    let root = &p.root;
    p.say(
        "tools: thrift-compiler, python3-thrift (Debian, 0.17.0), libthrift-java (0.16.0), JDK 17",
    );
    crate::tools::apt(
        p,
        &[
            "thrift-compiler",
            "python3-thrift",
            "libthrift-java",
            "openjdk-17-jdk-headless",
        ],
    )?;
    let version = p.output(Command::new("thrift").arg("--version"))?;
    if !version.contains("0.17.0") {
        return Err(format!("expected thrift 0.17.0, got: {}", version.trim()));
    }
    p.output(Command::new(PYTHON).args(["-c", "import thrift"]))
        .map_err(|e| format!("python3-thrift is not importable by {PYTHON}: {e}"))?;

    let work = work.join("thrift");
    p.say("thrift --gen py server/thrift/Snowflake.thrift (into a temporary folder)");
    let gen = work.join("gen");
    mkdir(&gen)?;
    p.check(p.cmd("thrift").arg("-out").arg(&gen).args([
        "--gen",
        "py",
        "server/thrift/Snowflake.thrift",
    ]))?;

    p.say("thrift --gen java, javac against Debian's libthrift-java");
    // The jar's manifest puts its dependencies (slf4j-api, the
    // javax.annotation of the generated @Generated) on the class path;
    // slf4j-nop silences slf4j's "no binding" warning.
    let jar = Path::new("/usr/share/java/thrift.jar");
    if !jar.is_file() {
        return Err(format!("libthrift-java installed no {}", jar.display()));
    }
    let mut class_path = jar.display().to_string();
    if Path::new("/usr/share/java/slf4j-nop.jar").is_file() {
        class_path.push_str(":/usr/share/java/slf4j-nop.jar");
    }
    let (java_gen, classes) = (work.join("java-gen"), work.join("java"));
    mkdir(&java_gen)?;
    mkdir(&classes)?;
    p.check(p.cmd("thrift").arg("-out").arg(&java_gen).args([
        "--gen",
        "java",
        "server/thrift/Snowflake.thrift",
    ]))?;
    p.check(
        p.cmd("javac")
            .arg("-d")
            .arg(&classes)
            .args(["-cp", &class_path])
            .args(glob(
                &java_gen.join("com/twitter/service/snowflake/gen"),
                ".java",
            )?)
            .arg("server/tests/clients/ThriftClient.java"),
    )?;
    // server/README.md shows lines of it: each must still be in it.
    let n = readme_lines_in_client(
        &read(&root.join("server/README.md"))?,
        &read(&root.join("server/tests/clients/ThriftClient.java"))?,
    )?;
    println!("server/README.md's {n} Java lines are in ThriftClient.java");

    // twitter: datacenter given, worker leased from a file store, where a
    // first server holds slot 0 so that the leased worker is not 0.
    let lease = format!("file:{}/leases?namespace=thrift", work.display());
    let node_args = [
        "--preset",
        "twitter",
        "--node",
        "datacenter=3",
        "--lease",
        &lease,
    ];
    let _holder = Server::start(bin, &work.join("holder.log"), &node_args, &[])?;
    let mut args = vec!["--thrift", "127.0.0.1:0"];
    args.extend(node_args);
    let server = Server::start(
        bin,
        &work.join("server.log"),
        &args,
        &[("thrift_start", "listen")],
    )?;
    let thrift = logged(&server.log_text(), "thrift_start", "listen")
        .ok_or("the server logged no thrift_start")?;
    let (host, port) = thrift
        .rsplit_once(':')
        .ok_or_else(|| format!("the Thrift address {thrift} has no port"))?;

    p.say("Java client (generated stubs, libthrift-java, TFramedTransport + TBinaryProtocol)");
    let java_ids = work.join("ids.java");
    let out = p.output(
        Command::new("java")
            .arg("-cp")
            .arg(format!("{}:{class_path}", classes.display()))
            .args(["ThriftClient", host, port, "3", "500"]),
    )?;
    std::fs::write(&java_ids, out).map_err(|e| format!("{}: {e}", java_ids.display()))?;

    p.say("Python client (generated stubs, TFramedTransport + TBinaryProtocol)");
    p.check(
        p.cmd(PYTHON)
            .arg("server/tests/clients/thrift_client.py")
            .env("PYTHONPATH", &gen)
            .env("THRIFT", &thrift)
            .env("HTTP", &server.addr)
            .env("JAVA_IDS", &java_ids),
    )?;

    p.say("SIGTERM closes the Thrift listener with the HTTP one");
    let log = server.log.clone();
    let status = server.stop()?;
    check_exit(status, &read(&log)?, true)?;
    let addr: SocketAddr = thrift
        .parse()
        .map_err(|e| format!("the Thrift address {thrift}: {e}"))?;
    if TcpStream::connect_timeout(&addr, Duration::from_secs(5)).is_ok() {
        return Err("the Thrift port still accepts connections after the exit".into());
    }
    println!("thrift ok");
    Ok(())
}

/// The non-empty lines of the ```java block between server/README.md's
/// `<!-- thrift-java:start -->` and `<!-- thrift-java:end -->`, each
/// (trimmed) a line of the client: their count, or the ones missing.
fn readme_lines_in_client(readme: &str, client: &str) -> Result<usize, String> {
    let block = readme
        .split_once("<!-- thrift-java:start -->")
        .and_then(|(_, rest)| rest.split_once("<!-- thrift-java:end -->"))
        .and_then(|(block, _)| block.split_once("```java"))
        .map(|(_, code)| code.split_once("```").map_or(code, |(code, _)| code))
        .ok_or("server/README.md has no ```java block between its thrift-java markers")?;
    let have: std::collections::HashSet<&str> = client.lines().map(str::trim).collect();
    let lines: Vec<&str> = block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let missing: Vec<&&str> = lines.iter().filter(|l| !have.contains(**l)).collect();
    if lines.is_empty() || !missing.is_empty() {
        return Err(format!(
            "server/README.md's Java lines not in ThriftClient.java: {missing:?}"
        ));
    }
    Ok(lines.len())
}

#[cfg(test)]
mod tests {
    use super::readme_lines_in_client;

    #[test]
    fn readme_java_lines() {
        let readme = "x\n<!-- thrift-java:start -->\n```java\n  a();\n\n b(); \n```\n<!-- thrift-java:end -->\n";
        assert_eq!(
            readme_lines_in_client(readme, "a();\n    b();\nc();\n"),
            Ok(2)
        );
        assert!(readme_lines_in_client(readme, "a();\n").is_err());
        assert!(readme_lines_in_client("no block", "a();\n").is_err());
    }
}
