//! `idkit inspect`'s guessing: any text read as every scheme's id in every form `idkit gen
//! --format` writes.
//!
//! It never panics. Every candidate it lists is its scheme's id: its canonical string reads
//! back with the same decoding and is its own canonical string, and its time is plausible
//! (none before 2008). Text that no scheme reads gets one message saying what was expected,
//! short whatever the input's length.
#![no_main]

use idkit_all::registry;
use libfuzzer_sys::fuzz_target;

/// 2008-01-01: `inspect` drops readings of earlier times.
const EARLIEST_MS: u64 = 1_199_145_600_000;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match idkit_all::inspect::inspect(text) {
        Ok(found) => {
            for candidate in found {
                let codec = registry::find(candidate.scheme)
                    .expect("a candidate names a registered scheme")
                    .codec();
                let decoded = codec
                    .decode_text(&candidate.id)
                    .expect("a candidate's id reads as its scheme's");
                assert_eq!(decoded, candidate.decoded, "{}", candidate.scheme);
                assert_eq!(codec.canonical_text(&candidate.id).unwrap(), candidate.id);
                if let Some(ms) = candidate.decoded.timestamp_ms {
                    assert!(ms >= EARLIEST_MS, "{}: {ms}", candidate.scheme);
                }
            }
        }
        Err(message) => {
            assert!(
                message.starts_with("cannot tell the scheme of "),
                "{message}"
            );
            assert!(message.len() < 2_000, "{} bytes", message.len());
        }
    }
});
