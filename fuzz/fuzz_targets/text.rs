//! Every scheme's text parser, with the other parsers that read text from users: UUID
//! namespaces and the times `idkit bounds` reads.
//!
//! For every scheme of the registry (the measured ones and the other UUID versions): parsing
//! never panics; what parses also decodes, and its canonical text parses to the same bits and
//! is its own canonical text; what does not parse does not decode either.
#![no_main]

use idkit_all::registry;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for entry in registry::all() {
        let codec = entry.codec();
        match codec.parse_raw(text) {
            Ok(raw) => {
                codec.decode_text(text).expect("what parses decodes");
                let canonical = codec
                    .canonical_text(text)
                    .expect("what parses has a spelling");
                assert_eq!(
                    codec.parse_raw(&canonical).expect("its spelling parses"),
                    raw
                );
                assert_eq!(codec.canonical_text(&canonical).unwrap(), canonical);
                let formatted = codec.format_raw(&raw).expect("parsed bits format");
                assert_eq!(
                    codec.parse_raw(&formatted).expect("formatted text parses"),
                    raw
                );
            }
            Err(_) => assert!(codec.decode_text(text).is_err(), "{}", entry.name()),
        }
    }
    let _ = idkit_all::uuid::versions::namespace(text);
    if let Ok(ms) = idkit_core::time::parse_time_ms(text) {
        // A time read is one the bounds of a time-ordered scheme take or refuse cleanly.
        for entry in registry::all() {
            let _ = entry.codec().bounds_raw(ms, &[]);
        }
    }
});
