//! [`SchemeDef`]: everything a scheme says about itself in one place, so that the facade's
//! registry, the `idkit` command line, the HTTP service and the benchmark harness need no
//! edit when a scheme is added.
//!
//! A scheme crate implements [`SchemeDef`] once (its name, aliases, summary, facts, a codec
//! that needs no generator, the identity fields and options it takes, and how to build a
//! generator from them) and exports it as a `static`. The facade's registry is a list of
//! those statics. Flags and configuration keys are derived from [`SchemeDef::identity`] and
//! [`SchemeDef::options`], and every value is checked by the scheme's own
//! [`SchemeDef::build`].
//!
//! # Examples
//!
//! ```
//! use idkit_core::definition::{BuildError, Options, SchemeDef, Scheme};
//! use idkit_core::{Codec, CodecOnly, Decoded, DynCodec, Erased, GenerateError, IdScheme,
//!                  ParseError, RawId, SchemeInfo, codec};
//! use std::sync::atomic::{AtomicU64, Ordering};
//!
//! #[derive(Debug, Default)]
//! struct Counter(AtomicU64);
//! impl IdScheme for Counter {
//!     type Id = u64;
//!     fn next_id(&self) -> Result<u64, GenerateError> {
//!         Ok(self.0.fetch_add(1, Ordering::Relaxed) + 1)
//!     }
//!     fn info(&self) -> SchemeInfo { SchemeInfo::new("counter", 64) }
//! }
//!
//! /// The definition: a unit struct, exported as a static.
//! #[derive(Debug)]
//! struct CounterDef;
//! impl SchemeDef for CounterDef {
//!     fn name(&self) -> &'static str { "counter" }
//!     fn summary(&self) -> &'static str { "counts up from 1" }
//!     fn info(&self) -> SchemeInfo { SchemeInfo::new("counter", 64) }
//!     fn codec(&self) -> Box<dyn DynCodec + Send + Sync> {
//!         Box::new(CodecOnly::new(codec::decimal::DecimalCodec, self.info()))
//!     }
//!     fn build(&self, options: &Options) -> Result<Scheme, BuildError> {
//!         options.check_against(self)?;
//!         Ok(Box::new(Erased::new(Counter::default(), codec::decimal::DecimalCodec)))
//!     }
//! }
//!
//! let scheme = CounterDef.build(&Options::default())?;
//! assert_eq!(scheme.format_raw(&scheme.next_raw()?)?, "1");
//! // Reading an id needs no generator.
//! assert_eq!(CounterDef.codec().parse_raw("42")?, RawId::from_u64(42));
//! // A setting the scheme does not take is refused with the scheme's name.
//! let err = CounterDef.build(&Options::default().field("worker", 1)).unwrap_err();
//! assert_eq!(err.to_string(), "counter: unknown field \"worker\": this scheme has no fields to set");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;

use crate::scheme::{DynCodec, DynScheme, SchemeInfo};

/// A built scheme, ready to use from any thread.
pub type Scheme = Box<dyn DynScheme + Send + Sync>;

/// `generator` and `codec` as a [`Scheme`]: what a [`PlainDef`]'s `generator` returns when
/// its generator cannot fail to start.
///
/// # Errors
///
/// None: the `Result` is the shape `PlainDef::generator` asks for.
pub fn shared<G, C>(generator: G, codec: C) -> Result<Scheme, BuildError>
where
    G: crate::IdScheme,
    crate::Erased<G, C>: DynScheme + Send + Sync + 'static,
{
    Ok(Box::new(crate::Erased::new(generator, codec)))
}

/// A field that tells one generator from another (worker, datacenter, shard, node...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdentityField {
    /// The field's name, as flags, configuration keys and decoded ids spell it.
    pub name: &'static str,
    /// Its width in bits.
    pub bits: u32,
    /// One line for `--help`, e.g. "worker id".
    pub help: &'static str,
}

impl IdentityField {
    /// The largest value the field holds.
    pub const fn max(&self) -> u64 {
        if self.bits >= 64 {
            u64::MAX
        } else {
            (1 << self.bits) - 1
        }
    }
}

/// An option a scheme takes besides its identity fields (a rollback policy, a store, a
/// prefix...). Values arrive as text; the scheme's [`SchemeDef::build`] checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionSpec {
    /// The option's name in kebab-case; the flag is `--NAME`, the TOML key is the name with
    /// `_` for `-`.
    pub name: &'static str,
    /// A short name for its value in `--help`, e.g. `POLICY`.
    pub value: &'static str,
    /// One line for `--help`, including the default.
    pub help: &'static str,
    /// Whether it changes how ids are read as well as how they are made (a TSID's node bits,
    /// a TypeID's prefix), so that reading commands (`idkit bounds`, `idkit compose`) take
    /// it; `false` for what only a generator uses (a rollback policy, a store).
    pub reads: bool,
}

/// The settings a scheme is built with: identity field values and option values by name.
/// Unset fields are 0; unset options take the scheme's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Identity field values by name, in the order given.
    pub fields: Vec<(String, u64)>,
    /// Option values by name (kebab-case), as text, in the order given.
    pub options: Vec<(String, String)>,
    /// The lease guard the generator must obey (its fence, high-water mark and clock), for
    /// a scheme whose [`SchemeDef::takes_guard`] is true.
    pub guard: Option<crate::guard::Guard>,
}

impl Options {
    /// Sets an identity field.
    #[must_use]
    pub fn field(mut self, name: &str, value: u64) -> Self {
        self.fields.push((name.to_owned(), value));
        self
    }

    /// Sets an option.
    #[must_use]
    pub fn option(mut self, name: &str, value: impl Into<String>) -> Self {
        self.options.push((name.to_owned(), value.into()));
        self
    }

    /// The value of identity field `name`, the last one given.
    pub fn get_field(&self, name: &str) -> Option<u64> {
        self.fields
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }

    /// Sets identity field `name`, replacing a value given before.
    pub fn set_field(&mut self, name: &str, value: u64) {
        self.fields.retain(|(n, _)| n != name);
        self.fields.push((name.to_owned(), value));
    }

    /// Sets option `name`, replacing a value given before.
    pub fn set_option(&mut self, name: &str, value: impl Into<String>) {
        self.options.retain(|(n, _)| n != name);
        self.options.push((name.to_owned(), value.into()));
    }

    /// Every field and option as `name=value`, space-separated, in the order given.
    pub fn describe(&self) -> String {
        let fields = self.fields.iter().map(|(n, v)| format!("{n}={v}"));
        let options = self.options.iter().map(|(n, v)| format!("{n}={v}"));
        fields.chain(options).collect::<Vec<_>>().join(" ")
    }

    /// The value of option `name`, the last one given if it was given several times.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// True when nothing is set.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.options.is_empty()
    }

    /// Checks that every field and option given is one `def` declares, and that each field
    /// value fits its width.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::UnknownSetting`] for a field or option `def` does not take,
    /// [`BuildErrorKind::InvalidValue`] for a field value wider than the field.
    pub fn check_against(&self, def: &(impl SchemeDef + ?Sized)) -> Result<(), BuildError> {
        self.check_names(def)?;
        self.check_widths(def.name(), &def.identity())
    }

    /// Checks that every field and option given is one `def` declares (for a scheme whose
    /// field widths depend on its options, which then checks widths with
    /// [`check_widths`](Self::check_widths)).
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::UnknownSetting`] for a field or option `def` does not take.
    pub fn check_names(&self, def: &(impl SchemeDef + ?Sized)) -> Result<(), BuildError> {
        let fields: Vec<&str> = def.identity().iter().map(|f| f.name).collect();
        let options: Vec<&str> = def.options().iter().map(|o| o.name).collect();
        let given_fields = self.fields.iter().map(|(n, _)| n);
        let given_options = self.options.iter().map(|(n, _)| n);
        for (given, known, what, none) in [
            (
                given_fields.collect::<Vec<_>>(),
                &fields,
                "field",
                "this scheme has no fields to set",
            ),
            (
                given_options.collect::<Vec<_>>(),
                &options,
                "option",
                "this scheme takes no options",
            ),
        ] {
            if let Some(name) = given.into_iter().find(|n| !known.contains(&n.as_str())) {
                let expected = if known.is_empty() {
                    none.to_owned()
                } else {
                    format!("expected one of {}", known.join(", "))
                };
                return Err(BuildError::unknown_setting(
                    def.name(),
                    format!("unknown {what} {name:?}: {expected}"),
                ));
            }
        }
        if self.guard.is_some() && !def.takes_guard() {
            return Err(BuildError::unknown_setting(
                def.name(),
                "a worker-id lease cannot guard this scheme's generator (no identity, or one \
                 it does not fence)",
            ));
        }
        Ok(())
    }

    /// Checks that each field value given fits its width in `identity`.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidValue`] naming the field and its largest value.
    pub fn check_widths(
        &self,
        scheme: &'static str,
        identity: &[IdentityField],
    ) -> Result<(), BuildError> {
        for (name, value) in &self.fields {
            if let Some(field) = identity.iter().find(|f| f.name == name)
                && *value > field.max()
            {
                return Err(BuildError::invalid(
                    scheme,
                    format!(
                        "field out of range: {name} must be at most {}, found {value}",
                        field.max()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The unsigned integer value of option `name`, if given.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidValue`] when the value is not a decimal integer.
    pub fn get_u64(&self, scheme: &'static str, name: &str) -> Result<Option<u64>, BuildError> {
        self.get(name)
            .map(|v| {
                v.parse::<u64>().map_err(|_| {
                    BuildError::invalid(
                        scheme,
                        format!("{name}: {v:?} is not a number: expected a whole number >= 0"),
                    )
                })
            })
            .transpose()
    }
}

/// What kind of failure a [`BuildError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BuildErrorKind {
    /// No scheme has the name asked for.
    UnknownScheme,
    /// A field or option the scheme does not take.
    UnknownSetting,
    /// A value out of range or malformed.
    InvalidValue,
    /// Something the scheme needs could not be opened (its store).
    Unavailable,
    /// The scheme's ids are read but made by no generator: from a name or the caller's own
    /// bits (UUIDv3, v5, v8), or on other machines (UUIDv1). The message says how to make
    /// one.
    NoGenerator,
}

/// Why a scheme could not be found or built. One lowercase line, starting with the
/// scheme's name where there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    kind: BuildErrorKind,
    scheme: Option<&'static str>,
    message: String,
}

impl BuildError {
    /// An error of `kind` for `scheme`.
    pub fn new(kind: BuildErrorKind, scheme: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind,
            scheme: Some(scheme),
            message: message.into(),
        }
    }

    /// [`BuildErrorKind::NoGenerator`] for `scheme`, whose ids are made as `how` says.
    pub fn no_generator(scheme: &'static str, how: &str) -> Self {
        Self::new(
            BuildErrorKind::NoGenerator,
            scheme,
            format!("no generator: {how}"),
        )
    }

    /// [`BuildErrorKind::InvalidValue`] for `scheme`.
    pub fn invalid(scheme: &'static str, message: impl Into<String>) -> Self {
        Self::new(BuildErrorKind::InvalidValue, scheme, message)
    }

    /// A setting the scheme does not take.
    pub fn unknown_setting(scheme: &'static str, message: impl Into<String>) -> Self {
        Self::new(BuildErrorKind::UnknownSetting, scheme, message)
    }

    /// No scheme called `name`; `known` lists the names there are.
    pub fn unknown_scheme(name: &str, known: &[&str]) -> Self {
        Self {
            kind: BuildErrorKind::UnknownScheme,
            scheme: None,
            message: format!(
                "unknown scheme {name:?}: expected one of {}",
                known.join(", ")
            ),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> BuildErrorKind {
        self.kind
    }

    /// The scheme concerned, when the error is about one.
    pub fn scheme(&self) -> Option<&'static str> {
        self.scheme
    }

    /// The message without the scheme's name.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.scheme {
            Some(scheme) => write!(f, "{scheme}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for BuildError {}

/// A scheme's one definition: what it is, how to read its ids, what it takes and how to
/// build it. See the [module docs](self).
pub trait SchemeDef: fmt::Debug + Send + Sync {
    /// Stable name, e.g. `snowflake-twitter`.
    fn name(&self) -> &'static str;

    /// Short names that find it too, e.g. `twitter`.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// One line for listings.
    fn summary(&self) -> &'static str;

    /// The scheme's facts with default options, without building a generator (the same as
    /// the built scheme's `info()`).
    fn info(&self) -> SchemeInfo;

    /// Reads, writes and decodes ids; needs no generator, opens no store.
    fn codec(&self) -> Box<dyn DynCodec + Send + Sync>;

    /// The codec of the ids a generator built with `options` makes, where an option shapes
    /// them (a TypeID's prefix, a TSID's node width); by default [`codec`](Self::codec).
    /// Like `codec`, it builds no generator and opens no store.
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build), for the options that shape the ids: a setting the scheme
    /// does not take, a malformed or out-of-range value.
    fn codec_with(&self, options: &Options) -> Result<Box<dyn DynCodec + Send + Sync>, BuildError> {
        options.check_against(self)?;
        Ok(self.codec())
    }

    /// The fields that tell one generator from another, most significant first, with their
    /// widths under the default options. Empty for a scheme that needs no identity.
    fn identity(&self) -> Vec<IdentityField> {
        Vec::new()
    }

    /// The options the scheme takes besides its identity fields.
    fn options(&self) -> &'static [OptionSpec] {
        &[]
    }

    /// Builds a generator shared across threads, with `options`.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] when an option names a field or option the scheme lacks, a value
    /// does not fit or is malformed, or something the scheme needs cannot be opened.
    fn build(&self, options: &Options) -> Result<Scheme, BuildError>;

    /// True when [`build`](Self::build) honours [`Options::guard`]: the generator reads the
    /// guard's clock, checks its fence once per tick and starts above its high-water mark,
    /// so its identity can come from a lease.
    fn takes_guard(&self) -> bool {
        false
    }

    /// The identity fields as `(name, bits)`, most significant first.
    fn identity_fields(&self) -> Vec<(&'static str, u32)> {
        self.identity().iter().map(|f| (f.name, f.bits)).collect()
    }

    /// How many distinct identities the fields hold (2 to the power of their bits; 1 when
    /// there are none, `u64::MAX` past 63 bits): the worker ids a lease chooses from.
    fn identity_count(&self) -> u64 {
        let bits: u32 = self.identity().iter().map(|f| f.bits).sum();
        1u64.checked_shl(bits).unwrap_or(u64::MAX)
    }

    /// The identity the fields of `options` give, the inverse of
    /// [`with_identity`](Self::with_identity): fields left out count as 0, and the last
    /// field holds the low bits.
    fn identity_of(&self, options: &Options) -> u64 {
        self.identity().iter().fold(0, |n, f| {
            n.checked_shl(f.bits).unwrap_or(0) | options.get_field(f.name).unwrap_or(0)
        })
    }

    /// Options giving this generator the identity `n`, spread over
    /// [`identity`](Self::identity) with the low bits in the last field (for Twitter,
    /// `n = 33` is datacenter 1, worker 1).
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidValue`] when `n` does not fit the identity bits (a scheme
    /// with no identity takes only 0).
    fn with_identity(&self, n: u64) -> Result<Options, BuildError> {
        let mut options = Options::default();
        let mut rest = n;
        for field in self.identity().into_iter().rev() {
            options
                .fields
                .insert(0, (field.name.to_owned(), rest & field.max()));
            rest = if field.bits >= 64 {
                0
            } else {
                rest >> field.bits
            };
        }
        if rest != 0 {
            return Err(BuildError::invalid(
                self.name(),
                format!("generator identity {n} does not fit the identity bits"),
            ));
        }
        Ok(options)
    }

    /// True when `name` is this scheme's name or one of its aliases (ASCII
    /// case-insensitive).
    fn is_called(&self, name: &str) -> bool {
        self.name().eq_ignore_ascii_case(name)
            || self.aliases().iter().any(|a| a.eq_ignore_ascii_case(name))
    }
}

/// The definition of a scheme that takes no settings (UUID, ULID, KSUID...): its names, its
/// codec and facts, and a function that makes a shared generator.
///
/// # Examples
///
/// ```
/// use idkit_core::definition::{Options, PlainDef, SchemeDef, shared};
/// use idkit_core::codec::decimal::DecimalCodec;
/// use idkit_core::{Erased, SchemeInfo};
/// # #[derive(Debug, Default)] struct Counter(std::sync::atomic::AtomicU64);
/// # impl idkit_core::IdScheme for Counter { type Id = u64;
/// #   fn next_id(&self) -> Result<u64, idkit_core::GenerateError> {
/// #     Ok(self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1) }
/// #   fn info(&self) -> SchemeInfo { SchemeInfo::new("counter", 64) } }
///
/// static COUNTER: PlainDef<DecimalCodec> = PlainDef {
///     name: "counter",
///     aliases: &["count"],
///     summary: "counts up from 1",
///     codec: DecimalCodec,
///     info: || SchemeInfo::new("counter", 64),
///     generator: || shared(Counter::default(), DecimalCodec),
/// };
/// assert!(COUNTER.is_called("COUNT"));
/// assert_eq!(COUNTER.build(&Options::default())?.info(), COUNTER.info());
/// # Ok::<(), idkit_core::BuildError>(())
/// ```
#[derive(Debug)]
pub struct PlainDef<C> {
    /// Stable name.
    pub name: &'static str,
    /// Short names that find it too.
    pub aliases: &'static [&'static str],
    /// One line for listings.
    pub summary: &'static str,
    /// Reads and writes ids.
    pub codec: C,
    /// The scheme's facts.
    pub info: fn() -> SchemeInfo,
    /// Makes a generator shared across threads; fails where one cannot start, or where the
    /// scheme's ids are not made by a generator ([`BuildError::no_generator`]).
    pub generator: fn() -> Result<Scheme, BuildError>,
}

impl<C> SchemeDef for PlainDef<C>
where
    C: crate::Codec + Copy + fmt::Debug + Send + Sync + 'static,
{
    fn name(&self) -> &'static str {
        self.name
    }
    fn aliases(&self) -> &'static [&'static str] {
        self.aliases
    }
    fn summary(&self) -> &'static str {
        self.summary
    }
    fn info(&self) -> SchemeInfo {
        (self.info)()
    }
    fn codec(&self) -> Box<dyn DynCodec + Send + Sync> {
        Box::new(crate::CodecOnly::new(self.codec, self.info()))
    }
    fn build(&self, options: &Options) -> Result<Scheme, BuildError> {
        options.check_against(self)?;
        (self.generator)()
    }
}
