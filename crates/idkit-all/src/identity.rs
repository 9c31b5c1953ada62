//! A scheme's generator with its identity from one source (feature `lease`): a static
//! worker id guarded by a state file (the default), or a lease from SQLite, PostgreSQL or
//! etcd (see [`idkit_lease`]). The `idkit` command line and the service build every
//! generator that takes an identity through [`build`].
//!
//! ```
//! use idkit_all::identity::{self, IdentityConfig};
//! use idkit_all::registry::{self, Options};
//!
//! let dir = std::env::temp_dir().join(format!("idkit-identity-doc-{}", std::process::id()));
//! let config = IdentityConfig { state_dir: Some(dir.clone()), ..IdentityConfig::default() };
//! let twitter = registry::find("twitter")?;
//! // `--worker 3` means `--identity static:3`: worker 3 of datacenter 0, held while built.
//! let built = identity::build(twitter, Options::default().field("worker", 3), &config)?;
//! assert_eq!(built.lease.as_ref().map(|l| l.worker()), Some(3));
//! built.scheme.next_raw()?;
//! // A second holder of the same static worker id is refused, naming the first.
//! let again = identity::build(twitter, Options::default().field("worker", 3), &config);
//! assert!(again.unwrap_err().to_string().contains(&format!("pid {}", std::process::id())));
//! # drop(built); std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::PathBuf;

pub use idkit_lease::{
    IdentitySource, Lease, LeaseError, LeaseErrorKind, LeaseState, Status, default_state_dir,
};

use crate::registry::{BuildError, BuildErrorKind, Entry, Options, Scheme};

/// Where generators get their identity, as the command line and the service are told.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdentityConfig {
    /// An identity source (`static:7`, `sqlite:///path`, `postgres://...`,
    /// `etcd://host:port/prefix`); `None`: the identity fields given (0 when none), as a
    /// static worker id.
    pub identity: Option<String>,
    /// Where static worker ids keep their state files (default: [`default_state_dir`]).
    pub state_dir: Option<PathBuf>,
    /// Keep no state file for a static worker id: nothing then guards it against a second
    /// process or a restart with the clock behind.
    pub no_state_file: bool,
}

/// A built generator and the lease it holds, if any.
#[derive(Debug)]
pub struct Built {
    /// The generator.
    pub scheme: Scheme,
    /// The lease guarding it (dropping it releases the worker id).
    pub lease: Option<Lease>,
    /// A warning to show the operator (a static worker id without a state file).
    pub warning: Option<String>,
}

/// Builds `entry` with `options`, taking its identity from `config`.
///
/// A scheme without identity fields is built as it is. A scheme whose generator honours a
/// lease guard ([`SchemeDef::takes_guard`](crate::registry::SchemeDef::takes_guard)) gets a
/// [`Lease`]: from the identity source when one is given (the identity fields must then be
/// left out), else a static worker id composed from its identity fields, guarded by a state
/// file unless `no_state_file`.
///
/// # Errors
///
/// [`BuildErrorKind::InvalidValue`] for a malformed identity source, identity fields given
/// beside a source, or an identity source for a scheme that cannot be guarded;
/// [`BuildErrorKind::Unavailable`] when the lease cannot be had (all worker ids taken, a
/// static worker id held by another process, the source unreachable); else as
/// [`SchemeDef::build`](crate::registry::SchemeDef::build).
pub fn build(
    entry: &Entry,
    options: Options,
    config: &IdentityConfig,
) -> Result<Built, BuildError> {
    let name = entry.name();
    let fields = entry.identity();
    let plain = |options: &Options| {
        entry.build(options).map(|scheme| Built {
            scheme,
            lease: None,
            warning: None,
        })
    };
    if fields.is_empty() {
        return plain(&options);
    }
    if !entry.takes_guard() {
        if let Some(text) = &config.identity {
            return Err(BuildError::invalid(
                name,
                format!(
                    "identity {text}: this scheme's generator cannot be fenced by a lease; \
                     give its {} directly, or leave it out of the served schemes",
                    fields.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        return plain(&options);
    }
    options.check_against(entry)?;
    let invalid = |e: LeaseError| BuildError::invalid(name, e.to_string());
    let source = match &config.identity {
        Some(text) => {
            if let Some((field, _)) = options.fields.first() {
                return Err(BuildError::invalid(
                    name,
                    format!(
                        "{field} is set and so is identity {text}: give the identity once \
                         (static:N for a fixed one)"
                    ),
                ));
            }
            IdentitySource::parse(text).map_err(invalid)?
        }
        None => IdentitySource::fixed(entry.identity_of(&options)),
    };
    // State files in the temporary directory (no state directory that outlives a reboot):
    // the lock still keeps a second process off, but a reboot may take the mark with it.
    let mut transient = None;
    let source = if source.static_worker().is_none() {
        source
    } else if config.no_state_file {
        source.with_state_dir(None)
    } else {
        let dir = config.state_dir.clone().unwrap_or_else(default_state_dir);
        if config.state_dir.is_none() && idkit_core::state::lasting_state_dir().is_none() {
            transient = Some(dir.clone());
        }
        source.with_state_dir(Some(&dir))
    };
    let rest = options.options.clone();
    if let Some(worker) = source.static_worker().filter(|_| source.is_unguarded()) {
        let mut options = entry.with_identity(worker)?;
        options.options = rest;
        let mut built = plain(&options)?;
        built.warning = Some(format!(
            "{name}: worker id {worker} has no state file: nothing stops a second process \
             with the same worker id, and a restart with the clock behind can reissue ids"
        ));
        return Ok(built);
    }
    let lease =
        Lease::acquire(&source, name, entry.identity_count()).map_err(|e| match e.kind() {
            LeaseErrorKind::Invalid => BuildError::invalid(name, e.to_string()),
            _ => BuildError::new(BuildErrorKind::Unavailable, name, e.to_string()),
        })?;
    let mut options = entry.with_identity(lease.worker())?;
    options.options = rest;
    options.guard = Some(lease.guard());
    let scheme = entry.build(&options)?;
    let warning = transient.map(|dir| {
        format!(
            "{name}: the state files of worker id {} are in {}, which a reboot may empty (no \
             IDKIT_STATE_DIR, XDG_STATE_HOME or home directory is set): after one, nothing \
             stops a restart with the clock behind from reissuing ids; set IDKIT_STATE_DIR or \
             name a state directory",
            lease.worker(),
            dir.display()
        )
    });
    Ok(Built {
        scheme,
        lease: Some(lease),
        warning,
    })
}
