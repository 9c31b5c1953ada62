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
}];

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
    fn build(&self, options: &Options) -> Result<Scheme, BuildError> {
        options.check_against(self)?;
        let prefix = Prefix::new(options.get("prefix").unwrap_or(""))
            .map_err(|e| BuildError::invalid("typeid", format!("prefix: {e}")))?;
        let generator = AtomicTypeIdGenerator::new(prefix);
        // Generation uses the configured prefix; decoding reads any valid TypeID, as the
        // definition's own codec does.
        let codec = TypeIdCodec::issuing(prefix);
        Ok(Box::new(Erased::new(generator, codec)))
    }
}
