//! Worker-id leases per identity source: how long acquiring one takes (and releasing it),
//! and how many renewals a held lease makes.
//!
//! `cargo run --release -p bench-harness --bin lease_acquire -- [--csv FILE] SOURCE...`,
//! each SOURCE an `--identity` text (`static:0`, `sqlite:///tmp/x.db`, `postgres://...`,
//! `etcd://...`). With `--csv`, the figures also go to FILE (the report reads
//! `reports/data/leases.csv`).
//! `scripts/lease-bench.sh` starts PostgreSQL and etcd on loopback and runs it on all four.
//! Each source: 50 acquire/release cycles in one namespace (the first, which creates the
//! table or the files, is left out of the figures), then one lease held for 9 s with a 3 s
//! TTL, its renewals counted.

use std::time::{Duration, Instant};

use idkit_lease::{IdentitySource, Lease};

const CYCLES: usize = 50;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median_p90(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort_unstable();
    let p90 = v.len() * 9 / 10;
    (ms(v[v.len() / 2]), ms(v[p90.min(v.len() - 1)]))
}

fn with_param(text: &str, param: &str) -> String {
    let sep = if text.contains('?') { '&' } else { '?' };
    format!("{text}{sep}{param}")
}

/// Statements or requests one renewal makes, by source (from the backends' code).
fn requests_per_renewal(text: &str) -> &'static str {
    match text.split(':').next().unwrap_or("") {
        "static" => "1 file replaced (2 fsyncs)",
        "sqlite" => "1 UPDATE",
        "postgres" | "postgresql" => "2 statements (the database's time, an UPDATE)",
        "etcd" => "2 requests (keep-alive, a transaction writing the mark)",
        _ => "-",
    }
}

fn measure(text: &str) -> Result<String, Box<dyn std::error::Error>> {
    let state = std::env::temp_dir().join(format!("idkit-lease-bench-{}", std::process::id()));
    let ns = format!("bench{}", std::process::id());
    let keyed = if text.starts_with("static:") || text.starts_with("etcd:") {
        text.to_owned()
    } else {
        with_param(text, &format!("namespace={ns}"))
    };
    let keyed = if text.starts_with("etcd:") {
        format!("{}/{ns}", text.trim_end_matches('/'))
    } else {
        keyed
    };
    let source = IdentitySource::parse(&keyed)?.with_state_dir(Some(&state));
    let mut acquire = Vec::new();
    let mut release = Vec::new();
    for i in 0..=CYCLES {
        let t = Instant::now();
        let lease = Lease::acquire(&source, "snowflake-twitter", 1024)?;
        let a = t.elapsed();
        let t = Instant::now();
        lease.release();
        let r = t.elapsed();
        if i > 0 {
            acquire.push(a);
            release.push(r);
        }
    }
    let (a50, a90) = median_p90(acquire);
    let (r50, _) = median_p90(release);
    let held = IdentitySource::parse(&with_param(&keyed, "ttl_ms=3000"))
        .or_else(|_| IdentitySource::parse(&keyed))?
        .with_state_dir(Some(&state));
    let lease = Lease::acquire(&held, "snowflake-twitter", 1024)?;
    std::thread::sleep(Duration::from_secs(9));
    let status = lease.status();
    drop(lease);
    let _ = std::fs::remove_dir_all(&state);
    let kind = text.split(':').next().unwrap_or(text);
    let ttl = held.ttl().as_millis();
    // A held lease renews every third of its TTL: the traffic a minute at the source's
    // default TTL (the renewals counted above check that interval at a 3 s TTL).
    let default_ttl = source.ttl().as_millis();
    let per_minute = 60_000 / (default_ttl / 3);
    println!(
        "| `{kind}` | {a50:.2} ms | {a90:.2} ms | {r50:.2} ms | {} in 9 s at a {ttl} ms TTL ({} failed) | {per_minute} a minute at {default_ttl} ms | {} |",
        status.renewals,
        status.failures,
        requests_per_renewal(text)
    );
    Ok(format!(
        "{kind},{a50:.3},{a90:.3},{r50:.3},{ttl},{},{},{default_ttl},{per_minute},{}\n",
        status.renewals,
        status.failures,
        requests_per_renewal(text)
    ))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let csv = match args.iter().position(|a| a == "--csv") {
        Some(i) if i + 1 < args.len() => {
            let path = args.remove(i + 1);
            args.remove(i);
            Some(path)
        }
        Some(_) => return Err("--csv needs a file".into()),
        None => None,
    };
    if args.is_empty() {
        return Err(
            "usage: lease_acquire [--csv FILE] SOURCE... (e.g. static:0 sqlite:///tmp/ids.db)"
                .into(),
        );
    }
    println!(
        "| source | acquire, median | acquire, p90 | release, median | renewals | at the default TTL | per renewal |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut rows = String::from(
        "source,acquire_ms_median,acquire_ms_p90,release_ms_median,ttl_ms,renewals_in_9s,renewal_failures,default_ttl_ms,renewals_per_minute,per_renewal\n",
    );
    for source in &args {
        rows.push_str(&measure(source)?);
    }
    if let Some(path) = csv {
        std::fs::write(&path, rows)?;
    }
    Ok(())
}
