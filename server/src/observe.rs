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
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use crate::app::{ApiError, AppState, ROUTES};
use crate::metrics::ReqLabel;

impl AppState {
    /// Ok when no token is configured or `authorization: Bearer TOKEN` names
    /// one (HTTP headers and gRPC metadata alike).
    pub fn authenticate(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        if self.bearer_ok(headers.get(header::AUTHORIZATION).map(|v| v.as_bytes())) {
            return Ok(());
        }
        Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "a valid bearer token is required",
        ))
    }

    /// True when no token is configured or `value`, the first
    /// `authorization` header's, is `Bearer TOKEN` naming one (also read by
    /// the HTTP/1.1 fast path, from its raw bytes).
    pub(crate) fn bearer_ok(&self, value: Option<&[u8]>) -> bool {
        let tokens = self.tokens.get();
        if tokens.is_empty() {
            return true;
        }
        // Text as `HeaderValue::to_str` takes it: visible ASCII and tabs.
        let given = value
            .filter(|v| v.iter().all(|&b| b == b'\t' || (32..127).contains(&b)))
            .and_then(|v| std::str::from_utf8(v).ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            });
        given.is_some_and(|t| token_ok(&tokens, t.trim().as_bytes()))
    }
}

/// True when `given` is one of `tokens`. The SHA-256 digests of both are
/// compared, every token in constant time: neither the time nor an early
/// return depends on a token's length or on where it differs.
fn token_ok(tokens: &[Vec<u8>], given: &[u8]) -> bool {
    use sha2::{Digest, Sha256};
    let given = Sha256::digest(given);
    let mut ok = subtle::Choice::from(0);
    for t in tokens {
        ok |= Sha256::digest(t).as_slice().ct_eq(given.as_slice());
    }
    ok.into()
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
        let denied = if probe {
            None
        } else {
            s.authenticate(req.headers()).err()
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
            match (index, response.status().as_u16()) {
                (Some(i), 200) => s.metrics.count_ok(i, ROUTES[i]),
                (_, status) => {
                    let label = ReqLabel {
                        route: route.into_owned(),
                        status,
                    };
                    s.metrics.requests.get_or_create(&label).inc();
                }
            }
            s.metrics.latency.observe(start.elapsed().as_secs_f64());
            Ok(response)
        })
    }
}
