//! No code: this crate only unifies the features of shared dependencies (see
//! its Cargo.toml).
#![no_std]
