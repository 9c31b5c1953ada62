//! `idkit serve` as a process: start-up line, graceful shutdown on SIGTERM with a request in
//! flight, refusal of a bad configuration, TLS and tokens from the command line, a log pipe
//! whose reader has gone, and its open-file limit raised for `max_connections`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

fn http_get(addr: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

mod common;

use common::idkit_cmd;
use idkit_testkit::Scratch;

#[test]
fn sigterm_lets_the_request_in_flight_finish() {
    let mut child = idkit_cmd()
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--scheme",
            "sonyflake",
            "--machine",
            "5",
        ])
        .args(["--max-batch", "5000"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    // The start-up log: the worker id granted, then the line with the address.
    let mut line = String::new();
    while !line.contains("http://") {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "no address logged"
        );
    }
    assert!(line.contains("schemes: sonyflake; machine=5"), "{line}");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();

    // 5,000 Sonyflake ids take about 0.2 s at its cap of 25,600 per second.
    let request = {
        let addr = addr.clone();
        std::thread::spawn(move || http_get(&addr, "/v1/sonyflake/next?count=5000"))
    };
    std::thread::sleep(Duration::from_millis(50));
    sigterm(&child);
    let response = request.join().unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let body = response.split("\r\n\r\n").nth(1).unwrap();
    let ids: Vec<u64> = body.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 5000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));

    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("SIGTERM, shutting down"), "{rest}");
    assert!(rest.contains("in-flight requests finished"), "{rest}");
    assert!(
        TcpStream::connect(&addr).is_err(),
        "still listening after shutdown"
    );
}

#[test]
fn bad_configuration_stops_start_up_with_one_line() {
    let dir = std::env::temp_dir().join(format!("idkit-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("idkit.toml");
    std::fs::write(
        &config,
        "listen = \"127.0.0.1:0\"\nschemes = [\"twitter\"]\nworker = 3\n",
    )
    .unwrap();
    for (flags, expected) in [
        (vec!["--worker", "40"], "worker must be at most 31"),
        (
            vec!["--rollback", "never"],
            "expected fail-fast, wait or logical",
        ),
        (vec!["--listen", "nowhere"], "is not an address"),
        (
            vec![
                "--listen",
                "127.0.0.1:8080",
                "--grpc-listen",
                "127.0.0.1:8080",
            ],
            "is listen's address too",
        ),
        (vec!["--scheme", "nope"], "unknown scheme \"nope\""),
        (vec!["--workers", "0"], "workers: must be at least 1"),
    ] {
        let out = idkit_cmd()
            .arg("serve")
            .arg("--config")
            .arg(&config)
            .args(&flags)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expected), "{flags:?}: {stderr}");
    }
    std::fs::write(&config, "listen = 5\n").unwrap();
    let out = idkit_cmd()
        .args(["serve", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid config"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Starts `idkit serve` for Twitter ids (worker 6) on HTTP and gRPC, with each flag of
/// `files` naming a file in `dir`, and reads its start-up log until both front doors have
/// logged where they listen (the two start at once, in either order): the process, the rest
/// of its log, and every line read.
fn serve_both_doors(
    dir: &std::path::Path,
    files: &[(&str, &str)],
) -> (
    std::process::Child,
    BufReader<std::process::ChildStderr>,
    Vec<String>,
) {
    let mut command = idkit_cmd();
    command
        .args(["serve", "--scheme", "twitter", "--worker", "6"])
        .args(["--listen", "127.0.0.1:0", "--grpc-listen", "127.0.0.1:0"]);
    for (flag, file) in files {
        command.arg(flag).arg(dir.join(file));
    }
    let mut child = command.stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut lines: Vec<String> = Vec::new();
    read_log_until(&mut stderr, &mut lines, |lines| {
        lines.iter().any(|l| l.contains("listening on"))
            && lines.iter().any(|l| l.contains("gRPC (idkit.v1) on"))
    });
    (child, stderr, lines)
}

/// The address after `prefix` in the first log line that holds it.
fn logged_address(lines: &[String], prefix: &str) -> String {
    lines
        .iter()
        .find_map(|l| l.split(prefix).nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no {prefix} in {lines:?}"))
        .to_owned()
}

/// Reads `idkit serve`'s log line by line into `lines` until `enough` holds of them; a log
/// that ends first fails the test with the lines read.
fn read_log_until(
    stderr: &mut impl BufRead,
    lines: &mut Vec<String>,
    enough: impl Fn(&[String]) -> bool,
) {
    while !enough(lines) {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "ended: {lines:?}");
        lines.push(line);
    }
}

/// Asks `idkit serve` to stop with SIGTERM, as an orchestrator does.
fn sigterm(child: &std::process::Child) {
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
}

/// Stops `idkit serve` with SIGTERM and checks that it exits 0.
fn terminate(mut child: std::process::Child) {
    sigterm(&child);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// One HTTP/1.1 request over TLS to `addr`, trusting only `ca_pem` for `localhost`.
fn https_get(addr: &str, ca_pem: &str, path: &str, token: Option<&str>) -> String {
    use tokio_rustls::rustls;
    use tokio_rustls::rustls::pki_types::ServerName;

    let config = idkit_testkit::http::client_config(ca_pem);
    let name = ServerName::try_from("localhost").unwrap();
    let connection = rustls::ClientConnection::new(config, name).unwrap();
    let tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut tls = rustls::StreamOwned::new(connection, tcp);
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        tls,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    // What arrived is the answer, whether or not the server said close_notify after it.
    let mut response = Vec::new();
    let _ = tls.read_to_end(&mut response);
    String::from_utf8_lossy(&response).into_owned()
}

#[test]
fn tls_and_tokens_from_the_command_line_guard_the_service() {
    const TOKEN: &str = "cli-token-8d3f61a0b5c2e497";
    let dir = Scratch::new("serve-tls");
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    std::fs::write(dir.join("cert.pem"), cert.cert.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), cert.signing_key.serialize_pem()).unwrap();
    std::fs::write(dir.join("tokens"), format!("{TOKEN}\n")).unwrap();
    let (child, _log, lines) = serve_both_doors(
        dir.path(),
        &[
            ("--tls-cert", "cert.pem"),
            ("--tls-key", "key.pem"),
            ("--tokens-file", "tokens"),
        ],
    );
    for door in ["listening on https://", "gRPC (idkit.v1) on"] {
        let line = lines.iter().find(|l| l.contains(door)).unwrap();
        assert!(line.contains("tls=true tokens=true"), "{line}");
    }
    assert!(!lines.iter().any(|l| l.contains("clear text")), "{lines:?}");
    let addr = logged_address(&lines, "https://");

    let response = https_get(&addr, &cert.cert.pem(), "/v1/twitter/next", Some(TOKEN));
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let id: u64 = response
        .split("\r\n\r\n")
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!((id >> 12) & 0x3ff, 6, "worker field of {id}");
    let response = https_get(&addr, &cert.cert.pem(), "/v1/twitter/next", None);
    assert!(response.starts_with("HTTP/1.1 401"), "{response}");
    // Probes need neither a token nor a trusted client certificate, but they do need TLS.
    let response = https_get(&addr, &cert.cert.pem(), "/healthz", None);
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");

    terminate(child);
}

#[test]
fn tokens_without_tls_are_warned_about_on_each_door() {
    let dir = Scratch::new("serve-clear");
    std::fs::write(dir.join("tokens"), "cli-token-2b7e90c4d1a6f358\n").unwrap();
    let (child, mut stderr, mut lines) =
        serve_both_doors(dir.path(), &[("--tokens-file", "tokens")]);
    // Each door warns right after its own line; read on until the later door's warning.
    read_log_until(&mut stderr, &mut lines, |lines| {
        lines.iter().filter(|l| l.contains("clear text")).count() >= 2
    });
    for door in ["listening on http://", "gRPC (idkit.v1) on"] {
        let line = lines.iter().find(|l| l.contains(door)).unwrap();
        assert!(line.contains("tls=false tokens=true"), "{line}");
    }
    for door in ["HTTP on", "gRPC on"] {
        let warning = lines
            .iter()
            .find(|l| l.contains(door) && l.contains("clear text"))
            .unwrap_or_else(|| panic!("no warning for {door}: {lines:?}"));
        assert!(warning.contains("WARN"), "{warning}");
    }
    let addr = logged_address(&lines, "http://");
    let response = http_get(&addr, "/v1/twitter/next");
    assert!(response.starts_with("HTTP/1.1 401"), "{response}");

    terminate(child);
}

#[test]
fn a_log_pipe_whose_reader_has_gone_does_not_stop_the_service() {
    let dir = Scratch::new("serve-pipe");
    let (child, log, lines) = serve_both_doors(dir.path(), &[]);
    let addr = logged_address(&lines, "http://");
    // The log collector goes away: every later log line meets a broken pipe (EPIPE).
    drop(log);
    let response = http_get(&addr, "/v1/twitter/next?count=3");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let body = response.split("\r\n\r\n").nth(1).unwrap();
    assert_eq!(body.lines().count(), 3, "{body}");
    // Shutting down logs two lines into the broken pipe; the exit is still a clean one.
    terminate(child);
}

/// `idkit serve` with `args` under an open-file limit of `soft` (and `hard`, where given),
/// set by the shell that then becomes it, as a service manager would start it; read up to
/// its line that says where it listens: the process, the lines read, and its HTTP address.
fn serve_with_file_limit(
    soft: u32,
    hard: Option<u32>,
    args: &[&str],
) -> (std::process::Child, Vec<String>, String) {
    let idkit = idkit_cmd();
    // The soft limit first: a hard limit below the soft one is refused.
    let hard = hard.map_or_else(String::new, |h| format!(" && ulimit -Hn {h}"));
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("ulimit -Sn {soft}{hard} && exec \"$0\" \"$@\""))
        .arg(idkit.get_program())
        .args(["serve", "--scheme", "uuid-v7", "--listen", "127.0.0.1:0"])
        .args(args);
    for (key, value) in idkit.get_envs() {
        if let Some(value) = value {
            command.env(key, value);
        }
    }
    let mut child = command.stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut lines: Vec<String> = Vec::new();
    read_log_until(&mut stderr, &mut lines, |lines| {
        lines.iter().any(|l| l.contains("listening on"))
    });
    // The rest of the log is not read: keep its pipe open and drained.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let addr = logged_address(&lines, "http://");
    (child, lines, addr)
}

/// The soft and hard limits on open files of process `pid`, from `/proc/<pid>/limits`.
fn file_limits(pid: u32) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let mut values = line["Max open files".len()..].split_whitespace();
    let soft = values.next().unwrap().to_owned();
    (soft, values.next().unwrap().to_owned())
}

#[test]
fn a_low_open_file_limit_is_raised_for_max_connections() {
    let (child, lines, addr) = serve_with_file_limit(
        256,
        None,
        &["--max-connections", "400", "--header-timeout-ms", "60000"],
    );
    let raised = lines
        .iter()
        .find(|l| l.contains("open-file limit"))
        .unwrap_or_else(|| panic!("no word of the limit: {lines:?}"));
    // 400 connections and 64 descriptors for the service itself.
    assert!(
        raised.contains("open-file limit raised from 256 to 464 for max_connections = 400"),
        "{raised}"
    );
    assert_eq!(file_limits(child.id()).0, "464");
    // More connections than the old limit had room for, each held open without a word.
    let silent: Vec<TcpStream> = (0..300)
        .map(|_| TcpStream::connect(&addr).unwrap())
        .collect();
    // The next one is answered at once (under the old limit, `accept` would fail until the
    // silent ones timed out, after 60 s), and the service has accepted every one.
    let response = http_get(&addr, "/metrics");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.contains("idkit_connections_accepted_total 301\n"),
        "{response}"
    );
    assert!(
        response.contains("idkit_connections_refused_total 0\n"),
        "{response}"
    );
    drop(silent);
    terminate(child);
}

#[test]
fn an_open_file_limit_too_low_for_max_connections_is_warned_about() {
    let (child, lines, addr) = serve_with_file_limit(256, Some(300), &[]);
    // Raised as far as the hard limit goes, and the room left said.
    assert!(
        lines.iter().any(
            |l| l.contains("open-file limit raised from 256 to 300 for max_connections = 1000")
        ),
        "{lines:?}"
    );
    let warning = lines
        .iter()
        .find(|l| l.contains("the open-file limit is"))
        .unwrap_or_else(|| panic!("no warning: {lines:?}"));
    assert!(warning.contains("WARN"), "{warning}");
    assert!(
        warning.contains(
            "the open-file limit is 300 (hard limit 300): room for about 236 connections, \
             not max_connections = 1000"
        ),
        "{warning}"
    );
    assert_eq!(
        file_limits(child.id()),
        ("300".to_owned(), "300".to_owned())
    );
    let response = http_get(&addr, "/v1/uuid-v7/next");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    terminate(child);
}

/// Starts `idkit serve` on HTTP with every scheme it serves by default, its state in `state`,
/// and returns the process, its address and the log read so far.
fn serve_defaults(state: &std::path::Path) -> (std::process::Child, String) {
    let mut child = idkit_cmd()
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("IDKIT_STATE_DIR", state)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut lines = Vec::new();
    read_log_until(&mut stderr, &mut lines, |lines| {
        lines.iter().any(|l| l.contains("http://"))
    });
    let addr = logged_address(&lines, "http://");
    // The rest of the log, read so that the process never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (child, addr)
}

/// The body of an HTTP response.
fn body(response: &str) -> &str {
    response.split("\r\n\r\n").nth(1).unwrap_or("")
}

/// No scheme repeats an id across restarts, at the command line or in the service: `idkit
/// gen` run twice and `idkit serve` started twice (with one state directory, as on one host)
/// hand out distinct ids for every scheme the service serves by default; `auto-increment`,
/// whose counter would start again at 1, is refused by both with the reason.
#[test]
fn auto_increment_is_refused_and_no_scheme_repeats_across_runs() {
    let state = Scratch::new("restarts");
    let mut seen: std::collections::HashMap<String, std::collections::HashSet<String>> =
        Default::default();
    let mut served = Vec::new();
    for run in 0..2 {
        let (child, addr) = serve_defaults(state.path());
        let listed = http_get(&addr, "/v1/schemes");
        served = body(&listed)
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .map(str::to_owned)
            .collect::<Vec<_>>();
        assert!(served.len() > 10, "{listed}");
        assert!(!served.iter().any(|s| s == "auto-increment"), "{served:?}");
        for scheme in &served {
            let response = http_get(&addr, &format!("/v1/{scheme}/next?count=50"));
            assert!(response.starts_with("HTTP/1.1 200"), "{scheme}: {response}");
            for id in body(&response).lines() {
                assert!(
                    seen.entry(scheme.clone())
                        .or_default()
                        .insert(id.to_owned()),
                    "{scheme}: {id} again in the service's run {run}"
                );
            }
        }
        terminate(child);
    }
    for run in 0..2 {
        for scheme in &served {
            let o = idkit_cmd()
                .args(["gen", scheme, "-n", "50"])
                .env("IDKIT_STATE_DIR", state.path())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success(), "{scheme}: {err}");
            for id in String::from_utf8(o.stdout).unwrap().lines() {
                assert!(
                    seen.entry(scheme.clone())
                        .or_default()
                        .insert(id.to_owned()),
                    "{scheme}: {id} again in idkit gen's run {run}"
                );
            }
        }
    }
    for args in [
        &["gen", "auto-increment", "-n", "2"][..],
        &["serve", "--listen", "127.0.0.1:0", "--scheme", "serial"][..],
    ] {
        let o = idkit_cmd()
            .args(args)
            .env("IDKIT_STATE_DIR", state.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} made ids");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert!(
            err.contains("starts again at 1") && err.contains("range"),
            "{args:?}: {err}"
        );
    }
}
