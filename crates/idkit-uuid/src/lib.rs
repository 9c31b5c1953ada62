#![doc = include_str!("../README.md")]
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

mod codec;
mod generator;
mod sub_ms;
pub mod versions;

pub use idkit_core;
pub use idkit_core::Clock;
pub use idkit_core::reexports::*;
/// The id type of this crate's generators: the `uuid` crate's `Uuid`, re-exported, so that
/// `idkit_uuid::Uuid` and `uuid::Uuid` are one type (no conversion between them, and no
/// `uuid` dependency of your own needed).
pub use uuid::Uuid;

pub use codec::UuidCodec;
pub use generator::{AtomicUuidV7, UuidV4, UuidV7, V7Layout};
pub use sub_ms::{UuidV7SubMs, sub_ms_time};
pub use versions::UuidV6;

/// The registry definitions: `uuid-v4` and `uuid-v7`, the versions idkit measures and
/// serves by default, and the others (`uuid-v1`, `uuid-v3`, `uuid-v5`, `uuid-v6`,
/// `uuid-v8`), read and decoded by name; of those, `uuid-v6` has a generator.
#[cfg(feature = "std")]
pub mod definition {
    use idkit_core::definition::{
        BuildError, BuildErrorKind, OptionSpec, Options, Scheme, SchemeDef,
    };
    use idkit_core::{DynCodec, Erased, PlainDef, SchemeInfo};

    use crate::{AtomicUuidV7, UuidCodec, UuidV4, UuidV6, UuidV7SubMs};

    /// UUID version 4.
    pub static UUID_V4: PlainDef<UuidCodec> = PlainDef {
        name: "uuid-v4",
        aliases: &["uuid4", "v4"],
        summary: "UUID version 4: 122 random bits",
        codec: UuidCodec::V4,
        info: || UuidCodec::V4.info(),
        generator: || idkit_core::definition::shared(UuidV4::new(), UuidCodec::V4),
    };

    /// UUID version 7, shared without a lock: by default monotonic by a counter
    /// ([`AtomicUuidV7`], RFC 9562 section 6.2 method 2); with the option `v7-method` set
    /// to `sub-ms`, by the millisecond's fraction ([`UuidV7SubMs`], method 3).
    pub static UUID_V7: V7Def = V7Def;

    /// The `uuid-v7` scheme and its `v7-method` option.
    #[derive(Debug)]
    pub struct V7Def;

    const V7_OPTIONS: &[OptionSpec] = &[OptionSpec {
        name: "v7-method",
        value: "METHOD",
        help: "how UUIDv7 ids of one millisecond increase: counter (RFC 9562 section 6.2 \
               method 2: rand_a and rand_b count up; the default) or sub-ms (method 3: 12 bits \
               of the millisecond's fraction in rand_a, as PostgreSQL 18's uuidv7())",
        reads: false,
    }];

    impl SchemeDef for V7Def {
        fn name(&self) -> &'static str {
            "uuid-v7"
        }
        fn aliases(&self) -> &'static [&'static str] {
            &["uuid7", "v7"]
        }
        fn summary(&self) -> &'static str {
            "UUID version 7: 48-bit Unix ms, 74-bit monotonic random counter (or 12 bits of \
             the ms's fraction, --v7-method sub-ms)"
        }
        fn info(&self) -> SchemeInfo {
            UuidCodec::V7.info()
        }
        fn codec(&self) -> Box<dyn DynCodec + Send + Sync> {
            Box::new(idkit_core::CodecOnly::new(UuidCodec::V7, self.info()))
        }
        fn options(&self) -> &'static [OptionSpec] {
            V7_OPTIONS
        }
        fn build(&self, options: &Options) -> Result<Scheme, BuildError> {
            options.check_against(self)?;
            match options.get("v7-method").unwrap_or("counter") {
                "counter" => Ok(Box::new(Erased::new(AtomicUuidV7::new(), UuidCodec::V7))),
                "sub-ms" => Ok(Box::new(Erased::new(UuidV7SubMs::new(), UuidCodec::V7))),
                other => Err(BuildError::invalid(
                    "uuid-v7",
                    format!("v7-method {other:?}: expected counter or sub-ms"),
                )),
            }
        }
    }

    /// The definitions of the versions idkit reads but does not make: each static's name,
    /// codec and aliases, its summary, and how its ids are made (what `build` answers, with
    /// [`BuildErrorKind::NoGenerator`]).
    macro_rules! read_only {
        ($($(#[$doc:meta])* $static:ident = $codec:ident $name:literal [$($alias:literal),*]
           $summary:literal, made by $how:literal;)*) => {$(
            $(#[$doc])*
            pub static $static: PlainDef<UuidCodec> = PlainDef {
                name: $name,
                aliases: &[$($alias),*],
                summary: $summary,
                codec: UuidCodec::$codec,
                info: || UuidCodec::$codec.info(),
                generator: || Err(BuildError::no_generator($name, $how)),
            };
        )*};
    }

    read_only! {
        /// UUID version 1, read only.
        UUID_V1 = V1 "uuid-v1" ["uuid1", "v1"]
            "UUID version 1: 60-bit time in 100 ns since 1582, clock sequence, MAC address (read only)",
            made by "its node is a MAC address; make uuid-v6 (the same fields, sorted by time) or uuid-v7";
        /// UUID version 3: from a namespace and a name, MD5.
        UUID_V3 = V3 "uuid-v3" ["uuid3", "v3"] "UUID version 3: MD5 of a namespace and a name",
            made by "made from a namespace and a name: idkit uuid-name --v3 NAMESPACE NAME";
        /// UUID version 5: from a namespace and a name, SHA-1.
        UUID_V5 = V5 "uuid-v5" ["uuid5", "v5"] "UUID version 5: SHA-1 of a namespace and a name",
            made by "made from a namespace and a name: idkit uuid-name NAMESPACE NAME";
        /// UUID version 8: 122 bits of the maker's own.
        UUID_V8 = V8 "uuid-v8" ["uuid8", "v8"] "UUID version 8: 122 bits of the maker's own layout",
            made by "its 122 bits are the maker's own (idkit_uuid::versions::v8 in Rust)";
    }

    /// UUID version 6, made by [`UuidV6`].
    pub static UUID_V6: PlainDef<UuidCodec> = PlainDef {
        name: "uuid-v6",
        aliases: &["uuid6", "v6"],
        summary: "UUID version 6: 60-bit time in 100 ns since 1582, random clock sequence and node",
        codec: UuidCodec::V6,
        info: || UuidCodec::V6.info(),
        generator: || {
            let generator = UuidV6::new().map_err(|e| {
                BuildError::new(BuildErrorKind::Unavailable, "uuid-v6", e.to_string())
            })?;
            Ok(Box::new(Erased::new(generator, UuidCodec::V6)))
        },
    };
}
