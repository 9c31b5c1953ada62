//! One scenario every lease backend passes: distinct worker ids, a typed error when all
//! are taken, background renewal, generators that issue distinct ids under their leases,
//! release that frees a worker id at once with a higher token and the mark above every id
//! issued.

#![allow(dead_code)]

use std::time::{Duration, Instant};

use idkit_core::{Clock, IdScheme};
use idkit_lease::{IdentitySource, Lease, LeaseErrorKind, LeaseState};
use idkit_snowflake::{Snowflake, Twitter};

/// Twitter's epoch.
const EPOCH: u64 = 1_288_834_974_657;

/// A namespace no other test run uses.
pub fn unique(tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{tag}-{}-{nanos}", std::process::id())
}

/// The scenario on a SQL server that `scripts/test.sh` started on loopback and whose URL it
/// put in `var` (`what` names the server for the message when it did not): a namespace of
/// its own, TTL 1.5 s. Without the variable the test fails; it never passes by skipping.
pub fn sql_scenario(var: &str, what: &str) {
    let url = std::env::var(var)
        .unwrap_or_else(|_| panic!("{var} is not set: run scripts/test.sh, which starts {what}"));
    let ns = unique("t");
    scenario(&format!("{url}?namespace={ns}&ttl_ms=1500"));
}

/// A lease from the SQL server at `var`'s URL (`extra` added to its query; TTL 1.5 s) whose
/// server stops answering: once the lease has renewed over an open connection, packets to
/// the server's port are dropped. The renewal then in flight must be given up within 30 s,
/// the lease no longer held (the backends give a connection up after 10 s without an
/// acknowledgement; the system's retransmissions would take about 15 minutes); once packets
/// flow again, the lease is held again. Returns how long after the partition the renewal
/// was given up.
pub fn sql_partition(var: &str, what: &str, extra: &str) -> Duration {
    let url = std::env::var(var)
        .unwrap_or_else(|_| panic!("{var} is not set: run scripts/test.sh, which starts {what}"));
    let port = idkit_testkit::url_port(&url);
    let ns = unique("partition");
    let source =
        IdentitySource::parse(&format!("{url}?namespace={ns}&ttl_ms=1500{extra}")).unwrap();
    let lease = Lease::acquire(&source, "snowflake-twitter", 4).unwrap();
    let until = |done: &dyn Fn() -> bool, within: Duration, what: &str| {
        let started = Instant::now();
        while !done() {
            assert!(started.elapsed() < within, "{what}: {:?}", lease.status());
            std::thread::sleep(Duration::from_millis(20));
        }
        started.elapsed()
    };
    until(
        &|| lease.status().renewals >= 1,
        Duration::from_secs(10),
        "never renewed",
    );
    let cut = idkit_testkit::Partition::new(port);
    let gave_up = until(
        &|| lease.status().failures >= 1,
        Duration::from_secs(30),
        "the renewal sent into the partition was not given up in 30 s",
    );
    assert_ne!(
        lease.status().state,
        LeaseState::Held,
        "{:?}",
        lease.status()
    );
    drop(cut);
    until(
        &|| lease.status().state == LeaseState::Held,
        Duration::from_secs(30),
        "not held again after the partition",
    );
    gave_up
}

fn generator(lease: &Lease) -> impl IdScheme<Id = u64> + use<> {
    Snowflake::builder(Twitter)
        .field("worker", lease.worker())
        .guard(lease.guard())
        .build_atomic()
        .unwrap()
}

/// Runs the scenario on `source` (a fresh namespace, TTL 1.5 s).
pub fn scenario(source: &str) {
    let source = IdentitySource::parse(source).unwrap();
    let scope = "snowflake-twitter";
    let leases: Vec<Lease> = (0..4)
        .map(|_| Lease::acquire(&source, scope, 4).unwrap())
        .collect();
    let mut workers: Vec<u64> = leases.iter().map(Lease::worker).collect();
    workers.sort_unstable();
    assert_eq!(workers, [0, 1, 2, 3], "four distinct worker ids");
    for lease in &leases {
        let status = lease.status();
        assert_eq!(status.state, LeaseState::Held);
        assert!(status.token >= 1);
        assert!(status.fence_ms > status.now_ms);
        assert!(
            status.namespace.ends_with("/snowflake-twitter"),
            "{}",
            status.namespace
        );
    }

    let fifth = Lease::acquire(&source, scope, 4).unwrap_err();
    assert_eq!(fifth.kind(), LeaseErrorKind::AllTaken, "{fifth}");
    assert!(fifth.to_string().contains("all 4 worker ids"), "{fifth}");

    // Ids from all four generators, across several renewals, are distinct. Renewals come
    // every third of the TTL (500 ms): ids for 1.6 s, and on a loaded machine, whose
    // store may answer a renewal late, on until every lease has renewed twice (3 TTLs at
    // most; a lease renewed too late to stay held fails below).
    let generators: Vec<_> = leases.iter().map(generator).collect();
    let mut ids = Vec::new();
    let start = std::time::Instant::now();
    let renewing = || leases.iter().any(|lease| lease.status().renewals < 2);
    while start.elapsed() < Duration::from_millis(1_600)
        || (renewing() && start.elapsed() < Duration::from_millis(4_500))
    {
        for g in &generators {
            ids.extend(g.take(100).unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for lease in &leases {
        let status = lease.status();
        assert!(
            status.renewals >= 2,
            "renewed every third of the TTL: {status:?}"
        );
        assert_eq!(status.state, LeaseState::Held, "{status:?}");
        assert_eq!(status.failures, 0, "{status:?}");
    }
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n, "duplicate ids across leases");

    // Release one: its worker id is free at once, with a higher token, and the mark is
    // above every id it issued.
    let released = &leases[1];
    let worker = released.worker();
    let token = released.token();
    let last_id = generators[1].next_id().unwrap();
    released.release();
    assert_eq!(released.status().state, LeaseState::Released);
    assert!(
        generators[1].next_id().is_err(),
        "a released lease issues nothing"
    );
    let again = Lease::acquire(&source, scope, 4).unwrap();
    assert_eq!(again.worker(), worker);
    assert!(
        again.token() > token,
        "token {} after {token}",
        again.token()
    );
    let floor = again.status().floor_ms;
    assert!(
        floor >= (last_id >> 22) + EPOCH,
        "mark {floor} below the last id's time"
    );
    let clock = again.guard().clock();
    assert!(
        floor <= clock.now_ms() + 1,
        "a released mark is what was issued, not a reservation"
    );
    let next = generator(&again).next_id().unwrap();
    assert!((next >> 22) + EPOCH > floor);
    drop(again);
    drop(leases);
}
