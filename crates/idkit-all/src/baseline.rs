//! `auto-increment`: what a single database sequence gives, as a baseline for the report.
//!
//! A counter in one process starts again at 1 after every restart, and would hand out the
//! ids it handed out before: the registry therefore refuses to build it (at the command
//! line, in the service, for a library caller going through the registry), saying so and
//! pointing to `range`, whose counter lives in a store. The report's harness measures it
//! through [`measured`], knowing that its ids live only as long as the measurement.

use std::sync::atomic::{AtomicU64, Ordering};

use idkit_core::codec::decimal::DecimalCodec;
use idkit_core::{Coordination, GenerateError, IdScheme, PlainDef, SchemeInfo};

/// A counter from 1: dense, ordered, 64-bit, and only unique while every id comes from this
/// one counter (a database sequence, in practice). Shared across threads.
///
/// # Examples
///
/// ```
/// use idkit_all::baseline::AutoIncrement;
/// use idkit_all::IdScheme;
/// let counter = AutoIncrement::new();
/// assert_eq!(counter.take(3)?, [1, 2, 3]);
/// # Ok::<(), idkit_all::GenerateError>(())
/// ```
#[derive(Debug, Default)]
pub struct AutoIncrement {
    last: AtomicU64,
}

impl AutoIncrement {
    /// A counter whose first id is 1.
    pub fn new() -> Self {
        Self::starting_after(0)
    }

    /// A counter whose first id is `last + 1`.
    pub fn starting_after(last: u64) -> Self {
        Self {
            last: AtomicU64::new(last),
        }
    }
}

impl IdScheme for AutoIncrement {
    type Id = u64;

    fn next_id(&self) -> Result<u64, GenerateError> {
        // fetch_update, not fetch_add: at u64::MAX the counter must stop, not wrap to 0.
        self.last
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| v.checked_add(1))
            .map(|prev| prev + 1)
            .map_err(|_| GenerateError::exhausted("the 64-bit counter"))
    }

    fn info(&self) -> SchemeInfo {
        INFO
    }
}

/// The facts of auto-increment ids.
pub const INFO: SchemeInfo =
    SchemeInfo::new("auto-increment", 64).with_coordination(Coordination::Store);

/// Why the registry makes no `auto-increment` generator.
pub const REFUSAL: &str = "a counter in one process starts again at 1 after every restart and \
    would repeat the ids it issued; it is the report's baseline only. For dense integers that \
    survive restarts, use range (its counter lives in a store: idkit gen range)";

/// The registry definition of `auto-increment`: ids read and decoded, never made (its
/// `build` is [`BuildError::no_generator`](idkit_core::definition::BuildError::no_generator)
/// with [`REFUSAL`]).
pub static DEFINITION: PlainDef<DecimalCodec> = PlainDef {
    name: "auto-increment",
    aliases: &["autoincrement", "serial"],
    summary: "a single counter, as a database sequence gives (the report's baseline; not made \
              by the command line or the service)",
    codec: DecimalCodec,
    info: || INFO,
    generator: || {
        Err(idkit_core::definition::BuildError::no_generator(
            "auto-increment",
            REFUSAL,
        ))
    },
};

/// A counter from 1 behind the registry's object-safe form, for measurements: the report's
/// baseline. Its ids repeat in every process that makes one; nothing that outlives the
/// process may keep them.
///
/// # Errors
///
/// None in practice: the `Result` is the registry's form.
///
/// # Examples
///
/// ```
/// let counter = idkit_all::baseline::measured()?;
/// assert_eq!(counter.format_raw(&counter.next_raw()?)?, "1");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn measured() -> Result<idkit_core::definition::Scheme, idkit_core::definition::BuildError> {
    idkit_core::definition::shared(AutoIncrement::new(), DecimalCodec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_at_the_top_instead_of_wrapping() {
        let counter = AutoIncrement::starting_after(u64::MAX - 1);
        assert_eq!(counter.next_id(), Ok(u64::MAX));
        assert_eq!(
            counter.next_id().unwrap_err().kind(),
            idkit_core::GenerateErrorKind::Exhausted
        );
        assert_eq!(
            counter.next_id().unwrap_err().kind(),
            idkit_core::GenerateErrorKind::Exhausted
        );
    }
}
