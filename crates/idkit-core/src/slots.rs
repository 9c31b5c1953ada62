//! Generators' words in memory that processes share, found by name: the table that
//! idkit's PostgreSQL extension keeps in the server's shared memory and `idkit-sqlite` in
//! a file every process on a database maps, so that every process takes its ids of one
//! generator from one word.
//!
//! A slot holds a key (two hashes of the generator's name; 0 when free) and the word. The
//! table is open-addressed: a name's search starts at its hash and goes on to the next
//! slot, and ends at the first free slot (slots are taken in that order and never freed).
//! A name already laid out is found without a lock. A name not found, or one being laid
//! out, is claimed under the caller's lock (the file lock of the SQLite state, the
//! PostgreSQL extension's LWLock): whoever holds it finds the name's slot or lays out the
//! first free one with the generator's first word, so a claimer stopped half way (preempted,
//! throttled, killed) makes every other claimer of the name wait for the lock, never take
//! a second slot. A claimer that died with the lock held left a slot whose first key word
//! is still 0, which the next claimer lays out anew.
//!
//! ```
//! use idkit_core::slots::{claim, Slot};
//! use std::sync::Mutex;
//! let table = [const { Slot::free() }; 8];
//! let lock = Mutex::new(());
//! let a = claim(&table, "snowflake|twitter|7", 100, || lock.lock()).unwrap().unwrap();
//! let again = claim(&table, "snowflake|twitter|7", 5, || lock.lock()).unwrap().unwrap();
//! assert!(core::ptr::eq(a, again), "one word per name");
//! assert_eq!(again.load(core::sync::atomic::Ordering::Relaxed), 100, "laid out once");
//! ```

#[cfg(not(loom))]
use core::sync::atomic::{AtomicU64, Ordering};
#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};

/// One generator's word and the key it is found by, on a cache line of its own. Its layout
/// (`repr(C)`: two key words, then the word, 64-byte aligned) is fixed: `idkit-sqlite`'s
/// state file holds it.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct Slot {
    key: [AtomicU64; 2],
    word: AtomicU64,
}

impl Slot {
    /// A free slot (all zeros, as memory freshly mapped or allocated zeroed is).
    #[cfg(not(loom))]
    pub const fn free() -> Slot {
        Slot {
            key: [AtomicU64::new(0), AtomicU64::new(0)],
            word: AtomicU64::new(0),
        }
    }

    /// A free slot (loom's atomics are not built in `const`).
    #[cfg(loom)]
    pub fn free() -> Slot {
        Slot {
            key: [AtomicU64::new(0), AtomicU64::new(0)],
            word: AtomicU64::new(0),
        }
    }
}

/// FNV-1a of `text` from `seed`, never 0 (a free slot) nor `u64::MAX` (which an earlier
/// layout of this table wrote while a slot was being laid out; such a slot reads as
/// another name's).
fn hash(text: &str, seed: u64) -> u64 {
    let h = text.bytes().fold(seed, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    h.clamp(1, u64::MAX - 1)
}

/// The key of `name`: two hashes of it.
fn key_of(name: &str) -> [u64; 2] {
    [
        hash(name, 0xcbf2_9ce4_8422_2325),
        hash(name, 0x8422_2325_cbf2_9ce4),
    ]
}

/// Where a search for a name ended.
enum Found<'a> {
    /// The name's slot, laid out.
    Name(&'a AtomicU64),
    /// The first free slot on the name's path: the name is in no slot.
    Free(&'a Slot),
    /// Every slot holds another name.
    Full,
}

/// The slot of `want` on its path from its hash, or the first free one.
fn search<'a>(slots: &'a [Slot], want: [u64; 2]) -> Found<'a> {
    let Some(count) = u64::try_from(slots.len()).ok().filter(|&n| n > 0) else {
        return Found::Full;
    };
    let start = usize::try_from(want[0] % count).unwrap_or(0);
    for slot in slots[start..].iter().chain(&slots[..start]) {
        // Acquire: a first key word seen was stored last (release), after the second and
        // the word.
        match slot.key[0].load(Ordering::Acquire) {
            0 => return Found::Free(slot),
            first if first == want[0] && slot.key[1].load(Ordering::Relaxed) == want[1] => {
                return Found::Name(&slot.word);
            }
            _ => {}
        }
    }
    Found::Full
}

/// Lays `slot` out for `want` with `initial`, under the lock: the second key word and the
/// word first, then the first key word, which makes the slot visible. `stop_after` stops
/// after that many of the three stores (a claimer that dies half way, in the model checks).
fn lay_out(slot: &Slot, want: [u64; 2], initial: u64, stop_after: usize) {
    let stores: [&dyn Fn(); 3] = [
        &|| slot.key[1].store(want[1], Ordering::Relaxed),
        &|| slot.word.store(initial, Ordering::Relaxed),
        &|| slot.key[0].store(want[0], Ordering::Release),
    ];
    for store in stores.iter().take(stop_after) {
        store();
    }
}

/// The word of `name` in `slots`: the slot already laid out for it, or a free one laid out
/// now with `initial`; `None` when every slot holds another name.
///
/// `lock` takes the lock that every process claiming in `slots` takes (held while its
/// result lives): a name that is not laid out yet is looked for again and laid out under it.
/// A name already laid out is found without it.
///
/// # Errors
///
/// `lock`'s, when it cannot take the lock; nothing is claimed then.
pub fn claim<'a, G, E>(
    slots: &'a [Slot],
    name: &str,
    initial: u64,
    lock: impl FnOnce() -> Result<G, E>,
) -> Result<Option<&'a AtomicU64>, E> {
    claim_key(slots, key_of(name), initial, lock, usize::MAX)
}

/// Carries every word of `from` into `into`: each name of `from` claimed in `into` (under
/// `lock`, as [`claim`]) and its word there raised to `from`'s (`fetch_max`: the words are
/// the last id made, which only grows). For a table whose file was replaced under the
/// processes that use it: the new file goes on above every id the old one gave.
///
/// # Errors
///
/// `lock`'s; `Ok(false)` when `into` had no room for every name of `from`.
pub fn carry<G, E>(
    from: &[Slot],
    into: &[Slot],
    mut lock: impl FnMut() -> Result<G, E>,
) -> Result<bool, E> {
    let mut all = true;
    for slot in from {
        let first = slot.key[0].load(Ordering::Acquire);
        if first == 0 || first == u64::MAX {
            continue;
        }
        let want = [first, slot.key[1].load(Ordering::Relaxed)];
        let last = slot.word.load(Ordering::Acquire);
        match claim_key(into, want, last, &mut lock, usize::MAX)? {
            Some(word) => {
                word.fetch_max(last, Ordering::AcqRel);
            }
            None => all = false,
        }
    }
    Ok(all)
}

/// [`claim`] by key, its lay-out stopped after `stop_after` stores (see [`lay_out`]).
fn claim_key<G, E>(
    slots: &[Slot],
    want: [u64; 2],
    initial: u64,
    lock: impl FnOnce() -> Result<G, E>,
    stop_after: usize,
) -> Result<Option<&AtomicU64>, E> {
    if let Found::Name(word) = search(slots, want) {
        return Ok(Some(word));
    }
    let _held = lock()?;
    Ok(match search(slots, want) {
        Found::Name(word) => Some(word),
        Found::Free(slot) => {
            lay_out(slot, want, initial, stop_after);
            (stop_after >= 3).then_some(&slot.word)
        }
        Found::Full => None,
    })
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// No lock: for one thread.
    fn no_lock() -> Result<(), ()> {
        Ok(())
    }

    #[test]
    fn names_get_their_own_words_until_the_table_is_full() {
        let table = [const { Slot::free() }; 4];
        let words: [_; 4] = core::array::from_fn(|i| {
            let name = ["a", "b", "c", "d"][i];
            claim(&table, name, 10 + i as u64, no_lock)
                .unwrap()
                .unwrap()
        });
        for (i, word) in words.iter().enumerate() {
            assert_eq!(word.load(Ordering::Relaxed), 10 + i as u64);
            for other in &words[i + 1..] {
                assert!(!core::ptr::eq(*word, *other));
            }
        }
        assert!(
            claim(&table, "e", 0, no_lock).unwrap().is_none(),
            "every slot holds another name"
        );
        assert!(core::ptr::eq(
            claim(&table, "c", 0, no_lock).unwrap().unwrap(),
            words[2]
        ));
        assert!(claim(&[], "a", 0, no_lock).unwrap().is_none());
    }

    #[cfg(feature = "std")]
    #[test]
    fn threads_claiming_one_name_share_one_word() {
        let table = &[const { Slot::free() }; 64];
        let lock = &std::sync::Mutex::new(());
        let words: Vec<usize> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    s.spawn(move || {
                        claim(table, "one", i, || lock.lock()).unwrap().unwrap() as *const _
                            as usize
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(words.iter().all(|&w| w == words[0]), "{words:?}");
        assert_eq!(
            table
                .iter()
                .filter(|s| s.key[0].load(Ordering::Relaxed) != 0)
                .count(),
            1
        );
    }

    #[test]
    fn carrying_raises_every_word_of_one_table_in_another() {
        let old = [const { Slot::free() }; 8];
        let new = [const { Slot::free() }; 8];
        claim(&old, "a", 50, no_lock).unwrap().unwrap();
        claim(&old, "b", 7, no_lock).unwrap().unwrap();
        // In the new table already: "a" below the old word, "c" of its own.
        let a = claim(&new, "a", 10, no_lock).unwrap().unwrap();
        let c = claim(&new, "c", 99, no_lock).unwrap().unwrap();
        assert_eq!(carry(&old, &new, no_lock), Ok(true));
        assert_eq!(a.load(Ordering::Relaxed), 50, "raised to the old word");
        assert_eq!(
            c.load(Ordering::Relaxed),
            99,
            "another name is left as it was"
        );
        let b = claim(&new, "b", 0, no_lock).unwrap().unwrap();
        assert_eq!(b.load(Ordering::Relaxed), 7, "laid out with the old word");
        // A higher word in the new table is kept.
        a.store(80, Ordering::Relaxed);
        assert_eq!(carry(&old, &new, no_lock), Ok(true));
        assert_eq!(a.load(Ordering::Relaxed), 80);
        // No room: said.
        let small = [const { Slot::free() }; 1];
        assert_eq!(carry(&old, &small, no_lock), Ok(false));
    }

    #[test]
    fn the_layout_is_the_state_file_s() {
        assert_eq!(core::mem::size_of::<Slot>(), 64);
        assert_eq!(core::mem::align_of::<Slot>(), 64);
    }
}

/// The claim under loom: every interleaving of claimers of one name, one of them stopped
/// after each of its lay-out's stores (a process killed half way: its lock is released, its
/// stores so far stay), the others still sharing one word.
#[cfg(all(test, loom))]
mod loom_claim {
    use super::*;
    use loom::sync::{Arc, Mutex};
    use loom::thread;

    #[test]
    fn loom_claimers_of_one_name_share_one_word_whoever_stops_half_way() {
        for stop_after in 0..=3 {
            loom::model(move || {
                let table = Arc::new([Slot::free(), Slot::free()]);
                let lock = Arc::new(Mutex::new(()));
                let stopped = {
                    let (table, lock) = (table.clone(), lock.clone());
                    thread::spawn(move || {
                        claim_key(&*table, key_of("one"), 7, || lock.lock(), stop_after)
                            .unwrap()
                            .map(|w| core::ptr::from_ref(w) as usize)
                    })
                };
                let other = {
                    let (table, lock) = (table.clone(), lock.clone());
                    thread::spawn(move || {
                        let word = claim(&*table, "one", 9, || lock.lock()).unwrap().unwrap();
                        (
                            core::ptr::from_ref(word) as usize,
                            word.load(Ordering::Relaxed),
                        )
                    })
                };
                let mine = claim(&*table, "one", 11, || lock.lock()).unwrap().unwrap();
                let (theirs, seen) = other.join().unwrap();
                let stopped = stopped.join().unwrap();
                assert_eq!(
                    core::ptr::from_ref(mine) as usize,
                    theirs,
                    "two words for one name"
                );
                if let Some(word) = stopped {
                    assert_eq!(word, theirs, "the whole claim's word is another");
                }
                // Laid out once, by a claimer that finished it: the word it was given.
                let first = mine.load(Ordering::Relaxed);
                assert!([7, 9, 11].contains(&first), "{first}");
                assert!(
                    stop_after == 3 || first != 7,
                    "a half-done claim's word is used"
                );
                assert!([7, 9, 11].contains(&seen));
                let taken = table
                    .iter()
                    .filter(|s| s.key[0].load(Ordering::Relaxed) != 0)
                    .count();
                assert_eq!(taken, 1, "one slot for one name");
            });
        }
    }
}
