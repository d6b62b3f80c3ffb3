//! The per-token rates: `--rate-limit N` (requests a second, bursts of N)
//! and `--rate-limit-ids N` (IDs a second, bursts of N), one token bucket of
//! each per configured bearer token (`auth.rs` keeps them beside the token,
//! so a reload keeps a token's buckets). Past either a request gets `429`
//! (`rate_limited`, `Retry-After`) over HTTP and RESOURCE_EXHAUSTED (with
//! `snowmint-error-code: rate_limited`) over gRPC. Requests without a valid
//! token are not counted here (they get `401`).

use std::sync::Mutex;
use std::time::Instant;

use axum::http::StatusCode;

use crate::app::ApiError;
use crate::auth::Caller;

/// One token bucket. `level` is None until first used (a full bucket).
#[derive(Clone, Debug)]
pub struct Bucket {
    level: Option<f64>,
    at: Instant,
}

impl Bucket {
    /// A full bucket.
    pub fn full() -> Bucket {
        Bucket {
            level: None,
            at: Instant::now(),
        }
    }

    /// Takes `n` from the bucket refilled at `per_second` (at most
    /// `per_second` held), or says how many seconds until `n` are there.
    fn take(&mut self, n: f64, per_second: f64) -> Result<(), u64> {
        let now = Instant::now();
        let refill = now.duration_since(self.at).as_secs_f64() * per_second;
        let level = self
            .level
            .map_or(per_second, |l| (l + refill).min(per_second));
        self.at = now;
        if level >= n {
            self.level = Some(level - n);
            Ok(())
        } else {
            self.level = Some(level);
            Err(((n - level) / per_second).ceil().max(1.0) as u64)
        }
    }
}

/// The configured rates.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rates {
    /// Requests a second per token.
    pub requests: Option<u32>,
    /// IDs a second per token.
    pub ids: Option<u32>,
}

/// The answer past a rate: 429 `rate_limited`, the seconds to wait.
pub fn refused(wait: u64, what: &str) -> ApiError {
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
        format!("this token's {what} rate is over the server's limit: try again later"),
    )
    .retry_after(wait)
}

fn take(bucket: &Mutex<Bucket>, n: u64, per_second: u32) -> Result<(), u64> {
    bucket
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take(n as f64, f64::from(per_second))
}

impl Rates {
    /// One request of `caller`.
    pub fn admit_request(&self, caller: &Caller) -> Result<(), ApiError> {
        match (self.requests, caller.buckets()) {
            (Some(rate), Some((b, _))) => take(b, 1, rate).map_err(|w| refused(w, "request")),
            _ => Ok(()),
        }
    }

    /// `count` IDs of `caller`. A count over the whole limit could never
    /// pass: it is refused at once (wait a second, take less).
    pub fn admit_ids(&self, caller: Option<&Caller>, count: u64) -> Result<(), ApiError> {
        match (self.ids, caller.and_then(Caller::buckets)) {
            (Some(rate), Some(_)) if count > u64::from(rate) => Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!("a count over the server's ID rate ({rate} a second) is never served: ask for fewer"),
            )
            .retry_after(1)),
            (Some(rate), Some((_, b))) => take(b, count, rate).map_err(|w| refused(w, "ID")),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_refills_up_to_its_rate() {
        let mut b = Bucket::full();
        assert!(b.take(5.0, 5.0).is_ok());
        assert_eq!(b.take(1.0, 5.0), Err(1));
        std::thread::sleep(std::time::Duration::from_millis(250));
        assert!(b.take(1.0, 5.0).is_ok());
    }
}
