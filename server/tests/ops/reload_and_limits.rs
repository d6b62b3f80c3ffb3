//! Memory under many connections, the drain delay, rate limits, listener
//! threads and SIGHUP reloads (split off ops.rs; the helpers are the
//! parent's).

use super::*;

/// One connection that asks for `/healthz`, reads the answer and is closed.
fn one_short_connection(addr: &str) {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    c.read_to_end(&mut answer).unwrap();
    assert!(answer.starts_with(b"HTTP/1.1 200"), "{answer:?}");
}

#[test]
fn thousands_of_connections_then_memory_stops_growing() {
    // One malloc arena: glibc otherwise gives each tokio worker thread its
    // own, and how much each keeps depends on which threads the scheduler
    // used (on a loaded machine 4000 connections added 3 MiB without a leak).
    let s = Server::try_start(
        &args(&["--max-connections", "5000"]),
        &[("MALLOC_ARENA_MAX", "1")],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let pid = s.child.id();

    // A leak first, while the heap has no free memory to hide it in: 6000
    // connections one after another add under 1 MiB (a leak of 256 bytes
    // each would add 1.5 MiB). After the rounds below, the heap keeps the
    // ~23 MiB their open connections freed, and a small leak fills that
    // without growing the RSS.
    for _ in 0..500 {
        one_short_connection(&s.addr);
    }
    let warm = rss_kib(pid);
    for _ in 0..6000 {
        one_short_connection(&s.addr);
    }
    let sequential = rss_kib(pid);
    println!(
        "RSS after 500 connections one at a time: {warm} KiB; after 6000 more: {sequential} KiB"
    );
    assert!(sequential < warm + 1024, "{warm} KiB -> {sequential} KiB");

    // Then many at once: every connection's task ends (the gauge is back to
    // 1, the /metrics call itself) and memory stops growing. The heap's
    // fragmentation still grows, by less each round (+4.0, +3.1, +2.2, +0.5,
    // +0.4, +1.2, +0.1 MiB in one run): so the last four of twelve rounds
    // are compared, where a leak of 512 bytes a connection would add 2 MiB.
    let mut after = Vec::new();
    for round in 0..12 {
        let held: Vec<TcpStream> = (0..1000).map(|_| keep_alive(&s.addr)).collect();
        let metrics = s.get("/metrics").body;
        assert!(
            metrics.contains("snowmint_http_connections 1001"),
            "round {round}"
        );
        drop(held);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !s
            .get("/metrics")
            .body
            .contains("snowmint_http_connections 1\n")
        {
            assert!(Instant::now() < deadline, "connections not closed");
            std::thread::sleep(Duration::from_millis(50));
        }
        after.push(rss_kib(pid));
    }
    println!("RSS after each round of 1000 connections at once: {after:?}");
    assert!(after[11] < after[7] + 2048, "{after:?}");
    assert_eq!(ids_of(&s.get("/v1/ids?count=10")).len(), 10);
}

#[test]
fn drain_delay_keeps_serving_with_readyz_503() {
    let mut s = Server::start(&args(&["--drain-delay", "2"]));
    let start = Instant::now();
    let status = Command::new("kill")
        .args(["-TERM", &s.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    std::thread::sleep(Duration::from_millis(200));
    let r = s.get("/readyz");
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(r.body.contains("shutting down"));
    assert_eq!(
        ids_of(&s.get("/v1/ids")).len(),
        1,
        "still serving while draining"
    );
    let status = s.wait(Duration::from_secs(15));
    let took = start.elapsed();
    assert!(status.success());
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(8),
        "{took:?}"
    );
    let log = s.log_lines().join("\n");
    assert!(log.contains("draining"), "{log}");
}

#[test]
fn rate_limit_per_token() {
    let dir = temp_dir("rate");
    let tokens = write(&dir, "tokens", "alpha-token-1\nbravo-token-2\n");
    let s = Server::start(&args(&["--token-file", &tokens, "--rate-limit", "5"]));
    let alpha = [("Authorization", "Bearer alpha-token-1")];
    let bravo = [("Authorization", "Bearer bravo-token-2")];
    let statuses: Vec<u16> = (0..12)
        .map(|_| s.get_with("/v1/ids", &alpha).status)
        .collect();
    let ok = statuses.iter().filter(|&&c| c == 200).count();
    // A burst of 5, and perhaps one more refilled while the 12 requests ran.
    assert!((5..=7).contains(&ok), "{statuses:?}");
    let r = s.get_with("/v1/ids", &alpha);
    assert_eq!(
        (r.status, r.code().as_str()),
        (429, "rate_limited"),
        "{r:?}"
    );
    assert_eq!(r.header("retry-after"), Some("1"));
    // Per token: the other one is not limited; no token is 401, not 429.
    assert_eq!(ids_of(&s.get_with("/v1/ids", &bravo)).len(), 1);
    assert_eq!(s.get("/v1/ids").status, 401);
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(ids_of(&s.get_with("/v1/ids", &alpha)).len(), 1);
    let m = s.get_with("/metrics", &bravo).body;
    assert!(m.contains("snowmint_http_rate_limited_total "), "{m}");
    // Without tokens the limit has nothing to count: a configuration error.
    let (code, text) = run(&args(&["--rate-limit", "5"]), &[]);
    assert_eq!(code, Some(2));
    assert!(text.contains("configuration error in rate_limit"), "{text}");
}

#[test]
fn several_listener_threads_share_the_port_the_limit_and_the_shutdown() {
    // Three listeners (SO_REUSEPORT, on Linux; one elsewhere), each with its
    // thread; the connection limit counts across them.
    let mut s = Server::try_start(
        &args(&["--max-connections", "6"]),
        &[("TOKIO_WORKER_THREADS", "3")],
    )
    .unwrap();
    let start = s.lines.last().unwrap().clone();
    let want = if cfg!(target_os = "linux") { 3 } else { 1 };
    assert!(start.contains(&format!(" listeners={want}")), "{start}");
    let mut held: Vec<TcpStream> = (0..6).map(|_| keep_alive(&s.addr)).collect();
    if cfg!(target_os = "linux") {
        // The threads start right after the start line.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let mut names: Vec<String> = std::fs::read_dir(format!("/proc/{}/task", s.child.id()))
                .unwrap()
                .filter_map(|t| std::fs::read_to_string(t.unwrap().path().join("comm")).ok())
                .map(|n| n.trim().to_string())
                .filter(|n| n.starts_with("http-"))
                .collect();
            names.sort();
            if names == ["http-0", "http-1", "http-2"] {
                break;
            }
            assert!(Instant::now() < deadline, "{names:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let r = s.get("/v1/ids");
    assert_eq!((r.status, r.code().as_str()), (503, "too_many_connections"));
    for c in &mut held {
        c.write_all(b"GET /v1/ids HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        assert_eq!(read_one(c), 200);
    }
    // SIGTERM: every idle connection is closed, the process exits 0.
    let (status, took) = s.terminate();
    assert!(status.success(), "{status}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    for c in &mut held {
        until_closed(c, Duration::from_secs(1));
    }
    let log = s.log_lines().join("\n");
    assert!(log.contains(" stop"), "{log}");
}

/// Sends SIGHUP and waits (bounded) until `expect` has been logged `n` times.
fn hangup(s: &mut Server, expect: &str, n: usize) {
    s.signal("-HUP");
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.lines.iter().filter(|l| l.contains(expect)).count() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            !left.is_zero(),
            "not {n} x {expect:?} in 10 s: {:?}",
            s.lines
        );
        if let Ok(l) = s.log.recv_timeout(left.min(Duration::from_millis(100))) {
            s.lines.push(l);
        }
    }
}

#[test]
fn sighup_reloads_the_token_file_and_a_bad_one_keeps_the_tokens() {
    let dir = temp_dir("hup-tokens");
    let tokens = write(&dir, "tokens", "alpha-token-1\n");
    let mut s = Server::start(&args(&["--token-file", &tokens, "--rate-limit", "1000"]));
    let alpha = [("Authorization", "Bearer alpha-token-1")];
    let bravo = [("Authorization", "Bearer bravo-token-2")];
    assert_eq!(s.get_with("/v1/ids", &alpha).status, 200);
    assert_eq!(s.get_with("/v1/ids", &bravo).status, 401);

    write(&dir, "tokens", "# rotated\nbravo-token-2\n");
    hangup(&mut s, "reloaded what=\"token_file\" tokens=1", 1);
    assert_eq!(s.get_with("/v1/ids", &alpha).status, 401);
    assert_eq!(ids_of(&s.get_with("/v1/ids", &bravo)).len(), 1);

    // A file with no token, then no file: the tokens in use stay.
    write(&dir, "tokens", "# nothing yet\n");
    hangup(&mut s, "reload_failed what=\"token_file\"", 1);
    std::fs::remove_file(dir.join("tokens")).unwrap();
    hangup(&mut s, "reload_failed what=\"token_file\"", 2);
    assert_eq!(ids_of(&s.get_with("/v1/ids", &bravo)).len(), 1);
    assert_eq!(s.get_with("/v1/ids", &alpha).status, 401);
    assert_eq!(s.get("/healthz").status, 200);

    let (status, _) = s.terminate();
    assert!(status.success(), "{status}");
    let log = s.log_lines().join("\n");
    assert!(log.contains("holds no token"), "{log}");
    assert!(
        !log.contains("alpha-token-1") && !log.contains("bravo-token-2"),
        "{log}"
    );
}

#[test]
fn sighup_reloads_the_tls_certificate_and_a_bad_one_keeps_the_old() {
    let dir = temp_dir("hup-tls");
    let (ca1, ca2) = (Ca::new("first CA"), Ca::new("second CA"));
    let (cert, key) = ca1.sign(&["localhost", "127.0.0.1"]);
    let cert_file = write(&dir, "cert.pem", &cert);
    let key_file = write(&dir, "key.pem", &key);
    let mut s = Server::start(&args(&["--tls-cert", &cert_file, "--tls-key", &key_file]));
    let get = |ca: &Ca| tls_get(&s.addr, client(&ca.pem, None, &[]), "/v1/ids", &[]);
    assert_eq!(ids_of(&get(&ca1).unwrap()).len(), 1);
    assert!(get(&ca2).is_err());

    // A new pair from the second CA: new connections get it.
    let (cert2, key2) = ca2.sign(&["localhost", "127.0.0.1"]);
    write(&dir, "cert.pem", &cert2);
    write(&dir, "key.pem", &key2);
    hangup(&mut s, "reloaded what=\"tls\"", 1);
    let get = |ca: &Ca| tls_get(&s.addr, client(&ca.pem, None, &[]), "/v1/ids", &[]);
    assert_eq!(ids_of(&get(&ca2).unwrap()).len(), 1);
    let e = get(&ca1).unwrap_err();
    assert!(e.to_string().contains("UnknownIssuer"), "{e}");

    // A certificate with another certificate's key, then a key file that
    // holds no key: the second CA's pair stays.
    let (cert3, _) = ca1.sign(&["localhost"]);
    write(&dir, "cert.pem", &cert3);
    hangup(&mut s, "reload_failed what=\"tls\"", 1);
    write(&dir, "cert.pem", &cert2);
    write(&dir, "key.pem", "not a key\n");
    hangup(&mut s, "reload_failed what=\"tls\"", 2);
    let get = |ca: &Ca| tls_get(&s.addr, client(&ca.pem, None, &[]), "/v1/ids", &[]);
    assert_eq!(ids_of(&get(&ca2).unwrap()).len(), 1);
    assert!(get(&ca1).is_err());

    let (status, _) = s.terminate();
    assert!(status.success(), "{status}");
    let log = s.log_lines().join("\n");
    for k in [&key, &key2] {
        let body = k.lines().nth(1).unwrap();
        assert!(!log.contains("PRIVATE KEY") && !log.contains(body), "{log}");
    }
}
