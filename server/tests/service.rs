//! The service as a real process: the built binary, spawned on an ephemeral
//! loopback port with file leases in a temporary directory, called over TCP.
//! Every wait is bounded.

mod common;

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

#[test]
fn every_endpoint_answers() {
    let dir = temp_dir("endpoints");
    let lease = lease_arg(&dir);
    let s = Server::start(&["--preset", "leaf", "--lease", &lease]);
    let slot = s.slot();

    let r = s.get("/v1/ids?count=5");
    assert_eq!(r.header("cache-control"), Some("no-store"));
    assert_eq!(r.json()["generator"], "default");
    let ids = ids_of(&r);
    assert_eq!(ids.len(), 5);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    assert_eq!(ids_of(&s.get("/v1/ids")).len(), 1, "count defaults to 1");

    let r = s.get_with("/v1/ids?count=3", &[("Accept", "text/plain")]);
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/plain"));
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let plain: Vec<u64> = r.body.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(plain.len(), 3);
    assert!(plain[0] > ids[4]);

    let d = s.get(&format!("/v1/decode/{}", ids[0])).json();
    assert_eq!(d["id"], ids[0].to_string());
    assert_eq!(d["worker"], slot);
    assert!(d["timestamp_ms"].as_u64().unwrap().abs_diff(now_ms()) < 120_000);
    assert!(d["time"].as_str().unwrap().ends_with('Z'));
    let d2 = s.get(&format!("/v1/decode/{}?layout=leaf", ids[0])).json();
    assert_eq!(d, d2);

    let g = s.get("/v1/generators").json();
    let g0 = &g["generators"][0];
    assert_eq!(g0["name"], "default");
    assert_eq!(g0["preset"], "leaf");
    assert_eq!(g0["nodes"]["worker"], slot);
    assert!(g0["lease"]["store"].as_str().unwrap().starts_with("file:"));
    assert!(g0["lease"]["reserved_until_ms"].as_u64().is_some());

    // Leaf: text/plain ID for any key when one generator is configured.
    let r = s.get("/api/snowflake/get/anything");
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/plain"));
    let leaf_id: u64 = r.body.trim().parse().unwrap();
    assert!(leaf_id > plain[2]);
    let r = s
        .get(&format!("/decodeSnowflakeId?snowflakeId={leaf_id}"))
        .json();
    assert_eq!(r["workerId"], slot.to_string());
    assert_eq!(r["sequenceId"], (leaf_id & 0xfff).to_string());
    let ts = r["timestamp"].as_str().unwrap();
    assert!(
        ts.starts_with(&((leaf_id >> 22) + 1_288_834_974_657).to_string()),
        "{ts}"
    );
    let r = s.get("/api/segment/get/orders");
    assert_eq!((r.status, r.code().as_str()), (404, "segment_not_offered"));

    assert_eq!(s.get("/healthz").status, 200);
    let r = s.get("/readyz");
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["ready"], true);
    let r = s.get("/metrics");
    assert_eq!(r.status, 200);
    assert!(
        r.body
            .contains("snowmint_ids_issued_total{generator=\"default\"} 10"),
        "{}",
        r.body
    );
    assert!(r
        .body
        .contains("snowmint_http_requests_total{route=\"/v1/ids\",status=\"200\"}"));
    assert!(r.body.contains(&format!(
        "snowmint_lease_slot{{generator=\"default\"}} {slot}"
    )));
    assert!(r
        .body
        .contains("snowmint_http_request_duration_seconds_bucket"));
    assert!(r.body.trim_end().ends_with("# EOF"));
}

#[test]
fn bad_input_is_a_clear_error() {
    let s = Server::start(&[
        "--preset",
        "twitter",
        "--node",
        "datacenter=1",
        "--node",
        "worker=2",
        "--max-count",
        "100",
    ]);
    for (path, status, code) in [
        ("/v1/ids?count=0", 400, "invalid_option"),
        ("/v1/ids?count=-1", 400, "invalid_option"),
        ("/v1/ids?count=101", 400, "invalid_option"),
        (
            "/v1/ids?count=99999999999999999999999",
            400,
            "invalid_option",
        ),
        ("/v1/ids?count=abc", 400, "invalid_option"),
        ("/v1/ids?count=", 400, "invalid_option"),
        ("/v1/ids?count=1.5", 400, "invalid_option"),
        ("/v1/ids?generator=nope", 404, "unknown_generator"),
        ("/v1/decode/abc", 400, "invalid_id"),
        ("/v1/decode/-1", 400, "invalid_id"),
        ("/v1/decode/18446744073709551616", 400, "invalid_id"),
        ("/v1/decode/1?layout=nope", 400, "unknown_preset"),
        (
            "/v1/decode/1?layout=leaf&generator=nope",
            404,
            "unknown_generator",
        ),
        ("/v1/decode/1?layout=%7Bbad", 400, "invalid_layout"),
        ("/decodeSnowflakeId?snowflakeId=x", 400, "invalid_id"),
        ("/decodeSnowflakeId", 400, "invalid_id"),
        ("/no/such/route", 404, "not_found"),
    ] {
        let r = s.get(path);
        assert_eq!(
            (r.status, r.code()),
            (status, code.to_string()),
            "{path}: {}",
            r.body
        );
        assert!(!r.json()["error"]["message"].as_str().unwrap().is_empty());
    }
    assert_eq!(ids_of(&s.get("/v1/ids?count=100")).len(), 100);
}

#[test]
fn several_generators_from_a_toml_file() {
    let dir = temp_dir("toml");
    let file = dir.join("server.toml");
    std::fs::write(
        &file,
        format!(
            "max_count = 50\n[generators.orders]\nlayout = \"leaf\"\nlease = \"{}\"\n\
             [generators.users]\nlayout = \"twitter\"\nnodes = {{ datacenter = 3, worker = 4 }}\n",
            lease_arg(&dir.join("leases"))
        ),
    )
    .unwrap();
    let s = Server::start(&["--config", file.to_str().unwrap()]);
    let r = s.get("/v1/ids");
    assert_eq!((r.status, r.code().as_str()), (400, "missing_generator"));
    let users = ids_of(&s.get("/v1/ids?generator=users&count=50"));
    let d = s
        .get(&format!("/v1/decode/{}?generator=users", users[0]))
        .json();
    assert_eq!(
        (d["datacenter"].as_u64(), d["worker"].as_u64()),
        (Some(3), Some(4))
    );
    let r = s.get("/v1/ids?generator=users&count=51");
    assert_eq!(r.status, 400);
    assert_eq!(s.get("/api/snowflake/get/orders").status, 200);
    let r = s.get("/api/snowflake/get/other");
    assert_eq!((r.status, r.code().as_str()), (404, "unknown_generator"));
    let names: Vec<String> = s.get("/v1/generators").json()["generators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["orders", "users"]);
}

#[test]
fn configuration_errors_name_the_key_and_exit_2() {
    let dir = temp_dir("config");
    let bad_toml = dir.join("bad.toml");
    std::fs::write(&bad_toml, "[generators.a]\nlayout = \"leaf\"\ncolour = 1\n").unwrap();
    let no_layout = dir.join("nolayout.toml");
    std::fs::write(&no_layout, "[generators.a]\nnodes = { worker = 1 }\n").unwrap();
    for (args, key) in [
        // Would start (the generator is complete) but for the address.
        (
            vec![
                "--preset",
                "leaf",
                "--node",
                "worker=1",
                "--listen",
                "0.0.0.0:0",
            ],
            "not a loopback address",
        ),
        (vec!["--listen", "nowhere"], "listen"),
        (vec!["--node", "worker"], "--node"),
        (vec!["--preset", "nope"], "--preset"),
        (vec!["--layout", "{"], "--layout"),
        (vec!["--max-count", "0"], "max_count"),
        (vec!["--token-file", "/nonexistent/tokens"], "token_file"),
        (vec!["--config", bad_toml.to_str().unwrap()], "colour"),
        (
            vec!["--config", no_layout.to_str().unwrap()],
            "generators.a.layout",
        ),
    ] {
        let (code, text) = run(&args, &[]);
        assert_eq!(code, Some(2), "{args:?}: {text}");
        assert!(text.contains(key), "{args:?} should name {key}: {text}");
    }
    // A node value the layout does not have: refused before listening, too.
    let (code, text) = run(
        &[
            "--preset",
            "twitter",
            "--node",
            "colour=1",
            "--listen",
            "127.0.0.1:0",
        ],
        &[],
    );
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("unknown_field"), "{text}");
}

#[test]
fn secrets_reach_no_log_error_or_help() {
    let secret = "s3cret-pw-1234";
    let url = format!("postgres://user:{secret}@127.0.0.1:1/test?namespace=x");
    let (code, text) = run(
        &[
            "--preset",
            "leaf",
            "--lease",
            &url,
            "--listen",
            "127.0.0.1:0",
        ],
        &[],
    );
    assert_ne!(code, Some(0), "{text}");
    assert!(!text.contains(secret), "{text}");
    // The URL given where an address belongs: the error quotes the value,
    // its password masked (found by the server_config fuzz target).
    for flag in ["--listen", "--thrift"] {
        let (code, text) = run(&["--preset", "leaf", flag, &url], &[]);
        assert_eq!(code, Some(2), "{flag}: {text}");
        assert!(
            text.contains("is not an IP address and port"),
            "{flag}: {text}"
        );
        assert!(!text.contains(secret), "{flag}: {text}");
    }
    let (code, text) = run(&["--help"], &[("SNOWMINT_LEASE", &url)]);
    assert_eq!(code, Some(0));
    assert!(
        text.contains("--token-file") && !text.contains(secret),
        "{text}"
    );
}

#[test]
fn bearer_tokens() {
    let dir = temp_dir("tokens");
    let tokens = dir.join("tokens");
    secret_file(&tokens, "# ops\nalpha-token-1\n\nbravo-token-2\n");
    let mut s = Server::start(&[
        "--node",
        "datacenter=1",
        "--node",
        "worker=1",
        "--token-file",
        tokens.to_str().unwrap(),
    ]);
    for path in [
        "/v1/ids",
        "/metrics",
        "/v1/generators",
        "/api/snowflake/get/x",
        "/v1/decode/1",
    ] {
        let r = s.get(path);
        assert_eq!(
            (r.status, r.code().as_str()),
            (401, "unauthorized"),
            "{path}"
        );
        assert_eq!(r.header("www-authenticate"), Some("Bearer"));
        let r = s.get_with(path, &[("Authorization", "Bearer alpha-token-")]);
        assert_eq!(r.status, 401, "{path}: a prefix of a token");
        let r = s.get_with(path, &[("Authorization", "Bearer bravo-token-2x")]);
        assert_eq!(r.status, 401, "{path}: a token with more after it");
        let r = s.get_with(path, &[("Authorization", "Basic YWxwaGE=")]);
        assert_eq!(r.status, 401, "{path}: another scheme");
    }
    for t in ["alpha-token-1", "bravo-token-2"] {
        let r = s.get_with(
            "/v1/ids?count=2",
            &[("Authorization", &format!("Bearer {t}"))],
        );
        assert_eq!(ids_of(&r).len(), 2);
    }
    assert_eq!(s.get("/healthz").status, 200);
    assert_eq!(s.get("/readyz").status, 200);
    let (status, _) = s.terminate();
    assert!(status.success());
    let log = s.log_lines().join("\n");
    assert!(
        !log.contains("alpha-token") && !log.contains("bravo-token"),
        "{log}"
    );
}

/// The `hwm_ms` of the only slot file under `dir`.
fn slot_hwm(dir: &Path) -> u64 {
    let mut found = Vec::new();
    for space in std::fs::read_dir(dir).unwrap() {
        let space = space.unwrap().path();
        if !space.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&space).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "state") {
                let text = std::fs::read_to_string(&f).unwrap();
                let hwm = text
                    .lines()
                    .find_map(|l| l.strip_prefix("hwm_ms="))
                    .unwrap();
                found.push(hwm.parse().unwrap());
            }
        }
    }
    assert_eq!(found.len(), 1, "one slot file under {}", dir.display());
    found[0]
}

#[test]
fn sigterm_releases_the_lease_and_exits_0() {
    let dir = temp_dir("sigterm");
    let lease = lease_arg(&dir);
    let mut s = Server::start(&[
        "--preset",
        "leaf",
        "--lease",
        &lease,
        "--log-format",
        "json",
    ]);
    let slot = s.slot();
    let last = ids_of(&s.get("/v1/ids?count=10"))[9];
    // While held, the slot's hwm is a reservation ahead of the clock (20 s by default).
    assert!(slot_hwm(&dir) > now_ms() + 5_000);
    let (status, took) = s.terminate();
    assert!(status.success(), "{status:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    // Released: hwm lowered to the last time unit issued, so the slot is free at once.
    let hwm = slot_hwm(&dir);
    assert!(
        hwm <= now_ms(),
        "hwm {hwm} is still a reservation ahead: the lease was not released"
    );
    let log = s.log_lines();
    let events: Vec<String> = log
        .iter()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["event"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for e in [
        "lease_claimed",
        "start",
        "shutdown",
        "lease_released",
        "stop",
    ] {
        assert!(events.iter().any(|x| x == e), "{e} missing from {log:?}");
    }

    // The next server takes the same slot and issues at once, above the last ID.
    let s2 = Server::start(&["--preset", "leaf", "--lease", &lease]);
    assert_eq!(s2.slot(), slot);
    let start = Instant::now();
    let r = s2.get("/readyz");
    assert_eq!(r.status, 200, "{}", r.body);
    let next = ids_of(&s2.get("/v1/ids"))[0];
    assert!(next > last);
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn two_servers_on_one_store_never_share_an_id() {
    let dir = temp_dir("two");
    let lease = lease_arg(&dir);
    let a = Server::start(&["--preset", "leaf", "--lease", &lease]);
    let b = Server::start(&["--preset", "leaf", "--lease", &lease]);
    let (sa, sb) = (a.slot(), b.slot());
    assert_ne!(sa, sb);
    let mut seen = HashSet::new();
    for _ in 0..10 {
        for (s, slot) in [(&a, sa), (&b, sb)] {
            for id in ids_of(&s.get("/v1/ids?count=1000")) {
                assert_eq!((id >> 12) & 0x3ff, slot, "{id} carries its server's slot");
                assert!(seen.insert(id), "{id} issued twice");
            }
        }
    }
    assert_eq!(seen.len(), 20_000);
}

#[test]
fn sigterm_lets_in_flight_requests_finish() {
    // sonyflake issues 256 IDs per 10 ms: 50,000 take about 2 s, so the
    // request is still running when SIGTERM arrives.
    let mut s = Server::start(&[
        "--preset",
        "sonyflake",
        "--node",
        "machine=7",
        "--max-count",
        "50000",
    ]);
    let addr = s.addr.clone();
    let client = std::thread::spawn(move || request(&addr, "/v1/ids?count=50000", &[]));
    std::thread::sleep(Duration::from_millis(300));
    let (status, took) = s.terminate();
    let r = client.join().unwrap();
    assert_eq!(ids_of(&r).len(), 50_000, "the in-flight request finished");
    assert!(status.success(), "{status:?}");
    assert!(
        took > Duration::from_millis(500),
        "{took:?}: the server waited for it"
    );
}

/// One request of `method` with an empty body (`Connection: close`).
fn send(addr: &str, method: &str, path: &str) -> Response {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    parse_response(&raw)
}

#[test]
fn a_wrong_method_gets_the_json_error_and_leaf_routes_take_post() {
    let dir = temp_dir("methods");
    let s = Server::start(&["--preset", "leaf", "--lease", &lease_arg(&dir)]);
    for (method, path) in [
        ("POST", "/v1/ids"),
        ("DELETE", "/v1/generators"),
        ("PUT", "/api/snowflake/get/x"),
        ("POST", "/healthz"),
    ] {
        let r = send(&s.addr, method, path);
        assert_eq!(
            (r.status, r.code().as_str()),
            (405, "method_not_allowed"),
            "{method} {path}: {r:?}"
        );
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert!(
            r.header("allow").is_some_and(|a| a.contains("GET")),
            "{r:?}"
        );
    }
    // Leaf's routes answer POST as GET.
    let r = send(&s.addr, "POST", "/api/snowflake/get/x");
    assert_eq!(r.status, 200, "{r:?}");
    let id: u64 = r.body.parse().unwrap();
    let r = send(
        &s.addr,
        "POST",
        &format!("/decodeSnowflakeId?snowflakeId={id}"),
    );
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["workerId"].as_str(), Some(&*s.slot().to_string()));
    let r = send(&s.addr, "POST", "/api/segment/get/x");
    assert_eq!((r.status, r.code().as_str()), (404, "segment_not_offered"));
}

#[test]
fn leaf_decode_with_several_generators_and_a_bad_id() {
    let dir = temp_dir("leafdecode");
    let file = dir.join("server.toml");
    std::fs::write(
        &file,
        "[generators.orders]\nlayout = \"leaf\"\nnodes = { worker = 5 }\n\
         [generators.users]\nlayout = \"leaf\"\nnodes = { worker = 6 }\n",
    )
    .unwrap();
    let s = Server::start(&["--config", file.to_str().unwrap()]);
    let id = s.get("/api/snowflake/get/users").body;
    // No generator named: the layout both share.
    let r = s.get(&format!("/decodeSnowflakeId?snowflakeId={id}"));
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["workerId"].as_str(), Some("6"));
    // Leaf's errorMsg beside the error object.
    for bad in ["abc", "", "18446744073709551616", "-1"] {
        let r = s.get(&format!("/decodeSnowflakeId?snowflakeId={bad}"));
        let v = r.json();
        assert_eq!(r.status, 400, "{bad}: {r:?}");
        assert_eq!(v["errorMsg"].as_str(), Some("snowflake Id反解析发生异常!"));
        assert_eq!(v["error"]["code"].as_str(), Some("invalid_id"), "{v}");
    }
    drop(s);

    // Different layouts: which one is meant is not guessed.
    std::fs::write(
        &file,
        "[generators.orders]\nlayout = \"leaf\"\nnodes = { worker = 5 }\n\
         [generators.users]\nlayout = \"twitter\"\nnodes = { datacenter = 3, worker = 4 }\n",
    )
    .unwrap();
    let s = Server::start(&["--config", file.to_str().unwrap()]);
    let r = s.get(&format!("/decodeSnowflakeId?snowflakeId={id}"));
    assert_eq!((r.status, r.code().as_str()), (400, "missing_generator"));
    let r = s.get(&format!(
        "/decodeSnowflakeId?snowflakeId={id}&generator=orders"
    ));
    assert_eq!(r.status, 200, "{r:?}");
}

/// The `ENV` settings of server/Containerfile, as the image runs the server.
fn image_env() -> Vec<(String, String)> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("Containerfile");
    let text = std::fs::read_to_string(file).unwrap();
    let mut env = Vec::new();
    let mut in_env = false;
    for line in text.lines() {
        let l = line.trim();
        let rest = match l.strip_prefix("ENV ") {
            Some(r) => r,
            None if in_env => l,
            None => continue,
        };
        in_env = rest.ends_with('\\');
        for pair in rest.trim_end_matches('\\').split_whitespace() {
            let (k, v) = pair.split_once('=').unwrap();
            env.push((k.to_string(), v.to_string()));
        }
    }
    assert!(env.iter().any(|(k, _)| k == "SNOWMINT_PRESET"), "{env:?}");
    env
}

#[test]
fn flags_beat_the_images_environment_which_beats_the_file() {
    let image = image_env();
    let env: Vec<(&str, &str)> = image
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let dir = temp_dir("image");
    // --layout on the command line wins over the image's SNOWMINT_PRESET.
    let layout = r#"{"epoch_ms":0,"fields":[["timestamp",41],["worker",10],["sequence",12]]}"#;
    let s = Server::try_start(&["--layout", layout, "--node", "worker=7"], &env).unwrap();
    let g = s.generator();
    assert_eq!(
        (g["preset"].is_null(), g["nodes"]["worker"].as_u64()),
        (true, Some(7)),
        "{g}"
    );
    drop(s);
    // The image's preset alone configures the flags' generator.
    let s = Server::try_start(&["--node", "worker=3"], &env).unwrap();
    assert_eq!(s.generator()["preset"].as_str(), Some("leaf"));
    drop(s);
    // A file's generators: the image's preset adds none beside them.
    let file = dir.join("server.toml");
    std::fs::write(
        &file,
        "[generators.orders]\nlayout = \"twitter\"\nnodes = { datacenter = 1, worker = 5 }\n",
    )
    .unwrap();
    let s = Server::try_start(&["--config", file.to_str().unwrap()], &env).unwrap();
    let list = s.get("/v1/generators").json()["generators"].clone();
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    assert_eq!(list[0]["name"].as_str(), Some("orders"));
    drop(s);
    // Two layouts in the environment: which one is meant is not guessed.
    let mut both = env.clone();
    both.push(("SNOWMINT_LAYOUT", layout));
    let (code, text) = run(&["--node", "worker=1", "--listen", "127.0.0.1:0"], &both);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("SNOWMINT_LAYOUT"), "{text}");
}
