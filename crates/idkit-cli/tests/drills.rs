//! Drills of worker-id leases with real `idkit serve` processes and real coordination
//! servers on loopback: contention for too few worker ids, `kill -9`, `SIGSTOP` past the
//! TTL, an outage of the coordination server, and a restart with the clock set back
//! (libfaketime). Every drill counts the ids it fetched and the duplicates among them
//! (zero), and prints both.
//!
//! `scripts/test.sh` runs them (`--features drills`) after starting PostgreSQL and etcd,
//! with `IDKIT_TEST_PG_URL`, `IDKIT_TEST_PG_DIR`, `IDKIT_TEST_ETCD` and
//! `IDKIT_TEST_ETCD_DIR` set and `faketime` installed. Without them these tests fail: they
//! never pass by skipping.
#![cfg(feature = "drills")]

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use idkit_testkit::Scratch;
use idkit_testkit::faketime::libfaketime;

/// Twitter's epoch (Unix ms).
const EPOCH: u64 = 1_288_834_974_657;
/// The lease TTL of every drill: short, so that drills wait seconds, not minutes.
const TTL_MS: u64 = 3_000;

fn time_ms(id: u64) -> u64 {
    (id >> 22) + EPOCH
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run scripts/test.sh, which starts the servers")
    })
}

fn unique(tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{tag}-{}-{nanos}", std::process::id())
}

/// One `idkit serve` process serving Twitter's layout.
struct Server {
    child: Child,
    addr: String,
    log: Arc<Mutex<String>>,
}

/// Starts `idkit serve` with `args` (and `faketime OFFSET` in front when given); returns
/// the server once it logged its address, or the exit status and log when it exited.
fn start(args: &[&str], state_dir: &str, faketime: Option<&str>) -> Result<Server, String> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_idkit"));
    if let Some(offset) = faketime {
        // libfaketime preloaded into idkit itself (the `faketime` wrapper forks, and a
        // signal to it would not reach the server). Only the wall clock is set back, as an
        // NTP step or a restored snapshot does; the monotonic clock runs on (faking it too
        // breaks timed waits under libfaketime).
        command
            .env("LD_PRELOAD", libfaketime())
            .env("FAKETIME", offset)
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    }
    let mut child = command
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--scheme",
            "snowflake-twitter",
        ])
        .args(args)
        .env("IDKIT_STATE_DIR", state_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run idkit: {e}"))?;
    let log = Arc::new(Mutex::new(String::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    {
        let log = Arc::clone(&log);
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("http://").nth(1) {
                    let _ = tx.send(rest.split_whitespace().next().unwrap_or("").to_owned());
                }
                log.lock().unwrap().push_str(&(line + "\n"));
            }
        });
    }
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(addr) => Ok(Server { child, addr, log }),
        Err(_) => {
            let status = child.wait().ok();
            Err(format!("exited ({status:?}): {}", log.lock().unwrap()))
        }
    }
}

impl Server {
    fn get(&self, path: &str) -> (u16, String) {
        get(&self.addr, path)
    }

    /// Up to `n` ids, or the error status and body.
    fn ids(&self, n: u32) -> Result<Vec<u64>, (u16, String)> {
        let (status, body) = self.get(&format!("/v1/snowflake-twitter/next?count={n}"));
        if status != 200 {
            return Err((status, body));
        }
        Ok(body.lines().map(|l| l.parse().unwrap()).collect())
    }

    /// As [`ids`](Self::ids), but asking again (for 10 s at most) while the holder refuses
    /// because its lease is not proven: a store that answers a renewal late on a loaded
    /// machine fences a holder of a short TTL for a moment, as it should. Every other
    /// refusal is returned at once.
    fn ids_once_proven(&self, n: u32) -> Result<Vec<u64>, (u16, String)> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self.ids(n) {
                Err((503, body)) if body.contains("not renewed in time") => {
                    if Instant::now() >= deadline {
                        return Err((503, body));
                    }
                    println!("fenced for a moment, asking again: {body}");
                    std::thread::sleep(Duration::from_millis(100));
                }
                other => return other,
            }
        }
    }

    /// A field of the lease in `/v1/identity` (JSON).
    fn identity(&self, field: &str) -> u64 {
        let (status, body) = get_json(&self.addr, "/v1/identity");
        assert_eq!(status, 200, "{body}");
        let key = format!("\"{field}\":");
        let at = body
            .find(&key)
            .unwrap_or_else(|| panic!("no {field} in {body}"))
            + key.len();
        body[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap_or_else(|_| panic!("{field} in {body}"))
    }

    fn state(&self) -> String {
        let (_, body) = get_json(&self.addr, "/v1/identity");
        let at = body.find("\"state\":\"").map(|i| i + 9).unwrap_or(0);
        body[at..].split('"').next().unwrap_or("").to_owned()
    }

    fn signal(&self, signal: &str) {
        let ok = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {signal}");
    }

    /// SIGTERM and wait: a graceful stop that releases the lease.
    fn stop(mut self) {
        self.signal("-TERM");
        let _ = self.child.wait();
    }

    fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Whether the process still runs, and its log: for a drill's failure message.
    fn fate(&mut self) -> String {
        let status = match self.child.try_wait() {
            Ok(Some(status)) => format!("exited: {status}"),
            Ok(None) => "still running".to_owned(),
            Err(e) => format!("unknown: {e}"),
        };
        format!("pid {} {status}; its log:\n{}", self.child.id(), self.log())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A connection to `addr`, tried three times, 5 s each: a connection that was never made
/// asked for nothing, so trying again cannot hide an id issued twice, while one lost
/// handshake on a loaded machine would otherwise wait out the system's two minutes of
/// retransmissions and fail the drill.
fn connect(addr: &str) -> Result<TcpStream, String> {
    let to: std::net::SocketAddr = addr.parse().map_err(|e| format!("{addr}: {e}"))?;
    let mut errors = Vec::new();
    for _ in 0..3 {
        match TcpStream::connect_timeout(&to, Duration::from_secs(5)) {
            Ok(stream) => return Ok(stream),
            Err(e) => errors.push(e.to_string()),
        }
    }
    Err(format!("cannot connect to {addr}: {}", errors.join("; ")))
}

fn request(addr: &str, path: &str, accept: &str) -> (u16, String) {
    let mut stream = match connect(addr) {
        Ok(stream) => stream,
        Err(e) => return (0, e),
    };
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let _ = write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    );
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    idkit_testkit::http::status_and_body(&response)
}

fn get(addr: &str, path: &str) -> (u16, String) {
    request(addr, path, "text/plain")
}

fn get_json(addr: &str, path: &str) -> (u16, String) {
    request(addr, path, "application/json")
}

/// Every id fetched in a drill; reports the count and the duplicates.
#[derive(Default)]
struct Ledger {
    ids: Vec<u64>,
}

impl Ledger {
    fn add(&mut self, ids: &[u64]) {
        self.ids.extend_from_slice(ids);
    }

    fn check(&self, drill: &str) {
        let distinct: HashSet<_> = self.ids.iter().collect();
        let duplicates = self.ids.len() - distinct.len();
        println!(
            "{drill}: {} ids fetched, {duplicates} duplicates",
            self.ids.len()
        );
        assert!(!self.ids.is_empty(), "{drill}: no ids fetched");
        assert_eq!(duplicates, 0, "{drill}: duplicate ids");
    }
}

/// Stops, then restarts, a coordination server.
type Outage = (Box<dyn Fn()>, Box<dyn Fn()>);

/// A coordination backend under drill.
struct Backend {
    name: &'static str,
    /// The `--identity` source for namespace `ns`, four worker ids, TTL 3 s.
    source: Box<dyn Fn(&str) -> String>,
    /// Stops and restarts the coordination server (none for SQLite: a file).
    outage: Option<Outage>,
    /// The backend's files (SQLite's database), removed with it.
    _files: Option<Scratch>,
}

fn script(args: &[&str]) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let ok = Command::new(format!("{root}/{}", args[0]))
        .args(&args[1..])
        .status()
        .unwrap()
        .success();
    assert!(ok, "{args:?}");
}

fn sqlite() -> Backend {
    let dir = Scratch::new("drill-sqlite");
    let db = dir.join("ids.db");
    Backend {
        name: "sqlite",
        source: Box::new(move |ns| {
            format!(
                "sqlite://{}?namespace={ns}&ttl_ms={TTL_MS}&max_workers=4",
                db.display()
            )
        }),
        outage: None,
        _files: Some(dir),
    }
}

/// An outage of the server that the script at `path` runs in the directory named by the
/// environment variable `dir`: the script's verb `stop` ends it, `restart-server` starts it
/// again.
fn outage(path: &'static str, stop: &'static str, dir: &str) -> Option<Outage> {
    let dir = env(dir);
    let dir2 = dir.clone();
    Some((
        Box::new(move || script(&[path, stop, &dir])),
        Box::new(move || script(&[path, "restart-server", &dir2])),
    ))
}

fn postgres() -> Backend {
    sql_server(
        "postgres",
        "IDKIT_TEST_PG_URL",
        outage("scripts/pg-cluster.sh", "stop", "IDKIT_TEST_PG_DIR"),
    )
}

fn mysql() -> Backend {
    // kill -9: a graceful InnoDB shutdown takes a while, and an outage does not wait.
    let outage = outage("scripts/mariadb-server.sh", "kill", "IDKIT_TEST_MYSQL_DIR");
    sql_server("mysql", "IDKIT_TEST_MYSQL_URL", outage)
}

/// A SQL server's backend: its URL in the environment variable `url`, with the drills' lease
/// settings.
fn sql_server(name: &'static str, url: &str, outage: Option<Outage>) -> Backend {
    let url = env(url);
    Backend {
        name,
        source: Box::new(move |ns| format!("{url}?namespace={ns}&ttl_ms={TTL_MS}&max_workers=4")),
        outage,
        _files: None,
    }
}

fn etcd() -> Backend {
    let endpoint = env("IDKIT_TEST_ETCD");
    Backend {
        name: "etcd",
        source: Box::new(move |ns| format!("etcd://{endpoint}/{ns}?ttl_ms={TTL_MS}&max_workers=4")),
        outage: outage("scripts/etcd-server.sh", "kill", "IDKIT_TEST_ETCD_DIR"),
        _files: None,
    }
}

/// Drill 1: five processes, four worker ids. Returns the four holders.
fn four_holders(b: &Backend, ns: &str, state: &str, ledger: &mut Ledger) -> Vec<Server> {
    let source = (b.source)(ns);
    let mut holders = Vec::new();
    for _ in 0..4 {
        holders.push(start(&["--identity", &source], state, None).unwrap());
    }
    let fifth = start(&["--identity", &source], state, None);
    let Err(why) = fifth else {
        panic!(
            "{}: a fifth process became ready with four worker ids",
            b.name
        );
    };
    assert!(why.contains("all 4 worker ids"), "{}: {why}", b.name);
    let mut workers: Vec<u64> = holders.iter().map(|h| h.identity("worker")).collect();
    workers.sort_unstable();
    assert_eq!(workers, [0, 1, 2, 3], "{}", b.name);
    for h in &holders {
        assert!(h.log().contains("granted by"), "start-up log: {}", h.log());
        ledger.add(&h.ids(500).unwrap());
    }
    holders
}

/// Retries `start` until it succeeds or `within` passes.
fn start_when_free(source: &str, state: &str, within: Duration) -> Server {
    let deadline = Instant::now() + within;
    loop {
        match start(&["--identity", source], state, None) {
            Ok(s) => return s,
            Err(e) if Instant::now() < deadline && e.contains("all 4 worker ids") => {
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("{e}"),
        }
    }
}

fn drills(b: &Backend) {
    let state = std::env::temp_dir().join(unique("idkit-drill-state"));
    let state = state.to_str().unwrap().to_owned();
    let ns = unique(b.name);
    let source = (b.source)(&ns);

    // 1. Five processes on four worker ids.
    let mut ledger = Ledger::default();
    let mut holders = four_holders(b, &ns, &state, &mut ledger);
    ledger.check(&format!(
        "drill 1 [{}] five processes, four worker ids",
        b.name
    ));

    // 2. kill -9 a holder: its worker id is not granted again before its TTL; then it is,
    //    and the new holder's ids are above the dead one's high-water mark.
    let dead = holders.remove(0);
    let worker = dead.identity("worker");
    ledger.add(&dead.ids(500).unwrap());
    let mark_before = dead.identity("high_water_mark_ms");
    let killed_at = Instant::now();
    dead.kill9();
    let early = start(&["--identity", &source], &state, None);
    assert!(
        killed_at.elapsed() < Duration::from_millis(TTL_MS * 2 / 3),
        "the early start took too long to prove anything"
    );
    assert!(
        early.is_err(),
        "{}: worker id granted again within its TTL",
        b.name
    );
    let heir = start_when_free(&source, &state, Duration::from_millis(TTL_MS * 3));
    assert!(
        killed_at.elapsed() >= Duration::from_millis(TTL_MS * 4 / 5),
        "re-granted early"
    );
    assert_eq!(heir.identity("worker"), worker);
    assert!(heir.identity("floor_ms") >= mark_before);
    let ids = heir.ids(500).unwrap();
    assert!(
        ids.iter().all(|&id| time_ms(id) > mark_before),
        "{}: ids at or below the mark",
        b.name
    );
    ledger.add(&ids);
    holders.push(heir);
    ledger.check(&format!("drill 2 [{}] kill -9 a holder", b.name));

    // 3. SIGSTOP a holder past its TTL while another process takes its worker id; on
    //    SIGCONT it issues not a single id.
    let mut stopped = holders.remove(0);
    let worker = stopped.identity("worker");
    ledger.add(&stopped.ids(500).unwrap());
    stopped.signal("-STOP");
    let mut taker = start_when_free(&source, &state, Duration::from_millis(TTL_MS * 3));
    assert_eq!(taker.identity("worker"), worker);
    ledger.add(&taker.ids(500).unwrap());
    stopped.signal("-CONT");
    let until = Instant::now() + Duration::from_millis(1_500);
    let mut refused = 0;
    while Instant::now() < until {
        match stopped.ids(100) {
            Ok(ids) => panic!("{}: {} ids issued under a lost lease", b.name, ids.len()),
            Err((503, _)) => refused += 1,
            Err(e) => panic!("{}: the stopped holder: {e:?}\n{}", b.name, stopped.fate()),
        }
        match taker.ids(100) {
            Ok(ids) => ledger.add(&ids),
            Err(e) => panic!("{}: the taker: {e:?}\n{}", b.name, taker.fate()),
        }
        // Paced: a new loopback connection per request, thousands a second, leaves as many
        // sockets in TIME_WAIT, and a new connection that lands on one of them can time out.
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(refused > 0);
    let deadline = Instant::now() + Duration::from_secs(5);
    while stopped.state() != "lost" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(stopped.state(), "lost", "{}: {}", b.name, stopped.log());
    assert_eq!(get(&stopped.addr, "/readyz").0, 503);
    println!(
        "drill 3 [{}]: the stopped holder refused {refused} requests after SIGCONT",
        b.name
    );
    stopped.kill9();
    holders.push(taker);
    ledger.check(&format!("drill 3 [{}] SIGSTOP past the TTL", b.name));

    // 4. Stop the coordination server: holders issue until their margin, then answer 503;
    //    restart it: they recover on their own.
    if let Some((stop, restart)) = &b.outage {
        let h = &holders[0];
        // Start the outage just after a renewal, so the holder has most of its proof left
        // (4/5 of the TTL less the renewal's own time) however long stopping takes here.
        let renewals = h.identity("renewals");
        let deadline = Instant::now() + Duration::from_millis(TTL_MS);
        while h.identity("renewals") == renewals {
            assert!(Instant::now() < deadline, "{}: no renewal in a TTL", b.name);
            std::thread::sleep(Duration::from_millis(5));
        }
        let down = Instant::now();
        stop();
        let stop_took = down.elapsed();
        let mut issued_during = 0;
        let fenced_after = loop {
            match h.ids(50) {
                Ok(ids) => {
                    issued_during += ids.len();
                    ledger.add(&ids);
                }
                Err((503, _)) => break down.elapsed(),
                Err(e) => panic!("{e:?}"),
            }
            assert!(
                down.elapsed() < Duration::from_millis(TTL_MS * 2),
                "never fenced"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(
            fenced_after < Duration::from_millis(TTL_MS),
            "fenced after {fenced_after:?}"
        );
        // A renewal proves the lease for 4/5 of the TTL and runs every third of it, so a
        // holder has more than a third of the TTL (1 s) left when the server goes away.
        assert!(
            issued_during > 0,
            "{}: no id issued between the outage and the fence (stopping took {stop_took:?}, \
             fenced after {fenced_after:?}); the holder's log:\n{}",
            b.name,
            h.log()
        );
        assert_eq!(get(&h.addr, "/readyz").0, 503);
        restart();
        let back = Instant::now();
        let recovered = loop {
            if let Ok(ids) = h.ids(50) {
                ledger.add(&ids);
                break back.elapsed();
            }
            assert!(
                back.elapsed() < Duration::from_secs(30),
                "{}: never recovered",
                b.name
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        for h in &holders {
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                if let Ok(ids) = h.ids(100) {
                    ledger.add(&ids);
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "{}: a holder never recovered",
                    b.name
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        println!(
            "drill 4 [{}]: {issued_during} ids issued during the outage, fenced after {} ms, \
             issuing again {} ms after the restart",
            b.name,
            fenced_after.as_millis(),
            recovered.as_millis()
        );
        ledger.check(&format!("drill 4 [{}] coordination server outage", b.name));
    }

    // 5. Restart a holder with its clock set back 5 s: no id at or below the mark; the
    //    default policy refuses, a wait policy waits.
    restart_with_clock_back(b.name, &mut holders, &source, &state, &mut ledger);
    drop(holders);
}

fn restart_with_clock_back(
    name: &str,
    holders: &mut Vec<Server>,
    source: &str,
    state: &str,
    ledger: &mut Ledger,
) {
    let h = holders.remove(0);
    let worker = h.identity("worker");
    ledger.add(&h.ids(500).unwrap());
    let last = *ledger
        .ids
        .iter()
        .filter(|&&id| (id >> 12) & 1023 == worker)
        .max()
        .unwrap();
    h.stop();
    let back = start(&["--identity", source], state, Some("-5s")).unwrap();
    assert_eq!(back.identity("worker"), worker, "{name}");
    let mark = back.identity("floor_ms");
    assert!(
        mark >= time_ms(last),
        "{name}: mark {mark} below the last id"
    );
    let (status, body) = back.get("/v1/snowflake-twitter/next");
    assert_eq!(status, 503, "{name}: {body}");
    assert!(body.contains("clock moved backwards by"), "{name}: {body}");
    assert!(
        back.log().contains("behind the high-water mark"),
        "{}",
        back.log()
    );
    back.stop();
    let waits = start(
        &[
            "--identity",
            source,
            "--rollback",
            "wait",
            "--rollback-max-ms",
            "8000",
        ],
        state,
        Some("-5s"),
    )
    .unwrap();
    let ids = waits.ids_once_proven(100).unwrap_or_else(|e| {
        let identity = get_json(&waits.addr, "/v1/identity").1;
        panic!(
            "{name}: {e:?}\n{identity}\nthe holder's log:\n{}",
            waits.log()
        )
    });
    assert!(
        ids.iter().all(|&id| time_ms(id) > mark),
        "{name}: an id at or below the mark"
    );
    ledger.add(&ids);
    holders.push(waits);
    ledger.check(&format!("drill 5 [{name}] restart with the clock 5 s back"));
}

#[test]
fn sqlite_drills() {
    drills(&sqlite());
}

#[test]
fn postgres_drills() {
    drills(&postgres());
}

#[test]
fn mysql_drills() {
    drills(&mysql());
}

#[test]
fn etcd_drills() {
    drills(&etcd());
}

/// The static identity: a second process with the same worker id and state directory is
/// refused, naming the first; `kill -9` then a restart waits out the reservation and
/// issues above it; a restart with the clock 5 s back refuses or waits per the policy.
#[test]
fn static_drills() {
    let dir = Scratch::new("drill-static");
    let state = dir.path().to_str().unwrap().to_owned();
    let mut ledger = Ledger::default();
    let first = start(&["--worker", "7"], &state, None).unwrap();
    assert!(first.log().contains("worker id 7"), "{}", first.log());
    ledger.add(&first.ids(500).unwrap());
    let second = start(&["--identity", "static:7"], &state, None)
        .err()
        .expect("second holder");
    let pid = format!("pid {}", first.child.id());
    assert!(second.contains(&pid), "names the first: {second}");
    ledger.check("static drill 1: a second process with worker id 7");

    let mark = first.identity("high_water_mark_ms");
    first.kill9();
    let again = start(&["--worker", "7"], &state, None).unwrap();
    let ids = again.ids(500).unwrap();
    assert!(
        ids.iter().all(|&id| time_ms(id) > mark),
        "an id at or below the reservation"
    );
    ledger.add(&ids);
    ledger.check("static drill 2: kill -9 and restart");

    let mut holders = vec![again];
    restart_with_clock_back("static", &mut holders, "static:7", &state, &mut ledger);

    // Opting out takes a flag, and warns.
    let bare = start(&["--worker", "8", "--no-state-file"], &state, None).unwrap();
    assert!(bare.log().contains("has no state file"), "{}", bare.log());
}
