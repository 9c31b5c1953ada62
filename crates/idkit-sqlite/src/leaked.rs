//! A list of leaked values that only grows, pushed onto with a compare-and-swap and walked
//! without a lock: what a fork handler may walk, since a child made by fork cannot take a
//! lock that another thread of its parent held.

use std::sync::atomic::{AtomicPtr, Ordering};

/// A value that can be on a [`List`]: it holds the link to the next one.
pub(crate) trait Linked: Sized + 'static {
    /// The link, null until the value is pushed.
    fn next(&self) -> &AtomicPtr<Self>;
}

/// The list: its newest value, null when empty.
pub(crate) struct List<T>(AtomicPtr<T>);

impl<T: Linked> List<T> {
    /// An empty list.
    pub(crate) const fn new() -> Self {
        Self(AtomicPtr::new(std::ptr::null_mut()))
    }

    /// Puts `value` (leaked, never freed) on the list.
    pub(crate) fn push(&self, value: &'static T) {
        let mut head = self.0.load(Ordering::Acquire);
        loop {
            value.next().store(head, Ordering::Release);
            match self.0.compare_exchange_weak(
                head,
                std::ptr::from_ref(value).cast_mut(),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return,
                Err(now) => head = now,
            }
        }
    }

    /// Calls `f` on every value, newest first. Only atomic loads: safe after fork.
    pub(crate) fn each(&self, mut f: impl FnMut(&'static T)) {
        let mut at = self.0.load(Ordering::Acquire);
        // SAFETY: every value pushed is leaked, never freed.
        while let Some(value) = unsafe { at.as_ref() } {
            f(value);
            at = value.next().load(Ordering::Acquire);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Node(u32, AtomicPtr<Node>);

    impl Linked for Node {
        fn next(&self) -> &AtomicPtr<Self> {
            &self.1
        }
    }

    #[test]
    fn every_value_pushed_from_every_thread_is_walked() {
        static LIST: List<Node> = List::new();
        let threads: Vec<_> = (0..4)
            .map(|t| {
                std::thread::spawn(move || {
                    for i in 0..1_000 {
                        let node = Box::leak(Box::new(Node(t * 1_000 + i, AtomicPtr::default())));
                        LIST.push(node);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut seen = Vec::new();
        LIST.each(|node| seen.push(node.0));
        seen.sort_unstable();
        assert_eq!(seen, (0..4_000).collect::<Vec<_>>());
    }
}
