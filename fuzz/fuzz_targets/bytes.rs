//! Every scheme's byte decoding: any bytes read as each scheme's raw id.
//!
//! Reading never panics; bits that format as an id parse back from that text to the same
//! bits and decode; bits that do not format do not decode either.
#![no_main]

use idkit_all::registry;
use idkit_core::RawId;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = RawId::from_bytes(data) else {
        return;
    };
    for entry in registry::all() {
        let codec = entry.codec();
        match codec.format_raw(&raw) {
            Ok(text) => {
                assert_eq!(codec.parse_raw(&text).expect("formatted text parses"), raw);
                codec.decode_raw(&raw).expect("what formats decodes");
            }
            Err(_) => assert!(codec.decode_raw(&raw).is_err(), "{}", entry.name()),
        }
    }
});
