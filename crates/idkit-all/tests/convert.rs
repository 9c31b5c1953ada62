//! Converting ids between schemes that hold the same bits, with the specs' own examples:
//! the ULID spec's `01ARZ3NDEKTSV4RRFFQ69G5FAV`, RFC 9562 appendix A.6's UUIDv7, and the
//! TypeID spec's `prefix_01h455vb4pex5vsknk084sn02q` (spec/valid.yml "valid-uuidv7").

use idkit_all::convert::{ANY_UUID, ConvertError, convert};
use idkit_all::registry::Options;

fn none() -> Options {
    Options::default()
}

#[test]
fn the_same_bits_in_every_form_and_back() {
    // The ULID spec's example; its UUID text computed apart (Python's uuid.UUID(int=...)).
    let uuid = convert("ulid", ANY_UUID, "01ARZ3NDEKTSV4RRFFQ69G5FAV", &none()).unwrap();
    assert_eq!(uuid.id, "01563e3a-b5d3-d676-4c61-efb99302bd5b");
    let back = convert(ANY_UUID, "ulid", &uuid.id, &none()).unwrap();
    assert_eq!(back.id, "01ARZ3NDEKTSV4RRFFQ69G5FAV");
    // Its bits are no UUIDv7 (version nibble d): a typed error, not a guess.
    let e = convert("ulid", "uuid-v7", "01ARZ3NDEKTSV4RRFFQ69G5FAV", &none()).unwrap_err();
    assert!(
        matches!(
            e,
            ConvertError::NotAnId {
                scheme: "uuid-v7",
                ..
            }
        ),
        "{e}"
    );

    // RFC 9562's UUIDv7 as a ULID keeps its millisecond, and as a TypeID its bits.
    let rfc = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";
    let ulid = convert("uuid-v7", "ulid", rfc, &none()).unwrap();
    assert_eq!(ulid.note, None);
    let ms = ulid.id.parse::<idkit_ulid::Ulid>().unwrap().timestamp_ms();
    assert_eq!(ms, 0x017F_22E2_79B0);
    assert_eq!(
        convert("ulid", "uuid-v7", &ulid.id, &none()).unwrap().id,
        rfc
    );

    // The TypeID spec's example, both ways, its prefix given to the target.
    let typeid = "prefix_01h455vb4pex5vsknk084sn02q";
    let v7 = convert("typeid", "uuid-v7", typeid, &none()).unwrap();
    assert_eq!(v7.id, "01890a5d-ac96-774b-bcce-b302099a8057");
    let mut prefix = Options::default();
    prefix.set_option("prefix", "prefix");
    assert_eq!(
        convert("uuid-v7", "typeid", &v7.id, &prefix).unwrap().id,
        typeid
    );
}

#[test]
fn a_time_that_is_not_one_is_said_and_widths_that_differ_are_refused() {
    // A UUIDv4 converts to a ULID (any 128 bits do), but its "time" is random bits.
    let v4 = "9b2f3c1e-5d7a-4f60-8e1b-2c3d4e5f6a7b";
    let ulid = convert("uuid-v4", "ulid", v4, &none()).unwrap();
    let note = ulid.note.unwrap();
    assert!(note.contains("uuid-v4 ids carry no time"), "{note}");
    assert!(
        convert(ANY_UUID, "ulid", v4, &none())
            .unwrap()
            .note
            .is_some()
    );
    // 64 bits are not 128.
    let e = convert("twitter", "ulid", "1541815603606036480", &none()).unwrap_err();
    assert_eq!(
        e,
        ConvertError::DoesNotFit {
            from: ("snowflake-twitter", 64),
            to: ("ulid", 128)
        }
    );
    assert!(e.to_string().contains("64 bits"), "{e}");
    for (from, to, id, what) in [
        ("ulid", ANY_UUID, "not-a-ulid", "not a ulid id"),
        (
            ANY_UUID,
            "ulid",
            "017f22e2x79b0-7cc3-98c4-dc0c0c07398f",
            "not a uuid id",
        ),
        ("nope", "ulid", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "nope"),
        (
            "ulid",
            "uuid-v4",
            "01ARZ3NDEKTSV4RRFFQ69G5FAV",
            "not a uuid-v4 id",
        ),
    ] {
        let e = convert(from, to, id, &none()).unwrap_err();
        assert!(e.to_string().contains(what), "{from} -> {to}: {e}");
    }
    let mut bad = Options::default();
    bad.set_option("prefix", "Bad");
    let e = convert(
        "uuid-v7",
        "typeid",
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        &bad,
    );
    assert!(matches!(e, Err(ConvertError::Scheme(_))), "{e:?}");
}
