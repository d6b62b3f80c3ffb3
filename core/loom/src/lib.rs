//! Nothing: the loom model checks of the core's `Generator` are this
//! package's tests (`tests/loom.rs`, `tests/loom_lease.rs`), compiled only
//! under `RUSTFLAGS="--cfg loom"` (cargo xtask test core).
