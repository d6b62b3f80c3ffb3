//! A deterministic simulation of the lease protocol: a model store with the
//! detection the real stores have, holders with their own clocks and
//! settings, a network with latency and faults, and a seeded scheduler; no
//! threads, no sleeps. A holder's claim (the skew check, the claim, the
//! first bound), each renewal and the release on close are the production
//! driver's own steps (`snowmint_lease::step`, which the real lease's
//! renewal thread runs too), on the model store through the `Store` trait
//! and a virtual clock (`snowmint::Clock`); their decisions are the
//! driver's (`snowmint_lease::decide`). What stays modelled: the worker
//! thread (a virtual network with the worker's deadline rule, `sim/net.rs`),
//! how late the renewal thread wakes (a holder renews once the wait its last
//! renewal step returned has passed, when the scheduler picks it), and the
//! generator (see below). docs/LEASES.md, "Checked by a simulation", lists
//! what it models and what it leaves out.
//!
//! The checker classifies violations (`check::Kind`): a successor starting
//! below a unit a predecessor issued or may still issue, an ID issued twice,
//! an ID outside its holder's confirmed reservation, a store clock write
//! that poisons a slot's `hwm`. Each negative control below turns one
//! protection off and asserts the kind it exists for.
//!
//! `SNOWMINT_SIM_SCHEDULES=N` runs N schedules (default 100,000) from seed
//! `SNOWMINT_SIM_FIRST_SEED` (default 0); a failure prints the command that
//! replays its seed with a trace: `SNOWMINT_SIM_SEED=S
//! SNOWMINT_SIM_VARIANT=name cargo test -p snowmint-lease --test sim replay
//! -- --nocapture` (the names: `VARIANTS`).
//!
//! Holders issue with `snowmint::PureGenerator`, not `snowmint::Generator`:
//! the latter shares one state word per node value across the process, which
//! would merge two simulated processes holding one slot and hide exactly the
//! repeated IDs this looks for.

#[path = "sim/check.rs"]
mod check;
#[path = "sim/model.rs"]
mod model;
#[path = "sim/net.rs"]
mod net;
#[path = "sim/variant.rs"]
mod variant;
#[path = "sim/world.rs"]
mod world;

use check::{Kind, Violation};
use model::Flavor;
use variant::{Counts, Variant, SAFE};
use world::schedule;

/// Every variant by the name its replay command uses.
const VARIANTS: &[&str] = &[
    "safe",
    "no-fence",
    "no-epoch-check",
    "no-resume-after",
    "one-skew-fence",
    "no-settings-check",
    "no-sql-identity",
    "no-suspend-safe-clock",
    "no-hwm-bound",
    "undetectable-loss",
    "unchecked-claims",
    "unchecked-claims-redis",
    "unchecked-claims-redis-no-lower-bound",
    "holder-clock-error",
    "holder-clock-error-three-skew-fence",
    "unconfirmed-bound",
    "mixed-skews-settings-checked",
    "mixed-skews-settings-checked-old-fence-kept",
    "mixed-skews",
    "own-clocks",
    "own-clocks-one-skew-fence",
    "own-clocks-no-skew-check",
    "mixed-skews-wiped",
    "wipes",
    "wipes-no-fence",
];

fn variant(name: &str) -> Variant {
    let mut v = SAFE;
    match name {
        "safe" => {}
        "no-fence" => v.store.fence = false,
        "no-epoch-check" => v.store.epoch_check = false,
        "no-resume-after" => v.resume_after = false,
        "one-skew-fence" => v.store.fence_skews = 1,
        "no-settings-check" => {
            v.store.settings_check = false;
            v.mixed_skews = true;
            v.marker_survives = true;
        }
        "mixed-skews-settings-checked" => {
            v.mixed_skews = true;
            v.marker_survives = true;
        }
        "mixed-skews-settings-checked-old-fence-kept" => {
            v.mixed_skews = true;
            v.marker_survives = true;
            v.store.keep_old_fence = true;
        }
        "no-sql-identity" => {
            v.store.sql_identity = false;
            v.flavor = Some(Flavor::Sql);
        }
        "no-suspend-safe-clock" => v.suspend_safe = false,
        "no-hwm-bound" => v.store.hwm_bound = false,
        "undetectable-loss" => {
            v.undetectable = true;
            v.flavor = Some(Flavor::Sql);
        }
        "unchecked-claims" => {
            v.unchecked_claims = true;
            v.flavor = Some(Flavor::Sql);
        }
        "unchecked-claims-redis" => {
            v.unchecked_claims = true;
            v.flavor = Some(Flavor::Redis);
        }
        "unchecked-claims-redis-no-lower-bound" => {
            v.unchecked_claims = true;
            v.flavor = Some(Flavor::Redis);
            v.store.min_store = false;
        }
        "holder-clock-error" => v.holder_error = 25,
        "mixed-skews" => v.mixed_skews = true,
        "holder-clock-error-three-skew-fence" => {
            v.holder_error = 25;
            v.store.fence_skews = 3;
        }
        "unconfirmed-bound" => v.unconfirmed_bound = true,
        "own-clocks" => v.own_clocks = true,
        "own-clocks-one-skew-fence" => {
            v.own_clocks = true;
            v.store.fence_skews = 1;
        }
        "own-clocks-no-skew-check" => {
            v.own_clocks = true;
            v.skew_check = false;
        }
        "mixed-skews-wiped" => {
            v.mixed_skews = true;
            v.wipes_only = true;
        }
        "wipes" => v.wipes_only = true,
        "wipes-no-fence" => {
            v.wipes_only = true;
            v.store.fence = false;
        }
        _ => panic!("SNOWMINT_SIM_VARIANT: one of {VARIANTS:?}"),
    }
    v
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn replay_command(seed: u64, name: &str) -> String {
    format!(
        "SNOWMINT_SIM_SEED={seed} SNOWMINT_SIM_VARIANT={name} cargo test -p snowmint-lease --test sim replay -- --nocapture"
    )
}

/// The first of `n` schedules from `first` with a violation: its seed and
/// its violations, in order.
fn first_violation(
    first: u64,
    n: u64,
    v: Variant,
    counts: &mut Counts,
) -> Option<(u64, Vec<Violation>)> {
    (first..first + n).find_map(|seed| {
        let c = schedule(seed, v, counts, false);
        (!c.found.is_empty()).then_some((seed, c.found))
    })
}

/// Replays one schedule with a trace (`SNOWMINT_SIM_SEED`,
/// `SNOWMINT_SIM_VARIANT`); without `SNOWMINT_SIM_SEED`, nothing.
#[test]
fn replay() {
    let Some(seed) = env_u64("SNOWMINT_SIM_SEED") else {
        return;
    };
    let name = std::env::var("SNOWMINT_SIM_VARIANT").unwrap_or_else(|_| "safe".into());
    let mut counts = Counts::default();
    let c = schedule(seed, variant(&name), &mut counts, true);
    println!("{counts:#?}");
    for v in &c.found {
        println!("{:?}: {}", v.kind, v.detail);
    }
    assert!(
        name != "safe" || c.found.is_empty(),
        "schedule {seed}: {:?}",
        c.found
    );
}

/// `n` schedules of variant `name` from `first`: none may have a violation.
fn clean(name: &str, first: u64, n: u64) -> Counts {
    let mut counts = Counts::default();
    let started = std::time::Instant::now();
    if let Some((seed, found)) = first_violation(first, n, variant(name), &mut counts) {
        panic!(
            "{name}, schedule {seed}: {:?}: {}\nreplay: {}",
            found[0].kind,
            found[0].detail,
            replay_command(seed, name)
        );
    }
    println!(
        "{name}: {n} schedules from seed {first} in {:.1} s, no violation",
        started.elapsed().as_secs_f64()
    );
    counts
}

#[test]
fn seeded_schedules_never_issue_an_id_twice() {
    let n = env_u64("SNOWMINT_SIM_SCHEDULES").unwrap_or(100_000);
    let first = env_u64("SNOWMINT_SIM_FIRST_SEED").unwrap_or(0);
    let counts = clean("safe", first, n);
    println!("{counts:#?}");
}

/// Each holder's clock has its own offset from true time, within its
/// `max_skew_ms` (50 ms: two clocks differ by up to 100 ms), the store's
/// clock stays within `max_skew_ms` of every holder's (half its steps to the
/// edge of that band), and one more holder's clock is beyond its
/// `max_skew_ms` of every such store clock: no violation, and every claim of
/// the far holder that reached the skew check or the store was refused.
#[test]
fn holder_clocks_within_max_skew_never_issue_an_id_twice() {
    let counts = clean("own-clocks", 0, 10_000);
    assert!(counts.far_clock_refusals > 0, "{counts:#?}");
    println!(
        "own-clocks: the far holder's claims refused {} times",
        counts.far_clock_refusals
    );
}

/// Every loss wipes the store (Redis restarted without persistence, or
/// `FLUSHALL`), holders with the one `max_skew_ms`: no violation.
#[test]
fn wiped_stores_never_issue_an_id_twice() {
    let counts = clean("wipes", 0, 10_000);
    assert!(counts.fenced_claims > 0, "{counts:#?}");
}

/// Runs variant `name` until a schedule has a violation (at most 100,000
/// schedules), and asserts that its first is of kind `kind`. Returns the
/// seed and its violations.
fn control(name: &str, kind: Kind) -> (u64, Vec<Violation>) {
    let mut counts = Counts::default();
    let Some((seed, found)) = first_violation(0, 100_000, variant(name), &mut counts) else {
        panic!("{name}: no violation in 100,000 schedules: the checker or the faults are too weak");
    };
    assert_eq!(
        found[0].kind,
        kind,
        "{name}, schedule {seed}: {}\nreplay: {}",
        found[0].detail,
        replay_command(seed, name)
    );
    println!(
        "{name}, schedule {seed}: {:?}: {}",
        found[0].kind, found[0].detail
    );
    (seed, found)
}

// ---- negative controls: one protection off, its own violation ------------

/// The claim half of the fence: without it, a claim after a detected loss
/// reads the surviving records only, and its holder starts below a live
/// holder's reservation.
#[test]
fn without_the_fence_a_successor_starts_below_a_predecessor() {
    control("no-fence", Kind::SuccessorBelowPredecessor);
}

/// The renewal half (the epoch check): without it, a rollback revives a
/// superseded holder's record, its renewals extend its reservation into its
/// successor's, and an ID is issued twice (no claim starts below anything:
/// the successor was above the old holder when it claimed).
#[test]
fn without_the_epoch_check_a_revived_holder_issues_an_id_twice() {
    control("no-epoch-check", Kind::DuplicateId);
}

/// Without `resume_after`, a successor starts at its own clock, at or below
/// the claim's `prev_hwm_ms`.
#[test]
fn without_resume_after_a_successor_starts_below_a_predecessor() {
    control("no-resume-after", Kind::SuccessorBelowPredecessor);
}

/// A fence of `store now + window + max_skew` is one skew short: a
/// reservation confirmed while the store's clock stood up to `max_skew`
/// ahead, then a step back of up to `2 * max_skew` (each side still within
/// `max_skew` of the holders) and a loss, give a fence below it.
#[test]
fn one_skew_of_fence_is_not_enough() {
    control("one-skew-fence", Kind::SuccessorBelowPredecessor);
}

/// Holder clocks that disagree (`own-clocks`, see
/// `holder_clocks_within_max_skew_never_issue_an_id_twice`) with a fence of
/// one skew: a holder whose clock is ahead reserves up to `max_skew_ms` past
/// a store clock at the low end of the band, and the claimer that fences
/// after a loss reads the store clock at the high end.
#[test]
fn with_clocks_that_disagree_one_skew_of_fence_is_not_enough() {
    control("own-clocks-one-skew-fence", Kind::SuccessorBelowPredecessor);
}

/// Without the driver's skew check before a claim, the holder whose clock is
/// beyond its `max_skew_ms` of every store clock takes a slot.
#[test]
fn without_the_skew_check_a_holder_with_a_far_clock_claims() {
    control("own-clocks-no-skew-check", Kind::FarClockClaimed);
}

/// A store that forgot everything (Redis restarted without persistence, or
/// `FLUSHALL`: the marker goes with the records), no fence: the next claim
/// reads an empty slot below a live holder's reservation.
#[test]
fn without_the_fence_a_wiped_store_lets_a_successor_start_below() {
    control("wipes-no-fence", Kind::SuccessorBelowPredecessor);
}

/// Holders with different `max_skew_ms` (20, 50, 150 ms), losses that keep
/// the marker, no settings check: a claimer with a small skew fences by it,
/// below the reservation of a live holder that trusted a store clock further
/// ahead.
#[test]
fn without_the_settings_check_mixed_skews_let_a_successor_start_below() {
    control("no-settings-check", Kind::SuccessorBelowPredecessor);
}

/// A SQL store that does not compare its system identifier with the
/// marker's: after a restore (new identifier, older rows) its claims take
/// the old rows as current.
#[test]
fn without_the_sql_identity_fence_a_restore_lets_a_successor_start_below() {
    control("no-sql-identity", Kind::SuccessorBelowPredecessor);
}

/// A holder clock that stops while its machine is suspended
/// (`CLOCK_MONOTONIC`) lags after it; its skew check then accepts a store
/// clock as far behind, and the fence it writes after a loss is that much
/// short.
#[test]
fn without_the_suspend_safe_clock_a_lagging_claimer_fences_short() {
    control("no-suspend-safe-clock", Kind::SuccessorBelowPredecessor);
}

/// A store clock stepped far ahead writes `hwm` from it unless the claim or
/// renewal carries the caller's bound (`max_hwm`): liveness, the slot is
/// unusable until true time catches up.
#[test]
fn without_the_hwm_bound_a_store_clock_ahead_poisons_hwm() {
    control("no-hwm-bound", Kind::PoisonedHwm);
}

/// Redis checks the claim's lower bound (`min_store_ms`, which the driver's
/// claim step sets: its clock when it sent the claim − `max_skew_ms`)
/// against its clock in the claim's script: claims on a store clock stepped
/// back since the skew check, or applied past their deadline, are refused.
#[test]
fn redis_refuses_a_claim_below_its_lower_bound() {
    let counts = clean("unchecked-claims-redis", 0, 20_000);
    assert!(counts.refused > 0, "{counts:#?}");
}

/// Without that lower bound, the same Redis claims fence from a clock
/// further behind than any skew check allowed.
#[test]
fn without_the_lower_bound_a_redis_claim_on_a_clock_stepped_back_starts_below() {
    control(
        "unchecked-claims-redis-no-lower-bound",
        Kind::SuccessorBelowPredecessor,
    );
}

/// Runs variant `name` until a schedule has an ID issued above what the
/// store confirmed to its holder (at most 100,000 schedules), and asserts
/// that every violation until then is of that kind, or a successor whose
/// first unit the too-high bound covers (found at its claim, before any ID
/// past the reservation): the two faces of a bound past the reservation.
fn overrun_control(name: &str) {
    let mut counts = Counts::default();
    let overrun = (0..100_000).find_map(|seed| {
        let c = schedule(seed, variant(name), &mut counts, false);
        for v in &c.found {
            assert!(
                matches!(
                    v.kind,
                    Kind::ReservationOverrun | Kind::SuccessorBelowPredecessor
                ),
                "{name}, schedule {seed}: {:?}: {}\nreplay: {}",
                v.kind,
                v.detail,
                replay_command(seed, name)
            );
        }
        let v = c
            .found
            .into_iter()
            .find(|v| v.kind == Kind::ReservationOverrun);
        v.map(|v| (seed, v))
    });
    let Some((seed, v)) = overrun else {
        panic!("{name}: no ID past the reservation in 100,000 schedules");
    };
    println!("{name}, schedule {seed}: {:?}: {}", v.kind, v.detail);
}

/// A driver that raises its bound on a renewal nobody answered issues above
/// what the store confirmed.
#[test]
fn raising_the_bound_without_a_confirmation_overruns_the_reservation() {
    overrun_control("unconfirmed-bound");
}

/// The build that issues one millisecond past the confirmed reservation
/// (Cargo feature `harness-controls` with
/// `SNOWMINT_HARNESS_CONTROL=past-reservation`, the harness's control for its
/// own checker): the driver's claim and renewal steps give the generator that
/// bound, and only they do, so only a simulation that runs them finds it.
/// Run it by name with that feature and variable (the protected schedules
/// above fail in that build, as they must).
#[cfg(feature = "harness-controls")]
#[test]
fn the_past_reservation_build_overruns_the_reservation() {
    assert_eq!(
        std::env::var("SNOWMINT_HARNESS_CONTROL").as_deref(),
        Ok("past-reservation"),
        "run this test with SNOWMINT_HARNESS_CONTROL=past-reservation"
    );
    overrun_control("safe");
}

// ---- documented-unsafe: what the protections do not cover ----------------

/// An asynchronous SQL replica promoted keeps the system identifier, so
/// nothing tells the store it lost writes: a successor below its
/// predecessor, then (in a later schedule) an ID issued twice.
#[test]
fn an_undetectable_loss_issues_an_id_twice() {
    let (seed, _) = control("undetectable-loss", Kind::SuccessorBelowPredecessor);
    let mut counts = Counts::default();
    let dup = (seed..seed + 100_000).find(|&s| {
        schedule(s, variant("undetectable-loss"), &mut counts, false)
            .kinds()
            .contains(&Kind::DuplicateId)
    });
    let dup = dup.expect("an undetectable loss gave no ID issued twice in 100,000 schedules");
    println!("undetectable loss: an ID issued twice in schedule {dup}");
}

/// The skew check and the claim are two calls, and a claim may be applied
/// past its deadline: on a SQL store (which does not check the claim's
/// lower bound, see `redis_refuses_a_claim_below_its_lower_bound`) nothing
/// bounds a step back of the store's clock between the check and the claim
/// acting on it (`max_hwm` bounds a step ahead only), so the fence can come
/// from a clock further behind than any check allowed.
#[test]
fn a_claim_on_an_unchecked_store_clock_lets_a_successor_start_below() {
    control("unchecked-claims", Kind::SuccessorBelowPredecessor);
}

/// The fence's two skews take the claimer's clock as true time. Holders
/// whose clocks disagree (each within 25 ms of true time, so within 50 ms,
/// one `max_skew_ms`, of each other) can overlap after a loss.
#[test]
fn holder_clocks_that_disagree_defeat_a_two_skew_fence() {
    control("holder-clock-error", Kind::SuccessorBelowPredecessor);
}

/// The same clocks with a fence of three skews: no violation.
#[test]
fn a_three_skew_fence_covers_holder_clocks_within_half_a_skew() {
    clean("holder-clock-error-three-skew-fence", 0, 20_000);
}

/// The settings check (a claim with settings other than the marker's is
/// refused; a fence over another server's marker takes the larger) narrows
/// the mixed-skews case but does not close it: the new marker records only
/// its own claimer's settings and fence, so a holder of an epoch two losses
/// back, with a larger skew, is no longer covered.
#[test]
fn mixed_skews_overlap_even_with_the_settings_check() {
    control(
        "mixed-skews-settings-checked",
        Kind::SuccessorBelowPredecessor,
    );
}

/// Different `max_skew_ms` per holder (20, 50, 150 ms) across a wipe, with
/// every protection on: before it, the settings check admits only holders
/// with the marker's settings; the wipe takes the marker, and the first
/// claimer after it fences with its own, smaller skew, below the reservation
/// of a live holder that counted with the larger one. What the settings
/// check cannot cover: every holder of a space must use the same settings.
#[test]
fn mixed_skews_across_a_wipe_let_a_successor_start_below() {
    control("mixed-skews-wiped", Kind::SuccessorBelowPredecessor);
}

/// With a fence over another server's marker that keeps the old fence if it
/// is higher, mixed skews are covered while the marker survives (a wipe
/// still loses it: every holder of a space must use the same settings).
#[test]
fn keeping_the_old_fence_covers_mixed_skews_while_the_marker_survives() {
    clean("mixed-skews-settings-checked-old-fence-kept", 0, 20_000);
}
