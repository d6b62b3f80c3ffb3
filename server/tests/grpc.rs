//! gRPC against the built binary, spawned on an ephemeral loopback port, with
//! the tonic client generated from the same proto (build.rs writes it to
//! OUT_DIR/client): each error's gRPC code and stable code, the answers,
//! health following a lease that breaks and recovers, reflection, tokens, and
//! HTTP still answering on the same port. Every wait is bounded.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{secret_file, temp_dir, Server};
use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Request, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

/// The client side of `snowmint.proto`.
#[allow(clippy::all, missing_docs)]
mod pb {
    include!(concat!(env!("OUT_DIR"), "/client/snowmint.v1.rs"));
}

use pb::ids_client::IdsClient;

/// Every call's deadline.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
const TOKEN: &str = "grpc-test-token-1";

/// A channel to the server's port (h2c).
async fn channel(s: &Server) -> Channel {
    Endpoint::from_shared(format!("http://{}", s.addr))
        .unwrap()
        .connect_timeout(CALL_TIMEOUT)
        .timeout(CALL_TIMEOUT)
        .connect()
        .await
        .unwrap()
}

/// One HTTP/1.1 GET on the same port, with the token or without: (status, body).
fn http_get(s: &Server, path: &str, token: bool) -> (u16, String) {
    let auth = format!("Bearer {TOKEN}");
    let headers: &[(&str, &str)] = if token {
        &[("Authorization", &auth)]
    } else {
        &[]
    };
    let r = s.get_with(path, headers);
    (r.status, r.body)
}

type Authed =
    IdsClient<InterceptedService<Channel, fn(Request<()>) -> Result<Request<()>, Status>>>;

fn with_token(mut req: Request<()>) -> Result<Request<()>, Status> {
    req.metadata_mut().insert(
        "authorization",
        MetadataValue::try_from(format!("Bearer {TOKEN}")).unwrap(),
    );
    Ok(req)
}

fn authed(ch: Channel) -> Authed {
    IdsClient::with_interceptor(ch, with_token as fn(_) -> _)
}

/// The status's code, `snowmint-error-code` and the stable code at the start of the message.
fn refusal(s: &Status) -> (Code, String) {
    let meta = s
        .metadata()
        .get("snowmint-error-code")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    assert!(
        s.message().starts_with(&format!("{meta}: ")),
        "the message starts with the code: {s:?}"
    );
    (s.code(), meta)
}

fn next(generator: &str, count: Option<u64>) -> pb::NextIdsRequest {
    pb::NextIdsRequest {
        generator: generator.into(),
        count,
    }
}

fn decode(id: u64, generator: &str, layout: &str) -> pb::DecodeRequest {
    pb::DecodeRequest {
        id,
        generator: generator.into(),
        layout: layout.into(),
    }
}

async fn health(ch: &Channel, service: &str) -> Result<ServingStatus, Code> {
    let r = HealthClient::new(ch.clone())
        .check(HealthCheckRequest {
            service: service.into(),
        })
        .await
        .map_err(|s| s.code())?;
    Ok(ServingStatus::try_from(r.into_inner().status).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_map_to_grpc_codes_with_the_stable_code() {
    let dir = temp_dir("codes");
    let tokens = dir.join("tokens");
    secret_file(&tokens, &format!("{TOKEN}\n"));
    let s = Server::start(&[
        "--preset",
        "twitter",
        "--node",
        "datacenter=1",
        "--node",
        "worker=2",
        "--max-count",
        "100",
        "--token-file",
        tokens.to_str().unwrap(),
    ]);
    let ch = channel(&s).await;
    let mut ids = authed(ch.clone());

    // Tokens: none, a prefix, one with more after it.
    let mut bare = IdsClient::new(ch.clone());
    let st = bare.next_ids(next("", None)).await.unwrap_err();
    assert_eq!(refusal(&st), (Code::Unauthenticated, "unauthorized".into()));
    for wrong in [
        "Bearer grpc-test-token-",
        "Bearer grpc-test-token-1x",
        "Basic x",
    ] {
        let mut req = Request::new(next("", None));
        req.metadata_mut()
            .insert("authorization", MetadataValue::try_from(wrong).unwrap());
        let st = bare.next_ids(req).await.unwrap_err();
        assert_eq!(st.code(), Code::Unauthenticated, "{wrong}");
    }

    // Answers.
    let one = ids.next_ids(next("", None)).await.unwrap().into_inner();
    assert_eq!((one.ids.len(), one.generator.as_str()), (1, "default"));
    let many = ids
        .next_ids(next("default", Some(100)))
        .await
        .unwrap()
        .into_inner()
        .ids;
    assert_eq!(many.len(), 100);
    assert!(one.ids[0] < many[0] && many.windows(2).all(|w| w[0] < w[1]));
    let d = ids
        .decode(decode(many[0], "", ""))
        .await
        .unwrap()
        .into_inner();
    let nodes: Vec<(&str, u64)> = d.nodes.iter().map(|n| (n.name.as_str(), n.value)).collect();
    assert_eq!(nodes, [("datacenter", 1), ("worker", 2)]);
    assert_eq!(d.id, many[0]);
    assert!(d.time.ends_with('Z'));
    let (status, body) = http_get(&s, &format!("/v1/decode/{}", many[0]), true);
    assert_eq!(status, 200);
    assert!(
        body.contains(&format!("\"timestamp_ms\":{}", d.timestamp_ms))
            && body.contains(&format!("\"sequence\":{}", d.sequence))
            && body.contains(&format!("\"time\":\"{}\"", d.time)),
        "{body} vs {d:?}"
    );
    let g = ids
        .list_generators(pb::ListGeneratorsRequest {})
        .await
        .unwrap()
        .into_inner()
        .generators;
    assert_eq!(g.len(), 1);
    assert_eq!(
        (g[0].name.as_str(), g[0].preset.as_str()),
        ("default", "twitter")
    );
    assert!(g[0].lease.is_none(), "fixed node values: no lease");
    assert!(g[0].layout_json.starts_with('{'));

    // Each refusal: the gRPC code that follows from the core's code.
    let bad_next = [
        (next("", Some(0)), Code::InvalidArgument, "invalid_option"),
        (next("", Some(101)), Code::InvalidArgument, "invalid_option"),
        (next("nope", None), Code::NotFound, "unknown_generator"),
    ];
    for (req, code, stable) in bad_next {
        let what = format!("{req:?}");
        let st = ids.next_ids(req).await.unwrap_err();
        assert_eq!(refusal(&st), (code, stable.to_string()), "{what}");
    }
    let bad_decode = [
        (
            decode(1, "", "nope"),
            Code::InvalidArgument,
            "unknown_preset",
        ),
        (
            decode(1, "", "{bad"),
            Code::InvalidArgument,
            "invalid_layout",
        ),
        (
            decode(1, "nope", "leaf"),
            Code::NotFound,
            "unknown_generator",
        ),
        (
            decode(u64::MAX, "", ""),
            Code::InvalidArgument,
            "invalid_id",
        ),
    ];
    for (req, code, stable) in bad_decode {
        let what = format!("{req:?}");
        let st = ids.decode(req).await.unwrap_err();
        assert_eq!(refusal(&st), (code, stable.to_string()), "{what}");
    }

    // Health without a token; an unknown name is NOT_FOUND.
    for service in ["", "snowmint.v1.Ids", "default"] {
        assert_eq!(
            health(&ch, service).await,
            Ok(ServingStatus::Serving),
            "{service:?}"
        );
    }
    assert_eq!(health(&ch, "nope").await, Err(Code::NotFound));

    // Reflection, v1 and v1alpha, with the token only.
    use tonic_reflection::pb::v1 as r1;
    use tonic_reflection::pb::v1alpha as r1a;
    let list = r1::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(r1::server_reflection_request::MessageRequest::ListServices(
            String::new(),
        )),
    };
    let mut v1 = r1::server_reflection_client::ServerReflectionClient::with_interceptor(
        ch.clone(),
        with_token as fn(_) -> _,
    );
    let mut stream = v1
        .server_reflection_info(tokio_stream::iter([list.clone()]))
        .await
        .unwrap()
        .into_inner();
    let answer = stream.message().await.unwrap().unwrap();
    let Some(r1::server_reflection_response::MessageResponse::ListServicesResponse(l)) =
        answer.message_response
    else {
        panic!("{answer:?}")
    };
    let names: Vec<&str> = l.service.iter().map(|s| s.name.as_str()).collect();
    for n in [
        "snowmint.v1.Ids",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
    ] {
        assert!(names.contains(&n), "{names:?}");
    }
    let st = r1::server_reflection_client::ServerReflectionClient::new(ch.clone())
        .server_reflection_info(tokio_stream::iter([list]))
        .await
        .unwrap_err();
    assert_eq!(st.code(), Code::Unauthenticated);
    let alpha = r1a::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(
            r1a::server_reflection_request::MessageRequest::ListServices(String::new()),
        ),
    };
    let mut va = r1a::server_reflection_client::ServerReflectionClient::with_interceptor(
        ch.clone(),
        with_token as fn(_) -> _,
    );
    let mut stream = va
        .server_reflection_info(tokio_stream::iter([alpha]))
        .await
        .unwrap()
        .into_inner();
    assert!(stream.message().await.unwrap().is_some());

    // HTTP/1.1 on the same port; the calls above counted per method and code.
    assert_eq!(http_get(&s, "/healthz", false).0, 200);
    let (status, metrics) = http_get(&s, "/metrics", true);
    assert_eq!(status, 200);
    for line in [
        "snowmint_grpc_requests_total{route=\"/snowmint.v1.Ids/NextIds\",code=\"Ok\"} 2",
        "snowmint_grpc_requests_total{route=\"/snowmint.v1.Ids/NextIds\",code=\"InvalidArgument\"} 2",
        "snowmint_grpc_requests_total{route=\"/snowmint.v1.Ids/NextIds\",code=\"Unauthenticated\"} 4",
        "snowmint_grpc_requests_total{route=\"/snowmint.v1.Ids/Decode\",code=\"NotFound\"} 1",
        "snowmint_grpc_requests_total{route=\"/grpc.health.v1.Health/Check\",code=\"Ok\"} 3",
        "snowmint_ids_issued_total{generator=\"default\"} 101",
    ] {
        assert!(metrics.contains(line), "{line}\n{metrics}");
    }
}

/// The next status a Watch stream sends (within the deadline); Err when it ends.
async fn watched(
    w: &mut tonic::Streaming<tonic_health::pb::HealthCheckResponse>,
) -> Result<ServingStatus, Status> {
    let m = tokio::time::timeout(CALL_TIMEOUT, w.message())
        .await
        .expect("a Watch message within the deadline")?
        .expect("the stream does not end without a status");
    Ok(ServingStatus::try_from(m.status).unwrap())
}

/// Replaces the lease directory with a file (renewals fail even as root),
/// or puts it back.
fn break_store(dir: &Path, broken: bool) {
    let leases = dir.join("leases");
    let away = dir.join("leases.away");
    if broken {
        std::fs::rename(&leases, &away).unwrap();
        std::fs::write(&leases, "not a directory").unwrap();
    } else {
        std::fs::remove_file(&leases).unwrap();
        std::fs::rename(&away, &leases).unwrap();
    }
}

/// Polls `check` every 50 ms until it holds (at most 10 s).
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(10);
    while !check().await {
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_and_unavailable_follow_the_lease_and_shutdown() {
    let dir = temp_dir("lease");
    // A short reservation and frequent renewals: a broken store shows in about a second.
    let lease = format!(
        "file:{}?namespace=grpc&ttl_ms=5000&renew_ms=200&window_ms=1000",
        dir.join("leases").display()
    );
    let mut s = Server::start(&["--preset", "leaf", "--lease", &lease]);
    let ch = channel(&s).await;
    let mut ids = IdsClient::new(ch.clone());
    assert_eq!(health(&ch, "default").await, Ok(ServingStatus::Serving));
    let mut watch = HealthClient::new(ch.clone())
        .watch(HealthCheckRequest {
            service: "default".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(watched(&mut watch).await.unwrap(), ServingStatus::Serving);
    ids.next_ids(next("", Some(10))).await.unwrap();

    // The store breaks: once the reservation ends, UNAVAILABLE with
    // lease_expired, and health says NOT_SERVING for the generator and the server.
    break_store(&dir, true);
    assert_eq!(
        watched(&mut watch).await.unwrap(),
        ServingStatus::NotServing
    );
    assert_eq!(health(&ch, "default").await, Ok(ServingStatus::NotServing));
    assert_eq!(health(&ch, "").await, Ok(ServingStatus::NotServing));
    let st = ids.next_ids(next("", None)).await.unwrap_err();
    assert_eq!(refusal(&st), (Code::Unavailable, "lease_expired".into()));

    // It comes back: SERVING again, IDs again.
    break_store(&dir, false);
    assert_eq!(watched(&mut watch).await.unwrap(), ServingStatus::Serving);
    eventually("IDs again", || {
        let mut ids = ids.clone();
        async move { ids.next_ids(next("", None)).await.is_ok() }
    })
    .await;
    assert_eq!(health(&ch, "").await, Ok(ServingStatus::Serving));

    // SIGTERM: the Watch stream sees NOT_SERVING, then ends, and does not
    // hold the shutdown up (the grace period is 5 s).
    let start = Instant::now();
    s.signal("-TERM");
    assert_eq!(
        watched(&mut watch).await.unwrap(),
        ServingStatus::NotServing
    );
    let end = watched(&mut watch).await.unwrap_err();
    assert_eq!(end.code(), Code::Unavailable, "{end:?}");
    let ok = s.wait(Duration::from_secs(15)).success();
    let took = start.elapsed();
    assert!(ok, "exit 0");
    assert!(took < Duration::from_secs(3), "the shutdown took {took:?}");
}

/// A call with `token` as its bearer token.
fn as_token<T>(msg: T, token: &str) -> Request<T> {
    let mut req = Request::new(msg);
    req.metadata_mut().insert(
        "authorization",
        MetadataValue::try_from(format!("Bearer {token}")).unwrap(),
    );
    req
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_and_scopes_answer_grpc_codes() {
    let dir = temp_dir("grpc-rate");
    let tokens = dir.join("tokens");
    secret_file(
        &tokens,
        &format!("{TOKEN}\nmetrics-only-token metrics\nids-bravo-token ids\n"),
    );
    let s = Server::start(&[
        "--node",
        "datacenter=1",
        "--node",
        "worker=2",
        "--token-file",
        tokens.to_str().unwrap(),
        "--rate-limit",
        "2",
        "--rate-limit-ids",
        "10",
    ]);
    let ch = channel(&s).await;
    let mut ids = IdsClient::new(ch.clone());
    // The request rate: a burst of 2 (refilled in half a second each, slow
    // next to these calls), then RESOURCE_EXHAUSTED with the stable code.
    for _ in 0..2 {
        let r = ids.next_ids(as_token(next("", None), TOKEN)).await;
        assert!(r.is_ok(), "{r:?}");
    }
    let st = ids
        .next_ids(as_token(next("", None), TOKEN))
        .await
        .unwrap_err();
    assert_eq!(
        refusal(&st),
        (Code::ResourceExhausted, "rate_limited".into())
    );
    // The ID rate: 10 a second; more at once never passes.
    let st = ids
        .next_ids(as_token(next("", Some(11)), "ids-bravo-token"))
        .await
        .unwrap_err();
    assert_eq!(
        refusal(&st),
        (Code::ResourceExhausted, "rate_limited".into())
    );
    // A token without the `ids` scope mints nothing, nor decodes.
    let st = ids
        .next_ids(as_token(next("", None), "metrics-only-token"))
        .await
        .unwrap_err();
    assert_eq!(refusal(&st), (Code::PermissionDenied, "forbidden".into()));
    let st = ids
        .decode(as_token(decode(1, "", ""), "ids-bravo-token"))
        .await
        .unwrap_err();
    assert_eq!(refusal(&st), (Code::PermissionDenied, "forbidden".into()));
    // Counted as gRPC calls, and as rate-limited ones.
    let m = s.get_with(
        "/metrics",
        &[("Authorization", "Bearer metrics-only-token")],
    );
    assert_eq!(m.status, 200, "{}", m.body);
    for line in [
        "snowmint_grpc_requests_total{route=\"/snowmint.v1.Ids/NextIds\",code=\"ResourceExhausted\"} 2",
        "snowmint_grpc_requests_total{route=\"/snowmint.v1.Ids/NextIds\",code=\"PermissionDenied\"} 1",
        "snowmint_http_rate_limited_total 2",
    ] {
        assert!(m.body.contains(line), "{line} in {}", m.body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_watches_are_bounded_in_number_and_time() {
    const MAX_WATCHES: usize = 64;
    let s = Server::start(&[
        "--node",
        "datacenter=1",
        "--node",
        "worker=2",
        "--idle-timeout",
        "2",
    ]);
    let ch = channel(&s).await;
    let watch = || async {
        HealthClient::new(ch.clone())
            .watch(HealthCheckRequest {
                service: String::new(),
            })
            .await
    };
    let started = Instant::now();
    let mut open = Vec::new();
    for _ in 0..MAX_WATCHES {
        let mut w = watch().await.unwrap().into_inner();
        assert_eq!(watched(&mut w).await.unwrap(), ServingStatus::Serving);
        open.push(w);
    }
    let st = watch().await.unwrap_err();
    assert_eq!(
        refusal(&st),
        (Code::ResourceExhausted, "too_many_watches".into())
    );
    // Each ends after --idle-timeout (2 s), UNAVAILABLE: a client watches again.
    for w in &mut open {
        let end = watched(w).await.unwrap_err();
        assert_eq!(end.code(), Code::Unavailable, "{end:?}");
    }
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(8),
        "{took:?}"
    );
    drop(open);
    // Their slots are free again.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match watch().await {
            Ok(w) => {
                let mut w = w.into_inner();
                assert_eq!(watched(&mut w).await.unwrap(), ServingStatus::Serving);
                break;
            }
            Err(st) => assert!(Instant::now() < deadline, "{st:?}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
