//! Opening the store a lease URL names. Constructors do no I/O: a store
//! connects on its first call, which the driver runs under `timeout_ms` like
//! every other, so an unreachable server is a timely `lease_unavailable`.

use std::sync::Arc;

use crate::error::LeaseError;
use crate::file::FileStore;
use crate::store::Store;
use crate::url::{LeaseUrl, Settings, StoreUrl};

impl LeaseUrl {
    /// The store this URL names, for driving [`Store`] calls directly (the
    /// store tests do; [`crate::LeasedGenerator::open`] does it for you). No
    /// I/O: the store connects on its first call.
    pub fn open_store(&self) -> Result<Arc<dyn Store>, LeaseError> {
        open(&self.store, &self.settings)
    }
}

/// The store of `url`.
pub(crate) fn open(url: &StoreUrl, settings: &Settings) -> Result<Arc<dyn Store>, LeaseError> {
    let _ = settings;
    Ok(match url {
        StoreUrl::File(dir) => Arc::new(FileStore::from_url(dir, settings)),
        #[cfg(feature = "postgres")]
        StoreUrl::Postgres(u) => Arc::new(crate::sql::SqlStore::postgres_with(u, settings)?),
        #[cfg(feature = "mysql")]
        StoreUrl::Mysql(u) => Arc::new(crate::sql::SqlStore::mysql_with(u, settings)?),
        #[cfg(feature = "redis")]
        StoreUrl::Redis(u) => Arc::new(crate::redis_store::RedisStore::with_settings(u, settings)?),
        #[cfg(feature = "etcd")]
        StoreUrl::Etcd(u) => Arc::new(crate::etcd::EtcdStore::with_settings(u, settings)?),
        #[cfg(feature = "zookeeper")]
        StoreUrl::Zookeeper(u) => Arc::new(crate::zookeeper::ZookeeperStore::with_settings(
            u, settings,
        )?),
        // `LeaseUrl::parse` refuses a store this build does not have.
        #[allow(unreachable_patterns)]
        other => {
            return Err(LeaseError::url(format!(
                "the '{}' store is not built into this package",
                other.kind()
            )))
        }
    })
}
