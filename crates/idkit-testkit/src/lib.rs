//! Test-vector loading and conformance checks shared by idkit's scheme crates.
//!
//! * [`vectors::run`] checks a codec vector file against a scheme's definition, so a
//!   crate's `tests/vectors.rs` is one line per data file.
//! * [`conformance!`] writes the tests every scheme crate passes (`tests/conformance.rs`).
//! * [`load_vectors`] reads `tests/data/<name>.toml`, and refuses a file whose first line
//!   does not name its source (`# source: ...`).
//! * [`check_sequence`], [`check_dyn`] and [`check_contention`] are the checks every scheme
//!   passes: unique and increasing ids, text and byte round trips that agree with
//!   [`SchemeInfo`](idkit_core::SchemeInfo), and no duplicate under contention (with single-id
//!   and batch callers at once, [`check_mixed_contention`]; threads released together,
//!   [`together`]);
//!   `check_seeded` (feature `seeded`), that a generator on a manual clock and a seeded
//!   source repeats itself.
//! * [`Scratch`] is a test's own directory, removed when dropped.
//! * [`http`] reads a raw HTTP response, and (feature `tls`) makes a TLS client that trusts
//!   a test's own certificate authority.
//! * [`cpu`] reads CPU time for the tests that check a waiting thread sleeps, and `range`
//!   (feature `range`) gives them a range-allocator store that takes its time.

pub mod cpu;
pub mod faketime;
pub mod http;
#[cfg(feature = "range")]
pub mod range;
pub mod readme;
pub mod schedule;
mod scratch;
pub mod vectors;

pub use scratch::Scratch;

/// The examples of the workspace's README (each crate's README is tested by that crate),
/// compiled and run with these doc tests so that they stay true to the code.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct WorkspaceReadmeDoctests;

use std::collections::HashSet;
use std::fmt::Debug;
use std::path::Path;
use std::sync::{Arc, Barrier};

use idkit_core::{DynScheme, IdScheme};
#[cfg(feature = "seeded")]
use idkit_core::{ManualClock, random::SeededRandom};
use serde::de::DeserializeOwned;

/// Reads the TOML vector file `tests/data/<name>.toml` of the crate at `manifest_dir`
/// (pass `env!("CARGO_MANIFEST_DIR")`).
///
/// # Panics
///
/// Panics (failing the test) when the file is missing, does not start with a
/// `# source:` line, or does not parse as `T`.
pub fn load_vectors<T: DeserializeOwned>(manifest_dir: &str, name: &str) -> T {
    let path = Path::new(manifest_dir)
        .join("tests/data")
        .join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(
        text.starts_with("# source:"),
        "{} must open with a `# source:` line naming where its vectors come from",
        path.display()
    );
    toml::from_str(&text).unwrap_or_else(|e| panic!("cannot parse {}: {e}", path.display()))
}

/// Issues `n` ids from `generator` one at a time and checks each is strictly greater than
/// the one before (so all are distinct). Returns them.
///
/// # Panics
///
/// On a generation error or an id not above its predecessor.
pub fn check_sequence<G>(generator: &G, n: usize) -> Vec<G::Id>
where
    G: IdScheme,
    G::Id: Ord + Debug,
{
    let ids: Vec<G::Id> = (0..n)
        .map(|i| {
            generator
                .next_id()
                .unwrap_or_else(|e| panic!("id {i} of {n}: {e}"))
        })
        .collect();
    for (i, pair) in ids.windows(2).enumerate() {
        assert!(
            pair[0] < pair[1],
            "id {} ({:?}) is not above id {} ({:?})",
            i + 1,
            pair[1],
            i,
            pair[0]
        );
    }
    ids
}

/// Checks that a generator made on a manual clock and a seeded random source is
/// deterministic: two made with one seed issue the same `n` ids, one made with another
/// seed others. `make` builds the generator from the clock (at 2023-11-14, Unix ms
/// 1,700,000,000,000) and the source; a scheme that reads no clock ignores it.
///
/// # Panics
///
/// On a generation error, or ids that do not follow the seed.
#[cfg(feature = "seeded")]
pub fn check_seeded<G>(make: impl Fn(ManualClock, SeededRandom) -> G, n: usize)
where
    G: IdScheme,
    G::Id: PartialEq + Debug,
{
    let ids = |seed| {
        make(ManualClock::new(1_700_000_000_000), SeededRandom::new(seed))
            .take(n)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"))
    };
    assert_eq!(ids(1), ids(1), "one seed, other ids");
    assert_ne!(ids(1), ids(2), "two seeds, the same ids");
}

/// Checks a scheme through its object-safe form: `n` ids whose canonical strings have the
/// advertised length and alphabet, parse back to the same bytes, decode, and whose byte
/// length is the advertised size. Ids from one generator must be distinct.
///
/// # Panics
///
/// On the first check that fails.
pub fn check_dyn(scheme: &dyn DynScheme, n: usize) {
    let info = scheme.info();
    let mut ids = vec![idkit_core::RawId::default(); n];
    scheme.fill_raw(&mut ids).expect("fill_raw");
    let distinct: HashSet<_> = ids.iter().collect();
    assert_eq!(
        distinct.len(),
        n,
        "{}: duplicate ids in one batch",
        info.name
    );
    for id in &ids {
        assert_eq!(
            id.as_bytes().len(),
            usize::try_from(info.bytes).unwrap_or(usize::MAX),
            "{}: byte length",
            info.name
        );
        let text = scheme.format_raw(id).expect("format_raw");
        let len = u32::try_from(text.len()).unwrap_or(u32::MAX);
        if info.alphabet.variable_length() {
            // Decimal ids are as long as their value needs.
            assert!(len <= info.string_len, "{}: {text} too long", info.name);
        } else {
            assert_eq!(len, info.string_len, "{}: {text} length", info.name);
        }
        assert!(
            text.chars().all(|c| info.alphabet.contains(c)),
            "{}: {text} has a character outside {}",
            info.name,
            info.alphabet.name()
        );
        let back = scheme.parse_raw(&text).expect("parse_raw of own output");
        assert_eq!(&back, id, "{}: {text} does not round-trip", info.name);
        let decoded = scheme.decode_raw(id).expect("decode_raw of own output");
        assert_eq!(
            decoded.timestamp_ms.is_some(),
            info.time_precision_ms.is_some(),
            "{}: timestamp presence must match time_precision_ms",
            info.name
        );
    }
    let one = scheme.next_raw().expect("next_raw");
    assert!(
        !distinct.contains(&one),
        "{}: next_raw repeated an id",
        info.name
    );
}

/// Runs `threads` threads that each take `per_thread` ids from `generator`, shared by them, in
/// batches of `batch` (1 means `next_id`), all starting together. Checks that each thread's
/// ids strictly increase and that no id appears twice across all threads. Returns the total.
///
/// # Panics
///
/// On a generation error, a decrease within a thread, or a duplicate.
pub fn check_contention<G>(generator: G, threads: usize, per_thread: usize, batch: usize) -> usize
where
    G: IdScheme + Send + Sync + 'static,
    G::Id: Ord + Debug + Default + Send + 'static,
{
    check_mixed_contention(generator, &vec![batch; threads], per_thread)
}

/// As [`check_contention`], with one thread for each entry of `batches`, taking its ids in
/// batches of that size (1 means `next_id`): single-id and batch callers at once, their ids
/// checked as one set.
///
/// # Panics
///
/// On a generation error, a decrease within a thread, or a duplicate.
pub fn check_mixed_contention<G>(generator: G, batches: &[usize], per_thread: usize) -> usize
where
    G: IdScheme + Send + Sync + 'static,
    G::Id: Ord + Debug + Default + Send + 'static,
{
    let batches = batches.to_vec();
    let ids = together(batches.len(), move |t| {
        let batch = batches[t];
        let mut ids = Vec::with_capacity(per_thread);
        let mut buf = vec![G::Id::default(); batch.max(1)];
        while ids.len() < per_thread {
            if batch <= 1 {
                ids.push(generator.next_id().expect("next_id under contention"));
            } else {
                let k = batch.min(per_thread - ids.len());
                generator
                    .fill(&mut buf[..k])
                    .expect("fill under contention");
                ids.extend_from_slice(&buf[..k]);
            }
        }
        ids
    });
    let threads = ids.len();
    let total = check_threads(ids);
    assert_eq!(total, threads * per_thread);
    total
}

/// Runs `threads` threads released together (a barrier), thread `t` doing `work(t)`, and
/// gives what each returned, in thread order.
///
/// # Panics
///
/// When a thread panicked (a failed check inside `work`).
pub fn together<T: Send + 'static>(
    threads: usize,
    work: impl Fn(usize) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let barrier = Arc::new(Barrier::new(threads));
    let work = Arc::new(work);
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (barrier, work) = (Arc::clone(&barrier), Arc::clone(&work));
            std::thread::spawn(move || {
                barrier.wait();
                work(t)
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("a thread panicked"))
        .collect()
}

/// Checks the ids several threads took from one generator: each thread's in strictly
/// increasing order, and no id twice across them. Returns how many there are.
///
/// # Panics
///
/// On an id not above the one before it in its thread, or an id taken twice.
pub fn check_threads<T: Ord + Debug>(threads: Vec<Vec<T>>) -> usize {
    for (t, ids) in threads.iter().enumerate() {
        for pair in ids.windows(2) {
            assert!(
                pair[0] < pair[1],
                "thread {t}: {:?} then {:?}",
                pair[0],
                pair[1]
            );
        }
    }
    check_distinct(threads.into_iter().flatten())
}

/// Checks that no id appears twice. Returns how many there are.
///
/// # Panics
///
/// On an id that appears twice.
pub fn check_distinct<T: Ord + Debug>(ids: impl IntoIterator<Item = T>) -> usize {
    let mut all: Vec<T> = ids.into_iter().collect();
    all.sort_unstable();
    if let Some(pair) = all.windows(2).find(|w| w[0] == w[1]) {
        panic!("id {:?} issued twice", pair[0]);
    }
    all.len()
}

/// A loopback port that nothing listens on: bound, read and let go, so that a connection to
/// it is refused at once (for tests of what a client says when its server is not there).
///
/// # Panics
///
/// When no loopback port can be bound.
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("its address").port()
}

/// Packets to a server's `port` on loopback dropped, unanswered, while this lives: the
/// server as its clients see it when its host dies or the network between splits (an
/// `iptables` rule on `INPUT`, taken out again on drop).
///
/// The rule carries the comment [`PARTITION_MARK`]. A rule left behind by a test process
/// that was killed would go on dropping whatever lands on that port later (a client's
/// connection from that local port never completes), so `scripts/test.sh` takes out every
/// rule with the mark before its first partition and when it ends.
#[derive(Debug)]
pub struct Partition {
    port: u16,
}

impl Partition {
    /// Starts dropping packets to `port`.
    ///
    /// # Panics
    ///
    /// When `iptables` is missing or refuses the rule (it needs root; `scripts/test.sh`
    /// installs it).
    pub fn new(port: u16) -> Self {
        let status = iptables("-I", port);
        assert!(
            status.success(),
            "iptables -I failed ({status}): a partition needs root"
        );
        Self { port }
    }
}

impl Drop for Partition {
    fn drop(&mut self) {
        let status = iptables("-D", self.port);
        if !status.success() {
            eprintln!(
                "iptables -D failed ({status}): packets to {} are still dropped",
                self.port
            );
        }
    }
}

/// The port of a server URL (`scheme://user@host:PORT/...`), for [`Partition::new`].
///
/// # Panics
///
/// When the URL names no host or no port.
pub fn url_port(url: &str) -> u16 {
    let authority = url
        .split('/')
        .nth(2)
        .unwrap_or_else(|| panic!("{url} names no host"));
    (authority.rsplit(':').next())
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("{url} names no port"))
}

/// The comment on every [`Partition`]'s `iptables` rule.
pub const PARTITION_MARK: &str = "idkit-test-partition";

fn iptables(action: &str, port: u16) -> std::process::ExitStatus {
    let port = port.to_string();
    // -w: wait for the rule set's lock rather than fail while another process holds it.
    std::process::Command::new("iptables")
        .args([
            "-w", action, "INPUT", "-i", "lo", "-p", "tcp", "--dport", &port,
        ])
        .args(["-m", "comment", "--comment", PARTITION_MARK, "-j", "DROP"])
        .status()
        .unwrap_or_else(|e| panic!("iptables: {e} (scripts/test.sh installs it)"))
}

/// The checks every scheme's definition passes: the scheme it builds with default settings
/// has the facts the definition publishes and passes [`check_dyn`]; its ids read the same
/// through the generator-free codec; a setting it does not take is refused; each identity
/// field takes its largest value and refuses one more; and generator identities
/// `0..=max` build.
///
/// # Panics
///
/// On the first check that fails.
pub fn check_definition(def: &dyn idkit_core::SchemeDef, n: usize) {
    check_definition_with(def, n, &idkit_core::definition::Options::default());
}

/// [`check_definition`] with the options `base` in every build: for a scheme whose default
/// reaches outside the test (the `range` scheme's default store is the user's counter, in
/// the user's state directory).
///
/// # Panics
///
/// On the first check that fails.
pub fn check_definition_with(
    def: &dyn idkit_core::SchemeDef,
    n: usize,
    base: &idkit_core::definition::Options,
) {
    use idkit_core::definition::Options;
    let with_base = |mut options: Options| {
        options.options.extend(base.options.iter().cloned());
        options
    };
    let name = def.name();
    assert!(def.is_called(name) && def.is_called(&name.to_ascii_uppercase()));
    let scheme = def.build(base).expect("build with defaults");
    assert_eq!(scheme.info(), def.info(), "{name}: published facts");
    assert_eq!(scheme.info().name, name);
    check_dyn(scheme.as_ref(), n);
    let codec = def.codec();
    assert_eq!(codec.info(), def.info());
    for _ in 0..100 {
        let id = scheme.next_raw().expect("next_raw");
        let text = scheme.format_raw(&id).unwrap();
        assert_eq!(codec.format_raw(&id).unwrap(), text, "{name}: codec text");
        assert_eq!(codec.parse_raw(&text).unwrap(), id, "{name}: codec parse");
        assert_eq!(
            codec.decode_text(&text).unwrap(),
            scheme.decode_raw(&id).unwrap(),
            "{name}: codec decode"
        );
    }
    let unknown = def
        .build(&with_base(Options::default().field("no-such-field", 1)))
        .expect_err("an unknown field is refused");
    assert!(unknown.to_string().starts_with(name), "{unknown}");
    let unknown = def
        .build(&with_base(Options::default().option("no-such-option", "x")))
        .expect_err("an unknown option is refused");
    assert!(unknown.to_string().contains("no-such-option"), "{unknown}");
    let identity = def.identity();
    for field in &identity {
        def.build(&with_base(
            Options::default().field(field.name, field.max()),
        ))
        .unwrap_or_else(|e| panic!("{name}: {} = max: {e}", field.name));
        if field.bits < 64 {
            let err = def
                .build(&with_base(
                    Options::default().field(field.name, field.max() + 1),
                ))
                .err();
            assert!(err.is_some(), "{name}: {} = max + 1 accepted", field.name);
        }
    }
    let bits: u32 = identity.iter().map(|f| f.bits).sum();
    if bits < 64 {
        let last = (1u64 << bits) - 1;
        assert_eq!(def.identity_count(), last + 1, "{name}: identity count");
        def.build(&with_base(def.with_identity(last).unwrap()))
            .unwrap();
        assert!(def.with_identity(last + 1).is_err());
        // identity_of reads back what with_identity spread over the fields.
        for n in [0, last / 3, last] {
            assert_eq!(
                def.identity_of(&def.with_identity(n).unwrap()),
                n,
                "{name}: {n}"
            );
        }
    }
}

/// Writes a scheme crate's conformance tests: `idkit_testkit::conformance!(DEFINITION);`
/// in `tests/conformance.rs` runs [`check_definition`] on it. A crate of several schemes
/// names a module for each, `conformance! { twitter => TWITTER, discord => DISCORD }`.
#[macro_export]
macro_rules! conformance {
    ($($name:ident => $def:expr),+ $(,)?) => {
        $(
            mod $name {
                $crate::conformance!($def);
            }
        )+
    };
    ($def:expr) => {
        #[test]
        fn definition_conforms() {
            $crate::check_definition(&$def, 5_000);
        }
    };
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicU64, Ordering};

    use idkit_core::{GenerateError, SchemeInfo};

    use super::*;

    /// One counter shared by every caller: a correct generator.
    #[derive(Default)]
    struct Shared(AtomicU64);

    impl IdScheme for Shared {
        type Id = u64;
        fn next_id(&self) -> Result<u64, GenerateError> {
            Ok(self.0.fetch_add(1, Ordering::Relaxed) + 1)
        }
        fn info(&self) -> SchemeInfo {
            SchemeInfo::new("shared-counter", 64)
        }
    }

    thread_local! {
        static OWN: Cell<u64> = const { Cell::new(0) };
    }

    /// A counter per thread behind a shared handle: each thread's ids increase, and threads
    /// issue the same ones.
    struct PerThread;

    impl IdScheme for PerThread {
        type Id = u64;
        fn next_id(&self) -> Result<u64, GenerateError> {
            Ok(OWN.with(|c| {
                c.set(c.get() + 1);
                c.get()
            }))
        }
        fn info(&self) -> SchemeInfo {
            SchemeInfo::new("per-thread-counter", 64)
        }
    }

    #[test]
    fn a_decrease_within_a_thread_fails() {
        let e = std::panic::catch_unwind(|| check_threads(vec![vec![1, 3, 2]])).unwrap_err();
        assert_eq!(e.downcast_ref::<String>().unwrap(), "thread 0: 3 then 2");
    }

    #[test]
    fn an_id_two_threads_took_fails() {
        let e = std::panic::catch_unwind(|| check_threads(vec![vec![1, 2], vec![2, 3]]));
        assert_eq!(
            e.unwrap_err().downcast_ref::<String>().unwrap(),
            "id 2 issued twice"
        );
        assert_eq!(check_threads(vec![vec![1, 3], vec![2, 4]]), 4);
    }

    #[test]
    fn mixed_callers_are_checked_as_one_set() {
        assert_eq!(
            check_mixed_contention(Shared::default(), &[1, 1, 7, 7], 1_000),
            4_000
        );
        // The single-id threads and the batch threads each see no duplicate among
        // themselves; across them, every id repeats.
        let across = std::panic::catch_unwind(|| check_mixed_contention(PerThread, &[1, 7], 1_000));
        assert!(across.is_err());
    }

    #[cfg(feature = "seeded")]
    #[test]
    fn a_generator_that_ignores_its_seed_fails() {
        let e = std::panic::catch_unwind(|| check_seeded(|_, _| Shared::default(), 10));
        let message = e.unwrap_err().downcast_ref::<String>().unwrap().clone();
        assert!(message.contains("two seeds, the same ids"), "{message}");
    }
}
