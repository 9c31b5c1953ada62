//! `idkit`: list schemes, generate, decode and inspect ids, and serve them over HTTP.
//!
//! Bad input gets one line on stderr naming what was wrong and what was expected, and exit
//! status 2; a failure while generating (the clock, an exhausted id space) exits with 1.

mod files;
mod render;
mod settings;

use std::io::Write;
use std::process::ExitCode;

use clap::{FromArgMatches, Parser, Subcommand};
use idkit_all::registry::{self, Options};
use idkit_all::render::Format;
use idkit_core::RawId;

/// Most ids one `gen` call prints.
const MAX_COUNT: u64 = 10_000_000;

#[derive(Parser, Debug)]
#[command(
    name = "idkit",
    version,
    about = "Generate, decode and inspect unique ids"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List every scheme and its facts.
    Schemes {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Generate ids.
    #[command(visible_alias = "generate")]
    Gen(GenArgs),
    /// Decode an id of a known scheme.
    Decode {
        /// Scheme name or alias (see `idkit schemes`).
        scheme: String,
        /// The id, in the scheme's canonical form or in --format.
        #[arg(allow_negative_numbers = true)]
        id: String,
        /// The form the id is written in, as `idkit gen --format` writes it.
        #[arg(long, value_enum, default_value_t = Format::Canonical)]
        format: Format,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Serve ids over HTTP, and gRPC with --grpc-listen (see the idkit-server crate).
    Serve(ServeArgs),
    /// Print the PL/pgSQL function that makes ids of a Snowflake layout inside PostgreSQL
    /// (Instagram's design: time from clock_timestamp(), a cycling sequence, constant
    /// fields such as the shard).
    Sql(SqlArgs),
    /// Write an id in another scheme's form where both hold the same bits: a ULID as a UUID
    /// and back, a TypeID as its UUIDv7 (`uuid` stands for a UUID of any version).
    #[command(after_help = "Examples:\n  \
        idkit convert ulid uuid 01ARZ3NDEKTSV4RRFFQ69G5FAV\n  \
        idkit convert typeid uuid-v7 prefix_01h455vb4pex5vsknk084sn02q\n  \
        idkit convert uuid-v7 typeid --prefix user 01890a5d-ac96-774b-bcce-b302099a8057")]
    Convert {
        /// The scheme the id is written in (`uuid`: any UUID).
        from: String,
        /// The scheme to write it in (`uuid`: the 128 bits as a UUID).
        to: String,
        /// The id.
        #[arg(allow_negative_numbers = true)]
        id: String,
        /// The type prefix, for a TypeID target.
        #[arg(long, value_name = "TYPE")]
        prefix: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Make the name-based UUID of NAME in NAMESPACE: version 5 (SHA-1 of the namespace's 16
    /// bytes and the name's UTF-8), or version 3 (MD5) with --v3 (RFC 9562 sections 5.3 and
    /// 5.5). The same namespace and name always give the same id.
    #[command(after_help = "Examples:\n  \
        idkit uuid-name dns www.example.com\n  \
        idkit uuid-name --v3 url https://example.com/orders/17\n  \
        idkit uuid-name 6ba7b811-9dad-11d1-80b4-00c04fd430c8 order-17")]
    UuidName {
        /// The namespace: dns, url, oid, x500, or any UUID.
        namespace: String,
        /// The name, whose UTF-8 bytes are hashed as given.
        name: String,
        /// Version 3 (MD5) instead of 5 (SHA-1).
        #[arg(long)]
        v3: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the lowest and highest ids of a time, or the bounds of a time range, for a
    /// time-ordered scheme: `WHERE id >= LOWEST AND id < BELOW` selects the ids made from
    /// FROM up to TO, an index range scan on a time-ordered key.
    Bounds(BoundsArgs),
    /// Make the id of a time and its parts (the inverse of `decode`): a ULID's randomness,
    /// a UUIDv7's rand_a and rand_b, a Snowflake layout's fields. Parts not given are zero.
    Compose(ComposeArgs),
    /// Guess an id's scheme from its shape and print every plausible decoding: the id is
    /// read as each scheme's own string and in every form `gen --format` writes.
    Inspect {
        /// The id.
        #[arg(allow_negative_numbers = true)]
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
    idkit sql snowflake-instagram --shard 5 | psql\n  \
    idkit sql custom --layout time:41,shard:13,sequence:10 --epoch-ms 1314220021721 --shard 5")]
struct SqlArgs {
    /// A 64-bit Snowflake layout by name or alias (see `idkit schemes`), or `custom` with
    /// --layout.
    scheme: String,
    /// For `custom`: the fields from the most significant bit, NAME:BITS comma-separated,
    /// one `time` and one `sequence` among them.
    #[arg(long, value_name = "FIELDS")]
    layout: Option<String>,
    /// For `custom`: the tick, ms.
    #[arg(long, value_name = "MS", default_value_t = 1)]
    tick_ms: u64,
    /// For `custom`: the epoch, Unix ms.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    epoch_ms: u64,
    /// A constant field's value, for a field without a flag of its own (repeatable).
    #[arg(long = "field", value_name = "NAME=N")]
    fields: Vec<String>,
    /// The function's name, optionally schema-qualified; its sequence is NAME_seq.
    #[arg(long, value_name = "NAME", default_value = "next_id")]
    function: String,
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Times are Unix milliseconds, a date (2026-11-01, midnight UTC) or an \
    RFC 3339 time (2026-11-01T08:30:00Z, 2026-11-01T09:30:00+01:00), taken down to the \
    scheme's precision (a second for ksuid and objectid, the tick of a Snowflake layout). \
    Identity fields given (--worker 3) are held; the others span their range.\n\n\
    Examples:\n  \
    idkit bounds ulid 2026-11-01 2026-12-01\n  \
    idkit bounds snowflake-twitter 2026-11-29T10:00:00Z --format decimal\n  \
    idkit bounds typeid --prefix user 2026-11-01 2026-11-02 --json"
)]
struct BoundsArgs {
    /// A time-ordered scheme's name or alias (see `idkit schemes`).
    scheme: String,
    /// The time, or the start of the range (included).
    from: String,
    /// The end of the range (not included).
    to: Option<String>,
    /// The form to print ids in, as `idkit gen --format` writes them (decimal for a
    /// `bigint` column, hex for `uuid` and bytes columns).
    #[arg(long, value_enum, default_value_t = Format::Canonical)]
    format: Format,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Parts are NAME=VALUE, named as `idkit decode` names them, each a decimal \
    number or hexadecimal after 0x; identity fields may also be given as flags (--worker 3). \
    Times are read as `idkit bounds` reads them, taken down to the scheme's precision.\n\n\
    Examples:\n  \
    idkit compose ulid 2016-07-30T23:54:10.259Z randomness=0xd6764c61efb99302bd5b\n  \
    idkit compose snowflake-twitter 2026-11-29T10:00:00Z --worker 3 sequence=7\n  \
    idkit compose uuid-v7 1645557742000 rand_a=0xcc3 rand_b=0x18c4dc0c0c07398f\n  \
    idkit compose typeid --prefix user 2026-11-01 --json"
)]
struct ComposeArgs {
    /// A scheme whose ids hold a time (see `idkit schemes`).
    scheme: String,
    /// The time: Unix milliseconds, a date or an RFC 3339 time.
    time: String,
    /// The id's other parts, NAME=VALUE.
    #[arg(value_name = "NAME=VALUE")]
    parts: Vec<String>,
    /// The form to print the id in, as `idkit gen --format` writes it.
    #[arg(long, value_enum, default_value_t = Format::Canonical)]
    format: Format,
    /// Print JSON: the id decoded, as `idkit decode --json` prints it.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
struct GenArgs {
    /// Scheme name or alias (see `idkit schemes`).
    scheme: String,
    /// How many ids (1 to 10,000,000).
    #[arg(short = 'n', long = "count", default_value_t = 1)]
    count: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Canonical)]
    format: Format,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    identity: IdentityArgs,
}

/// Where a generator's worker id comes from (schemes with identity fields).
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Identity")]
struct IdentityArgs {
    /// Where worker ids come from: static:N, sqlite:///PATH, postgres://USER@HOST:PORT/DB,
    /// mysql://USER@HOST:PORT/DB, or etcd://HOST:PORT/PREFIX (parameters: ?namespace=NAME&ttl_ms=N). Default: the
    /// identity fields given (0 when none), as a static worker id with a state file.
    #[arg(long, value_name = "SOURCE")]
    identity: Option<String>,
    /// Directory of the state files of static worker ids (default: $IDKIT_STATE_DIR, else
    /// the platform's state directory, e.g. ~/.local/state/idkit).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<std::path::PathBuf>,
    /// Keep no state file for a static worker id. Nothing then stops a second process with
    /// the same worker id, or a restart with the clock behind, from reissuing ids.
    #[arg(long)]
    no_state_file: bool,
}

impl IdentityArgs {
    /// Applies the flags given over `config`.
    fn apply(&self, config: &mut idkit_all::identity::IdentityConfig) {
        if let Some(v) = &self.identity {
            config.identity = Some(v.clone());
        }
        if let Some(v) = &self.state_dir {
            config.state_dir = Some(v.clone());
        }
        if self.no_state_file {
            config.no_state_file = true;
        }
    }
}

/// `idkit serve`: a TOML file, then these flags on top of it.
#[derive(clap::Args, Debug)]
struct ServeArgs {
    /// TOML configuration file (keys: listen, grpc_listen, tls_cert, tls_key, tokens_file,
    /// schemes, max_batch, header_timeout_ms,
    /// max_connections, workers, every scheme
    /// setting below with `_` for `-`, and `[scheme.NAME]` tables).
    #[arg(long)]
    config: Option<std::path::PathBuf>,
    /// Address to listen on (default 127.0.0.1:8080; port 0 picks a free one).
    #[arg(long)]
    listen: Option<String>,
    /// Also serve gRPC (package idkit.v1, with health and reflection) on this address, e.g.
    /// 127.0.0.1:50051 (default: no gRPC).
    #[arg(long)]
    grpc_listen: Option<String>,
    /// TLS on both front doors: a PEM certificate chain (with --tls-key).
    #[arg(long)]
    tls_cert: Option<std::path::PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long)]
    tls_key: Option<std::path::PathBuf>,
    /// Bearer tokens, one per line: every call but /healthz, /readyz, /metrics and gRPC
    /// health and reflection then needs `Authorization: Bearer TOKEN`.
    #[arg(long)]
    tokens_file: Option<std::path::PathBuf>,
    /// A scheme to serve; repeat for several (default: every scheme).
    #[arg(long = "scheme")]
    schemes: Vec<String>,
    /// Most ids one request may ask for.
    #[arg(long)]
    max_batch: Option<u32>,
    /// Close a connection whose request headers (on the gRPC door: its TLS handshake and
    /// HTTP/2 preface) have not arrived within this many ms (default 5000).
    #[arg(long)]
    header_timeout_ms: Option<u64>,
    /// Most connections open at once, over both doors (default 1000); the soft limit on
    /// open files is raised to fit, as far as the hard limit allows (a warning says when
    /// it does not).
    #[arg(long)]
    max_connections: Option<usize>,
    /// Runtime worker threads (default: one per core).
    #[arg(long)]
    workers: Option<usize>,
    #[command(flatten)]
    identity: IdentityArgs,
}

/// What went wrong, and whose fault it was.
#[derive(Debug)]
enum Failure {
    /// Bad input: exit 2.
    Usage(String),
    /// Could not do it right now: exit 1.
    Runtime(String),
    /// Standard output's reader has gone (`idkit gen ... | head`): it has what it wanted, so
    /// the command stops quietly and exits 0.
    ReaderGone,
}

/// What a failed write of the command's output means.
fn output_failure(e: std::io::Error) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Failure::ReaderGone
    } else {
        Failure::Runtime(format!("cannot write output: {e}"))
    }
}

/// Writes one line to stderr; a stderr that cannot be written (its reader gone too) is no
/// reason to panic, and there is nowhere else to say it.
fn to_stderr(line: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

fn main() -> ExitCode {
    let parsed = settings::command().try_get_matches().and_then(|matches| {
        let cli = Cli::from_arg_matches(&matches)?;
        Ok((cli, settings::given(&matches)))
    });
    let (cli, given) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = write!(std::io::stdout().lock(), "{e}");
                return ExitCode::SUCCESS;
            }
            // clap's message, without its usage block: one line, as every other error.
            let text = e.to_string();
            let line = text.lines().next().unwrap_or("error: invalid arguments");
            to_stderr(format_args!("{line}"));
            return ExitCode::from(2);
        }
    };
    let mut out = std::io::stdout().lock();
    match run(cli.command, given, &mut out) {
        Ok(()) | Err(Failure::ReaderGone) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => {
            to_stderr(format_args!("error: {message}"));
            ExitCode::from(2)
        }
        Err(Failure::Runtime(message)) => {
            to_stderr(format_args!("error: {message}"));
            ExitCode::from(1)
        }
    }
}

fn run(command: Command, given: Options, out: &mut impl Write) -> Result<(), Failure> {
    match command {
        Command::Schemes { json } => {
            let text = if json {
                render::schemes_json()
            } else {
                render::schemes_table()
            };
            writeln!(out, "{text}").map_err(output_failure)
        }
        Command::Gen(args) => generate(&args, &given, out),
        Command::Serve(args) => serve(args, given),
        Command::Convert {
            from,
            to,
            id,
            prefix,
            json,
        } => {
            let mut options = Options::default();
            if let Some(prefix) = prefix {
                options.set_option("prefix", prefix);
            }
            let converted = idkit_all::convert::convert(&from, &to, &id, &options)
                .map_err(|e| Failure::Usage(format!("{from} to {to}: {e}")))?;
            if json {
                let value = serde_json::json!({
                    "from": from,
                    "to": converted.scheme,
                    "id": converted.id,
                    "note": converted.note,
                });
                return writeln!(out, "{value}").map_err(output_failure);
            }
            if let Some(note) = &converted.note {
                to_stderr(format_args!("note: {note}"));
            }
            writeln!(out, "{}", converted.id).map_err(output_failure)
        }
        Command::UuidName {
            namespace,
            name,
            v3,
            json,
        } => {
            use idkit_all::uuid::versions;
            let ns = versions::namespace(&namespace).map_err(|e| {
                Failure::Usage(format!("namespace {}: {e}", render::quoted(&namespace)))
            })?;
            let (version, id) = if v3 {
                (3, versions::v3(&ns, name.as_bytes()))
            } else {
                (5, versions::v5(&ns, name.as_bytes()))
            };
            if json {
                let value = serde_json::json!({
                    "scheme": format!("uuid-v{version}"),
                    "namespace": ns.to_string(),
                    "name": name,
                    "id": id.to_string(),
                });
                return writeln!(out, "{value}").map_err(output_failure);
            }
            writeln!(out, "{id}").map_err(output_failure)
        }
        Command::Bounds(args) => {
            let text = bounds(&args, &given)?;
            writeln!(out, "{text}").map_err(output_failure)
        }
        Command::Compose(args) => {
            let text = compose(&args, &given)?;
            writeln!(out, "{text}").map_err(output_failure)
        }
        Command::Sql(args) => {
            let text = sql(&args, &given).map_err(Failure::Usage)?;
            write!(out, "{text}").map_err(output_failure)
        }
        Command::Decode {
            scheme,
            id,
            format,
            json,
        } => {
            let entry = registry::find(&scheme).map_err(|e| Failure::Usage(e.to_string()))?;
            // The codec alone: decoding builds no generator and opens no store.
            let codec = entry.codec();
            let form = match format {
                Format::Canonical => String::new(),
                other => format!(" in {}", other.name()),
            };
            let not_one = |e: idkit_core::ParseError| {
                Failure::Usage(format!(
                    "{} is not a {} id{form}: {e}",
                    render::quoted(&id),
                    entry.name()
                ))
            };
            // The id is named by its canonical string, whatever form was given (a ULID in
            // lower case is printed in upper case), as the service's decode names it.
            let (decoded, canonical) =
                render::read_id(&*codec, &id, format, entry.info().bits).map_err(not_one)?;
            let text = if json {
                render::decoded_json(entry.name(), &canonical, &decoded).to_string()
            } else {
                render::decoded_plain(entry.name(), &canonical, &decoded)
            };
            writeln!(out, "{text}").map_err(output_failure)
        }
        Command::Inspect { id, json } => {
            let found = idkit_all::inspect::inspect(&id).map_err(Failure::Usage)?;
            if found.is_empty() {
                return Err(Failure::Usage(format!(
                    "{} has the shape of an id, but no scheme decodes it to a plausible time",
                    render::quoted(&id)
                )));
            }
            let text = if json {
                serde_json::Value::Array(
                    found
                        .iter()
                        .map(|c| {
                            let mut v = render::decoded_json(c.scheme, &c.id, &c.decoded);
                            v["read_as"] = c.read_as.name().into();
                            v
                        })
                        .collect(),
                )
                .to_string()
            } else {
                found
                    .iter()
                    .map(|c| {
                        let read_as = [("read as", c.read_as.name().to_owned())];
                        render::decoded_plain_with(c.scheme, &c.id, &read_as, &c.decoded)
                    })
                    .collect::<Vec<_>>()
                    .join("\n\n")
            };
            writeln!(out, "{text}").map_err(output_failure)
        }
    }
}

/// What a time command (`bounds`, `compose`) works on: the scheme it names, its codec with
/// the settings given, and the identity fields given (`--worker 3`) as parts.
type TimeCommand<'a> = (
    &'static registry::Entry,
    Box<dyn idkit_core::DynCodec + Send + Sync>,
    Vec<(&'a str, u128)>,
);

/// The [`TimeCommand`] of `scheme` and the settings given.
fn scheme_with_fields<'a>(scheme: &str, given: &'a Options) -> Result<TimeCommand<'a>, Failure> {
    let usage = |e: registry::BuildError| Failure::Usage(e.to_string());
    let entry = registry::find(scheme).map_err(usage)?;
    let codec = entry.codec_with(given).map_err(usage)?;
    let fields = given
        .fields
        .iter()
        .map(|(name, value)| (name.as_str(), u128::from(*value)))
        .collect();
    Ok((entry, codec, fields))
}

/// The text `idkit bounds` prints.
fn bounds(args: &BoundsArgs, given: &Options) -> Result<String, Failure> {
    use idkit_core::time::{format_rfc3339_ms, parse_time_ms};
    let usage = |e: &dyn std::fmt::Display| Failure::Usage(e.to_string());
    let (entry, codec, fields) = scheme_with_fields(&args.scheme, given)?;
    let time = |text: &str| parse_time_ms(text).map_err(|e| usage(&e));
    let at = |ms: u64| {
        codec
            .bounds_raw(ms, &fields)
            .map_err(|e| usage(&format_args!("{}: {e}", entry.name())))
    };
    let show = |id: &RawId| {
        render::format_id(&*codec, id, args.format, entry.info().bits)
            .map_err(|e| Failure::Runtime(e.to_string()))
    };
    let from_ms = time(&args.from)?;
    let from = at(from_ms)?;
    let mut rows: Vec<(&str, String)> = vec![
        ("scheme", entry.name().to_owned()),
        ("from", format_rfc3339_ms(from_ms)),
    ];
    match &args.to {
        None => {
            rows.push(("lowest", show(&from.lowest)?));
            rows.push(("highest", show(&from.highest)?));
        }
        Some(to) => {
            let to_ms = time(to)?;
            if to_ms <= from_ms {
                return Err(Failure::Usage(format!(
                    "the range is empty: {to} is not after {}",
                    args.from
                )));
            }
            rows.insert(2, ("to", format_rfc3339_ms(to_ms)));
            rows.push(("lowest", show(&from.lowest)?));
            rows.push(("below", show(&at(to_ms)?.lowest)?));
        }
    }
    Ok(if args.json {
        serde_json::Value::Object(
            rows.into_iter()
                .map(|(k, v)| (k.to_owned(), serde_json::Value::String(v)))
                .collect(),
        )
        .to_string()
    } else {
        rows.iter()
            .map(|(k, v)| format!("{k:<8}{v}"))
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// The text `idkit compose` prints.
fn compose(args: &ComposeArgs, given: &Options) -> Result<String, Failure> {
    let usage = |e: &dyn std::fmt::Display| Failure::Usage(e.to_string());
    let (entry, codec, mut fields) = scheme_with_fields(&args.scheme, given)?;
    for part in &args.parts {
        let (name, value) = read_part(part).map_err(Failure::Usage)?;
        if fields.iter().any(|(given, _)| *given == name) {
            return Err(Failure::Usage(format!("the part {name} is given twice")));
        }
        fields.push((name, value));
    }
    let ms = idkit_core::time::parse_time_ms(&args.time).map_err(|e| usage(&e))?;
    let id = codec
        .compose_raw(ms, &fields)
        .map_err(|e| usage(&format_args!("{}: {e}", entry.name())))?;
    let runtime = |e: idkit_core::ParseError| Failure::Runtime(e.to_string());
    if args.json {
        let canonical = codec.format_raw(&id).map_err(runtime)?;
        let decoded = codec.decode_raw(&id).map_err(runtime)?;
        return Ok(render::decoded_json(entry.name(), &canonical, &decoded).to_string());
    }
    render::format_id(&*codec, &id, args.format, entry.info().bits).map_err(runtime)
}

/// `NAME=VALUE`, the value a decimal number or hexadecimal after `0x`.
fn read_part(part: &str) -> Result<(&str, u128), String> {
    let refuse = |why: &str| format!("part {}: {why}", render::quoted(part));
    let (name, value) = part
        .split_once('=')
        .filter(|(name, _)| !name.is_empty())
        .ok_or_else(|| refuse("expected NAME=VALUE"))?;
    let parsed = match value
        .strip_prefix("0x")
        .or_else(|| value.strip_prefix("0X"))
    {
        Some(hex) => u128::from_str_radix(hex, 16),
        None => value.parse::<u128>(),
    };
    let value = parsed.map_err(|e| {
        refuse(&format!(
            "{e}: expected a decimal number, or hexadecimal after 0x, below 2^128"
        ))
    })?;
    Ok((name, value))
}

/// The function text for `idkit sql`.
fn sql(args: &SqlArgs, given: &Options) -> Result<String, String> {
    use idkit_all::snowflake::sql::{SqlError, plpgsql};
    use idkit_all::snowflake::{LayoutSpec, preset};
    let custom;
    let layout: &LayoutSpec = if args.scheme == "custom" {
        let fields = args
            .layout
            .as_deref()
            .ok_or("`custom` needs --layout, e.g. time:41,shard:13,sequence:10")?;
        custom = LayoutSpec::parse("custom", fields, args.tick_ms, args.epoch_ms)
            .map_err(|e| e.to_string())?;
        &custom
    } else {
        if args.layout.is_some() {
            return Err(format!(
                "--layout is for `custom`; {} has a layout of its own",
                args.scheme
            ));
        }
        let entry = registry::find(&args.scheme).map_err(|e| e.to_string())?;
        preset(entry.name()).ok_or_else(|| {
            let layouts: Vec<_> = idkit_all::snowflake::presets()
                .iter()
                .filter(|p| p.word_bits() <= 64)
                .map(|p| p.name())
                .collect();
            format!(
                "{} is not a Snowflake layout: expected one of {}, or custom",
                entry.name(),
                layouts.join(", ")
            )
        })?
    };
    let mut values: Vec<(String, u64)> = given.fields.clone();
    for text in &args.fields {
        let (name, value) = text
            .split_once('=')
            .and_then(|(n, v)| Some((n, v.parse::<u64>().ok()?)))
            .ok_or_else(|| format!("invalid --field {text:?}: expected NAME=N"))?;
        values.retain(|(n, _)| n != name);
        values.push((name.to_owned(), value));
    }
    let values: Vec<(&str, u64)> = values.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    plpgsql(layout, &values, &args.function).map_err(|e| match e {
        SqlError::MissingValue { ref name } => format!("{e} (--field {name}=N)"),
        e => e.to_string(),
    })
}

fn generate(args: &GenArgs, options: &Options, out: &mut impl Write) -> Result<(), Failure> {
    if args.count == 0 || args.count > MAX_COUNT {
        return Err(Failure::Usage(format!(
            "invalid count {}: expected 1 to {MAX_COUNT}",
            args.count
        )));
    }
    let entry = registry::find(&args.scheme).map_err(|e| Failure::Usage(e.to_string()))?;
    let mut identity = idkit_all::identity::IdentityConfig::default();
    args.identity.apply(&mut identity);
    let built = idkit_all::identity::build(entry, options.clone(), &identity).map_err(|e| {
        if e.kind() == registry::BuildErrorKind::Unavailable {
            Failure::Runtime(e.to_string())
        } else {
            Failure::Usage(e.to_string())
        }
    })?;
    if let Some(warning) = &built.warning {
        to_stderr(format_args!("warning: {warning}"));
    }
    // Held until the ids are written; dropping it records what was issued and frees it.
    let _lease = built.lease;
    let scheme = built.scheme;
    let info = scheme.info();
    let mut buf = vec![RawId::default(); 4096];
    let mut left = usize::try_from(args.count).unwrap_or(usize::MAX);
    let mut out = std::io::BufWriter::new(out);
    // JSON is written as it goes, as the lines are: `{"scheme":...,"ids":[...]}` on one
    // line, in constant memory whatever the count.
    let mut separator = "";
    if args.json {
        let name = serde_json::Value::from(entry.name());
        write!(out, "{{\"scheme\":{name},\"ids\":[").map_err(output_failure)?;
    }
    while left > 0 {
        let batch = &mut buf[..left.min(4096)];
        scheme
            .fill_raw(batch)
            .map_err(|e| Failure::Runtime(format!("{}: {e}", entry.name())))?;
        for id in batch.iter() {
            let text = render::format_id(scheme.as_ref(), id, args.format, info.bits)
                .map_err(|e| Failure::Runtime(e.to_string()))?;
            if args.json {
                let text = serde_json::Value::String(text);
                write!(out, "{separator}{text}").map_err(output_failure)?;
                separator = ",";
            } else {
                writeln!(out, "{text}").map_err(output_failure)?;
            }
        }
        left -= batch.len();
    }
    if args.json {
        writeln!(out, "]}}").map_err(output_failure)?;
    }
    out.flush().map_err(output_failure)
}

fn serve(args: ServeArgs, given: Options) -> Result<(), Failure> {
    let mut config = match &args.config {
        Some(path) => idkit_server::Config::from_file(path),
        None => Ok(idkit_server::Config::default()),
    }
    .map_err(|e| Failure::Usage(e.to_string()))?;
    if let Some(v) = args.listen {
        config.listen = v;
    }
    if let Some(v) = args.grpc_listen {
        config.grpc_listen = Some(v);
    }
    if let Some(v) = args.tls_cert {
        config.tls_cert = Some(v);
    }
    if let Some(v) = args.tls_key {
        config.tls_key = Some(v);
    }
    if let Some(v) = args.tokens_file {
        config.tokens_file = Some(v);
    }
    if !args.schemes.is_empty() {
        config.schemes = args.schemes;
    }
    if let Some(v) = args.max_batch {
        config.max_batch = v;
    }
    if let Some(v) = args.header_timeout_ms {
        config.header_timeout_ms = v;
    }
    if let Some(v) = args.max_connections {
        config.max_connections = v;
    }
    for (name, value) in given.fields {
        config.settings.set_field(&name, value);
    }
    for (name, value) in given.options {
        config.settings.set_option(&name, value);
    }
    if let Some(v) = args.workers {
        config.workers = Some(v);
    }
    args.identity.apply(&mut config.identity);
    if config.workers == Some(0) {
        return Err(Failure::Usage(
            "invalid config: workers: must be at least 1".to_owned(),
        ));
    }
    // Logging first: acquiring worker ids logs who granted which one, and how fast.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        // A log line that cannot be written (the reader of a piped stderr gone) is lost, and
        // the service goes on: reporting the failure to that same stderr would panic.
        .log_internal_errors(false)
        .init();
    let service = idkit_server::Service::new(&config).map_err(|e| match e {
        idkit_server::ConfigError::Invalid {
            key: "identity", ..
        } => Failure::Runtime(e.to_string()),
        _ => Failure::Usage(e.to_string()),
    })?;
    // Checked by Service::new (1 to 1,000,000).
    files::make_room(config.max_connections);
    let addr = config
        .listen_addr()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let grpc_addr = config
        .grpc_listen_addr()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(workers) = config.workers {
        builder.worker_threads(workers);
    }
    let runtime = builder
        .enable_all()
        .build()
        .map_err(|e| Failure::Runtime(format!("cannot start the runtime: {e}")))?;
    let service = std::sync::Arc::new(service);
    let served = std::sync::Arc::clone(&service);
    let result = runtime.block_on(async move {
        let bind = |addr| async move {
            tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| Failure::Runtime(format!("cannot listen on {addr}: {e}")))
        };
        let listener = bind(addr).await?;
        let grpc_listener = match grpc_addr {
            Some(addr) => Some(bind(addr).await?),
            None => None,
        };
        // One shutdown for both front doors: each drains, then the leases are released.
        let (stop, stopped) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            idkit_server::shutdown_signal().await;
            let _ = stop.send(true);
        });
        let on_stop = move || {
            let mut stopped = stopped.clone();
            async move {
                let _ = stopped.wait_for(|s| *s).await;
            }
        };
        let grpc = async {
            match grpc_listener {
                Some(listener) => {
                    idkit_server::serve_grpc(listener, std::sync::Arc::clone(&served), on_stop())
                        .await
                }
                None => Ok(()),
            }
        };
        let http = idkit_server::serve(listener, std::sync::Arc::clone(&served), on_stop());
        let (http, grpc) = tokio::join!(http, grpc);
        http.and(grpc)
            .map_err(|e| Failure::Runtime(format!("serving: {e}")))
    });
    // Graceful shutdown: free every worker id now rather than after its TTL.
    service.release_leases();
    result
}
