//! The registry definition of `typeid`: the type prefix as its one option.

use idkit_core::definition::{BuildError, OptionSpec, Options, Scheme, SchemeDef};
use idkit_core::{CodecOnly, DynCodec, Erased, SchemeInfo};

use crate::{AtomicTypeIdGenerator, Prefix, TypeIdCodec};

/// The `typeid` scheme: `--prefix user` gives `user_01h455vb4pex5vsknk084sn02q`-style ids.
/// Reading ([`SchemeDef::codec`]) accepts any valid prefix.
#[derive(Debug)]
pub struct TypeIdDef;

/// The registry definition of `typeid`.
pub static DEFINITION: TypeIdDef = TypeIdDef;

const OPTIONS: &[OptionSpec] = &[OptionSpec {
    name: "prefix",
    value: "TYPE",
    help: "a TypeID's type prefix: up to 63 of a-z and _, starting and ending with a letter \
           (default: none)",
    reads: true,
}];

/// The prefix `options` give (none by default), checked with the rest of them.
fn prefix(def: &TypeIdDef, options: &Options) -> Result<Prefix, BuildError> {
    options.check_against(def)?;
    Prefix::new(options.get("prefix").unwrap_or(""))
        .map_err(|e| BuildError::invalid("typeid", format!("prefix: {e}")))
}

impl SchemeDef for TypeIdDef {
    fn name(&self) -> &'static str {
        "typeid"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["type-id"]
    }
    fn summary(&self) -> &'static str {
        "TypeID: a type prefix and a UUIDv7 in 26 lower-case base32 characters"
    }
    fn info(&self) -> SchemeInfo {
        TypeIdCodec::any().info()
    }
    fn codec(&self) -> Box<dyn DynCodec + Send + Sync> {
        Box::new(CodecOnly::new(TypeIdCodec::any(), self.info()))
    }
    fn options(&self) -> &'static [OptionSpec] {
        OPTIONS
    }
    fn codec_with(&self, options: &Options) -> Result<Box<dyn DynCodec + Send + Sync>, BuildError> {
        let codec = TypeIdCodec::issuing(prefix(self, options)?);
        Ok(Box::new(CodecOnly::new(codec, self.info())))
    }
    fn build(&self, options: &Options) -> Result<Scheme, BuildError> {
        let prefix = prefix(self, options)?;
        let generator = AtomicTypeIdGenerator::new(prefix);
        // Generation uses the configured prefix; decoding reads any valid TypeID, as the
        // definition's own codec does.
        let codec = TypeIdCodec::issuing(prefix);
        Ok(Box::new(Erased::new(generator, codec)))
    }
}
