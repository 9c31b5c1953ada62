//! Generators' words in memory that processes share, found by name: the table that
//! idkit's PostgreSQL extension keeps in the server's shared memory and `idkit-sqlite` in
//! a file every process on a database maps, so that every process takes its ids of one
//! generator from one word.
//!
//! A slot holds a key (two hashes of the generator's name; 0 when free) and the word. The
//! table is open-addressed: a name's search starts at its hash and goes on to the next
//! slot. Whoever finds a name's slot free lays it out with the generator's first word; the
//! others wait for that to be done, then share it. Slots are never freed.
//!
//! ```
//! use idkit_core::slots::{claim, Slot};
//! let table = [const { Slot::free() }; 8];
//! let a = claim(&table, "snowflake|twitter|7", 100).unwrap();
//! let again = claim(&table, "snowflake|twitter|7", 5).unwrap();
//! assert!(core::ptr::eq(a, again), "one word per name");
//! assert_eq!(again.load(core::sync::atomic::Ordering::Relaxed), 100, "laid out once");
//! ```

use core::sync::atomic::{AtomicU64, Ordering};

/// A slot's first key word while a process lays the slot out.
const CLAIMING: u64 = u64::MAX;

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
    pub const fn free() -> Slot {
        Slot {
            key: [AtomicU64::new(0), AtomicU64::new(0)],
            word: AtomicU64::new(0),
        }
    }
}

/// FNV-1a of `text` from `seed`, never 0 nor [`CLAIMING`].
fn hash(text: &str, seed: u64) -> u64 {
    let h = text.bytes().fold(seed, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    h.clamp(1, CLAIMING - 1)
}

/// A slot's first key word once no process is laying it out; [`CLAIMING`] still if the
/// process that took it died before it was done (the slot is then never used).
fn settled(slot: &Slot) -> u64 {
    let mut first = slot.key[0].load(Ordering::Acquire);
    for _ in 0..100_000 {
        if first != CLAIMING {
            break;
        }
        core::hint::spin_loop();
        first = slot.key[0].load(Ordering::Acquire);
    }
    first
}

/// The word of `name` in `slots`: the slot already laid out for it, or a free one laid out
/// now with `initial`; `None` when every slot holds another name.
pub fn claim<'a>(slots: &'a [Slot], name: &str, initial: u64) -> Option<&'a AtomicU64> {
    let want = [
        hash(name, 0xcbf2_9ce4_8422_2325),
        hash(name, 0x8422_2325_cbf2_9ce4),
    ];
    let count = u64::try_from(slots.len()).ok().filter(|&n| n > 0)?;
    let start = usize::try_from(want[0] % count).unwrap_or(0);
    for slot in slots[start..].iter().chain(&slots[..start]) {
        let mut first = settled(slot);
        if first == 0 {
            if slot.key[0]
                .compare_exchange(0, CLAIMING, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                slot.key[1].store(want[1], Ordering::Relaxed);
                slot.word.store(initial, Ordering::Relaxed);
                slot.key[0].store(want[0], Ordering::Release);
                return Some(&slot.word);
            }
            first = settled(slot);
        }
        if first == want[0] && slot.key[1].load(Ordering::Relaxed) == want[1] {
            return Some(&slot.word);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_get_their_own_words_until_the_table_is_full() {
        let table = [const { Slot::free() }; 4];
        let words: [_; 4] = core::array::from_fn(|i| {
            let name = ["a", "b", "c", "d"][i];
            claim(&table, name, 10 + i as u64).unwrap()
        });
        for (i, word) in words.iter().enumerate() {
            assert_eq!(word.load(Ordering::Relaxed), 10 + i as u64);
            for other in &words[i + 1..] {
                assert!(!core::ptr::eq(*word, *other));
            }
        }
        assert!(
            claim(&table, "e", 0).is_none(),
            "every slot holds another name"
        );
        assert!(core::ptr::eq(claim(&table, "c", 0).unwrap(), words[2]));
        assert!(claim(&[], "a", 0).is_none());
    }

    #[cfg(feature = "std")]
    #[test]
    fn threads_claiming_one_name_share_one_word() {
        let table = &[const { Slot::free() }; 64];
        let words: Vec<usize> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|i| s.spawn(move || claim(table, "one", i).unwrap() as *const _ as usize))
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
    fn the_layout_is_the_state_file_s() {
        assert_eq!(core::mem::size_of::<Slot>(), 64);
        assert_eq!(core::mem::align_of::<Slot>(), 64);
    }
}
