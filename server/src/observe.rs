//! Authentication and the layer around every route: bearer tokens (all
//! but the probes), then the request, counted and timed.

use std::borrow::Cow;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::header::{self, HeaderMap};
use axum::response::{IntoResponse, Response};

use crate::access::{Entry, Issued, Peer};
use crate::app::{ApiError, AppState, ROUTES};
use crate::auth::{Caller, Scope};
use crate::metrics::ReqLabel;

impl AppState {
    /// Checks `authorization: Bearer TOKEN` (HTTP headers and gRPC metadata
    /// alike) for a token with `scope` (None: any token), then counts the
    /// request against the token's rate. Ok when no token is configured.
    pub fn authenticate(
        &self,
        headers: &HeaderMap,
        scope: Option<Scope>,
    ) -> Result<Caller, ApiError> {
        let value = headers.get(header::AUTHORIZATION).map(|v| v.as_bytes());
        let caller = self.tokens.check(value, scope).map_err(ApiError::denied)?;
        self.rates.admit_request(&caller)?;
        Ok(caller)
    }
}

/// The scope a route of [`ROUTES`] needs (None: any valid token; the
/// probes need none at all and are not checked).
fn route_scope(index: Option<usize>) -> Option<Scope> {
    match ROUTES[index?] {
        "/v1/ids" | "/api/snowflake/get/{key}" | "/api/segment/get/{key}" => Some(Scope::Ids),
        "/v1/decode/{id}" | "/v1/generators" | "/decodeSnowflakeId" => Some(Scope::Decode),
        "/metrics" => Some(Scope::Metrics),
        _ => None,
    }
}

/// The layer around every route: authentication (all but the probes), then
/// the request, counted and timed. A tower layer rather than
/// `middleware::from_fn`, which clones and boxes the route's service for
/// every request.
#[derive(Clone)]
pub(crate) struct Observe<S> {
    pub(crate) state: Arc<AppState>,
    pub(crate) inner: S,
}

impl<S> tower_layer::Layer<S> for Observe<()> {
    type Service = Observe<S>;

    fn layer(&self, inner: S) -> Observe<S> {
        Observe {
            state: self.state.clone(),
            inner,
        }
    }
}

impl<S> tower_service::Service<Request> for Observe<S>
where
    S: tower_service::Service<Request, Response = Response, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let s = self.state.clone();
        let start = Instant::now();
        // The pattern's index in ROUTES, else (no route matched) `unmatched`.
        let (index, route): (_, Cow<'static, str>) = match req.extensions().get::<MatchedPath>() {
            Some(p) => match ROUTES.iter().position(|r| *r == p.as_str()) {
                Some(i) => (Some(i), ROUTES[i].into()),
                None => (None, p.as_str().to_string().into()),
            },
            None => (None, "unmatched".into()),
        };
        let probe = route == "/healthz" || route == "/readyz";
        // For the access log: read before the request moves on.
        let logged = s.access_log.map(|log| {
            let peer = req.extensions().get::<Peer>().map(|p| p.0);
            (log, req.method().clone(), peer)
        });
        let mut req = req;
        let denied = if probe {
            None
        } else {
            match s.authenticate(req.headers(), route_scope(index)) {
                Ok(caller) => {
                    req.extensions_mut().insert(caller);
                    None
                }
                Err(e) => Some(e),
            }
        };
        let answer = denied.is_none().then(|| self.inner.call(req));
        Box::pin(async move {
            let response = match (answer, denied) {
                (Some(answer), _) => match answer.await {
                    Ok(r) => r,
                    Err(never) => match never {},
                },
                (None, denied) => denied.map(IntoResponse::into_response).unwrap_or_default(),
            };
            if response.status() == axum::http::StatusCode::TOO_MANY_REQUESTS {
                s.metrics.rate_limited.inc();
            }
            let status = response.status().as_u16();
            match (index, status) {
                (Some(i), 200) => s.metrics.count_ok(i, ROUTES[i]),
                (_, status) => {
                    let label = ReqLabel {
                        route: route.to_string(),
                        status,
                    };
                    s.metrics.requests.get_or_create(&label).inc();
                }
            }
            let took = start.elapsed();
            match index {
                Some(i) => s.metrics.observe_latency(i, ROUTES[i], took.as_secs_f64()),
                None => s.metrics.observe_latency_of(&route, took.as_secs_f64()),
            }
            if let Some((log, method, peer)) = logged {
                log.access(Entry {
                    route: &route,
                    method: method.as_str(),
                    status,
                    code: None,
                    ids: response.extensions().get::<Issued>().map_or(0, |n| n.0),
                    took,
                    peer,
                });
            }
            Ok(response)
        })
    }
}
