//! gRPC on the HTTP port: `snowmint.v1.Ids` (`proto/snowmint/v1/snowmint.proto`),
//! `grpc.health.v1.Health` following readiness, and server reflection (v1 and
//! v1alpha: Python's grpcio-reflection client speaks only v1alpha).
//!
//! The services are axum routes merged into [`crate::app::router`], so one
//! port answers HTTP/1.1 and HTTP/2 (h2c, as gRPC clients speak it without
//! TLS). Every method calls the same [`AppState`] functions as the HTTP
//! handlers: no ID logic here, only the translation of requests, answers and
//! errors.
//!
//! - Errors: the gRPC code follows from the HTTP status, which follows from
//!   the core's code (400 INVALID_ARGUMENT, 404 NOT_FOUND, 503 UNAVAILABLE,
//!   401 UNAUTHENTICATED); the stable code starts the message
//!   (`invalid_option: the count must be at least 1`) and is the metadata
//!   `snowmint-error-code`.
//! - Tokens: with tokens configured, `snowmint.v1.Ids` and reflection need
//!   the metadata `authorization: Bearer TOKEN`, checked by the HTTP API's
//!   constant-time comparison. Health answers without one, like `/readyz`:
//!   it is what load balancers and orchestrators probe, and it tells nothing
//!   but "serving" or not.
//! - Health: `""` and `snowmint.v1.Ids` are SERVING while `/readyz` would
//!   answer 200; a generator's name is SERVING while that generator can issue
//!   (its lease holds a confirmed reservation ahead). Each Check reads the
//!   state afresh, so a lease change or SIGTERM shows at once; a Watch stream
//!   polls every [`WATCH_POLL`] and ends (UNAVAILABLE) once the server shuts
//!   down, after sending NOT_SERVING, so that it never holds up the shutdown.
//!   At most [`MAX_WATCHES`] streams are open at once (RESOURCE_EXHAUSTED
//!   past it), and each ends (UNAVAILABLE) after `--idle-timeout`, so that
//!   an unauthenticated client cannot keep a connection open past it: a
//!   health client then watches again.
//! - Metrics: `snowmint_grpc_requests_total{route,code}`, the route being
//!   the method path (`/snowmint.v1.Ids/NextIds`) or `unmatched`, the code
//!   the gRPC status's name (`Ok`, `InvalidArgument`, ...); the latency goes
//!   to the same histogram as HTTP's, `route` the method path.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::Router;
use snowmint_lease::InfoValue;
use tokio_stream::wrappers::ReceiverStream;
use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::{Code, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

use crate::access::{Entry, Issued, Peer};
use crate::app::{ApiError, AppState};
use crate::auth::{Caller, Scope};
use crate::metrics::GrpcLabel;

/// The types and the server generated from `snowmint.proto` (in OUT_DIR).
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod pb {
    tonic::include_proto!("snowmint.v1");

    /// The encoded descriptor set of `snowmint.proto`, for reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        tonic::include_file_descriptor_set!("snowmint_descriptor");
}

use pb::ids_server::{Ids, IdsServer};

/// The full name of the ID service.
pub const IDS_SERVICE: &str = "snowmint.v1.Ids";

/// The metadata key that carries an error's stable code.
pub const ERROR_CODE_KEY: &str = "snowmint-error-code";

/// How often a health Watch stream looks at readiness again.
pub const WATCH_POLL: Duration = Duration::from_millis(100);

/// Health Watch streams open at once (they need no token); past it a new one
/// gets RESOURCE_EXHAUSTED (`too_many_watches`).
pub const MAX_WATCHES: usize = 64;

/// The method paths that are metric labels; anything else is `unmatched`,
/// so that a client cannot create series at will.
const ROUTES: [&str; 7] = [
    "/snowmint.v1.Ids/NextIds",
    "/snowmint.v1.Ids/Decode",
    "/snowmint.v1.Ids/ListGenerators",
    "/grpc.health.v1.Health/Check",
    "/grpc.health.v1.Health/Watch",
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
];

/// The gRPC services as axum routes (without a fallback: the HTTP router's
/// answers unknown paths), authenticated and counted.
pub fn router(state: Arc<AppState>) -> Router {
    // Reflection serves the descriptors compiled into the binary: building
    // it fails only if they were malformed, which the tests would catch.
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let v1 = reflection()
        .build_v1()
        .expect("the compiled-in descriptor sets are valid");
    let v1alpha = reflection()
        .build_v1alpha()
        .expect("the compiled-in descriptor sets are valid");
    tonic::service::Routes::from(Router::new())
        .add_service(IdsServer::new(IdsService(state.clone())))
        .add_service(HealthServer::new(HealthService(state.clone())))
        .add_service(v1)
        .add_service(v1alpha)
        .prepare()
        .into_axum_router()
        .layer(middleware::from_fn_with_state(state, observe))
}

/// An [`ApiError`] as a gRPC status: the code follows from the HTTP status,
/// the stable code starts the message and is the `snowmint-error-code` metadata.
pub fn status(e: &ApiError) -> Status {
    let code = match e.status() {
        StatusCode::BAD_REQUEST => Code::InvalidArgument,
        StatusCode::NOT_FOUND => Code::NotFound,
        StatusCode::SERVICE_UNAVAILABLE => Code::Unavailable,
        StatusCode::UNAUTHORIZED => Code::Unauthenticated,
        StatusCode::FORBIDDEN => Code::PermissionDenied,
        StatusCode::TOO_MANY_REQUESTS => Code::ResourceExhausted,
        _ => Code::Internal,
    };
    let mut metadata = MetadataMap::new();
    metadata.insert(ERROR_CODE_KEY, MetadataValue::from_static(e.code()));
    Status::with_metadata(code, format!("{}: {}", e.code(), e.message()), metadata)
}

/// An empty string as "not given" (proto3 strings have no absence).
fn given(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

fn node_values(nodes: Vec<(String, u64)>) -> Vec<pb::NodeValue> {
    nodes
        .into_iter()
        .map(|(name, value)| pb::NodeValue { name, value })
        .collect()
}

/// `snowmint.v1.Ids`.
#[derive(Debug, Clone)]
struct IdsService(Arc<AppState>);

#[tonic::async_trait]
impl Ids for IdsService {
    async fn next_ids(
        &self,
        request: tonic::Request<pb::NextIdsRequest>,
    ) -> Result<tonic::Response<pb::NextIdsResponse>, Status> {
        let caller = request.extensions().get::<Caller>().cloned();
        let r = request.into_inner();
        let (g, ids) = self
            .0
            .next_ids(given(&r.generator), r.count, caller.as_ref())
            .await
            .map_err(|e| status(&e))?;
        let issued = Issued(ids.len());
        let mut answer = tonic::Response::new(pb::NextIdsResponse {
            ids,
            generator: g.name.clone(),
        });
        answer.extensions_mut().insert(issued);
        Ok(answer)
    }

    async fn decode(
        &self,
        request: tonic::Request<pb::DecodeRequest>,
    ) -> Result<tonic::Response<pb::DecodeResponse>, Status> {
        let r = request.into_inner();
        let d = self
            .0
            .decode(r.id, given(&r.generator), given(&r.layout))
            .map_err(|e| status(&e))?;
        Ok(tonic::Response::new(pb::DecodeResponse {
            id: d.id,
            timestamp_ms: d.timestamp_ms,
            time: d.time,
            sequence: d.sequence,
            nodes: node_values(d.nodes),
        }))
    }

    async fn list_generators(
        &self,
        _request: tonic::Request<pb::ListGeneratorsRequest>,
    ) -> Result<tonic::Response<pb::ListGeneratorsResponse>, Status> {
        let generators = self
            .0
            .generators()
            .into_iter()
            .map(|g| pb::Generator {
                name: g.name,
                preset: g.preset.unwrap_or_default().to_string(),
                layout_json: g.layout_json,
                nodes: node_values(g.nodes),
                lease: g.lease.map(|entries| pb::Lease {
                    entries: entries
                        .into_iter()
                        .map(|(name, v)| pb::LeaseEntry {
                            name: name.to_string(),
                            value: match v {
                                InfoValue::Int(i) => Some(pb::lease_entry::Value::IntValue(i)),
                                InfoValue::Text(t) => Some(pb::lease_entry::Value::TextValue(t)),
                                InfoValue::None => None,
                            },
                        })
                        .collect(),
                }),
            })
            .collect();
        Ok(tonic::Response::new(pb::ListGeneratorsResponse {
            generators,
        }))
    }
}

/// `grpc.health.v1.Health`, read from the readiness state on every call.
#[derive(Debug, Clone)]
struct HealthService(Arc<AppState>);

impl HealthService {
    /// The status of `service` now; None for a name that is neither the
    /// server (`""`, `snowmint.v1.Ids`) nor a generator.
    fn status(&self, service: &str) -> Option<ServingStatus> {
        let s = &self.0;
        let ready = if service.is_empty() || service == IDS_SERVICE {
            s.not_ready(false).is_empty()
        } else {
            s.generator_ready(s.gens.iter().find(|g| g.name == service)?)
        };
        Some(if ready {
            ServingStatus::Serving
        } else {
            ServingStatus::NotServing
        })
    }
}

fn health_response(status: ServingStatus) -> HealthCheckResponse {
    HealthCheckResponse {
        status: status as i32,
    }
}

#[tonic::async_trait]
impl Health for HealthService {
    async fn check(
        &self,
        request: tonic::Request<HealthCheckRequest>,
    ) -> Result<tonic::Response<HealthCheckResponse>, Status> {
        let service = &request.get_ref().service;
        match self.status(service) {
            Some(s) => Ok(tonic::Response::new(health_response(s))),
            None => Err(Status::not_found(format!(
                "no service or generator is named '{}'",
                service.chars().take(64).collect::<String>()
            ))),
        }
    }

    type WatchStream = ReceiverStream<Result<HealthCheckResponse, Status>>;

    async fn watch(
        &self,
        request: tonic::Request<HealthCheckRequest>,
    ) -> Result<tonic::Response<Self::WatchStream>, Status> {
        let Ok(permit) = Arc::clone(&self.0.watches).try_acquire_owned() else {
            let mut metadata = MetadataMap::new();
            metadata.insert(
                ERROR_CODE_KEY,
                MetadataValue::from_static("too_many_watches"),
            );
            return Err(Status::with_metadata(
                Code::ResourceExhausted,
                format!("too_many_watches: {MAX_WATCHES} health Watch streams are open: check instead, or watch later"),
                metadata,
            ));
        };
        let service = request.into_inner().service;
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let health = self.clone();
        let end = tokio::time::Instant::now() + health.0.idle_timeout;
        tokio::spawn(async move {
            let _permit = permit;
            let mut last = None;
            loop {
                let now = health
                    .status(&service)
                    .unwrap_or(ServingStatus::ServiceUnknown);
                if last != Some(now) {
                    if tx.send(Ok(health_response(now))).await.is_err() {
                        return;
                    }
                    last = Some(now);
                }
                if health.0.shutting_down.load(Ordering::SeqCst) {
                    let _ = tx
                        .send(Err(Status::unavailable("the server is shutting down")))
                        .await;
                    return;
                }
                if tokio::time::Instant::now() >= end {
                    let _ = tx
                        .send(Err(Status::unavailable(
                            "the watch ended after the server's idle timeout: watch again",
                        )))
                        .await;
                    return;
                }
                tokio::select! {
                    _ = tokio::time::sleep(WATCH_POLL) => {}
                    _ = tx.closed() => return,
                }
            }
        });
        Ok(tonic::Response::new(ReceiverStream::new(rx)))
    }
}

/// The scope a method needs (None: any valid token).
fn method_scope(route: &str) -> Option<Scope> {
    match route {
        "/snowmint.v1.Ids/NextIds" => Some(Scope::Ids),
        "unmatched" => None,
        _ => Some(Scope::Decode),
    }
}

/// Authentication (all but health) and the token's request rate, then the
/// call, counted and timed.
async fn observe(State(s): State<Arc<AppState>>, mut req: Request, next: Next) -> Response {
    let start = Instant::now();
    let logged = s.access_log.map(|log| {
        let peer = req.extensions().get::<Peer>().map(|p| p.0);
        (log, req.method().clone(), peer)
    });
    let path = req.uri().path();
    let route = ROUTES
        .iter()
        .find(|r| **r == path)
        .copied()
        .unwrap_or("unmatched");
    let response = if path.starts_with("/grpc.health.v1.Health/") {
        next.run(req).await
    } else {
        match s.authenticate(req.headers(), method_scope(route)) {
            Ok(caller) => {
                req.extensions_mut().insert(caller);
                next.run(req).await
            }
            Err(e) => status(&e).into_http(),
        }
    };
    // An error is answered in the headers ("trailers-only"); a success's
    // status follows the message, in the trailers: no grpc-status header
    // means the call went through.
    let code = response
        .headers()
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<i32>().ok())
        .map_or(Code::Ok, Code::from_i32);
    if code == Code::ResourceExhausted {
        s.metrics.rate_limited.inc();
    }
    let label = GrpcLabel {
        route: route.to_string(),
        code: format!("{code:?}"),
    };
    s.metrics.grpc_requests.get_or_create(&label).inc();
    let took = start.elapsed();
    s.metrics.observe_latency_of(route, took.as_secs_f64());
    if let Some((log, method, peer)) = logged {
        log.access(Entry {
            route,
            method: method.as_str(),
            status: response.status().as_u16(),
            code: Some(label.code.as_str()),
            ids: response.extensions().get::<Issued>().map_or(0, |n| n.0),
            took,
            peer,
        });
    }
    response
}
