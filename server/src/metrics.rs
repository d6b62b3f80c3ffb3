//! The `/metrics` registry (OpenMetrics text via prometheus-client).

use std::sync::OnceLock;

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

/// A lease state label: the generator and one of [`LEASE_STATES`].
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LeaseStateLabel {
    /// The generator's name.
    pub generator: String,
    /// `held`, `expired` or `lost`.
    pub state: &'static str,
}

/// A leased generator's states, as `snowmint_lease_state` labels them:
/// `held` (a confirmed reservation ahead), `expired` (none ahead: the
/// renewals fail, the lease's own thread keeps trying), `lost` (another
/// holder took the slot: a new claim is being tried).
pub const LEASE_STATES: [&str; 3] = ["held", "expired", "lost"];

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

/// A Thrift user agent label (`other` once the tracked set is full).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct AgentLabel {
    /// The `useragent` of `get_id`.
    pub agent: String,
}

/// A gRPC call label: the method path and the status code's name.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct GrpcLabel {
    /// The method (`/snowmint.v1.Ids/NextIds`), or `unmatched`.
    pub route: String,
    /// The gRPC status code's name (`Ok`, `InvalidArgument`, `Unauthenticated`, ...).
    pub code: String,
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
    /// gRPC calls answered, per method and status code.
    pub grpc_requests: Family<GrpcLabel, Counter>,
    /// Request latency in seconds (HTTP and gRPC).
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
    /// 1 for the lease's state of [`LEASE_STATES`], 0 for the others.
    pub lease_state: Family<LeaseStateLabel, Gauge>,
    /// Leases claimed again after one was lost.
    pub reclaims: Family<GenLabel, Counter>,
    /// IDs issued over Thrift, per user agent.
    pub thrift_ids: Family<AgentLabel, Counter>,
    /// Open connections.
    pub connections: Gauge,
    /// Connections refused past `--max-connections`.
    pub connections_refused: Counter,
    /// Requests refused past `--rate-limit`.
    pub rate_limited: Counter,
    /// Handles to the counters every request bumps, see [`Metrics::count_ok`].
    hot: Hot,
}

/// How many route patterns [`Metrics::count_ok`] keeps a handle for.
pub const HOT_ROUTES: usize = 16;

/// Handles to series of `requests` (status 200, per route) and `ids` (per
/// generator), each made on its first use through its family, as before, so
/// that `/metrics` lists the same series; later requests bump the shared
/// counter directly, without the family's lock, hashing and label copy.
#[derive(Debug, Default)]
struct Hot {
    ok: [OnceLock<Counter>; HOT_ROUTES],
    ids: OnceLock<Box<[OnceLock<Counter>]>>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl Metrics {
    /// A registry with every metric, each with its help text.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("snowmint");
        let ids = Family::<GenLabel, Counter>::default();
        registry.register("ids_issued", "IDs issued", ids.clone());
        let requests = Family::<ReqLabel, Counter>::default();
        registry.register("http_requests", "HTTP requests answered", requests.clone());
        let grpc_requests = Family::<GrpcLabel, Counter>::default();
        registry.register(
            "grpc_requests",
            "gRPC calls answered",
            grpc_requests.clone(),
        );
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
        let lease_state = Family::<LeaseStateLabel, Gauge>::default();
        registry.register(
            "lease_state",
            "1 for the lease's state (held, expired, lost), 0 for the others",
            lease_state.clone(),
        );
        let reclaims = Family::<GenLabel, Counter>::default();
        registry.register(
            "lease_reclaims",
            "Leases claimed again after one was lost to another holder",
            reclaims.clone(),
        );
        let thrift_ids = Family::<AgentLabel, Counter>::default();
        registry.register(
            "thrift_ids",
            "IDs issued over Thrift by get_id, per user agent",
            thrift_ids.clone(),
        );
        let connections = Gauge::default();
        registry.register(
            "http_connections",
            "Open HTTP connections",
            connections.clone(),
        );
        let connections_refused = Counter::default();
        registry.register(
            "http_connections_refused",
            "Connections refused past --max-connections",
            connections_refused.clone(),
        );
        let rate_limited = Counter::default();
        registry.register(
            "http_rate_limited",
            "Requests refused past --rate-limit (429)",
            rate_limited.clone(),
        );
        Metrics {
            registry,
            rate_limited,
            connections,
            connections_refused,
            ids,
            requests,
            grpc_requests,
            latency,
            failures,
            lease_slot,
            reservation_remaining,
            renewals,
            store_timeouts,
            lease_state,
            reclaims,
            thrift_ids,
            hot: Hot::default(),
        }
    }

    /// Counts a 200 answer of route `index` (below [`HOT_ROUTES`]), whose
    /// pattern is `route`: the same series as
    /// `requests.get_or_create(&ReqLabel { route, status: 200 })`.
    pub fn count_ok(&self, index: usize, route: &'static str) {
        let make = || {
            self.requests
                .get_or_create(&ReqLabel {
                    route: route.to_string(),
                    status: 200,
                })
                .clone()
        };
        match self.hot.ok.get(index) {
            Some(slot) => slot.get_or_init(make).inc(),
            None => make().inc(),
        };
    }

    /// Counts `n` IDs issued by generator `index` of `of`, named `name`: the
    /// same series as `ids.get_or_create(&GenLabel { generator: name })`.
    pub fn count_ids(&self, index: usize, of: usize, name: &str, n: u64) {
        let make = || {
            self.ids
                .get_or_create(&GenLabel {
                    generator: name.to_string(),
                })
                .clone()
        };
        let slots = self
            .hot
            .ids
            .get_or_init(|| (0..of).map(|_| OnceLock::new()).collect());
        match slots.get(index) {
            Some(slot) => slot.get_or_init(make).inc_by(n),
            None => make().inc_by(n),
        };
    }
}
