//! The engines the report measures, one module each ([`sqlite`], [`postgres`], [`mysql`]),
//! and the one list of them (`ENGINES`) from which the run, the data files, the charts and
//! the report take them.
//!
//! Adding an engine is one module here that implements [`crate::engine::Engine`] and its part of the report
//! (`crate::engine::report::Report`), plus one line in `ENGINES`.

pub mod mysql;
pub mod postgres;
pub mod sqlite;

use crate::charts::{Chart, engine_charts};
use crate::engine::report::{Part, Report, Results};
use crate::engine::{Pending, pending};
use crate::{Error, Params};

/// The database engines, in the report's order.
pub(crate) const ENGINES: &[&dyn Listed] = &[&sqlite::Sqlite, &postgres::Postgres, &mysql::InnoDb];

/// An engine as one entry of [`ENGINES`]: what the run, the data files, the charts and the
/// report ([`Part`]) do with every engine, without naming it.
pub(crate) trait Listed: Part {
    /// [`crate::engine::Engine::NAME`].
    fn name(&self) -> &'static str;
    /// The help of its `--<name>-url` option: [`crate::engine::ByUrl::url_help`], then what
    /// `scripts/report.sh` starts for it; `None` for an engine in process.
    fn url_help(&self) -> Option<String>;
    /// Checks the servers at `urls` ([`crate::engine::Engine::servers`]), before any run, so that a bad
    /// URL fails in seconds.
    fn servers(&self, urls: &[String], params: &Params) -> Result<Box<dyn Pending>, Error>;
    /// Its charts ([`crate::engine::Engine::CHARTS`]) over its results in `r`.
    fn charts(&self, r: &Results<'_>) -> Vec<Chart>;
}

impl<E: Report + Sync + 'static> Listed for E {
    fn name(&self) -> &'static str {
        E::NAME
    }
    fn url_help(&self) -> Option<String> {
        E::BY_URL.map(|u| {
            format!(
                "{} `scripts/report.sh {}` starts {}.",
                u.url_help, u.flag, u.throwaway
            )
        })
    }
    fn servers(&self, urls: &[String], params: &Params) -> Result<Box<dyn Pending>, Error> {
        Ok(pending(E::servers(urls, params)?))
    }
    fn charts(&self, r: &Results<'_>) -> Vec<Chart> {
        engine_charts::<E>(r, &r.engine::<E>())
    }
}

#[cfg(test)]
mod tests {
    use super::mysql::InnoDb;
    use super::postgres::{Postgres, Server};

    /// The PostgreSQL servers whose URLs are their `shared_buffers` in KiB, named by
    /// [`crate::engine::servers`] (nothing connects), as (KiB, name); or its error's message.
    fn named(kib: &[i64]) -> Result<Vec<(i64, &'static str)>, String> {
        let urls: Vec<String> = kib.iter().map(i64::to_string).collect();
        let check = |url: &str| {
            Ok(Server::new(
                url,
                url.parse().unwrap(),
                "PostgreSQL",
                "17".into(),
                (),
            ))
        };
        let servers = crate::engine::servers::<Postgres>(&urls, check, crate::Error::PgSetup);
        let servers = servers.map_err(|e| e.to_string())?;
        Ok(servers.iter().map(|s| (s.cache_kib, s.cache)).collect())
    }

    #[test]
    fn more_than_two_servers_fail_before_any_is_reached() {
        // Unreachable URLs: the count is checked first, so nothing tries to connect.
        let urls: Vec<String> = (1..=3)
            .map(|p| format!("postgres://x@127.0.0.1:{p}/x"))
            .collect();
        let params = crate::Profile::Quick.params();
        let servers = |urls| <Postgres as crate::engine::Engine>::servers(urls, &params);
        let e = servers(&urls).unwrap_err();
        assert!(e.to_string().contains("found 3"), "{e}");
        assert!(servers(&[]).unwrap().is_empty());
    }

    #[test]
    fn servers_are_described_in_their_engines_words() {
        let pg = Server::new("postgres://x@h/x", 8192, "PostgreSQL", "17.2".into(), ());
        assert_eq!(
            pg.describe(),
            "small: PostgreSQL 17.2, shared_buffers 8 MiB"
        );
        let mut my = crate::engine::Server::<InnoDb>::new(
            "mysql://x@h/x",
            1 << 20,
            "MariaDB",
            "11.8.3".into(),
            super::mysql::InnoDbServer { page_size: 16384 },
        );
        my.cache = "large";
        assert_eq!(
            my.describe(),
            "large: MariaDB 11.8.3, innodb_buffer_pool_size 1024 MiB"
        );
    }

    #[test]
    fn servers_are_named_by_their_caches() {
        assert_eq!(named(&[]).unwrap(), vec![]);
        assert_eq!(named(&[8]).unwrap(), vec![(8, "small")]);
        assert_eq!(
            named(&[1024, 8]).unwrap(),
            vec![(8, "small"), (1024, "large")]
        );
        let same = named(&[8, 8]).unwrap_err();
        assert!(
            same.contains("the two PostgreSQL servers have the same shared_buffers"),
            "{same}"
        );
        let many = named(&[1, 2, 3]).unwrap_err();
        assert!(many.contains("found 3"), "{many}");
    }
}
