//! The suites a store's test file instantiates, one macro line each, for its
//! [`Subject`](crate::Subject): as rustls runs its API tests once per crypto
//! provider. Each expands to a module of `#[test]`s (`contract::...`,
//! `faults::...`, `sql::...`) that name the probe binary ([`use_probe`]) and
//! call the suite's function for the store. Adding a store is a module with
//! its `Subject` and these lines.
//!
//! [`use_probe`]: crate::use_probe

/// The contract and the scenarios every store across machines runs
/// ([`crate::contract`], [`crate::scenarios`]), as `contract::NAME` tests of
/// `$store` (a [`Subject`](crate::Subject) of the calling file), and the
/// optional groups named after it: `restart` (the `hwm` kept across a
/// restart of the server of `SNOWMINT_TEST_<VAR>_RESTART_URL` by
/// `..._RESTART_CMD`), `restore` (a cold backup restored:
/// `..._RESTORE_URL`, `..._RESTORE_CMD`).
#[macro_export]
macro_rules! contract_suite {
    ($store:ident $(, $group:ident)* $(,)?) => {
        /// The contract every store keeps (`snowmint_lease_test_support::contract`).
        mod contract {
            $crate::contract_suite!(@tests $store:
                contract::contract,
                contract::expired_claim_is_taken_by_the_next_claimer,
                contract::space_text_is_checked,
                contract::through_the_generator,
                contract::racing_claimers_get_distinct_slots,
                contract::refused_and_silent_servers,
                suite::forty_processes_thirty_two_slots,
                suite::killed_holder_is_replaced_after_the_ttl,
                suite::clock_skew_refused_at_claim,
                suite::server_cut_off_then_back,
                suite::cut_off_past_the_ttl_while_another_takes_the_slot,
                suite::paused_holder_is_replaced_and_stops,
                suite::hwm_too_far_is_refused,
            );
            $($crate::contract_suite!(@group $store $group);)*
        }
    };
    (@group $store:ident restart) => {
        $crate::contract_suite!(@tests $store: suite::hwm_survives_a_server_restart,);
    };
    (@group $store:ident restore) => {
        $crate::contract_suite!(@tests $store:
            suite::restored_backup_fences_claims_and_fails_the_holder,
        );
    };
    (@tests $store:ident: $($module:ident::$test:ident,)*) => {$(
        #[test]
        fn $test() {
            $crate::use_probe(<super::$store as $crate::Subject>::PROBE);
            $crate::$module::$test::<super::$store>();
        }
    )*};
}

/// The fault scenarios ([`crate::faults`], [`crate::rate`]) as
/// `faults::NAME` tests of `$store`, built to fail when the fencing each
/// tests is removed; the stores part (`cargo xtask test stores`) runs them after the store's other
/// tests, one at a time. The optional group `clock`: the store's clock
/// stepped, on the server of `SNOWMINT_TEST_<VAR>_CLOCK_URL` whose clock
/// `..._CLOCK_FILE` moves.
#[macro_export]
macro_rules! fault_suite {
    ($store:ident $(, $group:ident)* $(,)?) => {
        /// The fault scenarios (`snowmint_lease_test_support::faults`).
        mod faults {
            $crate::fault_suite!(@tests $store:
                live_overlap,
                one_way_partition,
                high_rate_with_a_successor,
                sixteen_bit_space,
                forty_race_for_expired_slots,
                reply_delayed_past_the_ttl,
            );
            $($crate::fault_suite!(@group $store $group);)*

            /// Does nothing, except in a child this binary starts as a
            /// holder (`snowmint_lease_test_support::rate::holder_child`).
            #[test]
            fn holder_child() {
                $crate::rate::holder_child();
            }
        }
    };
    (@group $store:ident clock) => {
        $crate::fault_suite!(@tests $store: store_clock_steps, store_clock_far_ahead,);
    };
    (@tests $store:ident: $($test:ident,)*) => {$(
        #[test]
        fn $test() {
            $crate::use_probe(<super::$store as $crate::Subject>::PROBE);
            // This module's holder child, as the harness names it.
            let child = format!("{}::holder_child", module_path!().split_once("::").unwrap().1);
            $crate::suite::fault::$test::<super::$store>(&child);
        }
    )*};
}

/// The SQL store's own tests ([`crate::sql`]) as `sql::NAME` tests of
/// `$store` (a [`SqlServer`](crate::sql::SqlServer) of the calling file).
#[cfg(any(feature = "postgres", feature = "mysql"))]
#[macro_export]
macro_rules! sql_suite {
    ($store:ident) => {
        /// The SQL store's own tests (`snowmint_lease_test_support::sql`).
        mod sql {
            $crate::sql_suite!(@tests $store:
                calls_reuse_one_connection,
                calls_are_bounded_on_their_own,
            );
        }
    };
    (@tests $store:ident: $($test:ident,)*) => {$(
        #[test]
        fn $test() {
            $crate::sql::$test(&<super::$store as $crate::sql::SqlServer>::db());
        }
    )*};
}
