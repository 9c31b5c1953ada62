//! `idkit serve` as a process: start-up line, graceful shutdown on SIGTERM with a request in
//! flight, and refusal of a bad configuration.

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
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
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
