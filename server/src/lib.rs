//! `snowmint-server`: Snowflake IDs over HTTP from the core and the lease
//! crate, with Leaf's routes beside its own. It adds no ID logic.
//!
//! The binary (`src/main.rs`) only parses its flags and calls [`run`]. The
//! modules are public so that the fuzz targets reach the parsers the service
//! adds (query strings, configuration) and the tests reach the same code the
//! binary runs.
//!
//! Leases are opened and released on the main thread, outside the tokio
//! runtime: the SQL stores drive a runtime of their own, which panics inside
//! another.

mod access;
pub mod app;
pub mod auth;
pub mod config;
pub mod fast;
pub mod grpc;
mod heal;
pub mod issued;
pub mod limit;
pub mod listen;
pub mod log;
pub mod metrics;
pub mod net;
mod observe;
mod service;
pub mod state;
pub mod thrift;
mod tick;
pub mod tls;

pub use service::run;
