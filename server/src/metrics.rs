//! The `/metrics` registry (OpenMetrics text via prometheus-client).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// A generator label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct GenLabel {
    /// The generator's name.
    pub generator: String,
}

/// A failure label: the generator and the error's code.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FailLabel {
    /// The generator's name.
    pub generator: String,
    /// The stable error code (`lease_expired`, `clock_moved_backwards`, ...).
    pub code: String,
}

/// A request label: the route pattern (never the raw path, which would
/// make one series per ID) and the status.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReqLabel {
    /// The matched route (`/v1/decode/{id}`), or `unmatched`.
    pub route: String,
    /// The HTTP status code.
    pub status: u16,
}

/// Every metric of the server.
#[derive(Debug)]
pub struct Metrics {
    /// The registry `/metrics` encodes.
    pub registry: Registry,
    /// IDs issued, per generator.
    pub ids: Family<GenLabel, Counter>,
    /// Requests answered, per route and status.
    pub requests: Family<ReqLabel, Counter>,
    /// Request latency in seconds.
    pub latency: Histogram,
    /// Failed issues, per generator and code (clock steps are `clock_moved_backwards`).
    pub failures: Family<FailLabel, Counter>,
    /// The leased slot, per generator.
    pub lease_slot: Family<GenLabel, Gauge>,
    /// Milliseconds left in the confirmed reservation.
    pub reservation_remaining: Family<GenLabel, Gauge>,
    /// Confirmed renewals.
    pub renewals: Family<GenLabel, Gauge>,
    /// Store calls that missed their deadline.
    pub store_timeouts: Family<GenLabel, Gauge>,
}

impl Metrics {
    /// A registry with every metric, each with its help text.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("snowmint");
        let ids = Family::<GenLabel, Counter>::default();
        registry.register("ids_issued", "IDs issued", ids.clone());
        let requests = Family::<ReqLabel, Counter>::default();
        registry.register("http_requests", "HTTP requests answered", requests.clone());
        // 25 us to about 0.8 s.
        let latency = Histogram::new(exponential_buckets(0.000_025, 2.0, 16));
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency",
            latency.clone(),
        );
        let failures = Family::<FailLabel, Counter>::default();
        registry.register(
            "issue_failures",
            "Requests for IDs that failed, by error code",
            failures.clone(),
        );
        let lease_slot = Family::<GenLabel, Gauge>::default();
        registry.register("lease_slot", "The leased node value", lease_slot.clone());
        let reservation_remaining = Family::<GenLabel, Gauge>::default();
        registry.register(
            "lease_reservation_remaining_ms",
            "Milliseconds left in the confirmed reservation",
            reservation_remaining.clone(),
        );
        let renewals = Family::<GenLabel, Gauge>::default();
        registry.register(
            "lease_renewals",
            "Confirmed lease renewals",
            renewals.clone(),
        );
        let store_timeouts = Family::<GenLabel, Gauge>::default();
        registry.register(
            "lease_store_timeouts",
            "Store calls that missed their deadline",
            store_timeouts.clone(),
        );
        Metrics {
            registry,
            ids,
            requests,
            latency,
            failures,
            lease_slot,
            reservation_remaining,
            renewals,
            store_timeouts,
        }
    }
}
