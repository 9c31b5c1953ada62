//! A child process made by `fork` and its parent: without `idkit_core::after_fork` the child
//! draws the random bits its parent draws next (the hazard RFC 9562, section 6.9, names:
//! a CSPRNG must be "properly reseeded upon state changes, such as process forks") and it
//! has no ticker thread, so its ticker time stands still; with it, the two make no id twice
//! and the child's ticker runs.
//!
//! A binary of its own (`harness = false`): `fork` copies only the calling thread, and
//! libtest's runner would be running others.

#[cfg(unix)]
fn main() {
    unix::main();
}

#[cfg(not(unix))]
fn main() {}

#[cfg(unix)]
mod unix {
    use std::collections::HashSet;
    use std::time::Duration;

    use idkit_all::registry::{Entry, Options, schemes};
    use idkit_core::{Clock, Coordination, TickerClock};

    /// Ids each scheme makes on each side.
    const N: usize = 200;

    /// The registry's schemes whose generators need no coordination because random bits
    /// keep their ids apart (UUIDv4 and v7, ULID, KSUID, TypeID, ObjectId). Not Mastodon's,
    /// which has no random bits: two of its generators make the same ids in the same
    /// millisecond, forked or not.
    fn random_schemes() -> Vec<&'static Entry> {
        schemes()
            .iter()
            .copied()
            .filter(|e| e.info().coordination == Coordination::None && e.info().random_bits > 0)
            .collect()
    }

    /// `N` ids of every such scheme, each from a generator built now, as `scheme id` lines.
    fn ids() -> Vec<String> {
        let mut lines = Vec::new();
        for entry in random_schemes() {
            let scheme = entry.build(&Options::default()).expect("a default build");
            for _ in 0..N {
                let id = scheme.next_raw().expect("an id");
                let text = scheme.format_raw(&id).expect("its text");
                lines.push(format!("{} {text}", entry.name()));
            }
        }
        lines
    }

    /// The child's ids, then how far its ticker time moved while it slept 30 ms and how many
    /// threads it has.
    fn child_ids(after_fork: bool) -> Vec<String> {
        if after_fork {
            idkit_core::after_fork().expect("after_fork");
        }
        let clock = TickerClock::new();
        let start = clock.now_ms();
        std::thread::sleep(Duration::from_millis(30));
        let moved = clock.now_ms() - start;
        let mut lines = ids();
        let threads = std::fs::read_dir("/proc/self/task").map_or(0, Iterator::count);
        lines.push(format!("clock moved {moved} ms; {threads} threads"));
        lines
    }

    /// Runs `child` in a child process made by `fork` and returns the lines it made.
    fn in_child(child: impl FnOnce() -> Vec<String>) -> Vec<String> {
        let path = std::env::temp_dir().join(format!("idkit-fork-{}.txt", std::process::id()));
        match fork::fork().expect("fork") {
            fork::Fork::Child => {
                let code = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)) {
                    Ok(lines) => i32::from(std::fs::write(&path, lines.join("\n")).is_err()),
                    Err(_) => 101,
                };
                std::process::exit(code);
            }
            fork::Fork::Parent(pid) => {
                let status = fork::waitpid(pid).expect("waitpid");
                assert_eq!(status, 0, "the child failed (wait status {status})");
                let text = std::fs::read_to_string(&path).expect("the child's ids");
                std::fs::remove_file(&path).expect("remove the child's file");
                text.lines().map(str::to_owned).collect()
            }
        }
    }

    /// The child's ids that the parent made too, and the child's clock line.
    fn shared(child: &[String], parent: &[String]) -> (Vec<String>, String) {
        let (clock, ids) = child.split_last().expect("the clock line");
        let parent: HashSet<&String> = parent.iter().collect();
        let both = ids
            .iter()
            .filter(|id| parent.contains(id))
            .cloned()
            .collect();
        (both, clock.clone())
    }

    pub fn main() {
        let names: Vec<_> = random_schemes().iter().map(|e| e.name()).collect();
        assert!(
            ["uuid-v4", "uuid-v7", "ulid", "ksuid"]
                .iter()
                .all(|name| names.contains(name)),
            "the random schemes: {names:?}"
        );
        // The parent has drawn random bits and runs the ticker, as any process making ids.
        let _ = TickerClock::new();
        let _ = ids();

        let child = in_child(|| child_ids(false));
        let parent = ids();
        let (both, clock) = shared(&child, &parent);
        let v4: Vec<_> = parent
            .iter()
            .filter(|l| l.starts_with("uuid-v4 "))
            .collect();
        assert_eq!(v4.len(), N);
        assert!(
            v4.iter().all(|id| both.contains(*id)),
            "without after_fork the child draws its parent's bits: every UUIDv4 repeats"
        );
        // Its time stands still (or, where the parent's ticker rested at the fork, every
        // read takes the monotonic clock): no thread ticks.
        assert!(
            clock.ends_with("; 1 threads"),
            "without after_fork the child has no ticker thread: {clock}"
        );
        println!(
            "fork without after_fork: {} of the child's {} ids were the parent's too; {clock}",
            both.len(),
            child.len() - 1
        );

        let child = in_child(|| child_ids(true));
        let parent = ids();
        let (both, clock) = shared(&child, &parent);
        assert!(both.is_empty(), "ids made on both sides: {both:?}");
        assert!(
            !clock.starts_with("clock moved 0 ms") && clock.ends_with("; 2 threads"),
            "after_fork starts the child's ticker: {clock}"
        );
        println!(
            "fork with after_fork: none of the child's {} ids were the parent's ({}); {clock}",
            child.len() - 1,
            names.join(", ")
        );
    }
}
