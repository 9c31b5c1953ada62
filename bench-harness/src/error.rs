use std::fmt;
use std::path::PathBuf;

use idkit_all::registry::BuildError;
use idkit_core::GenerateError;

/// Why a harness run stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A scheme from the registry would not build.
    Build(BuildError),
    /// A scheme failed to generate an id.
    Generate {
        /// The scheme.
        scheme: &'static str,
        /// Its error.
        source: GenerateError,
    },
    /// An id does not fit its key's type: a signed 64-bit integer key (an id above
    /// `i64::MAX` or wider than 64 bits), or PostgreSQL's 16-byte `uuid`.
    IdRange {
        /// The scheme.
        scheme: &'static str,
    },
    /// SQLite failed.
    Sqlite(rusqlite::Error),
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A chart could not be drawn.
    Chart(String),
    /// PostgreSQL failed.
    Postgres(postgres::Error),
    /// A PostgreSQL server is not fit for the runs (version, extensions, settings).
    PgSetup(String),
    /// MySQL or MariaDB failed.
    MySql(mysql::Error),
    /// A MySQL or MariaDB server is not fit for the runs (URL, privileges, settings).
    MySqlSetup(String),
    /// Servers were given for an engine the harness does not have.
    UnknownEngine {
        /// The name given.
        name: String,
        /// The engines there are.
        known: Vec<&'static str>,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Build(e) => write!(f, "building a scheme: {e}"),
            Self::Generate { scheme, source } => write!(f, "{scheme}: generating: {source}"),
            Self::IdRange { scheme } => {
                write!(
                    f,
                    "{scheme}: an id does not fit its key's type (a signed 64-bit integer, \
                     or a 16-byte uuid)"
                )
            }
            Self::Sqlite(e) => write!(f, "sqlite: {e}"),
            Self::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Self::Chart(e) => write!(f, "drawing a chart: {e}"),
            Self::Postgres(e) => write!(f, "postgres: {}", idkit_core::with_causes(e)),
            Self::PgSetup(e) => write!(f, "postgres: {e}"),
            Self::MySql(e) => write!(f, "mysql: {e}"),
            Self::MySqlSetup(e) => write!(f, "mysql: {e}"),
            Self::UnknownEngine { name, known } => write!(
                f,
                "servers given for {name:?}, which is not an engine here (engines with a \
                 server: {})",
                known.join(", ")
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Build(e) => Some(e),
            Self::Generate { source, .. } => Some(source),
            Self::Sqlite(e) => Some(e),
            Self::Io { source, .. } => Some(source),
            Self::Postgres(e) => Some(e),
            Self::MySql(e) => Some(e),
            Self::IdRange { .. }
            | Self::Chart(_)
            | Self::PgSetup(_)
            | Self::MySqlSetup(_)
            | Self::UnknownEngine { .. } => None,
        }
    }
}

impl From<BuildError> for Error {
    fn from(e: BuildError) -> Self {
        Self::Build(e)
    }
}

impl From<postgres::Error> for Error {
    fn from(e: postgres::Error) -> Self {
        Self::Postgres(e)
    }
}

impl From<mysql::Error> for Error {
    fn from(e: mysql::Error) -> Self {
        Self::MySql(e)
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Self::Sqlite(e)
    }
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io { path, source }
    }

    pub(crate) fn generate(scheme: &'static str) -> impl FnOnce(GenerateError) -> Self {
        move |source| Self::Generate { scheme, source }
    }

    /// A scheme that could not format one of its own ids, as a `Generate` error.
    pub(crate) fn format(scheme: &'static str) -> impl Fn(idkit_core::ParseError) -> Self {
        move |e| Self::Generate {
            scheme,
            source: GenerateError::unavailable(e.to_string()),
        }
    }
}
