//! The registry definitions of the preset layouts: facts, codec, identity fields and the
//! rollback options, read by the `idkit` command line, the service and the harness.

use idkit_core::definition::{BuildError, IdentityField, OptionSpec, Options, Scheme, SchemeDef};
use idkit_core::{Clock, CodecOnly, DynCodec, Erased, SchemeInfo};

use crate::generator::{Builder, RollbackPolicy, Snowflake};
use crate::layout::{
    Boundary, Discord, FieldKind, Instagram, Layout, Mastodon, SnowflakeCodec, Sonyflake, Twitter,
};

/// A preset layout's definition: the layout, and what the registry shows of it.
#[derive(Debug)]
pub struct PresetDef<L> {
    layout: L,
    aliases: &'static [&'static str],
    summary: &'static str,
    /// Help text of each identity field, by name.
    field_help: &'static [(&'static str, &'static str)],
}

/// The options every preset takes: the clock-rollback policy and its bound.
const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "rollback",
        value: "POLICY",
        help: "clock-rollback policy of Snowflake layouts: fail-fast, wait (default) or logical",
        reads: false,
    },
    OptionSpec {
        name: "rollback-max-ms",
        value: "MS",
        help: "bound of the rollback policy: the longest wait, or how far ahead of the clock \
               ids may run, ms (default 5)",
        reads: false,
    },
];

impl<L: Layout> PresetDef<L> {
    /// The rollback policy `options` ask for; [`RollbackPolicy::default`] when unset.
    fn policy(&self, options: &Options) -> Result<RollbackPolicy, BuildError> {
        let name = self.name();
        let max_ms = options.get_u64(name, "rollback-max-ms")?.unwrap_or(5);
        match options.get("rollback").unwrap_or("wait") {
            "fail-fast" => Ok(RollbackPolicy::FailFast),
            "wait" => Ok(RollbackPolicy::Wait { max_ms }),
            "logical" => Ok(RollbackPolicy::Logical {
                max_ahead_ms: max_ms,
            }),
            other => Err(BuildError::invalid(
                name,
                format!("rollback: {other:?}: expected fail-fast, wait or logical"),
            )),
        }
    }
}

impl<L: Layout> SchemeDef for PresetDef<L> {
    fn name(&self) -> &'static str {
        self.layout.spec().name()
    }
    fn aliases(&self) -> &'static [&'static str] {
        self.aliases
    }
    fn summary(&self) -> &'static str {
        self.summary
    }
    fn info(&self) -> SchemeInfo {
        self.layout.spec().info()
    }
    fn codec(&self) -> Box<dyn DynCodec + Send + Sync> {
        Box::new(CodecOnly::new(SnowflakeCodec(self.layout), self.info()))
    }
    fn identity(&self) -> Vec<IdentityField> {
        self.layout
            .spec()
            .fields()
            .filter(|f| f.kind == FieldKind::Fixed)
            .map(|f| IdentityField {
                name: f.name,
                bits: f.bits,
                help: self
                    .field_help
                    .iter()
                    .find(|(n, _)| *n == f.name)
                    .map_or("identity field", |(_, h)| h),
            })
            .collect()
    }
    fn options(&self) -> &'static [OptionSpec] {
        OPTIONS
    }
    fn takes_guard(&self) -> bool {
        true
    }
    fn build(&self, options: &Options) -> Result<Scheme, BuildError> {
        options.check_against(self)?;
        let mut builder = Snowflake::builder(self.layout).rollback(self.policy(options)?);
        for (name, value) in &options.fields {
            builder = builder.field(name, *value);
        }
        // A leased generator reads its guard's clock, on which the lease is judged (another
        // clock type); the others the default ticker.
        match &options.guard {
            Some(guard) => self.shared(builder.guard(guard.clone())),
            None => self.shared(builder),
        }
    }
}

impl<L: Layout> PresetDef<L> {
    /// The registry's shared generator: `builder`'s lock-free one, erased.
    fn shared<C: Clock + Send + Sync + 'static>(
        &self,
        builder: Builder<L, C>,
    ) -> Result<Scheme, BuildError> {
        let generator = builder
            .build_atomic()
            .map_err(|e| BuildError::invalid(self.name(), e.to_string()))?;
        Ok(Box::new(Erased::new(
            generator,
            SnowflakeCodec(self.layout),
        )))
    }
}

/// Twitter's Snowflake.
pub static TWITTER: PresetDef<Twitter> = PresetDef {
    layout: Twitter,
    aliases: &["twitter"],
    summary: "Twitter Snowflake: 41-bit ms, datacenter 5, worker 5, sequence 12",
    field_help: &[("datacenter", "datacenter id"), ("worker", "worker id")],
};

/// Discord's snowflakes.
pub static DISCORD: PresetDef<Discord> = PresetDef {
    layout: Discord,
    aliases: &["discord"],
    summary: "Discord: 42-bit ms since 2015, worker 5, process 5, increment 12",
    field_help: &[("worker", "worker id"), ("process", "process id")],
};

/// Instagram's sharded ids.
pub static INSTAGRAM: PresetDef<Instagram> = PresetDef {
    layout: Instagram,
    aliases: &["instagram"],
    summary: "Instagram: 41-bit ms, shard 13, sequence 10",
    field_help: &[("shard", "shard id")],
};

/// Sony's Sonyflake.
pub static SONYFLAKE: PresetDef<Sonyflake> = PresetDef {
    layout: Sonyflake,
    aliases: &["sony"],
    summary: "Sonyflake: 39 bits of 10 ms, sequence 8, machine 16",
    field_help: &[("machine", "machine id")],
};

/// Mastodon's ids.
pub static MASTODON: PresetDef<Mastodon> = PresetDef {
    layout: Mastodon,
    aliases: &["mastodon"],
    summary: "Mastodon: 48-bit Unix ms, sequence 16",
    field_help: &[],
};

/// Boundary's 128-bit flake.
pub static BOUNDARY: PresetDef<Boundary> = PresetDef {
    layout: Boundary,
    aliases: &["boundary", "flake"],
    summary: "Boundary flake: 128 bits, 64-bit Unix ms, worker 48, sequence 16",
    field_help: &[("worker", "worker id")],
};
