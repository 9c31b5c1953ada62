//! The registry definition of `tsid`: a node as its identity, its width as an option.

use idkit_core::definition::{BuildError, IdentityField, OptionSpec, Options, Scheme, SchemeDef};
use idkit_core::{CodecOnly, DynCodec, Erased, SchemeInfo};

use crate::{AtomicTsidGenerator, DEFAULT_NODE_BITS, MAX_NODE_BITS, TsidCodec};

/// The `tsid` scheme: `--node N` (default 0) and `--node-bits B` (default 10).
#[derive(Debug)]
pub struct TsidDef;

/// The registry definition of `tsid`.
pub static DEFINITION: TsidDef = TsidDef;

const OPTIONS: &[OptionSpec] = &[OptionSpec {
    name: "node-bits",
    value: "BITS",
    help: "bits of a TSID's node, 0 to 20 (default 10); the counter has the rest of 22",
    reads: true,
}];

fn node_field(bits: u32) -> IdentityField {
    IdentityField {
        name: "node",
        bits,
        help: "node id",
    }
}

/// The node's width `options` give, checked with the rest of them.
fn node_bits(def: &TsidDef, options: &Options) -> Result<u32, BuildError> {
    options.check_names(def)?;
    let bits = match options.get_u64("tsid", "node-bits")? {
        None => DEFAULT_NODE_BITS,
        Some(b) if b <= u64::from(MAX_NODE_BITS) => u32::try_from(b).unwrap_or(0),
        Some(b) => {
            return Err(BuildError::invalid(
                "tsid",
                format!("node-bits: {b} is out of range: expected 0 to {MAX_NODE_BITS}"),
            ));
        }
    };
    options.check_widths("tsid", &[node_field(bits)])?;
    Ok(bits)
}

impl SchemeDef for TsidDef {
    fn name(&self) -> &'static str {
        "tsid"
    }
    fn summary(&self) -> &'static str {
        "TSID: 42-bit ms since 2020, node 10 and counter 12 bits, Crockford base32"
    }
    fn info(&self) -> SchemeInfo {
        TsidCodec::default().info()
    }
    fn codec(&self) -> Box<dyn DynCodec + Send + Sync> {
        Box::new(CodecOnly::new(TsidCodec::default(), self.info()))
    }
    fn identity(&self) -> Vec<IdentityField> {
        vec![node_field(DEFAULT_NODE_BITS)]
    }
    fn options(&self) -> &'static [OptionSpec] {
        OPTIONS
    }
    fn codec_with(&self, options: &Options) -> Result<Box<dyn DynCodec + Send + Sync>, BuildError> {
        let codec = TsidCodec::with_node_bits(node_bits(self, options)?);
        Ok(Box::new(CodecOnly::new(codec, codec.info())))
    }
    fn build(&self, options: &Options) -> Result<Scheme, BuildError> {
        let bits = node_bits(self, options)?;
        let node = options.get_field("node").unwrap_or(0);
        let generator = AtomicTsidGenerator::with_node(bits, node)
            .map_err(|e| BuildError::invalid("tsid", e.to_string()))?;
        let codec = generator.codec();
        Ok(Box::new(Erased::new(generator, codec)))
    }
}
