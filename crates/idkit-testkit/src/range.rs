//! A range-allocator store for tests of waiting code: it takes a set time for every lease, as
//! a far or busy database does, and hands out consecutive blocks from memory.

use std::sync::Mutex;
use std::time::Duration;

use idkit_range::{Lease, Store, StoreError};

/// A store in memory that sleeps `delay` before each lease (a delay longer than a test's
/// timeout stands for a store that never answers in time).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use idkit_range::Store;
/// use idkit_testkit::range::SlowStore;
///
/// let store = SlowStore::new(Duration::from_millis(1));
/// let first = store.lease("orders", 100)?;
/// let second = store.lease("orders", 100)?;
/// assert_eq!((first.first, first.last, second.first), (1, 100, 101));
/// # Ok::<(), idkit_range::StoreError>(())
/// ```
#[derive(Debug)]
pub struct SlowStore {
    counter: Mutex<u64>,
    delay: Duration,
}

impl SlowStore {
    /// A store that takes `delay` for every lease; its first block starts at 1.
    pub fn new(delay: Duration) -> Self {
        Self {
            counter: Mutex::new(0),
            delay,
        }
    }
}

impl Store for SlowStore {
    /// Sleeps the store's delay, then the next `size` values (one namespace for all).
    fn lease(&self, namespace: &str, size: u64) -> Result<Lease, StoreError> {
        idkit_range::check_lease(namespace, size)?;
        std::thread::sleep(self.delay);
        let mut counter = self
            .counter
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let first = *counter + 1;
        *counter += size;
        Ok(Lease {
            first,
            last: *counter,
        })
    }

    fn describe(&self) -> String {
        "slow memory store".to_owned()
    }
}
