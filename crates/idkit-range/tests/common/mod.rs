//! Shared helpers for the range tests (included with `mod common;`).
#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use idkit_range::idkit_core::{GenerateError, GenerateErrorKind};
use idkit_range::{IdScheme, RangeAllocator};

/// A name of its own for each test run: `tag`, the process id and the time in nanoseconds
/// (a store namespace, a scratch directory).
pub fn namespace(tag: &str) -> String {
    format!(
        "{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

/// The outage every store passes, on `a` (blocks of 100, prefetch at half): 60 ids, then
/// the prefetch of the second block awaited; `down` takes the store away, and the 140 ids
/// still leased are served; the next id is a typed `Unavailable` error; `up` brings the
/// store back, and the allocator recovers by itself. Each wait gives up after `patience`.
/// Every id is unique and increasing. Returns the error, for the store's own checks.
pub fn outage(
    a: &RangeAllocator,
    patience: Duration,
    down: impl FnOnce(),
    up: impl FnOnce(),
) -> GenerateError {
    let mut issued: Vec<u64> = (0..60).map(|_| a.next_id().unwrap()).collect();
    let deadline = Instant::now() + patience;
    while a.stats().leases < 2 {
        assert!(Instant::now() < deadline, "prefetch did not happen");
        std::thread::sleep(Duration::from_millis(5));
    }
    down();
    for _ in 0..140 {
        issued.push(a.next_id().unwrap());
    }
    let err = a.next_id().unwrap_err();
    assert_eq!(err.kind(), GenerateErrorKind::Unavailable, "{err:?}");
    assert!(err.to_string().contains("range store unreachable"), "{err}");
    up();
    recovers(a, issued, patience);
    err
}

/// Waits up to `patience` for `a`'s next id once its store is back, and checks it and
/// every id `issued` before unique and increasing.
fn recovers(a: &RangeAllocator, mut issued: Vec<u64>, patience: Duration) {
    let deadline = Instant::now() + patience;
    let next = loop {
        match a.next_id() {
            Ok(id) => break id,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("did not recover: {e}"),
        }
    };
    issued.push(next);
    idkit_testkit::check_threads(vec![issued]);
}

/// The allocator `cut_off` takes: namespace `ns` on `store`, blocks of 10, a wait of 1 s.
pub fn small_blocks(store: impl idkit_range::Store, ns: &str) -> RangeAllocator {
    RangeAllocator::builder(store)
        .namespace(ns)
        .block_size(10)
        .max_block(10)
        .wait(Duration::from_secs(1))
        .build()
        .unwrap()
}

/// A partition every server store survives, on `a` ([`small_blocks`]) over the
/// server at `port` (`cut_off` with packets to the server dropped): the stores give up a
/// lease without an acknowledgement after 10 s, where the system's retransmissions would
/// take about 15 minutes. Returns how long after the partition the lease was given up.
pub fn partition(a: &RangeAllocator, port: u16) -> Duration {
    cut_off(a, || idkit_testkit::Partition::new(port)).0
}

/// A lease cut off from its store, on `a` ([`small_blocks`]): once `a` has leased
/// twice over an open connection, `cut` starts what holds the next lease up (what it
/// returns ends it when dropped), and `a`'s leased ids are drained, so that its next lease
/// goes out into it. The leasing thread must give that lease up within 30 s and `a`'s next
/// id fail at once, naming the store's error; then the cut ends and `a` recovers by itself.
/// Every id is unique and increasing. Returns how long after the cut the lease was given
/// up, and that error.
pub fn cut_off<G>(a: &RangeAllocator, cut: impl FnOnce() -> G) -> (Duration, GenerateError) {
    let mut issued = vec![a.next_id().unwrap()];
    let deadline = Instant::now() + Duration::from_secs(30);
    while a.stats().leases < 2 {
        assert!(
            Instant::now() < deadline,
            "the second block was never leased"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let cut = cut();
    let started = Instant::now();
    let err = loop {
        match a.next_id() {
            Ok(id) => issued.push(id),
            Err(e) => break e,
        }
        // Twenty ids were leased before the cut; many more mean it held nothing up.
        assert!(issued.len() < 1_000, "leases went on through the cut");
    };
    assert_eq!(err.kind(), GenerateErrorKind::Unavailable, "{err:?}");
    while a.stats().store_errors == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the lease sent into the cut was not given up in 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let gave_up = started.elapsed();
    let named = a.next_id().unwrap_err();
    assert_eq!(named.kind(), GenerateErrorKind::Unavailable, "{named:?}");
    drop(cut);
    recovers(a, issued, Duration::from_secs(30));
    (gave_up, named)
}

/// `threads` threads take `per` ids each from `allocators[i % len]`; returns each thread's
/// ids in order.
pub fn run_threads(
    allocators: &[Arc<RangeAllocator>],
    threads: usize,
    per: usize,
) -> Vec<Vec<u64>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let a = Arc::clone(&allocators[i % allocators.len()]);
                s.spawn(move || {
                    let mut ids = Vec::with_capacity(per);
                    let mut batch = [0u64; 7];
                    while ids.len() < per {
                        // Mix single ids and small batches.
                        if ids.len() % 3 == 0 {
                            a.fill(&mut batch).unwrap();
                            ids.extend_from_slice(&batch);
                        } else {
                            ids.push(a.next_id().unwrap());
                        }
                    }
                    ids
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Reads ids from a child printing one per line until it has printed `at_least`, kills it
/// with SIGKILL, and returns every id it printed (the harness's own lines skipped).
pub fn kill_after(mut child: std::process::Child, at_least: usize) -> Vec<u64> {
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut issued = Vec::new();
    while issued.len() < at_least {
        let line = lines.next().unwrap().unwrap();
        if let Ok(id) = line.trim().parse::<u64>() {
            issued.push(id);
        }
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    // Whatever it printed after we stopped reading was issued too.
    issued.extend(
        lines
            .map_while(Result::ok)
            .filter_map(|l| l.trim().parse::<u64>().ok()),
    );
    issued
}

/// Waits for children that each print `each` ids and returns their ids; each must exit 0
/// (a failure shows the child's stderr).
pub fn collect_children(children: Vec<std::process::Child>, each: usize) -> Vec<Vec<u64>> {
    children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "child failed ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8(out.stdout).unwrap();
            // The harness prints a line or two of its own.
            let ids: Vec<u64> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
            assert_eq!(ids.len(), each);
            ids
        })
        .collect()
}

/// Allocators that map one namespace's counter to ids differently would hand out the same
/// ids (at step 1 counter 51 is id 51; at step 2, offset 1, counter 25 is). On the store of
/// `make(namespace, step, offset)`: an allocator of step 2, offset 1 on a namespace kept at
/// step 1 fails with a typed `Unavailable` error naming both interleaves, while the first
/// allocator and another of its interleave go on without a repeated id, and a namespace of
/// its own takes the other interleave.
pub fn another_interleave_is_refused(make: impl Fn(&str, u64, u64) -> RangeAllocator) {
    let ns = namespace("interleave");
    let first = make(&ns, 1, 0);
    let mut ids: Vec<u64> = (0..100).map(|_| first.next_id().unwrap()).collect();
    let other = make(&ns, 2, 1);
    let err = other.next_id().unwrap_err();
    assert_eq!(err.kind(), GenerateErrorKind::Unavailable, "{err}");
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "namespace {ns:?} of this range store is leased with interleave step 1, offset 0, \
             not step 2, offset 1"
        )),
        "{text}"
    );
    // Asked again, it is refused again.
    assert!(other.next_id().is_err());
    let same = make(&ns, 1, 0);
    for _ in 0..100 {
        ids.push(same.next_id().unwrap());
        ids.push(first.next_id().unwrap());
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), ids.len(), "an id was handed out twice");
    let own = make(&namespace("interleave-own"), 2, 1);
    let odd: Vec<u64> = (0..100).map(|_| own.next_id().unwrap()).collect();
    assert!(odd.iter().all(|id| id % 2 == 1), "{odd:?}");
}

/// A store refuses, typed and before it touches its counter, a lease of 0 values (its last
/// value would come before its first) and namespaces `check_namespace` refuses; a lease past
/// 2^63 - 1 values is `Exhausted`; the namespace's counter is where it was.
pub fn bad_requests_are_refused(store: &dyn idkit_range::Store) {
    use idkit_range::StoreError;
    let ns = namespace("requests");
    let first = store.lease(&ns, 10).unwrap();
    let invalid = |e: StoreError, what: &str| match e {
        StoreError::Invalid(reason) => assert!(reason.contains(what), "{reason}"),
        other => panic!("expected Invalid ({what}), got {other:?}"),
    };
    invalid(store.lease(&ns, 0).unwrap_err(), "a lease of 0 values");
    invalid(store.lease("", 10).unwrap_err(), "namespace is empty");
    invalid(
        store.lease(&"n".repeat(129), 10).unwrap_err(),
        "at most 128",
    );
    let asked = idkit_range::Interleave { step: 1, offset: 0 };
    invalid(
        store.interleave("a\nb", asked).unwrap_err(),
        "control character",
    );
    assert_eq!(
        store.lease(&ns, u64::MAX).unwrap_err(),
        StoreError::Exhausted
    );
    let next = store.lease(&ns, 10).unwrap();
    assert_eq!((first.last, next.first, next.last), (10, 11, 20));
}
