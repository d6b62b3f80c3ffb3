//! Each suite test of a [`Subject`], as the macros of `suites.rs` call it:
//! the store's URLs, namespaces and parameters handed to the scenario it
//! runs ([`crate::scenarios`], [`crate::faults`], [`crate::rate`],
//! [`crate::restore`]).

use crate::{faults, rate, restore, scenarios, Subject};

pub fn forty_processes_thirty_two_slots<S: Subject>() {
    let n = S::ns("forty");
    scenarios::forty_processes_thirty_two_slots(&S::url(&n, ""), &format!("{}-forty", S::NAME));
}

pub fn killed_holder_is_replaced_after_the_ttl<S: Subject>() {
    scenarios::crash(&S::base(), &S::ns("crash"), true, &|| {});
}

pub fn clock_skew_refused_at_claim<S: Subject>() {
    scenarios::clock_skew(&S::base(), &S::ns("skew"));
}

pub fn server_cut_off_then_back<S: Subject>() {
    scenarios::store_down(&S::base(), &S::ns("down"));
}

pub fn cut_off_past_the_ttl_while_another_takes_the_slot<S: Subject>() {
    scenarios::cut_off_past_ttl(&S::base(), &S::ns("cutttl"));
}

/// Holder A pauses (SIGSTOP) past its TTL; B takes its slot, the only free
/// one; A resumes and never issues above its last confirmed reservation,
/// and stops. A's claim runs 1.5 s from its last renewal, at most renew_ms
/// (300) plus a call's time before the stop.
pub fn paused_holder_is_replaced_and_stops<S: Subject>() {
    let n = S::ns("paused");
    let u = S::url(&n, "ttl_ms=1500&renew_ms=300&window_ms=1000");
    scenarios::paused_holder_is_replaced(
        &*S::store(&n),
        &u,
        &n,
        S::NAME,
        S::PAUSED_FREE_AFTER,
        S::CLOCK_GRAIN_MS,
    );
}

pub fn hwm_too_far_is_refused<S: Subject>() {
    scenarios::hwm_too_far_is_refused(&S::base(), &S::ns("toofar"));
}

/// The server of `SNOWMINT_TEST_<VAR>_RESTART_URL`, restarted with its data
/// by `..._RESTART_CMD`.
pub fn hwm_survives_a_server_restart<S: Subject>() {
    let url = S::env("RESTART_URL");
    scenarios::restart_keeps_hwm(&url, &S::ns_on(&url, "restart"), &S::env("RESTART_CMD"));
}

/// A server restarted from a cold backup of its data (the server of
/// `SNOWMINT_TEST_<VAR>_RESTORE_URL`, whose restart command is
/// `..._RESTORE_CMD`): see [`restore`].
pub fn restored_backup_fences_claims_and_fails_the_holder<S: Subject>() {
    let server = S::env("RESTORE_URL");
    let n = S::ns_on(&server, "restore");
    restore::restored_backup_fences_claims_and_fails_the_holder(
        &restore::Server::new(&format!("SNOWMINT_TEST_{}_RESTORE_CMD", S::VAR)),
        &format!("{server}?namespace={}&max_skew_ms=100", &*n),
        &n,
        S::RESTORE_PAUSE,
    );
}

/// The fault tests, each given the name of the holder child test of the
/// suite's module (`child`; only the rate tests start one).
pub mod fault {
    use super::*;

    pub fn live_overlap<S: Subject>(_child: &str) {
        faults::live_overlap(&S::base(), &S::ns("overlap"));
    }

    pub fn one_way_partition<S: Subject>(_child: &str) {
        faults::one_way_partition(&S::base(), &S::ns("oneway"), S::ONE_ROUND_TRIP);
    }

    pub fn high_rate_with_a_successor<S: Subject>(child: &str) {
        rate::high_rate(&S::base(), &S::ns("rate"), child);
    }

    pub fn sixteen_bit_space<S: Subject>(child: &str) {
        rate::tiny_space(&S::base(), &S::ns("tiny"), child);
    }

    pub fn forty_race_for_expired_slots<S: Subject>(_child: &str) {
        rate::forty_race_for_expired(&S::base(), &S::ns("race"));
    }

    pub fn reply_delayed_past_the_ttl<S: Subject>(_child: &str) {
        faults::reply_delayed_past_ttl(&S::base(), &S::ns("delayed"));
    }

    /// The store clock steps, on a throwaway server whose clock the file
    /// `SNOWMINT_TEST_<VAR>_CLOCK_FILE` moves (libfaketime or
    /// `tools/clockshift`: `xtask/src/stores/clockshift.rs`).
    pub fn store_clock_steps<S: Subject>(_child: &str) {
        let url = S::env(&format!("{}_URL", S::CLOCK_SERVER));
        let n = S::ns_on(&url, "clock");
        faults::store_clock_steps(&url, &n, &S::env(&format!("{}_FILE", S::CLOCK_SERVER)));
    }

    /// The store's clock a minute ahead: renewals refused, no far-future
    /// `hwm` written.
    pub fn store_clock_far_ahead<S: Subject>(_child: &str) {
        let url = S::env(&format!("{}_URL", S::CLOCK_SERVER));
        let n = S::ns_on(&url, "far");
        faults::store_clock_far_ahead(&url, &n, &S::env(&format!("{}_FILE", S::CLOCK_SERVER)));
    }
}
