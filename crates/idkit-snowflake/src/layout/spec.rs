//! [`LayoutSpec`]: fields, widths, tick and epoch, checked when built; pure compose and
//! decompose over them, and the [`Layout`] trait with [`Custom`] layouts.

use crate::prelude::*;
use core::fmt::Debug;

use idkit_core::{
    Alphabet, ComposeError, Coordination, Decoded, FieldValue, ParseError, SchemeInfo, TimeBounds,
};

use crate::error::ConfigError;

use super::*;

/// What a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Ticks since the epoch.
    Time,
    /// The per-tick counter, owned by the generator.
    Sequence,
    /// A fixed value chosen per generator (worker, datacenter, shard, machine...).
    Fixed,
}

/// One field of a layout, with its position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSpec {
    /// The field's name, as decoded output shows it.
    pub name: &'static str,
    /// What it holds.
    pub kind: FieldKind,
    /// Width in bits (1 to 64).
    pub bits: u32,
    /// Position of its least significant bit.
    pub shift: u32,
}

impl FieldSpec {
    /// Largest value the field holds.
    pub fn max(&self) -> u64 {
        u64::MAX >> (64 - self.bits)
    }
}

/// A validated bit layout: fields from the most significant, a tick and an epoch.
///
/// Bits above the top field are reserved and always zero (Twitter's sign bit).
///
/// # Examples
///
/// A layout with 16 reserved bits, 32 bits of seconds and a 16-bit sequence:
///
/// ```
/// use idkit_snowflake::LayoutSpec;
/// let spec = LayoutSpec::builder("seconds-32", 64)
///     .time(32)
///     .sequence(16)
///     .tick_ms(1000)
///     .epoch_ms(1_600_000_000_000)
///     .build()?;
/// assert_eq!(spec.reserved_bits(), 16);
/// # Ok::<(), idkit_snowflake::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutSpec {
    name: &'static str,
    word_bits: u32,
    time: FieldSpec,
    fields: [Option<FieldSpec>; MAX_FIELDS],
    sequence: FieldSpec,
    tick_ms: u64,
    epoch_ms: u64,
}

/// Builds a [`LayoutSpec`]; fields are declared from the most significant bit down.
#[derive(Debug, Clone)]
pub struct LayoutBuilder {
    name: &'static str,
    word_bits: u32,
    parts: Vec<(&'static str, FieldKind, u32)>,
    tick_ms: u64,
    epoch_ms: u64,
}

impl LayoutBuilder {
    /// Declares the time field, `bits` wide.
    #[must_use]
    pub fn time(mut self, bits: u32) -> Self {
        self.parts.push(("time", FieldKind::Time, bits));
        self
    }

    /// Declares the sequence field, `bits` wide, named `sequence`.
    #[must_use]
    pub fn sequence(self, bits: u32) -> Self {
        self.sequence_named("sequence", bits)
    }

    /// Declares the sequence field under another name (Discord calls it `increment`).
    #[must_use]
    pub fn sequence_named(mut self, name: &'static str, bits: u32) -> Self {
        self.parts.push((name, FieldKind::Sequence, bits));
        self
    }

    /// Declares a fixed field (worker, datacenter, shard...), `bits` wide.
    #[must_use]
    pub fn field(mut self, name: &'static str, bits: u32) -> Self {
        self.parts.push((name, FieldKind::Fixed, bits));
        self
    }

    /// Sets the tick (default 1 ms).
    #[must_use]
    pub fn tick_ms(mut self, ms: u64) -> Self {
        self.tick_ms = ms;
        self
    }

    /// Sets the epoch, Unix ms (default 0, the Unix epoch).
    #[must_use]
    pub fn epoch_ms(mut self, unix_ms: u64) -> Self {
        self.epoch_ms = unix_ms;
        self
    }

    /// Validates and builds the layout.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] when the word is not 64 or 128 bits; there is not exactly one time
    /// and one sequence field; the sequence field comes before the time field (above it in
    /// the word); a width is 0 or above 64; the widths exceed the word; a name
    /// is empty, repeated or `time` for a non-time field; there are more than
    /// [`MAX_FIELDS`] fields besides time; the tick is 0; or the epoch is after the system
    /// clock's now.
    pub fn build(self) -> Result<LayoutSpec, ConfigError> {
        if self.word_bits != 64 && self.word_bits != 128 {
            return Err(ConfigError::UnsupportedWord {
                bits: self.word_bits,
            });
        }
        let count = |k| self.parts.iter().filter(|p| p.1 == k).count();
        if count(FieldKind::Time) != 1 {
            return Err(ConfigError::TimeField {
                found: count(FieldKind::Time),
            });
        }
        if count(FieldKind::Sequence) != 1 {
            return Err(ConfigError::SequenceField {
                found: count(FieldKind::Sequence),
            });
        }
        let at = |k| self.parts.iter().position(|p| p.1 == k);
        if at(FieldKind::Sequence) < at(FieldKind::Time) {
            return Err(ConfigError::SequenceAboveTime);
        }
        if self.parts.len() - 1 > MAX_FIELDS {
            return Err(ConfigError::TooManyFields { max: MAX_FIELDS });
        }
        let mut total = 0u32;
        for (i, &(name, kind, bits)) in self.parts.iter().enumerate() {
            if bits == 0 || bits > 64 {
                return Err(ConfigError::FieldWidth {
                    name: name.into(),
                    bits,
                });
            }
            let reserved = kind != FieldKind::Time && name == "time";
            if name.is_empty() || reserved || self.parts[..i].iter().any(|p| p.0 == name) {
                return Err(ConfigError::FieldName { name: name.into() });
            }
            total += bits;
        }
        if total > self.word_bits {
            return Err(ConfigError::TooWide {
                total,
                word: self.word_bits,
            });
        }
        if self.tick_ms == 0 {
            return Err(ConfigError::ZeroTick);
        }
        // Without `std` there is no system clock to read.
        #[cfg(feature = "std")]
        {
            let now_ms = idkit_core::Clock::now_ms(&idkit_core::SystemClock);
            if self.epoch_ms > now_ms {
                return Err(ConfigError::EpochInFuture {
                    epoch_ms: self.epoch_ms,
                    now_ms,
                });
            }
        }
        Ok(LayoutSpec::packed(
            self.name,
            self.word_bits,
            &self.parts,
            self.tick_ms,
            self.epoch_ms,
        ))
    }
}

/// A part of a preset's declaration: the time field, `bits` wide.
pub(super) const fn time(bits: u32) -> (&'static str, FieldKind, u32) {
    ("time", FieldKind::Time, bits)
}

/// A part of a preset's declaration: the sequence field called `name`.
pub(super) const fn sequence(name: &'static str, bits: u32) -> (&'static str, FieldKind, u32) {
    (name, FieldKind::Sequence, bits)
}

/// A part of a preset's declaration: a fixed field.
pub(super) const fn fixed(name: &'static str, bits: u32) -> (&'static str, FieldKind, u32) {
    (name, FieldKind::Fixed, bits)
}

impl LayoutSpec {
    /// A 64-bit layout from its fields written as text: `NAME:BITS` from the most
    /// significant, comma-separated, one `time` and one `sequence` among them (the form
    /// `idkit sql custom --layout` takes), with its tick and epoch.
    ///
    /// A layout's names are `'static`: each call leaks its field names (a few bytes), so
    /// parse a layout once, not per id.
    ///
    /// ```
    /// use idkit_snowflake::LayoutSpec;
    /// let spec = LayoutSpec::parse("instagram-like", "time:41,shard:13,sequence:10", 1, 1_314_220_021_721)?;
    /// assert_eq!(spec.sequence().bits, 10);
    /// assert!(LayoutSpec::parse("bad", "time:41,shard", 1, 0).is_err());
    /// # Ok::<(), idkit_snowflake::ConfigError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ConfigError::TextTooLong`] for text longer than [`MAX_TEXT`] bytes;
    /// [`ConfigError::FieldSyntax`] for a part that is not `NAME:BITS`;
    /// [`ConfigError::FieldName`] for a name longer than [`MAX_NAME`] bytes;
    /// [`ConfigError::TooManyNames`] when the process has read 4,096 distinct field names
    /// (with `std`: a layout's names live as long as the process, each kept once, and only
    /// once the whole layout is good); and every error of [`LayoutBuilder::build`].
    pub fn parse(
        name: &'static str,
        fields: &str,
        tick_ms: u64,
        epoch_ms: u64,
    ) -> Result<Self, ConfigError> {
        if fields.len() > MAX_TEXT {
            return Err(ConfigError::TextTooLong {
                bytes: fields.len(),
                max: MAX_TEXT,
            });
        }
        let parts = fields
            .split(',')
            .map(|part| {
                part.split_once(':')
                    .and_then(|(n, b)| Some((n.trim(), b.trim().parse::<u32>().ok()?)))
                    .ok_or_else(|| ConfigError::FieldSyntax {
                        part: part.to_owned(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        // The whole layout checked first with stand-in names (one per distinct name, so
        // that a repeated name is still refused): text that is not a layout keeps nothing.
        let mut distinct: Vec<&str> = Vec::new();
        for (field, _) in &parts {
            if !distinct.contains(field) {
                distinct.push(field);
            }
        }
        let stand_in = |field: &str| -> Result<&'static str, ConfigError> {
            let at = distinct.iter().position(|d| *d == field).unwrap_or(0);
            STAND_INS
                .get(at)
                .copied()
                .ok_or(ConfigError::TooManyFields { max: MAX_FIELDS })
        };
        let layout = |keep: &dyn Fn(&str) -> Result<&'static str, ConfigError>| {
            let mut builder = Self::builder(name, 64).tick_ms(tick_ms).epoch_ms(epoch_ms);
            for &(field, bits) in &parts {
                builder = match field {
                    "time" => builder.time(bits),
                    "sequence" => builder.sequence(bits),
                    other => builder.field(keep(other)?, bits),
                };
            }
            builder.build()
        };
        layout(&stand_in)?;
        for (field, _) in &parts {
            if field.len() > MAX_NAME {
                return Err(ConfigError::FieldName {
                    name: format!("{}...", field.chars().take(16).collect::<String>()),
                });
            }
        }
        layout(&|other| names::keep(other))
    }

    /// [`LayoutSpec::parse`] keeping nothing for the process: the layout's fields other
    /// than time and sequence are named by stand-ins, and their names come back beside it
    /// ([`FieldNames`] turns one into the other). For a layout read once (an SQL call that
    /// reads an id of a layout given by its fields), where [`LayoutSpec::parse`] would keep
    /// each distinct name for the process's life.
    ///
    /// ```
    /// use idkit_snowflake::LayoutSpec;
    /// let (spec, names) = LayoutSpec::parse_unkept("time:41,shard:13,sequence:10", 1, 0)?;
    /// let shard = names.field("shard").unwrap();
    /// assert_eq!(spec.fields().find(|f| f.name == shard).unwrap().bits, 13);
    /// assert_eq!(names.name(shard), "shard");
    /// assert_eq!(names.name("sequence"), "sequence");
    /// # Ok::<(), idkit_snowflake::ConfigError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`LayoutSpec::parse`], but [`ConfigError::TooManyNames`].
    pub fn parse_unkept(
        fields: &str,
        tick_ms: u64,
        epoch_ms: u64,
    ) -> Result<(Self, FieldNames), ConfigError> {
        if fields.len() > MAX_TEXT {
            return Err(ConfigError::TextTooLong {
                bytes: fields.len(),
                max: MAX_TEXT,
            });
        }
        let mut names: Vec<String> = Vec::new();
        let mut builder = Self::builder("custom", 64)
            .tick_ms(tick_ms)
            .epoch_ms(epoch_ms);
        for part in fields.split(',') {
            let syntax = || ConfigError::FieldSyntax {
                part: part.to_owned(),
            };
            let (name, bits) = part.split_once(':').ok_or_else(syntax)?;
            let bits = bits.trim().parse::<u32>().map_err(|_| syntax())?;
            builder = match name.trim() {
                "time" => builder.time(bits),
                "sequence" => builder.sequence(bits),
                name => {
                    if name.len() > MAX_NAME {
                        return Err(ConfigError::FieldName {
                            name: format!("{}...", name.chars().take(16).collect::<String>()),
                        });
                    }
                    // A name given twice stands in as itself twice: the builder refuses it.
                    let at = match names.iter().position(|n| n == name) {
                        Some(at) => at,
                        None => {
                            names.push(name.to_owned());
                            names.len() - 1
                        }
                    };
                    let stand_in = STAND_INS
                        .get(at)
                        .copied()
                        .ok_or(ConfigError::TooManyFields { max: MAX_FIELDS })?;
                    builder.field(stand_in, bits)
                }
            };
        }
        let spec = builder.build()?;
        Ok((spec, FieldNames(names)))
    }

    /// Starts a layout called `name` in a `word_bits`-bit word (64 or 128).
    pub fn builder(name: &'static str, word_bits: u32) -> LayoutBuilder {
        LayoutBuilder {
            name,
            word_bits,
            parts: Vec::new(),
            tick_ms: 1,
            epoch_ms: 0,
        }
    }

    /// The layout of `parts` (declared from the most significant bit), packed from the
    /// bottom: the last part sits at bit 0 and any spare bits are left at the top, where
    /// they read as reserved zeros. The parts are not checked: [`LayoutBuilder::build`]
    /// checks them first, and the presets, written with it in `const`, are checked by this
    /// crate's tests against it.
    pub(super) const fn packed(
        name: &'static str,
        word_bits: u32,
        parts: &[(&'static str, FieldKind, u32)],
        tick_ms: u64,
        epoch_ms: u64,
    ) -> LayoutSpec {
        let mut total = 0;
        let mut i = 0;
        while i < parts.len() {
            total += parts[i].2;
            i += 1;
        }
        let none = FieldSpec {
            name: "",
            kind: FieldKind::Fixed,
            bits: 0,
            shift: 0,
        };
        let (mut time, mut sequence) = (none, none);
        let mut fields = [None; MAX_FIELDS];
        let (mut shift, mut next, mut i) = (total, 0, 0);
        while i < parts.len() {
            let (name, kind, bits) = parts[i];
            shift -= bits;
            let spec = FieldSpec {
                name,
                kind,
                bits,
                shift,
            };
            if matches!(kind, FieldKind::Time) {
                time = spec;
            } else {
                if matches!(kind, FieldKind::Sequence) {
                    sequence = spec;
                }
                fields[next] = Some(spec);
                next += 1;
            }
            i += 1;
        }
        LayoutSpec {
            name,
            word_bits,
            time,
            fields,
            sequence,
            tick_ms,
            epoch_ms,
        }
    }

    /// The layout's name, e.g. `snowflake-twitter`.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Bits in the word: 64 or 128.
    pub fn word_bits(&self) -> u32 {
        self.word_bits
    }

    /// Reserved always-zero bits at the top (1 for Twitter's sign bit).
    pub fn reserved_bits(&self) -> u32 {
        self.word_bits - self.time.bits - self.fields().map(|f| f.bits).sum::<u32>()
    }

    /// The time field.
    pub fn time(&self) -> FieldSpec {
        self.time
    }

    /// The sequence field.
    pub fn sequence(&self) -> FieldSpec {
        self.sequence
    }

    /// Every field but time (sequence included), most significant first.
    pub fn fields(&self) -> impl Iterator<Item = FieldSpec> + '_ {
        self.fields.iter().flatten().copied()
    }

    /// The constant field `name` (a worker, a shard...), checked to hold `value`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::UnknownField`] when the layout has no such constant field (`time` and
    /// the sequence are not constant); [`ConfigError::FieldOutOfRange`] when `value` is
    /// wider than the field.
    pub fn fixed_field(&self, name: &str, value: u64) -> Result<FieldSpec, ConfigError> {
        let field = self
            .fields()
            .find(|f| f.name == name && f.kind == FieldKind::Fixed)
            .ok_or_else(|| ConfigError::UnknownField {
                name: name.to_owned(),
                settable: self.worker_names(),
            })?;
        if value > field.max() {
            return Err(ConfigError::FieldOutOfRange {
                name: name.to_owned(),
                value,
                max: field.max(),
            });
        }
        Ok(field)
    }

    /// The fields a worker id fills, most significant first: the constant fields (Twitter's
    /// datacenter and worker, Instagram's shard).
    pub fn worker_fields(&self) -> impl Iterator<Item = FieldSpec> + '_ {
        self.fields().filter(|f| f.kind == FieldKind::Fixed)
    }

    /// The bits of [`LayoutSpec::worker_fields`] together: a worker id is below
    /// `2^worker_bits`.
    pub fn worker_bits(&self) -> u32 {
        self.worker_fields().map(|f| f.bits).sum()
    }

    /// `worker` as the values of [`LayoutSpec::worker_fields`], most significant first: its
    /// low bits in the least significant field, as one number spread over them (Twitter's
    /// worker 33 is datacenter 1, worker 1).
    ///
    /// ```
    /// let twitter = idkit_snowflake::preset("snowflake-twitter").unwrap();
    /// assert_eq!(twitter.split_worker(33), Ok(vec![("datacenter", 1), ("worker", 1)]));
    /// assert_eq!(
    ///     twitter.split_worker(1 << 10).unwrap_err().to_string(),
    ///     "worker 1024 does not fit the layout's 10 bits of datacenter, worker"
    /// );
    /// ```
    ///
    /// # Errors
    ///
    /// [`ConfigError::WorkerTooWide`] when `worker` does not fit
    /// [`LayoutSpec::worker_bits`].
    pub fn split_worker(&self, worker: u64) -> Result<Vec<(&'static str, u64)>, ConfigError> {
        let bits = self.worker_bits();
        if bits < 64 && worker >> bits != 0 {
            return Err(ConfigError::WorkerTooWide {
                worker,
                bits,
                fields: self.worker_names(),
            });
        }
        let fields: Vec<FieldSpec> = self.worker_fields().collect();
        let mut values = vec![("", 0); fields.len()];
        let mut left = worker;
        for (value, field) in values.iter_mut().zip(&fields).rev() {
            *value = (field.name, left & field.max());
            left = left.checked_shr(field.bits).unwrap_or(0);
        }
        Ok(values)
    }

    /// The text that names the shared word of this layout's generator for `worker` (idkit's
    /// PostgreSQL extension and `idkit-sqlite` find the word by it): where the time and the
    /// sequence sit, the constant bits that `worker` sets, the tick and the epoch.
    ///
    /// Two generators get one key exactly when they make ids from one set: the field names
    /// do not count (Discord's `increment` is a `sequence`; `worker:10` and
    /// `datacenter:5,worker:5` hold worker 33 in the same bits), nor the time field's width
    /// (it only moves the reserved bits above it), and on a layout without worker bits the
    /// worker does not either (it sets no bit), so every caller of such a layout shares one
    /// word. Layouts of other ticks or epochs can make equal integers too; those are other
    /// id sets, which idkit does not keep apart.
    ///
    /// ```
    /// use idkit_snowflake::{preset, LayoutSpec};
    /// let twitter = preset("snowflake-twitter").unwrap();
    /// let renamed = LayoutSpec::parse("mine", "time:41,dc:5,node:5,sequence:12", 1, twitter.epoch_ms())?;
    /// assert_eq!(twitter.word_key(33)?, renamed.word_key(33)?);
    /// assert_ne!(twitter.word_key(33)?, twitter.word_key(34)?);
    /// let mastodon = preset("snowflake-mastodon").unwrap();
    /// assert_eq!(mastodon.word_key(0)?, mastodon.word_key(3)?, "no worker bits: one word");
    /// let wider = LayoutSpec::parse("wider", "time:42,datacenter:5,worker:5,sequence:12", 1, twitter.epoch_ms())?;
    /// assert_eq!(twitter.word_key(7)?, wider.word_key(7)?);
    /// assert!(twitter.word_key(1 << 10).is_err());
    /// # Ok::<(), idkit_snowflake::ConfigError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ConfigError::WorkerTooWide`] when the layout has worker bits and `worker` does not
    /// fit them.
    pub fn word_key(&self, worker: u64) -> Result<String, ConfigError> {
        // u128: a 128-bit layout's fields sit above bit 63.
        let (mut mask, mut value) = (0_u128, 0_u128);
        if self.worker_bits() > 0 {
            for ((_, v), field) in self
                .split_worker(worker)?
                .into_iter()
                .zip(self.worker_fields())
            {
                mask |= u128::from(field.max()) << field.shift;
                value |= u128::from(v) << field.shift;
            }
        }
        let (time, sequence) = (self.time(), self.sequence());
        // The time field by where it starts: a wider one only moves the reserved bits above
        // it, so `time:41` and `time:42` of one epoch make the same ids until the narrower
        // runs out of ticks (it then refuses, never repeats).
        Ok(format!(
            "{}|t{}|s{}+{}|f{mask:x}={value:x}|{}|{}",
            self.word_bits,
            time.shift,
            sequence.shift,
            sequence.bits,
            self.tick_ms(),
            self.epoch_ms()
        ))
    }

    /// The names of [`LayoutSpec::worker_fields`], comma-separated, for messages (empty
    /// without any): `"datacenter, worker"` for Twitter's layout.
    pub fn worker_names(&self) -> String {
        let names: Vec<_> = self.worker_fields().map(|f| f.name).collect();
        names.join(", ")
    }

    /// Milliseconds per tick.
    pub fn tick_ms(&self) -> u64 {
        self.tick_ms
    }

    /// The epoch, Unix ms.
    pub fn epoch_ms(&self) -> u64 {
        self.epoch_ms
    }

    /// The largest tick the time field holds.
    pub fn max_tick(&self) -> u64 {
        self.time.max()
    }

    /// Unix ms of the start of tick `tick`, or `None` past `u64`.
    pub fn tick_start_ms(&self, tick: u64) -> Option<u64> {
        tick.checked_mul(self.tick_ms)?.checked_add(self.epoch_ms)
    }

    /// The last Unix millisecond the layout represents, or `None` if it is past `u64`.
    pub fn last_ms(&self) -> Option<u64> {
        self.tick_start_ms(self.max_tick())?
            .checked_add(self.tick_ms - 1)
    }

    /// The most ids one generator can issue per second.
    pub fn cap_per_sec(&self) -> u64 {
        let per_tick = u128::from(self.sequence.max()) + 1;
        u64::try_from(per_tick * 1000 / u128::from(self.tick_ms)).unwrap_or(u64::MAX)
    }

    /// The facts the report prints about this layout.
    pub fn info(&self) -> SchemeInfo {
        let worker_bits = self
            .fields()
            .filter(|f| f.kind == FieldKind::Fixed)
            .map(|f| f.bits)
            .sum::<u32>();
        let coordination = if worker_bits == 0 {
            Coordination::None
        } else {
            Coordination::WorkerId { bits: worker_bits }
        };
        let value_bits = self.word_bits - self.reserved_bits();
        SchemeInfo::new(self.name, self.word_bits)
            .with_string(
                Alphabet::DECIMAL,
                SchemeInfo::new("", value_bits).string_len,
            )
            .with_time(self.tick_ms, self.last_ms())
            .with_coordination(coordination)
            .with_cap(Some(self.cap_per_sec()))
    }

    /// Takes `id` apart: (tick, values of [`LayoutSpec::fields`] in order).
    ///
    /// # Errors
    ///
    /// [`ParseErrorKind::Invalid`](idkit_core::ParseErrorKind::Invalid) when a reserved bit is set.
    pub fn split(&self, id: u128) -> Result<(u64, [u64; MAX_FIELDS]), ParseError> {
        let used = self.word_bits - self.reserved_bits();
        if used < 128 && id >> used != 0 {
            let top = 127 - id.leading_zeros();
            return Err(ParseError::invalid(format!(
                "bit {top} is set, but {} ids keep their top {} bit{} zero",
                self.name,
                self.reserved_bits(),
                if self.reserved_bits() == 1 { "" } else { "s" }
            )));
        }
        let get = |f: &FieldSpec| {
            // Widths are at most 64 bits, so the masked value fits a u64.
            u64::try_from((id >> f.shift) & u128::from(f.max())).unwrap_or(u64::MAX)
        };
        let mut values = [0; MAX_FIELDS];
        for (slot, field) in values.iter_mut().zip(self.fields()) {
            *slot = get(&field);
        }
        Ok((get(&self.time), values))
    }

    /// Decodes `id`: Unix-ms timestamp and named fields.
    ///
    /// # Errors
    ///
    /// [`ParseErrorKind::Invalid`](idkit_core::ParseErrorKind::Invalid) when a reserved bit is set.
    pub fn decode_u128(&self, id: u128) -> Result<Decoded, ParseError> {
        let (tick, values) = self.split(id)?;
        let fields = self
            .fields()
            .zip(values)
            .map(|(f, v)| (f.name, FieldValue::Int(v)))
            .collect();
        Ok(Decoded {
            // A 64-bit time field with a non-zero epoch can name times past u64 ms.
            timestamp_ms: Some(self.tick_start_ms(tick).unwrap_or(u64::MAX)),
            fields,
        })
    }

    /// Builds an id from a Unix-ms timestamp and named field values.
    ///
    /// # Errors
    ///
    /// [`ComposeError`] for an unknown field, a value too wide, or a time outside
    /// epoch..=[`LayoutSpec::last_ms`].
    pub fn compose_u128(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<u128, ComposeError> {
        let last_ms = self.last_ms().unwrap_or(u64::MAX);
        if timestamp_ms < self.epoch_ms || timestamp_ms > last_ms {
            return Err(ComposeError::time_out_of_range(
                timestamp_ms,
                self.epoch_ms,
                last_ms,
            ));
        }
        let tick = (timestamp_ms - self.epoch_ms) / self.tick_ms;
        let mut id = u128::from(tick) << self.time.shift;
        for &(name, value) in fields {
            let field = self.fields().find(|f| f.name == name).ok_or_else(|| {
                ComposeError::unknown_field(
                    name,
                    self.fields().map(|f| f.name).collect::<Vec<_>>().join(", "),
                )
            })?;
            if value > u128::from(field.max()) {
                return Err(ComposeError::field_out_of_range(
                    field.name,
                    value,
                    u128::from(field.max()),
                ));
            }
            id |= value << field.shift;
        }
        Ok(id)
    }

    /// The lowest and highest ids of the tick holding `timestamp_ms`, the named `fields`
    /// held at their values (a worker id, a shard) and every other field all zeros, then all
    /// ones.
    ///
    /// # Examples
    ///
    /// ```
    /// use idkit_snowflake::preset;
    /// let twitter = preset("snowflake-twitter").unwrap();
    /// // The tick of Twitter's epoch + 1 ms: every worker, then worker 5 of datacenter 2.
    /// let all = twitter.bounds_u128(1_288_834_974_658, &[])?;
    /// assert_eq!((all.lowest, all.highest), (1 << 22, (2 << 22) - 1));
    /// let one = twitter.bounds_u128(1_288_834_974_658, &[("datacenter", 2), ("worker", 5)])?;
    /// assert_eq!((one.lowest, one.highest), ((1 << 22) | (2 << 17) | (5 << 12), (1 << 22) | (2 << 17) | (5 << 12) | 4095));
    /// # Ok::<(), idkit_snowflake::idkit_core::ComposeError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`compose_u128`](Self::compose_u128).
    pub fn bounds_u128(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<TimeBounds<u128>, ComposeError> {
        let lowest = self.compose_u128(timestamp_ms, fields)?;
        let free = self
            .fields()
            .filter(|f| !fields.iter().any(|(name, _)| *name == f.name))
            .fold(0_u128, |mask, f| mask | (u128::from(f.max()) << f.shift));
        Ok(TimeBounds::new(lowest, lowest | free))
    }
}

/// A layout known to the type system: a zero-sized preset, or a runtime [`Custom`] layout.
///
/// The generators are generic over it, so a preset's shifts are constants to the compiler.
pub trait Layout: Copy + Debug + Send + Sync + 'static {
    /// The id type: `u64` or `u128`.
    type Id: Word;
    /// The layout's fields, tick and epoch.
    fn spec(&self) -> &LayoutSpec;
}

/// A layout chosen at run time (from a configuration file, say), with its word type.
///
/// # Examples
///
/// ```
/// use idkit_snowflake::{Custom, LayoutSpec};
/// let spec = LayoutSpec::builder("wide-sequence", 64)
///     .time(41).sequence(22).epoch_ms(1_288_834_974_657).build()?;
/// let layout = Custom::<u64>::new(spec)?;
/// # Ok::<(), idkit_snowflake::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Custom<W = u64> {
    spec: LayoutSpec,
    word: core::marker::PhantomData<W>,
}

impl<W: Word> Custom<W> {
    /// Wraps `spec` as a layout of word `W`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::WrongWord`] when the spec's word size is not `W::BITS`.
    pub fn new(spec: LayoutSpec) -> Result<Self, ConfigError> {
        if spec.word_bits != W::BITS {
            return Err(ConfigError::WrongWord {
                expected: W::BITS,
                found: spec.word_bits,
            });
        }
        Ok(Self {
            spec,
            word: core::marker::PhantomData,
        })
    }
}

impl<W: Word> Layout for Custom<W> {
    type Id = W;
    fn spec(&self) -> &LayoutSpec {
        &self.spec
    }
}

/// The names of a layout read by [`LayoutSpec::parse_unkept`], whose fields (but time and
/// sequence) are named by stand-ins in the order the names first appear.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldNames(Vec<String>);

impl FieldNames {
    /// The layout's own name of the field called `field` in the spec (a stand-in, or
    /// `time` and `sequence` as they are).
    pub fn name<'a>(&'a self, field: &'a str) -> &'a str {
        STAND_INS
            .iter()
            .zip(&self.0)
            .find(|(stand_in, _)| **stand_in == field)
            .map_or(field, |(_, name)| name.as_str())
    }

    /// The spec's name of the field the layout calls `name` (its stand-in), if it has one
    /// (`None` for time and sequence, whose names are their own, and for a name it lacks).
    pub fn field(&self, name: &str) -> Option<&'static str> {
        let at = self.0.iter().position(|n| n == name)?;
        STAND_INS.get(at).copied()
    }
}

/// The longest layout text [`LayoutSpec::parse`] reads, bytes.
pub const MAX_TEXT: usize = 1_024;

/// The longest field name [`LayoutSpec::parse`] reads, bytes.
pub const MAX_NAME: usize = 64;

/// Names that stand in for a layout's own while it is checked, none of them a name a layout
/// may have twice (one per distinct name of a layout of [`MAX_FIELDS`] fields and time).
const STAND_INS: [&str; 8] = [
    "\u{1}0", "\u{1}1", "\u{1}2", "\u{1}3", "\u{1}4", "\u{1}5", "\u{1}6", "\u{1}7",
];

/// The field names of layouts read from text, which a layout holds as `&'static str`: each
/// distinct name is allocated once and kept for the process's life, so that reading the
/// same layout again (a custom layout per SQL call) takes no more memory.
mod names {
    use alloc::borrow::ToOwned;
    use alloc::boxed::Box;

    /// The most distinct names a process keeps.
    #[cfg(feature = "std")]
    pub const MAX: usize = 4_096;

    /// `name` as kept for the process.
    ///
    /// # Errors
    ///
    /// [`ConfigError::TooManyNames`](crate::ConfigError::TooManyNames) past [`MAX`]
    /// distinct names.
    #[cfg(feature = "std")]
    pub fn keep(name: &str) -> Result<&'static str, crate::ConfigError> {
        use std::collections::BTreeSet;
        use std::sync::{Mutex, PoisonError};
        static KEPT: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
        let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(name) = kept.get(name) {
            return Ok(name);
        }
        if kept.len() >= MAX {
            return Err(crate::ConfigError::TooManyNames { max: MAX });
        }
        let name: &'static str = Box::leak(name.to_owned().into_boxed_str());
        kept.insert(name);
        Ok(name)
    }

    /// `name` as kept for the process: without `std` (and its lock) each call keeps its
    /// own copy, so a program reads its layouts once.
    ///
    /// # Errors
    ///
    /// None without `std`.
    #[cfg(not(feature = "std"))]
    pub fn keep(name: &str) -> Result<&'static str, crate::ConfigError> {
        Ok(Box::leak(name.to_owned().into_boxed_str()))
    }
}
