//! The Thrift service as a real process: the built binary with `--thrift`,
//! called over TCP with frames the library's codec writes. Misbehaving
//! connections are closed one by one while another client keeps getting
//! IDs. Every wait is bounded.

mod common;

use std::collections::HashSet;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{temp_dir, Server};
use snowmint_server::thrift::codec::{self, Answer};

/// How fast a refused connection must be closed (the server's own read
/// timeout is 10 s, so a server that waited for the bytes would miss this).
const CLOSE_TIMEOUT: Duration = Duration::from_secs(3);

/// A server with `--thrift` on an ephemeral loopback port, and `args`.
fn start(args: &[&str]) -> Server {
    let mut all = vec!["--thrift", "127.0.0.1:0"];
    all.extend_from_slice(args);
    Server::start(&all)
}

/// A connection to the server's Thrift listener (10 s read and write timeouts).
fn connect(server: &Server) -> TcpStream {
    let addr = server
        .thrift_addr()
        .unwrap_or_else(|| panic!("no thrift_start line: {:?}", server.lines));
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Runs the binary (on an ephemeral port) to its exit, bounded: its exit
/// code and output.
fn run(args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["--listen", "127.0.0.1:0"];
    all.extend_from_slice(args);
    common::run(&all, &[])
}

/// One call and its answer on `s`.
fn call(s: &mut TcpStream, name: &str, seqid: i32, agent: Option<&[u8]>) -> Answer {
    s.write_all(&codec::encode_call(name, seqid, agent))
        .unwrap();
    let mut header = [0u8; 4];
    s.read_exact(&mut header).unwrap();
    let len = codec::frame_len(header, 1 << 20).unwrap();
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).unwrap();
    let (n, q, answer) = codec::decode_answer(&body).unwrap();
    assert_eq!((n.as_str(), q), (name, seqid));
    answer
}

fn get_id(s: &mut TcpStream, agent: &str) -> u64 {
    match call(s, "get_id", 1, Some(agent.as_bytes())) {
        Answer::Value(v) => v as u64,
        other => panic!("get_id: {other:?}"),
    }
}

/// Waits (bounded) for the server to close `s`: a read returns 0 bytes or a
/// reset. Any answer bytes fail the test.
fn assert_closed(s: &mut TcpStream, what: &str) {
    s.set_read_timeout(Some(CLOSE_TIMEOUT)).unwrap();
    let start = Instant::now();
    let mut buf = [0u8; 64];
    match s.read(&mut buf) {
        Ok(0) => {}
        Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
        Ok(n) => panic!("{what}: the server answered {n} bytes instead of closing"),
        Err(e) => panic!("{what}: not closed after {:?}: {e}", start.elapsed()),
    }
}

#[test]
fn abuse_closes_only_that_connection() {
    let server = start(&[
        "--preset",
        "twitter",
        "--node",
        "datacenter=1",
        "--node",
        "worker=2",
    ]);
    let mut good = connect(&server);
    let mut ids = HashSet::new();
    assert!(ids.insert(get_id(&mut good, "good")));

    let mut frame_over = Vec::from(((codec::DEFAULT_MAX_FRAME + 1) as u32).to_be_bytes());
    frame_over.extend(std::iter::repeat_n(0u8, 1024));
    let mut not_strict = codec::encode_call("get_id", 1, Some(b"web"));
    not_strict[4] = 0x00; // the version word's high bit cleared
    let mut bad_type = codec::encode_call("get_timestamp", 1, None);
    let last = bad_type.len() - 1;
    bad_type[last] = 99; // an unknown field type instead of STOP
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "HTTP request (garbage)",
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        ),
        ("2 GB length prefix", 0x7fff_ffffu32.to_be_bytes().to_vec()),
        ("negative length prefix", (-5i32).to_be_bytes().to_vec()),
        ("frame over the limit", frame_over),
        ("not a strict message", not_strict),
        ("unknown field type", bad_type),
        ("a list claiming 2^31 - 1 elements", {
            let mut f = codec::encode_call("get_timestamp", 1, None);
            f.pop();
            f.extend_from_slice(&[15, 0, 1, 10, 0x7f, 0xff, 0xff, 0xff, 0]);
            let n = (f.len() - 4) as u32;
            f[..4].copy_from_slice(&n.to_be_bytes());
            f
        }),
    ];
    for (what, bytes) in &cases {
        let mut bad = connect(&server);
        // The server may close before every byte is written.
        let _ = bad.write_all(bytes);
        assert_closed(&mut bad, what);
        assert!(ids.insert(get_id(&mut good, "good")), "{what}: a duplicate");
    }

    // Half a frame, then the client closes.
    let whole = codec::encode_call("get_id", 9, Some(b"half"));
    let mut half = connect(&server);
    half.write_all(&whole[..whole.len() / 2]).unwrap();
    drop(half);
    // Garbage then close without waiting.
    let mut g = connect(&server);
    g.write_all(&[0xff; 7]).unwrap();
    drop(g);
    for _ in 0..100 {
        assert!(ids.insert(get_id(&mut good, "good")));
    }
    // A fresh connection works as well.
    let mut fresh = connect(&server);
    assert!(ids.insert(get_id(&mut fresh, "fresh")));
    let metrics = server.get("/metrics").body;
    assert!(
        metrics.contains(&format!(
            "snowmint_thrift_ids_total{{agent=\"good\"}} {}",
            ids.len() - 1
        )),
        "{metrics}"
    );
}

#[test]
fn methods_unknown_methods_and_bad_agents() {
    let server = start(&[
        "--preset",
        "twitter",
        "--node",
        "datacenter=7",
        "--node",
        "worker=21",
    ]);
    let mut s = connect(&server);
    assert_eq!(call(&mut s, "get_worker_id", 1, None), Answer::Value(21));
    assert_eq!(call(&mut s, "get_datacenter_id", 2, None), Answer::Value(7));
    let Answer::Value(ts) = call(&mut s, "get_timestamp", 3, None) else {
        panic!("get_timestamp")
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    assert!((ts - now).abs() < 5_000, "{ts} vs {now}");
    let id = get_id(&mut s, "Web-01");
    assert_eq!(((id >> 17) & 31, (id >> 12) & 31), (7, 21));

    match call(&mut s, "get_ids", 4, None) {
        Answer::AppError(1, m) => assert!(m.contains("get_ids"), "{m}"),
        other => panic!("unknown method: {other:?}"),
    }
    // Snowflake's rule takes any length; an agent is a metrics label, so
    // 64 bytes at most (65 refused, the message cut to 64 characters).
    let longest = format!("a{}", "b".repeat(63));
    assert!(get_id(&mut s, &longest) > id);
    let too_long = format!("a{}", "b".repeat(60 * 1024));
    match call(&mut s, "get_id", 5, Some(&too_long.as_bytes()[..65])) {
        Answer::AppError(0, m) => assert!(m.contains("longer than 64 bytes"), "{m}"),
        other => panic!("a 65-byte agent: {other:?}"),
    }
    match call(&mut s, "get_id", 5, Some(too_long.as_bytes())) {
        Answer::AppError(0, m) => {
            assert!(m.contains("invalid_user_agent") && m.len() < 300, "{m}")
        }
        other => panic!("a 60 KiB agent: {other:?}"),
    }
    for bad in [
        &b"1web"[..],
        b"",
        b"web_1",
        b"-web",
        b"web 1",
        "wéb".as_bytes(),
        b"\xff\xfe",
    ] {
        match call(&mut s, "get_id", 5, Some(bad)) {
            Answer::AppError(0, m) => assert!(
                m.contains("InvalidUserAgentError") && m.contains("invalid_user_agent"),
                "{m}"
            ),
            other => panic!("agent {bad:?}: {other:?}"),
        }
    }
    // get_id without its argument: no agent, refused the same way.
    match call(&mut s, "get_id", 6, None) {
        Answer::AppError(0, m) => assert!(m.contains("invalid_user_agent"), "{m}"),
        other => panic!("no agent: {other:?}"),
    }
    // The connection still serves.
    assert!(get_id(&mut s, "a") > id);

    // leaf has a worker and no datacenter: 0.
    let leaf = start(&["--preset", "leaf", "--node", "worker=33"]);
    let mut s = connect(&leaf);
    assert_eq!(call(&mut s, "get_worker_id", 1, None), Answer::Value(33));
    assert_eq!(call(&mut s, "get_datacenter_id", 1, None), Answer::Value(0));
}

#[test]
fn agents_past_the_limit_are_counted_as_other() {
    let server = start(&["--preset", "leaf", "--node", "worker=1"]);
    let mut s = connect(&server);
    for i in 0..1005 {
        get_id(&mut s, &format!("a{i}"));
    }
    let metrics = server.get("/metrics").body;
    let named = metrics
        .lines()
        .filter(|l| l.starts_with("snowmint_thrift_ids_total{agent=\"a"))
        .count();
    assert_eq!(named, 1000);
    assert!(
        metrics.contains("snowmint_thrift_ids_total{agent=\"other\"} 5"),
        "{metrics}"
    );
}

#[test]
fn thrift_configuration_errors_name_the_key() {
    let (code, err) = run(&[
        "--preset",
        "leaf",
        "--node",
        "worker=1",
        "--thrift",
        "0.0.0.0:0",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("configuration error in thrift:") && err.contains("--insecure"),
        "{err}"
    );
    let (code, err) = run(&[
        "--preset", "leaf", "--node", "worker=1", "--thrift", "nowhere",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("configuration error in thrift:"), "{err}");
    let (code, err) = run(&[
        "--preset",
        "leaf",
        "--node",
        "worker=1",
        "--thrift",
        "127.0.0.1:0",
        "--thrift-generator",
        "nope",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("configuration error in thrift_generator:"),
        "{err}"
    );

    let dir = temp_dir("thrift-conf");
    let file = dir.join("server.toml");
    std::fs::write(
        &file,
        "thrift = \"127.0.0.1:0\"\n[generators.a]\nlayout = \"leaf\"\nnodes = { worker = 1 }\n\
         [generators.b]\nlayout = \"leaf\"\nnodes = { worker = 2 }\n",
    )
    .unwrap();
    let (code, err) = run(&["--config", file.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("configuration error in thrift_generator:"),
        "{err}"
    );
    // Naming one serves it.
    let server = start(&[
        "--config",
        file.to_str().unwrap(),
        "--thrift-generator",
        "b",
    ]);
    let mut s = connect(&server);
    assert_eq!(call(&mut s, "get_worker_id", 1, None), Answer::Value(2));
}

/// `s`'s time until the server closes it (a read returns 0 bytes or a
/// reset), at most `limit`; answer bytes fail the test.
fn closed_after(s: &mut TcpStream, limit: Duration, what: &str) -> Duration {
    let start = Instant::now();
    s.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 64];
    match s.read(&mut buf) {
        Ok(0) => start.elapsed(),
        Err(e) if e.kind() == ErrorKind::ConnectionReset => start.elapsed(),
        Ok(n) => panic!("{what}: the server answered {n} bytes instead of closing"),
        Err(e) => panic!("{what}: not closed after {:?}: {e}", start.elapsed()),
    }
}

/// A connection that gets an ID every 100 ms while `work` runs, each
/// answered within 2 s (the machine may be loaded): the misbehaving client
/// does not disturb it.
fn meanwhile<T>(server: &Server, work: impl FnOnce() -> T) -> (T, usize) {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut good = connect(server);
    good.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let flag = stop.clone();
    let other = std::thread::spawn(move || {
        let mut ids = Vec::new();
        while !flag.load(std::sync::atomic::Ordering::SeqCst) {
            ids.push(get_id(&mut good, "good"));
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        ids.len()
    });
    let out = work();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    (out, other.join().expect("the other client failed"))
}

#[test]
fn half_a_frame_then_silence_is_cut_after_the_header_timeout() {
    // --header-timeout bounds the rest of a frame once its first byte came.
    let server = start(&[
        "--preset",
        "leaf",
        "--node",
        "worker=1",
        "--header-timeout",
        "1",
        "--idle-timeout",
        "30",
    ]);
    let ((half, dribble), served) = meanwhile(&server, || {
        let whole = codec::encode_call("get_id", 1, Some(b"half"));
        let mut half = connect(&server);
        half.write_all(&whole[..whole.len() / 2]).unwrap();
        let half_took = closed_after(&mut half, Duration::from_secs(4), "half a frame");
        // A byte every 300 ms: the whole frame must come within the timeout.
        let mut slow = connect(&server);
        let start = Instant::now();
        for b in &whole {
            if slow.write_all(&[*b]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(300));
            assert!(start.elapsed() < Duration::from_secs(4), "never cut");
        }
        let slow_took = start.elapsed() + closed_after(&mut slow, Duration::from_secs(4), "slow");
        (half_took, slow_took)
    });
    println!("half a frame cut after {half:?}, a byte every 300 ms after {dribble:?}; {served} IDs meanwhile");
    for took in [half, dribble] {
        assert!(
            took > Duration::from_millis(800) && took < Duration::from_millis(2500),
            "{took:?}"
        );
    }
    assert!(served >= 10, "{served}");
}

#[test]
fn idle_connections_are_closed_after_the_idle_timeout() {
    let server = start(&[
        "--preset",
        "leaf",
        "--node",
        "worker=1",
        "--idle-timeout",
        "1",
    ]);
    let ((after_call, silent), served) = meanwhile(&server, || {
        let mut one = connect(&server);
        get_id(&mut one, "once");
        let mut silent = connect(&server);
        let start = Instant::now();
        let a = closed_after(&mut one, Duration::from_secs(4), "idle after a call");
        let b = start.elapsed() + closed_after(&mut silent, Duration::from_secs(4), "silent");
        (a, b)
    });
    println!("idle after a call: closed after {after_call:?}; silent from the start: {silent:?}");
    for took in [after_call, silent] {
        assert!(
            took > Duration::from_millis(800) && took < Duration::from_millis(2500),
            "{took:?}"
        );
    }
    // The other client called every 100 ms for about a second: never idle
    // that long, still open.
    assert!(served >= 8, "{served}");
}

#[test]
fn the_connection_cap_holds_and_frees_slots() {
    // The cap (--thrift-max-connections; 1024 by default); each held one is served.
    const CAP: usize = 16;
    let server = start(&[
        "--preset",
        "leaf",
        "--node",
        "worker=1",
        "--thrift-max-connections",
        "16",
    ]);
    let mut held: Vec<TcpStream> = (0..CAP)
        .map(|i| {
            let mut s = connect(&server);
            let Answer::Value(_) = call(&mut s, "get_timestamp", i as i32, None) else {
                panic!("connection {i}")
            };
            s
        })
        .collect();
    for n in 0..3 {
        let mut over = connect(&server);
        // Closed on accept: no answer, and sooner than any timeout.
        let _ = over.write_all(&codec::encode_call("get_timestamp", 1, None));
        let took = closed_after(&mut over, Duration::from_secs(3), "over the cap");
        assert!(took < Duration::from_secs(1), "over the cap {n}: {took:?}");
    }
    // The held ones still work.
    get_id(&mut held[0], "held");
    get_id(&mut held[CAP - 1], "held");
    // One leaves: a new connection is served (once the server saw the close).
    held.truncate(CAP - 1);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut fresh = connect(&server);
        let _ = fresh.write_all(&codec::encode_call("get_timestamp", 1, None));
        let mut header = [0u8; 4];
        if fresh.read_exact(&mut header).is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "no slot came free");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_client_that_does_not_read_is_cut_after_the_header_timeout() {
    // An answer's write has --header-timeout: a client that sends calls and
    // reads nothing fills the socket buffers, then is closed.
    let server = start(&[
        "--preset",
        "leaf",
        "--node",
        "worker=1",
        "--header-timeout",
        "1",
    ]);
    let ((sent, blocked_for), served) = meanwhile(&server, || {
        let mut s = connect(&server);
        s.set_write_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let calls: Vec<u8> = (0..1000)
            .flat_map(|i| codec::encode_call("get_timestamp", i, None))
            .collect();
        let (mut sent, mut blocked) = (0usize, None::<Instant>);
        let start = Instant::now();
        loop {
            match s.write(&calls) {
                Ok(n) => {
                    sent += n;
                    blocked = None;
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    blocked.get_or_insert_with(Instant::now);
                }
                // Reset or broken pipe: closed by the server.
                Err(_) => break,
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "not closed after {sent} bytes, blocked for {:?}",
                blocked.map(|b| b.elapsed())
            );
        }
        (sent, blocked.map(|b| b.elapsed()))
    });
    println!("{sent} bytes of calls sent, then blocked for {blocked_for:?} until closed; {served} IDs meanwhile");
    assert!(served >= 5, "{served}");
}
