//! The listener's operations and security side, on the real binary: TLS
//! (a CA made here with rcgen; rustls and curl as clients), client
//! certificates, header size and time limits, the connection limit, many
//! connections, the drain delay. Every wait is bounded.

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

/// A CA, and PEM files of certificates it signed, in `dir`.
struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
    pem: String,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let pem = issuer.pem();
        Ca { issuer, pem }
    }

    /// A certificate for `names`: (certificate PEM, key PEM).
    fn sign(&self, names: &[&str]) -> (String, String) {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let params = CertificateParams::new(names).unwrap();
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    secret_file(&p, text);
    p.to_str().unwrap().to_string()
}

/// A rustls client trusting `ca_pem`, with a client certificate if given.
fn client(
    ca_pem: &str,
    me: Option<&(String, String)>,
    alpn: &[&[u8]],
) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let b = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let mut config = match me {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(cert.as_bytes())
                .map(Result::unwrap)
                .collect();
            let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap();
            b.with_client_auth_cert(chain, key).unwrap()
        }
        None => b.with_no_client_auth(),
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

/// One GET over TLS (HTTP/1.1, `Connection: close`); the negotiated ALPN
/// protocol with it. Errors (a refused handshake) are returned.
fn tls_get(
    addr: &str,
    config: Arc<rustls::ClientConfig>,
    path: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<Response> {
    let tcp = TcpStream::connect(addr)?;
    tcp.set_read_timeout(Some(Duration::from_secs(20)))?;
    let conn = rustls::ClientConnection::new(config, ServerName::try_from("localhost").unwrap())
        .map_err(std::io::Error::other)?;
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    tls.write_all(req.as_bytes())?;
    let mut raw = Vec::new();
    match tls.read_to_end(&mut raw) {
        Ok(_) => {}
        // Some servers close without close_notify; ours sends it, so this is an error.
        Err(e) => return Err(e),
    }
    let text = String::from_utf8(raw).map_err(std::io::Error::other)?;
    if text.is_empty() {
        return Err(std::io::Error::other("no answer"));
    }
    Ok(parse_response(&text))
}

/// The ALPN protocol the server picks when the client offers `alpn`.
fn negotiated(addr: &str, config: Arc<rustls::ClientConfig>) -> Option<Vec<u8>> {
    let mut tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut conn =
        rustls::ClientConnection::new(config, ServerName::try_from("localhost").unwrap()).unwrap();
    while conn.is_handshaking() {
        conn.complete_io(&mut tcp).unwrap();
    }
    conn.alpn_protocol().map(<[u8]>::to_vec)
}

/// curl's `%{http_code} %{http_version}` and body for `url`.
fn curl(args: &[&str], url: &str) -> (String, String) {
    let out = Command::new("curl")
        .args([
            "-s",
            "--max-time",
            "10",
            "-w",
            "\n%{http_code} %{http_version}",
        ])
        .args(args)
        .arg(url)
        .output()
        .expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, status) = text.rsplit_once('\n').unwrap();
    (status.to_string(), body.to_string())
}

const NODES: [&str; 4] = ["--node", "datacenter=1", "--node", "worker=1"];

fn args<'a>(more: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = NODES.to_vec();
    v.extend_from_slice(more);
    v
}

#[test]
fn tls_serves_http1_and_http2_and_its_key_stays_secret() {
    let dir = temp_dir("tls");
    let ca = Ca::new("snowmint test CA");
    let (cert, key) = ca.sign(&["localhost", "127.0.0.1"]);
    let cert_file = write(&dir, "cert.pem", &cert);
    let key_file = write(&dir, "key.pem", &key);
    let ca_file = write(&dir, "ca.pem", &ca.pem);
    let mut s = Server::start(&args(&["--tls-cert", &cert_file, "--tls-key", &key_file]));

    let r = tls_get(
        &s.addr,
        client(&ca.pem, None, &[b"http/1.1"]),
        "/v1/ids?count=3",
        &[],
    )
    .unwrap();
    assert_eq!(ids_of(&r).len(), 3);
    assert_eq!(
        negotiated(&s.addr, client(&ca.pem, None, &[b"h2", b"http/1.1"])).as_deref(),
        Some(&b"h2"[..])
    );
    let port = s.addr.rsplit(':').next().unwrap().to_string();
    let url = format!("https://localhost:{port}/v1/ids?count=2");
    let resolve = format!("localhost:{port}:127.0.0.1");
    for (flag, version) in [("--http1.1", "1.1"), ("--http2", "2")] {
        let (status, body) = curl(&["--cacert", &ca_file, "--resolve", &resolve, flag], &url);
        assert_eq!(status, format!("200 {version}"), "{body}");
        assert!(body.contains("\"ids\""), "{body}");
    }
    // Another CA's client does not trust the server.
    let other = Ca::new("another CA");
    let e = tls_get(&s.addr, client(&other.pem, None, &[]), "/healthz", &[]).unwrap_err();
    assert!(e.to_string().contains("UnknownIssuer"), "{e}");
    // Plain HTTP on the TLS port gets no HTTP answer.
    let mut tcp = TcpStream::connect(&s.addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut raw = Vec::new();
    let _ = tcp.read_to_end(&mut raw);
    assert!(!raw.starts_with(b"HTTP/1.1 200"), "{raw:?}");

    let (status, _) = s.terminate();
    assert!(status.success());
    let log = s.log_lines().join("\n");
    assert!(log.contains("tls=true"), "{log}");
    let key_body = key.lines().nth(1).unwrap();
    assert!(
        !log.contains("PRIVATE KEY") && !log.contains(key_body),
        "{log}"
    );
}

#[test]
fn h2c_on_the_plain_port() {
    let s = Server::start(&args(&[]));
    let (status, body) = curl(
        &["--http2-prior-knowledge"],
        &format!("http://{}/v1/ids?count=2", s.addr),
    );
    assert_eq!(status, "200 2", "{body}");
    let (status, _) = curl(&[], &format!("http://{}/healthz", s.addr));
    assert_eq!(status, "200 1.1");
}

#[test]
fn client_certificates_are_required_with_a_client_ca() {
    let dir = temp_dir("mtls");
    let ca = Ca::new("server CA");
    let clients = Ca::new("client CA");
    let (cert, key) = ca.sign(&["localhost"]);
    let me = clients.sign(&["client one"]);
    let stranger = Ca::new("stranger CA").sign(&["client two"]);
    let cert_file = write(&dir, "cert.pem", &cert);
    let key_file = write(&dir, "key.pem", &key);
    let clients_file = write(&dir, "clients.pem", &clients.pem);
    let tls = [
        "--tls-cert",
        &cert_file,
        "--tls-key",
        &key_file,
        "--tls-client-ca",
        &clients_file,
    ];
    let s = Server::start(&args(&tls));
    let r = tls_get(&s.addr, client(&ca.pem, Some(&me), &[]), "/v1/ids", &[]).unwrap();
    assert_eq!(ids_of(&r).len(), 1);
    let e = tls_get(&s.addr, client(&ca.pem, None, &[]), "/v1/ids", &[]).unwrap_err();
    assert!(e.to_string().contains("CertificateRequired"), "{e}");
    let e = tls_get(
        &s.addr,
        client(&ca.pem, Some(&stranger), &[]),
        "/v1/ids",
        &[],
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("UnknownCA") || e.to_string().contains("BadCertificate"),
        "{e}"
    );

    // A public address without tokens: refused, unless client certificates
    // are required (`--preset nope` then fails next, naming itself).
    let public = ["--listen", "0.0.0.0:0", "--preset", "nope"];
    let (code, text) = run(&[&tls[..4], &public].concat(), &[]);
    assert_eq!(code, Some(2));
    assert!(text.contains("not a loopback address"), "{text}");
    let (code, text) = run(&[&tls[..], &public].concat(), &[]);
    assert_eq!(code, Some(2));
    assert!(
        text.contains("--preset") && !text.contains("loopback"),
        "{text}"
    );

    // Configuration errors name the key; the key's content is never shown.
    let bogus_key = write(
        &dir,
        "bogus.pem",
        "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw==\n-----END PRIVATE KEY-----\n",
    );
    let (_, other_key) = ca.sign(&["localhost"]);
    let other_key = write(&dir, "other.pem", &other_key);
    for (extra, key_name) in [
        (vec!["--tls-cert", &cert_file], "tls_key"),
        (vec!["--tls-key", &key_file], "tls_cert"),
        (
            vec!["--tls-cert", &cert_file, "--tls-key", "/nonexistent.pem"],
            "tls_key",
        ),
        (
            vec!["--tls-cert", &key_file, "--tls-key", &key_file],
            "tls_cert",
        ),
        (
            vec!["--tls-cert", &cert_file, "--tls-key", &bogus_key],
            "tls_key",
        ),
        (
            vec!["--tls-cert", &cert_file, "--tls-key", &other_key],
            "tls_key",
        ),
        (vec!["--tls-client-ca", &clients_file], "tls_client_ca"),
        (vec!["--max-connections", "0"], "max_connections"),
        (vec!["--max-header-bytes", "100"], "max_header_bytes"),
        (vec!["--header-timeout", "0"], "header_timeout"),
        (vec!["--drain-delay", "100000"], "drain_delay"),
    ] {
        let (code, text) = run(&args(&extra), &[]);
        assert_eq!(code, Some(2), "{extra:?}: {text}");
        assert!(
            text.contains(&format!("configuration error in {key_name}")),
            "{extra:?}: {text}"
        );
        assert!(
            !text.contains("c2VjcmV0") && !text.contains(key.lines().nth(1).unwrap()),
            "{text}"
        );
    }
}

/// Reads one response on a kept-alive HTTP/1.1 connection: its status.
fn read_one(s: &mut TcpStream) -> u16 {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut byte).unwrap(), 1, "closed: {head:?}");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let len = common::content_length(&head);
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).unwrap();
    head.split(' ').nth(1).unwrap().parse().unwrap()
}

fn keep_alive(addr: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    assert_eq!(read_one(&mut s), 200);
    s
}

/// Seconds until the server closes `s` (reads return 0 or fail).
fn until_closed(s: &mut TcpStream, limit: Duration) -> Duration {
    let start = Instant::now();
    s.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return start.elapsed(),
            Ok(_) => continue,
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::TimedOut => {
                panic!("still open after {limit:?}")
            }
            Err(_) => return start.elapsed(),
        }
    }
}

#[test]
fn oversized_headers_and_urls_are_refused() {
    let s = Server::start(&args(&["--max-header-bytes", "8192"]));
    let small = "a".repeat(4000);
    let r = s.get_with("/healthz", &[("X-Pad", &small)]);
    assert_eq!(r.status, 200);
    let big = "a".repeat(12_000);
    let r = s.get_with("/healthz", &[("X-Pad", &big)]);
    assert_eq!(r.status, 431, "{r:?}");
    let many: Vec<(String, String)> = (0..400)
        .map(|i| (format!("X-H{i}"), "v".repeat(20)))
        .collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let r = s.get_with("/healthz", &many);
    assert_eq!(r.status, 431, "{r:?}");
    let r = s.get(&format!("/v1/decode/{}", "1".repeat(12_000)));
    assert!(r.status == 414 || r.status == 431, "{r:?}");
    // Still serving.
    assert_eq!(ids_of(&s.get("/v1/ids?count=2")).len(), 2);
}

#[test]
fn slow_clients_are_cut_while_others_are_served() {
    let s = Server::start(&args(&["--header-timeout", "2", "--idle-timeout", "1"]));
    // One dribbles its headers, a byte every 200 ms.
    let addr = s.addr.clone();
    let dribbler = std::thread::spawn(move || {
        let mut c = TcpStream::connect(&addr).unwrap();
        let start = Instant::now();
        c.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            .unwrap();
        for b in b"X-Slow: ".iter().cycle() {
            std::thread::sleep(Duration::from_millis(200));
            if c.write_all(&[*b]).is_err() {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(8), "never cut");
        }
        start.elapsed()
    });
    // One connects and says nothing.
    let mut silent = TcpStream::connect(&s.addr).unwrap();
    let start = Instant::now();
    // Others are served meanwhile.
    for _ in 0..20 {
        assert_eq!(ids_of(&s.get("/v1/ids?count=1")).len(), 1);
        std::thread::sleep(Duration::from_millis(50));
    }
    let silent_took = start.elapsed() + until_closed(&mut silent, Duration::from_secs(6));
    let dribbled = dribbler.join().unwrap();
    assert!(dribbled < Duration::from_secs(5), "{dribbled:?}");
    assert!(silent_took < Duration::from_secs(4), "{silent_took:?}");
    // A kept-alive connection with nothing in progress is closed after the idle timeout.
    let mut idle = keep_alive(&s.addr);
    let took = until_closed(&mut idle, Duration::from_secs(5));
    // 1 s, not the 2 s of the first request's deadline.
    assert!(took < Duration::from_millis(1800), "{took:?}");
    println!("dribbler cut after {dribbled:?}, silent after {silent_took:?}, idle after {took:?}");
}

#[test]
fn a_kept_alive_connection_is_closed_after_the_smaller_timeout() {
    // hyper counts the wait for the next request on a kept-alive HTTP/1.1
    // connection as reading headers: whichever of --idle-timeout and
    // --header-timeout is smaller closes it.
    for (idle, header) in [("1", "3"), ("3", "1")] {
        let s = Server::start(&args(&["--idle-timeout", idle, "--header-timeout", header]));
        let mut c = keep_alive(&s.addr);
        let took = until_closed(&mut c, Duration::from_secs(5));
        println!("idle {idle} s, header {header} s: closed {took:?} after the answer");
        assert!(
            took > Duration::from_millis(800) && took < Duration::from_millis(2500),
            "idle {idle}, header {header}: {took:?}"
        );
        // A connection with a request every 400 ms stays open past both.
        let mut busy = keep_alive(&s.addr);
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(3500) {
            std::thread::sleep(Duration::from_millis(400));
            busy.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                .unwrap();
            assert_eq!(read_one(&mut busy), 200);
        }
    }
}

#[test]
fn a_client_that_does_not_read_is_cut_after_the_idle_timeout() {
    // It pipelines requests for 24 KiB answers and reads none: hyper stops
    // reading while an answer waits, so the client's writes block too, and
    // once the socket has taken no byte for --idle-timeout the connection
    // is closed (a reset, as the client's requests are still unread).
    let s = Server::start(&args(&["--idle-timeout", "1", "--header-timeout", "10"]));
    let pid = s.child.id();
    let before = rss_kib(pid);
    let mut c = TcpStream::connect(&s.addr).unwrap();
    c.set_write_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let request = b"GET /v1/ids?count=1000 HTTP/1.1\r\nHost: x\r\n\r\n".repeat(100);
    let (mut sent, mut blocked, mut peak) = (0usize, None::<Instant>, before);
    let start = Instant::now();
    let cut = loop {
        match c.write(&request) {
            Ok(n) => {
                sent += n;
                blocked = None;
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                blocked.get_or_insert_with(Instant::now);
                peak = peak.max(rss_kib(pid));
                // Others are served meanwhile.
                assert_eq!(ids_of(&s.get("/v1/ids?count=1")).len(), 1);
            }
            // Reset or broken pipe: the server closed the connection.
            Err(_) => break blocked.map(|b| b.elapsed()),
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "not closed: {sent} bytes of requests sent, blocked for {:?}",
            blocked.map(|b| b.elapsed())
        );
    };
    println!(
        "{sent} bytes of requests taken, then blocked for {cut:?} until cut; RSS {before} -> {peak} KiB"
    );
    let cut = cut.expect("closed while blocked");
    // 1 s without a request in progress, then 1 s for the graceful close.
    assert!(cut < Duration::from_secs(4), "{cut:?}");
    // What the server read is bounded by the socket buffers, not by what
    // the client would send, and so is its memory.
    assert!(sent < 32 << 20, "{sent}");
    assert!(peak < before + 16 * 1024, "RSS {before} -> {peak} KiB");
    assert_eq!(ids_of(&s.get("/v1/ids?count=10")).len(), 10);
}

/// An HTTP/2 frame: type, flags, stream, payload.
fn h2_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.extend([kind, flags]);
    f.extend(stream.to_be_bytes());
    f.extend(payload);
    f
}

#[test]
fn an_http2_client_that_does_not_read_is_cut() {
    // Over h2c it opens 100 streams for 24 KiB answers and reads nothing:
    // its flow-control window (64 KiB) takes two or three answers, the other
    // streams stay in progress waiting for a window that never comes, so the
    // idle timeout does not apply. The server's pings (every --idle-timeout
    // without a frame from the client) go unanswered: closed
    // --header-timeout later.
    let s = Server::start(&args(&["--idle-timeout", "1", "--header-timeout", "1"]));
    let mut c = TcpStream::connect(&s.addr).unwrap();
    c.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    out.extend(h2_frame(4, 0, 0, &[])); // SETTINGS, all defaults
    let path = b"/v1/ids?count=1000";
    for i in 0..100u32 {
        // HPACK: :method GET and :scheme http from the static table, :path
        // and :authority as literals with their static names.
        let mut block = vec![0x82, 0x86, 0x04, path.len() as u8];
        block.extend(path);
        block.extend([0x01, 1, b'x']);
        out.extend(h2_frame(1, 0x5, 2 * i + 1, &block)); // HEADERS, END_STREAM | END_HEADERS
    }
    c.write_all(&out).unwrap();
    let start = Instant::now();
    // Open connections: this one and the /metrics request's own.
    let open = |n: u32| {
        s.get("/metrics")
            .body
            .contains(&format!("snowmint_http_connections {n}\n"))
    };
    // Each listener thread accepts on its own socket: the /metrics
    // connection may be counted before this one is accepted.
    while !open(2) {
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "the client's connection is open"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    while !open(1) {
        assert!(
            start.elapsed() < Duration::from_secs(8),
            "an HTTP/2 client that does not read is still connected after {:?}",
            start.elapsed()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let took = start.elapsed();
    println!("an HTTP/2 client that does not read: cut after {took:?}");
    assert!(took < Duration::from_secs(4), "{took:?}");
    // What the server wrote before: answers (the requests were well formed),
    // as much as the window allowed, then the end.
    let mut got = Vec::new();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = c.read_to_end(&mut got);
    assert!(
        got.len() > 48 * 1024 && got.len() < 128 * 1024,
        "{} bytes",
        got.len()
    );
    assert!(ids_of(&s.get("/v1/ids?count=10")).len() == 10);
}

#[test]
fn max_connections_refuses_then_recovers() {
    let s = Server::start(&args(&["--max-connections", "20"]));
    let mut held: Vec<TcpStream> = (0..20).map(|_| keep_alive(&s.addr)).collect();
    for _ in 0..3 {
        let r = s.get("/v1/ids");
        assert_eq!(
            (r.status, r.code().as_str()),
            (503, "too_many_connections"),
            "{r:?}"
        );
        assert_eq!(r.header("retry-after"), Some("1"));
    }
    // The held ones still work.
    held[0]
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    assert_eq!(read_one(&mut held[0]), 200);
    held.truncate(10);
    let deadline = Instant::now() + Duration::from_secs(5);
    // Refusals: the 3 above and any while the closes reach the server.
    let mut refused = 3;
    loop {
        let r = s.get("/metrics");
        if r.status == 503 {
            refused += 1;
        }
        if r.status == 200 {
            let line = format!("snowmint_http_connections_refused_total {refused}\n");
            assert!(r.body.contains(&line), "{}", r.body);
            break;
        }
        assert!(Instant::now() < deadline, "no recovery: {r:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(ids_of(&s.get("/v1/ids")).len(), 1);
}

/// The server's resident memory in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .parse()
        .unwrap()
}

#[path = "ops/reload_and_limits.rs"]
mod reload_and_limits;
