//! End-to-end: run the built `idkit` binary and check its output and exit codes.

use std::process::Output;

mod common;

use common::idkit_cmd;

/// Runs `idkit` with a state directory of its own.
fn idkit(args: &[&str]) -> Output {
    idkit_cmd().args(args).output().expect("run idkit")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Runs `idkit` with `args` (which ask for `--json`), checks that it succeeded and returns
/// what it printed.
fn json(args: &[&str]) -> serde_json::Value {
    let o = idkit(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// Bad input: exit 2, exactly one line on stderr, no panic, nothing on stdout.
fn usage_error(args: &[&str], contains: &str) {
    let o = idkit(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: one line, got {err:?}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(
        err.contains(contains),
        "{args:?}: {err:?} lacks {contains:?}"
    );
    assert!(!err.contains("panicked"));
    assert!(o.stdout.is_empty());
}

/// Every registered scheme's stable name that the command line makes ids of: all but
/// `auto-increment`, which it refuses (see `auto_increment_is_refused_and_no_scheme_repeats_across_runs`).
fn schemes() -> Vec<&'static str> {
    idkit_all::registry::schemes()
        .iter()
        .map(|e| e.name())
        .filter(|&name| name != "auto-increment")
        .collect()
}

#[test]
fn schemes_lists_every_scheme_with_its_facts() {
    let o = idkit(&["schemes"]);
    assert!(o.status.success());
    let text = stdout(&o);
    // The measured schemes and the other UUID versions.
    let listed: Vec<&str> = idkit_all::registry::all().map(|e| e.name()).collect();
    assert!(listed.len() > schemes().len() && listed.contains(&"uuid-v5"));
    for name in &listed {
        assert!(text.contains(name), "{name} missing from\n{text}");
    }
    assert!(text.contains("10889-08-02"), "full dates past year 9999");
    // The aliases `--help` sends users here for, on their scheme's line.
    for (name, alias) in [
        ("snowflake-twitter", "twitter"),
        ("uuid-v7", "v7"),
        ("auto-increment", "serial"),
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no line for {name} in\n{text}"));
        assert!(line.contains(alias), "{alias} missing from {line}");
    }
    let o = idkit(&["schemes", "--json"]);
    let all: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let all = all.as_array().unwrap();
    assert_eq!(all.len(), listed.len());
    let twitter = &all[0];
    assert_eq!(twitter["name"], "snowflake-twitter");
    assert_eq!(twitter["cap_ids_per_sec"], 4_096_000);
    assert_eq!(twitter["bits"], 64);
    assert_eq!(twitter["time_runs_out"], "2080-07-10T17:30:30.208Z");
}

#[test]
fn decode_json_is_exactly_the_documented_form() {
    let o = idkit(&[
        "decode",
        "snowflake-discord",
        "175928847299117063",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).trim(),
        r#"{"scheme":"snowflake-discord","id":"175928847299117063","timestamp_ms":1462015105796,"timestamp":"2016-04-30T11:18:25.796Z","fields":{"worker":1,"process":0,"increment":7}}"#
    );
    // Schemes without time: both times null.
    let o = idkit(&[
        "decode",
        "uuid-v4",
        "919108f7-52d1-4320-9bac-f847db4148a8",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["timestamp_ms"].is_null() && v["timestamp"].is_null());
    assert_eq!(v["fields"]["version"], 4);
}

#[test]
fn decode_plain_is_an_aligned_listing() {
    let o = idkit(&["decode", "discord", "175928847299117063"]);
    let text = stdout(&o);
    assert!(
        text.contains("timestamp  2016-04-30T11:18:25.796Z (1462015105796)"),
        "{text}"
    );
    assert!(text.contains("increment  7"), "{text}");
}

#[test]
fn gen_with_defaults_and_flags_round_trips_through_decode() {
    for name in schemes() {
        let o = idkit(&["gen", name]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let id = stdout(&o).trim().to_owned();
        assert_eq!(id.lines().count(), 1);
        let d = idkit(&["decode", name, &id, "--json"]);
        assert!(d.status.success(), "{name} {id}: {}", stderr(&d));
    }
    let o = idkit(&[
        "gen",
        "twitter",
        "-n",
        "1000",
        "--worker",
        "3",
        "--datacenter",
        "2",
    ]);
    let ids: Vec<u64> = stdout(&o).lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 1000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let d = idkit(&["decode", "twitter", &ids[0].to_string(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&d.stdout).unwrap();
    assert_eq!(v["fields"]["worker"], 3);
    assert_eq!(v["fields"]["datacenter"], 2);
    let o = idkit(&["gen", "instagram", "--shard", "1341", "--json", "-n", "2"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["scheme"], "snowflake-instagram");
    assert_eq!(v["ids"].as_array().unwrap().len(), 2);
    // Written as it is made, across the 4,096-id batches: still one JSON document, on one
    // line, with every id once and in order.
    let o = idkit(&["gen", "uuid-v7", "--json", "-n", "10000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 1);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["scheme"], "uuid-v7");
    let ids: Vec<&str> = v["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 10_000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    // `generate` is the same command as `gen`.
    let o = idkit(&["generate", "twitter", "-n", "3", "--worker", "7"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for id in stdout(&o).lines() {
        let d = idkit(&["decode", "twitter", id, "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&d.stdout).unwrap();
        assert_eq!(v["fields"]["worker"], 7);
    }
    assert_eq!(stdout(&o).lines().count(), 3);
}

#[test]
fn gen_formats() {
    let one = |format: &str, scheme: &str| {
        let o = idkit(&["gen", scheme, "--format", format]);
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        stdout(&o).trim().to_owned()
    };
    assert_eq!(one("hex", "twitter").len(), 16);
    assert!(one("decimal", "twitter").parse::<u64>().is_ok());
    assert_eq!(one("base32", "ulid").len(), 26);
    assert_eq!(one("base62", "ksuid").len(), 27);
    assert_eq!(one("hex", "uuid-v7").len(), 32);
    assert!(one("decimal", "ksuid").bytes().all(|b| b.is_ascii_digit()));
    // A range id's decimal form is the number itself.
    assert!(one("decimal", "range").parse::<u64>().is_ok_and(|n| n > 0));
}

/// `decode --format` reads what `gen --format` writes, for every scheme and form, and names
/// the id by its canonical string.
#[test]
fn decode_reads_every_form_gen_writes() {
    for scheme in schemes() {
        for format in ["decimal", "hex", "base32", "base62"] {
            let o = idkit(&["gen", scheme, "--format", format]);
            let id = stdout(&o).trim().to_owned();
            let read = json(&["decode", scheme, "--format", format, &id, "--json"]);
            let canonical = read["id"].as_str().unwrap();
            assert_eq!(
                json(&["decode", scheme, canonical, "--json"]),
                read,
                "{scheme} {format} {id}"
            );
        }
    }
}

/// Forms that are the same text by the schemes' specs: a ULID and a TSID are Crockford
/// base32 (ulid/spec's README; tsid-creator's README), a KSUID base62 (segmentio/ksuid's
/// README), an ObjectId hex; a UUID's hex is its string without the hyphens (RFC 9562,
/// section 4), and a Snowflake id's decimal is its canonical string.
#[test]
fn decode_formats_agree_with_the_specs() {
    let canonical_of = |scheme: &str, format: &str, id: &str| -> String {
        let v = json(&["decode", scheme, "--format", format, id, "--json"]);
        v["id"].as_str().unwrap().to_owned()
    };
    // ulid/spec's example; Crockford's aliases and lower case read as the same id.
    let ulid = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    assert_eq!(canonical_of("ulid", "base32", ulid), ulid);
    assert_eq!(
        canonical_of("ulid", "base32", "o1arz3ndektsv4rrffq69g5fav"),
        ulid
    );
    // odan/tsid's README (a port of tsid-creator): the number and the string of one TSID.
    let tsid = "0ARYZVZXW377R";
    assert_eq!(canonical_of("tsid", "base32", tsid), tsid);
    assert_eq!(canonical_of("tsid", "decimal", "388400145978465528"), tsid);
    // segmentio/ksuid's README example.
    let ksuid = "0ujtsYcgvSTl8PAuAdqWYSMnLOv";
    assert_eq!(canonical_of("ksuid", "base62", ksuid), ksuid);
    let oid = "507f1f77bcf86cd799439011";
    assert_eq!(canonical_of("objectid", "hex", oid), oid);
    // RFC 9562, appendix A.6's UUIDv7.
    let v7 = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";
    let hex = v7.replace('-', "");
    assert_eq!(canonical_of("uuid-v7", "hex", &hex), v7);
    let value = u128::from_str_radix(&hex, 16).unwrap().to_string();
    assert_eq!(canonical_of("uuid-v7", "decimal", &value), v7);
    // Discord's documented example.
    let discord = "175928847299117063";
    let as_hex = format!("{:016x}", discord.parse::<u64>().unwrap());
    assert_eq!(canonical_of("discord", "hex", &as_hex), discord);
    assert_eq!(canonical_of("discord", "decimal", discord), discord);
}

/// A canonical string given in another spelling is printed in its canonical one, as the
/// service's decode prints it: a ULID in lower case (Crockford's base32 reads either case;
/// ulid/spec's canonical form is upper case), a UUID in upper case (RFC 9562, section 4:
/// case-insensitive on input, lower case on output).
#[test]
fn decode_prints_the_canonical_spelling() {
    let id_of = |scheme: &str, id: &str| -> String {
        json(&["decode", scheme, id, "--json"])["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let ulid = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    assert_eq!(id_of("ulid", &ulid.to_lowercase()), ulid);
    let v7 = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";
    assert_eq!(id_of("uuid-v7", &v7.to_uppercase()), v7);
    let plain = stdout(&idkit(&["decode", "uuid-v7", &v7.to_uppercase()]));
    assert!(plain.contains(&format!("id         {v7}\n")), "{plain}");
}

#[test]
fn decode_names_the_form_it_could_not_read() {
    usage_error(
        &["decode", "twitter", "--format", "hex", "1d820c909680000"],
        "is not a snowflake-twitter id in hex: invalid length: expected 16 characters, found 15",
    );
    usage_error(
        &[
            "decode",
            "twitter",
            "--format",
            "decimal",
            "18446744073709551616",
        ],
        "the maximum is 18446744073709551615",
    );
    usage_error(
        &[
            "decode",
            "ulid",
            "--format",
            "base32",
            "01ARZ3NDEKTSV4RRFFQ69G5FAU",
        ],
        "invalid character 'U' at position 25",
    );
    usage_error(
        &[
            "decode",
            "ksuid",
            "--format",
            "base62",
            "0ujtsYcgvSTl8PAuAdqWYSMnLO",
        ],
        "in base62: invalid length",
    );
    // The bytes are read; whether they are an id of the scheme is still the scheme's to say.
    usage_error(
        &["decode", "twitter", "--format", "hex", "9d820c9096800000"],
        "bit 63 is set",
    );
}

#[test]
fn inspect_guesses_the_scheme_from_the_shape() {
    let o = idkit(&["inspect", "175928847299117063", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let schemes: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["scheme"].as_str().unwrap())
        .collect();
    assert!(schemes.contains(&"snowflake-discord"), "{schemes:?}");
    assert_eq!(
        schemes.last(),
        Some(&"auto-increment"),
        "time-less readings last"
    );
    for (id, scheme) in [
        ("017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "uuid-v7"),
        ("919108f7-52d1-4320-9bac-f847db4148a8", "uuid-v4"),
        ("01ARZ3NDEKTSV4RRFFQ69G5FAV", "ulid"),
        ("0ujtsYcgvSTl8PAuAdqWYSMnLOv", "ksuid"),
        ("017f22e279b07cc398c4dc0c0c07398f", "uuid-v7"),
    ] {
        let o = idkit(&["inspect", id, "--json"]);
        assert!(o.status.success(), "{id}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v[0]["scheme"], scheme, "{id}");
    }
}

/// `inspect` reads what `gen --format` writes, for every scheme and form: among its readings
/// is the id's own scheme with the id's canonical string, read in the form it was written in
/// (or as the canonical string, where the form is the scheme's own, as base32 is a ULID's).
#[test]
fn inspect_reads_every_form_gen_writes() {
    for scheme in schemes() {
        for format in ["canonical", "decimal", "hex", "base32", "base62"] {
            let id = stdout(&idkit(&["gen", scheme, "--format", format]));
            let id = id.trim();
            let read = json(&["decode", scheme, "--format", format, "--json", "--", id]);
            let found = json(&["inspect", "--json", "--", id]);
            assert!(
                found
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|c| c["scheme"] == scheme
                        && c["id"] == read["id"]
                        && (c["read_as"] == format || c["read_as"] == "canonical")),
                "{scheme} {format} {id}: {found}"
            );
        }
    }
}

/// Ids from the specs, written as another form's bytes, are read back as their scheme's.
#[test]
fn inspect_reads_the_forms_of_spec_ids() {
    let first = |id: &str| -> serde_json::Value {
        let o = idkit(&["inspect", "--json", id]);
        assert!(o.status.success(), "{id}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v[0].clone()
    };
    // segmentio/ksuid's README: the KSUID 0ujtsYcgvSTl8PAuAdqWYSMnLOv is these 20 bytes.
    let ksuid = first("0669f7efb5a1cd34b5f99d1154fb6853345c9735");
    assert_eq!(
        (&ksuid["scheme"], &ksuid["id"], &ksuid["read_as"]),
        (
            &"ksuid".into(),
            &"0ujtsYcgvSTl8PAuAdqWYSMnLOv".into(),
            &"hex".into()
        )
    );
    // RFC 9562, appendix A.6's UUIDv7 as one number.
    let value = u128::from_str_radix("017f22e279b07cc398c4dc0c0c07398f", 16).unwrap();
    let v7 = first(&value.to_string());
    assert_eq!(
        (&v7["scheme"], &v7["id"], &v7["read_as"]),
        (
            &"uuid-v7".into(),
            &"017f22e2-79b0-7cc3-98c4-dc0c0c07398f".into(),
            &"decimal".into()
        )
    );
    // The same bytes in base32 are a ULID's string: that reading comes first, the UUID's
    // beside it at the same time.
    let o = idkit(&["inspect", "--json", "01FWHE4YDGFK1SHH6W1G60EECF"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["scheme"], "ulid");
    assert!(
        v.as_array()
            .unwrap()
            .iter()
            .any(|c| c["scheme"] == "uuid-v7"
                && c["id"] == "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"
                && c["read_as"] == "base32"
                && c["timestamp_ms"] == v[0]["timestamp_ms"]),
        "{v}"
    );
    // odan/tsid's README: the number of the TSID 0ARYZVZXW377R, which the Snowflake
    // schemes also read as their own.
    let o = idkit(&["inspect", "--json", "388400145978465528"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v.as_array().unwrap().iter().any(|c| c["scheme"] == "tsid"
            && c["id"] == "0ARYZVZXW377R"
            && c["read_as"] == "decimal"),
        "{v}"
    );
    // 2^128 does not fit 128 bits: it is a KSUID's bytes, one second after the KSUID
    // epoch (1400000000, segmentio/ksuid's README).
    let wide = first("340282366920938463463374607431768211456");
    assert_eq!(
        (&wide["scheme"], &wide["timestamp_ms"]),
        (&"ksuid".into(), &1_400_000_001_000_u64.into())
    );
    // `inspect`'s readings of `input` include each (scheme, id, read as).
    let reads = |input: &str, readings: &[(&str, &str, &str)]| {
        let o = idkit(&["inspect", "--json", input]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        for &(scheme, id, read_as) in readings {
            assert!(
                v.as_array()
                    .unwrap()
                    .iter()
                    .any(|c| c["scheme"] == scheme && c["id"] == id && c["read_as"] == read_as),
                "{input}: {scheme} {id} {read_as}: {v}"
            );
        }
    };
    // Digits with leading zeros are not a number gen writes: a range id in hex is read as
    // hex (0x4121) beside the decimal reading.
    reads(
        "0000000000004121",
        &[("range", "16673", "hex"), ("range", "4121", "canonical")],
    );
    // A Snowflake id in hex whose digits are all decimal (0x3813019304800000, an Instagram
    // id of 2026 with shard and sequence 0, as `gen --format hex` wrote it) is read as hex
    // too, beside the number's readings.
    reads(
        "3813019304800000",
        &[
            ("snowflake-instagram", "4040575021628784640", "hex"),
            ("snowflake-instagram", "3813019304800000", "canonical"),
        ],
    );
    // An ObjectId whose hex digits are all decimal is read as the ObjectId's own string,
    // as one with a letter is.
    reads(
        "507123456789012345678901",
        &[("objectid", "507123456789012345678901", "canonical")],
    );
    // The listing for people says how each id was read.
    let plain = stdout(&idkit(&[
        "inspect",
        "0669f7efb5a1cd34b5f99d1154fb6853345c9735",
    ]));
    assert!(
        plain.starts_with(
            "scheme     ksuid\nid         0ujtsYcgvSTl8PAuAdqWYSMnLOv\nread as    hex\n"
        ),
        "{plain}"
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    usage_error(
        &["gen", "nope"],
        "unknown scheme \"nope\": expected one of snowflake-twitter",
    );
    usage_error(
        &["gen", "twitter", "-n", "0"],
        "invalid count 0: expected 1 to 10000000",
    );
    usage_error(&["gen", "twitter", "-n", "99999999999"], "invalid count");
    usage_error(&["gen", "twitter", "-n", "-5"], "-5");
    usage_error(&["gen", "twitter", "-n", "abc"], "invalid value 'abc'");
    usage_error(
        &["gen", "twitter", "--worker", "32"],
        "worker must be at most 31, found 32",
    );
    usage_error(&["gen", "uuid-v4", "--worker", "1"], "no fields to set");
    usage_error(
        &["gen", "mastodon", "--shard", "1"],
        "unknown field \"shard\"",
    );
    usage_error(
        &["gen", "twitter", "--format", "base64"],
        "invalid value 'base64'",
    );
    usage_error(
        &["decode", "twitter", "9223372036854775808"],
        "bit 63 is set",
    );
    usage_error(
        &["decode", "discord", "18446744073709551616"],
        "number too large",
    );
    usage_error(
        &["decode", "ulid", "01ARZ3NDEKTSV4RRFFQ69G5FA"],
        "expected 26 characters, found 25",
    );
    usage_error(
        &["decode", "ksuid", "0ujtsYcgvSTl8PAuAdqWYSMnLO_"],
        "invalid character '_'",
    );
    usage_error(
        &["decode", "uuid-v7", "919108f7-52d1-4320-9bac-f847db4148a8"],
        "version 4, expected a version 7 uuid",
    );
    // A negative number is read as an id (and refused as one), not as an unknown flag.
    usage_error(
        &["decode", "twitter", "-5"],
        "\"-5\" is not a snowflake-twitter id: invalid character '-'",
    );
    usage_error(&["inspect", "-5"], "cannot tell the scheme of \"-5\"");
    usage_error(&["inspect", "hello"], "cannot tell the scheme");
    usage_error(
        &["inspect", ""],
        "cannot tell the scheme of \"\": empty input: expected an id",
    );
    // A number one past the largest 160-bit value (2^160) is no id: the message says why,
    // from the widest id's parse error, instead of "no plausible time".
    usage_error(
        &[
            "inspect",
            "1461501637330902918203684832716283019655932542976",
        ],
        "not even as the bytes of ksuid, the widest id (160 bits): number too large",
    );
    usage_error(
        &["inspect", &format!("{}1", "0".repeat(42))],
        "expected 1 to 39 characters, found 43",
    );
    usage_error(
        &["inspect", "0123456789abcdefgh"],
        "or an id's bytes in hex, base32 or base62 as `idkit gen --format` writes them",
    );
    // Input longer than any id is repeated by its start and length, not whole.
    let pasted = "A".repeat(5000);
    for args in [["decode", "ulid", &pasted], ["inspect", "--", &pasted]] {
        usage_error(
            &args,
            &format!("\"{}\"... (5000 characters)", "A".repeat(40)),
        );
        assert!(stderr(&idkit(&args)).len() < 400, "{args:?}");
    }
    usage_error(&["frobnicate"], "unrecognized subcommand");
}

/// Reading an id needs only the scheme's codec: `decode` and `inspect` build no generator,
/// so `range` opens no SQLite store and leaves no file in the state or temporary directory.
#[test]
fn decode_and_inspect_create_no_file() {
    let dir = idkit_testkit::Scratch::new("idkit-no-files");
    let idkit_in = |args: &[&str]| {
        idkit_cmd()
            .args(args)
            .env("TMPDIR", dir.path())
            .env("IDKIT_STATE_DIR", dir.path())
            .output()
            .unwrap()
    };
    for args in [
        &["decode", "range", "42"][..],
        &["decode", "auto-increment", "42", "--json"],
        &["inspect", "175928847299117063"],
        &["inspect", "42", "--json"],
    ] {
        let o = idkit_in(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{args:?} created {left:?}");
    }
    // The state directory does receive the store when a range id is generated.
    let o = idkit_in(&["gen", "range"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.join("idkit-range.sqlite3").exists());
}

/// The range scheme's default store is in idkit's state directory, which a reboot leaves
/// alone. A counter in the temporary directory (the default of earlier versions) is not
/// quietly left behind for a new one that would repeat its ids: the command refuses, naming
/// both files, and once the file is moved the counter goes on.
#[test]
fn the_default_range_store_outlives_the_temporary_directory() {
    let (tmp, state) = (
        idkit_testkit::Scratch::new("idkit-old-tmp"),
        idkit_testkit::Scratch::new("idkit-new-state"),
    );
    let gen_range = |state_dir: &std::path::Path| {
        idkit_cmd()
            .args(["gen", "range", "-n", "3"])
            .env("TMPDIR", tmp.path())
            .env("IDKIT_STATE_DIR", state_dir)
            .output()
            .unwrap()
    };
    // A store in the temporary directory, as earlier versions made by default.
    let o = gen_range(tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let first: Vec<u64> = stdout(&o).lines().map(|l| l.parse().unwrap()).collect();
    let o = gen_range(state.path());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("idkit-range.sqlite3 holds a range counter"),
        "{err}"
    );
    assert!(
        err.contains(&format!("{}", state.join("idkit-range.sqlite3").display())),
        "{err}"
    );
    assert!(!state.join("idkit-range.sqlite3").exists());
    assert!(err.contains("with its -wal and -shm files"), "{err}");
    // SQLite's log holds the latest leases until a checkpoint: it moves with the file.
    for file in [
        "idkit-range.sqlite3",
        "idkit-range.sqlite3-wal",
        "idkit-range.sqlite3-shm",
    ] {
        if tmp.join(file).exists() {
            std::fs::rename(tmp.join(file), state.join(file)).unwrap();
        }
    }
    let o = gen_range(state.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let next: Vec<u64> = stdout(&o).lines().map(|l| l.parse().unwrap()).collect();
    assert!(next[0] > first[2], "{first:?} then {next:?}");
}

/// A process with no state directory that outlives a reboot (no `IDKIT_STATE_DIR`,
/// `XDG_STATE_HOME` or home directory, as a system service may run) is refused the default
/// range store rather than given one in the temporary directory, which a reboot, or the
/// restart of a service with a private one, empties; a store it names is used.
#[test]
fn without_a_lasting_state_directory_range_needs_a_store_named() {
    let (tmp, named) = (
        idkit_testkit::Scratch::new("idkit-homeless-tmp"),
        idkit_testkit::Scratch::new("idkit-homeless-store"),
    );
    let homeless = |args: &[&str]| {
        idkit_cmd()
            .args(args)
            .env_remove("IDKIT_STATE_DIR")
            .env_remove("XDG_STATE_HOME")
            .env_remove("HOME")
            .env("TMPDIR", tmp.path())
            .output()
            .unwrap()
    };
    let o = homeless(&["gen", "range"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("no place for the default store that outlives a reboot"),
        "{err}"
    );
    assert!(
        err.contains("set IDKIT_STATE_DIR, or name a store with range-store"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "nothing made in TMPDIR"
    );
    let store = named.join("ids.sqlite3");
    let o = homeless(&["gen", "range", "--range-store", store.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "1");
    // A static worker id's state files go to the temporary directory, with a warning: the
    // lock still holds, but a reboot may take the mark.
    let o = homeless(&["gen", "twitter", "--worker", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let warning = stderr(&o);
    assert!(
        warning.contains(&format!(
            "warning: snowflake-twitter: the state files of worker id 3 are in {}, which a \
             reboot may empty",
            tmp.join("idkit").display()
        )),
        "{warning}"
    );
    assert!(
        tmp.join("idkit")
            .join("snowflake-twitter-worker-3.mark")
            .exists()
    );
}

/// `--range-store` takes a SQLite file as `--identity` does, `sqlite:///PATH`, as well as its
/// path; an empty one is refused (SQLite would open a private temporary database: a counter
/// that starts again at every run).
#[test]
fn range_store_takes_a_sqlite_url_and_refuses_an_empty_one() {
    let dir = idkit_testkit::Scratch::new("idkit-range-url");
    let file = dir.join("ids.sqlite3");
    let url = format!("sqlite://{}", file.display());
    let ids = |store: &str| {
        let o = idkit(&["gen", "range", "-n", "2", "--range-store", store]);
        assert!(o.status.success(), "{store}: {}", stderr(&o));
        stdout(&o)
            .lines()
            .map(|l| l.parse().unwrap())
            .collect::<Vec<u64>>()
    };
    let first = ids(&url);
    assert!(file.exists(), "{url} made no {}", file.display());
    // The same counter, named by its path.
    let next = ids(file.to_str().unwrap());
    assert!(next[0] > first[1], "{first:?} then {next:?}");
    for empty in ["", "sqlite://"] {
        usage_error(
            &["gen", "range", "--range-store", empty],
            "range-store names no store: expected a SQLite file, sqlite:///PATH",
        );
    }
}

/// idkit's state directory follows the XDG Base Directory Specification (0.8): a relative
/// `XDG_STATE_HOME` is invalid and ignored, and `~/.local/state` is used.
#[test]
fn a_relative_xdg_state_home_is_ignored() {
    let home = idkit_testkit::Scratch::new("idkit-xdg-home");
    let o = idkit_cmd()
        .args(["gen", "range"])
        .env_remove("IDKIT_STATE_DIR")
        .env("XDG_STATE_HOME", "relative-state")
        .env("HOME", home.path())
        .current_dir(home.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let store = home.join(".local/state/idkit/idkit-range.sqlite3");
    assert!(store.exists(), "no store at {}", store.display());
    assert!(!home.join("relative-state").exists());
}

#[test]
fn sql_prints_the_layouts_function() {
    let o = idkit(&["sql", "instagram", "--shard", "5"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let layout = idkit_all::snowflake::preset("snowflake-instagram").unwrap();
    let expected = idkit_all::snowflake::sql::plpgsql(layout, &[("shard", 5)], "next_id").unwrap();
    assert_eq!(stdout(&o), expected);

    // A custom layout, a field without a flag of its own, and another function name.
    let o = idkit(&[
        "sql",
        "custom",
        "--layout",
        "time:40,region:4,shard:8,sequence:11",
        "--epoch-ms",
        "1600000000000",
        "--field",
        "region=2",
        "--shard",
        "3",
        "--function",
        "ids.next_region_id",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("CREATE OR REPLACE FUNCTION ids.next_region_id() RETURNS bigint"));
    assert!(text.contains("- 1600000000000) / 1;"));
    assert!(text.contains("RETURN (ticks << 23) | (2::bigint << 19) | (3::bigint << 11) | seq;"));
}

#[test]
fn sql_refuses_what_it_cannot_express() {
    usage_error(
        &["sql", "flake-boundary", "--worker", "1"],
        "flake-boundary is a 128-bit layout; a PostgreSQL function returns bigint",
    );
    usage_error(&["sql", "uuid-v7"], "uuid-v7 is not a Snowflake layout");
    usage_error(
        &["sql", "snowflake-twitter", "--worker", "1"],
        "field \"datacenter\" needs a value (--field datacenter=N)",
    );
    usage_error(
        &["sql", "instagram", "--shard", "8192"],
        "shard must be at most 8191, found 8192",
    );
    usage_error(&["sql", "custom"], "`custom` needs --layout");
    usage_error(
        &["sql", "custom", "--layout", "time:41,sequence:30"],
        "more than the 64-bit word",
    );
    usage_error(
        &["sql", "instagram", "--shard", "1", "--function", "x;drop"],
        "invalid function name",
    );
    // 10 bits of milliseconds from 1970: the function would refuse every call.
    usage_error(
        &["sql", "custom", "--layout", "time:10,sequence:10"],
        "custom's time ran out at 1970-01-01T00:00:01.023Z",
    );
}

#[test]
fn a_reader_that_stops_early_ends_the_command_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    // `idkit gen ... | head -1`: the reader takes one id and closes the pipe while ids are
    // still being written (20 MB of them, far beyond what a pipe holds).
    let mut child = idkit_cmd()
        .args(["gen", "twitter", "-n", "1000000", "--worker", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.trim().parse::<u64>().is_ok(), "{first:?}");
    let o = child.wait_with_output().unwrap();
    assert_eq!(stderr(&o), "");
    assert!(o.status.success(), "{}", o.status);

    // Any other failure to write is still an error.
    let full = std::fs::File::options()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = idkit_cmd()
        .args(["gen", "twitter", "-n", "100000", "--worker", "2"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("error: cannot write output: No space left"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bounds_of_a_range_hold_the_ids_made_in_it() {
    // Every time-ordered scheme: the ids gen makes now lie between the bounds of a range
    // around now, and decode names times inside it.
    for name in schemes() {
        let info = idkit_all::registry::find(name).unwrap().info();
        if info.time_precision_ms.is_none() {
            usage_error(&["bounds", name, "2026-11-01"], "carry no time");
            continue;
        }
        let made = json(&["gen", name, "-n", "3", "--format", "hex", "--json"]);
        let ms = |id: &str| {
            let d = json(&["decode", name, id, "--format", "hex", "--json"]);
            d["timestamp_ms"].as_u64().unwrap()
        };
        let first = made["ids"][0].as_str().unwrap().to_owned();
        let at = ms(&first);
        let (from, to) = ((at - 5_000).to_string(), (at + 5_000).to_string());
        let b = json(&["bounds", name, &from, &to, "--format", "hex", "--json"]);
        let (lowest, below) = (b["lowest"].as_str().unwrap(), b["below"].as_str().unwrap());
        for id in made["ids"].as_array().unwrap() {
            let id = id.as_str().unwrap();
            // Hex of one width: text order is byte order.
            assert!(
                lowest <= id && id < below,
                "{name}: {id} outside {lowest}..{below}"
            );
        }
        // The bounds of one time: both decode to it, at the scheme's precision.
        let one = json(&["bounds", name, &at.to_string(), "--format", "hex", "--json"]);
        for key in ["lowest", "highest"] {
            assert_eq!(ms(one[key].as_str().unwrap()), at, "{name} {key}");
        }
    }
}

#[test]
fn bounds_print_one_time_or_a_range_in_every_form() {
    // The ULID spec's example's millisecond: 01ARZ3NDEK, then the 80 random bits.
    let o = idkit(&["bounds", "ulid", "1469922850259"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "scheme  ulid\nfrom    2016-07-30T23:54:10.259Z\n\
         lowest  01ARZ3NDEK0000000000000000\nhighest 01ARZ3NDEKZZZZZZZZZZZZZZZZ\n"
    );
    // A month of Twitter's Snowflake ids as bigint bounds, for worker 0 of datacenter 0
    // and for every worker.
    let month = json(&[
        "bounds",
        "twitter",
        "2026-11-01",
        "2026-12-01T00:00:00+00:00",
        "--format",
        "decimal",
        "--json",
    ]);
    // (2026-11-01 - Twitter's epoch) << 22, (2026-12-01 - epoch) << 22.
    let tick = |ms: u64| ((ms - 1_288_834_974_657) << 22).to_string();
    assert_eq!(month["lowest"], tick(1_793_491_200_000));
    assert_eq!(month["below"], tick(1_796_083_200_000));
    // A typed TypeID's bounds carry its prefix.
    let user = json(&[
        "bounds",
        "typeid",
        "--prefix",
        "user",
        "2026-11-01",
        "--json",
    ]);
    assert!(
        user["lowest"]
            .as_str()
            .unwrap()
            .starts_with("user_01m6a6ft00")
    );
    // A TSID's node held: its counter alone spans the range.
    let node = json(&[
        "bounds",
        "tsid",
        "2026-11-01",
        "--node",
        "5",
        "--node-bits",
        "4",
        "--format",
        "hex",
        "--json",
    ]);
    assert_eq!(node["lowest"], "0c8d804000140000");
    assert_eq!(node["highest"], "0c8d80400017ffff");
}

#[test]
fn bounds_refuse_what_they_cannot_bound() {
    usage_error(&["bounds", "ulid", "2026-02-30"], "no such date");
    usage_error(
        &["bounds", "ulid", "2026-11-01T10:00:00"],
        "offset is missing",
    );
    usage_error(&["bounds", "ulid", "yesterday"], "not a time");
    usage_error(&["bounds", "ksuid", "2000-01-01"], "out of range");
    usage_error(
        &["bounds", "ulid", "2026-11-02", "2026-11-01"],
        "range is empty",
    );
    usage_error(&["bounds", "ulid", "2026-11-01", "--worker", "1"], "worker");
    usage_error(
        &["bounds", "twitter", "2026-11-01", "--worker", "32"],
        "worker",
    );
    usage_error(
        &["bounds", "typeid", "2026-11-01", "--prefix", "Bad"],
        "prefix",
    );
    usage_error(&["bounds", "nope", "2026-11-01"], "nope");
}

#[test]
fn convert_writes_the_same_bits_in_another_scheme() {
    // The ULID spec's example as a UUID and back (the UUID text computed apart).
    let o = idkit(&["convert", "ulid", "uuid", "01ARZ3NDEKTSV4RRFFQ69G5FAV"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "01563e3a-b5d3-d676-4c61-efb99302bd5b\n");
    let o = idkit(&[
        "convert",
        "uuid",
        "ulid",
        "01563e3a-b5d3-d676-4c61-efb99302bd5b",
    ]);
    assert_eq!(stdout(&o), "01ARZ3NDEKTSV4RRFFQ69G5FAV\n");
    // The TypeID spec's example and its UUIDv7, both ways.
    let o = idkit(&[
        "convert",
        "typeid",
        "uuid-v7",
        "prefix_01h455vb4pex5vsknk084sn02q",
    ]);
    assert_eq!(stdout(&o), "01890a5d-ac96-774b-bcce-b302099a8057\n");
    let typed = json(&[
        "convert",
        "uuid-v7",
        "typeid",
        "--prefix",
        "prefix",
        "01890a5d-ac96-774b-bcce-b302099a8057",
        "--json",
    ]);
    assert_eq!(typed["id"], "prefix_01h455vb4pex5vsknk084sn02q");
    assert!(typed["note"].is_null());
    // A UUIDv4 as a ULID: converted, with a note on stderr that its time means nothing.
    let o = idkit(&[
        "convert",
        "v4",
        "ulid",
        "9b2f3c1e-5d7a-4f60-8e1b-2c3d4e5f6a7b",
    ]);
    assert!(o.status.success());
    assert_eq!(stdout(&o).trim().len(), 26);
    assert!(
        stderr(&o).starts_with("note: uuid-v4 ids carry no time"),
        "{}",
        stderr(&o)
    );
    usage_error(
        &["convert", "twitter", "ulid", "1541815603606036480"],
        "64 bits",
    );
    usage_error(
        &["convert", "ulid", "uuid-v7", "01ARZ3NDEKTSV4RRFFQ69G5FAV"],
        "not a uuid-v7 id",
    );
    usage_error(&["convert", "ulid", "uuid", "nope"], "not a ulid id");
}

#[test]
fn every_uuid_version_is_read_and_the_made_ones_are_made() {
    // RFC 9562 appendix A.1: version 1's time, clock sequence and node.
    let v1 = json(&[
        "decode",
        "uuid-v1",
        "C232AB00-9414-11EC-B3C8-9F6BDECED846",
        "--json",
    ]);
    assert_eq!(v1["timestamp_ms"], 1_645_557_742_000u64);
    assert_eq!(v1["fields"]["clock_seq"], 0x33C8);
    assert_eq!(v1["fields"]["node"], "9f6bdeced846");
    // Appendix A.5: inspect names version 6 alone, with the same time.
    let o = idkit(&["inspect", "1ec9414c-232a-6b00-b3c8-9f6bdeced846"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("uuid-v6") && out.contains("2022-02-22T19:22:22.000Z"),
        "{out}"
    );
    assert!(
        !out.contains("uuid-v7") && !out.contains("uuid-v1"),
        "{out}"
    );
    // Appendix A.2 and A.4: names made into ids, versions 3 and 5.
    let o = idkit(&["uuid-name", "dns", "www.example.com"]);
    assert_eq!(stdout(&o), "2ed6657d-e927-568b-95e1-2665a8aea6a2\n");
    let o = idkit(&["uuid-name", "--v3", "DNS", "www.example.com"]);
    assert_eq!(stdout(&o), "5df41881-3aed-3515-88a7-2f4a814cf09e\n");
    let made = json(&[
        "uuid-name",
        "--json",
        "6ba7b811-9dad-11d1-80b4-00c04fd430c8",
        "http://python.org/",
    ]);
    // Python's uuid.uuid5(uuid.NAMESPACE_URL, "http://python.org/").
    assert_eq!(made["id"], "4c565f0d-3f5a-5890-b41b-20cf47701c5e");
    assert_eq!(made["scheme"], "uuid-v5");
    // A namespace that is neither a name nor a UUID is refused, with what it may be.
    let o = idkit(&["uuid-name", "example.com", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("a namespace is dns, url, oid, x500 or a UUID"),
        "{}",
        stderr(&o)
    );
    // Version 6 is generated, increasing, and converts to version 1 and back.
    let o = idkit(&["gen", "uuid-v6", "-n", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ids: Vec<String> = stdout(&o).lines().map(str::to_owned).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    let o = idkit(&["convert", "uuid-v6", "uuid-v1", &ids[0]]);
    let v1 = stdout(&o);
    let o = idkit(&["convert", "uuid-v1", "uuid-v6", v1.trim()]);
    assert_eq!(stdout(&o).trim(), ids[0]);
    let o = idkit(&[
        "convert",
        "uuid-v1",
        "uuid-v6",
        "c232ab00-9414-11ec-b3c8-9f6bdeced846",
    ]);
    assert_eq!(stdout(&o), "1ec9414c-232a-6b00-b3c8-9f6bdeced846\n");
    // Versions without a generator say how their ids are made.
    for (scheme, how) in [
        ("uuid-v5", "idkit uuid-name"),
        ("uuid-v3", "idkit uuid-name --v3"),
        ("uuid-v1", "make uuid-v6"),
        ("uuid-v8", "maker's own"),
    ] {
        let o = idkit(&["gen", scheme]);
        assert_eq!(o.status.code(), Some(2), "{scheme}");
        assert!(stderr(&o).contains(how), "{scheme}: {}", stderr(&o));
    }
    // Version 6 has time bounds that hold its ids; version 1 has none, and says why.
    let o = idkit(&["bounds", "uuid-v6", "2022-02-22T19:22:22Z"]);
    assert!(
        stdout(&o).contains("lowest  1ec9414c-232a-6b00-8000-000000000000"),
        "{}",
        stdout(&o)
    );
    let o = idkit(&["bounds", "uuid-v1", "2022-02-22"]);
    assert!(stderr(&o).contains("do not sort by it"), "{}", stderr(&o));
}

/// `idkit compose`: the examples of its help, an id composed again from what `decode --json`
/// gives, and bad parts refused on one line.
#[test]
fn compose_makes_the_id_of_a_time_and_its_parts() {
    let line = |args: &[&str]| {
        let o = idkit(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        stdout(&o).trim_end().to_owned()
    };
    // The ULID spec's example, and RFC 9562 appendix A.6's version 7 example.
    assert_eq!(
        line(&[
            "compose",
            "ulid",
            "2016-07-30T23:54:10.259Z",
            "randomness=0xd6764c61efb99302bd5b"
        ]),
        "01ARZ3NDEKTSV4RRFFQ69G5FAV"
    );
    assert_eq!(
        line(&[
            "compose",
            "uuid-v7",
            "1645557742000",
            "rand_a=0xcc3",
            "rand_b=0x18c4dc0c0c07398f"
        ]),
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"
    );
    // An identity field as a flag, the rest as parts; --format as `gen` writes it.
    let twitter = [
        "compose",
        "twitter",
        "2026-11-29T10:00:00Z",
        "--worker",
        "3",
        "sequence=7",
    ];
    let made = json(
        &twitter
            .iter()
            .copied()
            .chain(["--json"])
            .collect::<Vec<_>>(),
    );
    assert_eq!(made["timestamp"], "2026-11-29T10:00:00.000Z");
    assert_eq!(made["fields"]["worker"], 3);
    assert_eq!(made["fields"]["sequence"], 7);
    let hex = line(
        &twitter
            .iter()
            .copied()
            .chain(["--format", "hex"])
            .collect::<Vec<_>>(),
    );
    let decimal: u64 = made["id"].as_str().unwrap().parse().unwrap();
    assert_eq!(hex, format!("{decimal:016x}"));
    // What decode gives composes the id again.
    for scheme in ["ulid", "ksuid", "objectid", "uuid-v7"] {
        let id = line(&["gen", scheme]);
        let decoded = json(&["decode", scheme, &id, "--json"]);
        let parts: Vec<String> = decoded["fields"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(name, _)| *name != "version")
            .map(|(name, value)| match value.as_str() {
                Some(hex) => format!("{name}=0x{hex}"),
                None => format!("{name}={value}"),
            })
            .collect();
        let ms = decoded["timestamp_ms"].to_string();
        let mut args = vec!["compose", scheme, &ms];
        args.extend(parts.iter().map(String::as_str));
        assert_eq!(line(&args), id, "{args:?}");
    }
    usage_error(
        &["compose", "ulid", "2026-01-01", "worker=1"],
        "ulid: unknown field \"worker\"",
    );
    usage_error(
        &["compose", "ulid", "2026-01-01", "randomness"],
        "expected NAME=VALUE",
    );
    usage_error(
        &["compose", "ulid", "2026-01-01", "randomness=zz"],
        "hexadecimal after 0x",
    );
    usage_error(
        &["compose", "uuid-v7", "2026-01-01", "rand_a=4096"],
        "rand_a must be at most 4095",
    );
    usage_error(
        &["compose", "uuid-v4", "2026-01-01"],
        "uuid-v4 ids carry no time",
    );
    usage_error(
        &["compose", "ksuid", "2000-01-01"],
        "timestamp out of range",
    );
    usage_error(
        &[
            "compose",
            "twitter",
            "2026-01-01",
            "worker=1",
            "--worker",
            "2",
        ],
        "given twice",
    );
}

/// `bounds` and `compose` read ids: they refuse what only a generator uses (a rollback
/// policy, a store) instead of listing and ignoring it, and take what changes how ids are
/// read (a TypeID's prefix).
#[test]
fn reading_commands_refuse_generator_settings() {
    usage_error(
        &["bounds", "twitter", "2026-11-01", "--rollback", "fail-fast"],
        "--rollback",
    );
    usage_error(
        &["compose", "twitter", "2026-11-01", "--range-store", "x.db"],
        "--range-store",
    );
    let read = json(&[
        "compose",
        "typeid",
        "2026-11-01",
        "--prefix",
        "user",
        "--json",
    ]);
    assert!(read["id"].as_str().unwrap().starts_with("user_"), "{read}");
    let help = stdout(&idkit(&["bounds", "--help"]));
    assert!(
        !help.contains("--rollback") && help.contains("--prefix"),
        "{help}"
    );
}

/// `uuid` names any UUID where one is read (`convert`); to make one, `gen` asks which.
#[test]
fn gen_uuid_says_which_versions_it_makes() {
    usage_error(&["gen", "uuid"], "uuid-v7");
    let o = idkit(&["convert", "ulid", "uuid", "01ARZ3NDEKTSV4RRFFQ69G5FAV"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Every `idkit` command of the README's command-line block runs as written (all but the
/// ones that start a service or pipe into psql, which the service's and the extension's
/// suites run), so that the README cannot drift from the command line.
#[test]
fn the_readmes_commands_run_as_written() {
    let readme = include_str!("../../../README.md");
    let block = readme
        .split("## The command line\n\n```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README's command-line block");
    let mut ran = 0;
    for line in block.lines() {
        let command = line.split("  #").next().unwrap_or(line).trim();
        let Some(args) = command.strip_prefix("idkit ") else {
            continue;
        };
        if args.starts_with("serve") || command.contains('|') {
            continue;
        }
        let args: Vec<&str> = args.split_whitespace().collect();
        let o = idkit(&args);
        assert!(o.status.success(), "{command}: {}", stderr(&o));
        assert!(!o.stdout.is_empty(), "{command} printed nothing");
        ran += 1;
    }
    assert!(ran >= 10, "only {ran} commands found in\n{block}");
}
