//! The etcd backend, through etcd's v3 JSON gateway (`POST /v3/...` with base64 keys).
//!
//! Keys, under the namespace `NS` (`PREFIX/SCHEME`):
//! - `idkit/NS/slot/W`: the holder of worker id `W`, attached to its etcd lease, so that it
//!   disappears when the lease expires. Created only if absent (a transaction comparing
//!   its create revision with 0); its create revision is the fencing token, which grows
//!   with every grant because etcd's revision does.
//! - `idkit/NS/mark/W`: `MARK_MS released|reserved`, not attached to a lease, so that it
//!   outlives every holder. Written only in a transaction that checks the slot key is
//!   still attached to this holder's lease.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use serde_json::{Value, json};

use crate::LeaseError;
use crate::backend::{Backend, Grant, Want};

const TIMEOUT: Duration = Duration::from_secs(2);

pub(crate) struct EtcdBackend {
    endpoint: String,
    namespace: String,
    holder: String,
    ttl_s: u64,
    worker: u64,
    lease: i64,
    token: u64,
    /// The mod revision of this holder's last mark write: a re-grant after an expiry
    /// checks nobody wrote the mark since.
    mark_rev: i64,
}

impl EtcdBackend {
    pub(crate) fn new(endpoint: &str) -> Self {
        Self {
            endpoint: endpoint.to_owned(),
            namespace: String::new(),
            holder: String::new(),
            ttl_s: 0,
            worker: 0,
            lease: 0,
            token: 0,
            mark_rev: 0,
        }
    }

    fn key(&self, kind: &str, worker: u64) -> String {
        format!("idkit/{}/{kind}/{worker}", self.namespace)
    }

    fn call(&self, path: &str, body: &Value) -> Result<Value, LeaseError> {
        post(&self.endpoint, path, body)
            .map_err(|e| LeaseError::unreachable(format!("etcd at {}: {e}", self.endpoint)))
    }

    fn grant_lease(&self) -> Result<i64, LeaseError> {
        let reply = self.call("/v3/lease/grant", &json!({ "TTL": self.ttl_s }))?;
        int_field(&reply, "ID").ok_or_else(|| self.odd("lease grant", &reply))
    }

    fn revoke(&self, lease: i64) {
        let _ = self.call("/v3/lease/revoke", &json!({ "ID": lease.to_string() }));
    }

    fn odd(&self, what: &str, reply: &Value) -> LeaseError {
        LeaseError::unreachable(format!(
            "etcd at {}: unexpected {what} reply: {reply}",
            self.endpoint
        ))
    }

    /// Puts the slot key of `worker` under `lease` if it is absent (and, for a re-grant,
    /// if the mark key was last written at `mark_rev`), writing `mark_ms` as a reservation.
    /// Returns (granted, token, previous mark, released, mark revision).
    fn claim(
        &self,
        worker: u64,
        lease: i64,
        mark_ms: u64,
        mark_rev: Option<i64>,
    ) -> Result<Option<(u64, u64, bool, i64)>, LeaseError> {
        let slot = self.key("slot", worker);
        let mark = self.key("mark", worker);
        let mut compare = vec![json!({
            "key": b64(&slot), "target": "CREATE", "result": "EQUAL", "create_revision": "0"
        })];
        if let Some(rev) = mark_rev {
            compare.push(json!({
                "key": b64(&mark), "target": "MOD", "result": "EQUAL", "mod_revision": rev.to_string()
            }));
        }
        let reply = self.call(
            "/v3/kv/txn",
            &json!({
                "compare": compare,
                "success": [
                    { "request_range": { "key": b64(&mark) } },
                    { "request_put": { "key": b64(&slot), "value": b64(&self.holder), "lease": lease.to_string() } },
                ],
                "failure": [],
            }),
        )?;
        if reply.get("succeeded").and_then(Value::as_bool) != Some(true) {
            return Ok(None);
        }
        let token = reply
            .pointer("/header/revision")
            .and_then(as_int)
            .ok_or_else(|| self.odd("txn", &reply))?;
        let previous = reply
            .pointer("/responses/0/response_range/kvs/0/value")
            .and_then(Value::as_str)
            .and_then(unb64);
        let (prev_mark, released) = match previous.as_deref().map(parse_mark) {
            Some(Some(m)) => m,
            Some(None) => {
                return Err(LeaseError::unreachable(format!(
                    "etcd: {mark} is damaged: refusing to guess the high-water mark"
                )));
            }
            None => (0, true),
        };
        let rev = self.put_mark(worker, lease, mark_ms.max(prev_mark), false)?;
        Ok(Some((uint(token), prev_mark, released, rev)))
    }

    /// Writes the mark if the slot key is still attached to `lease`; returns the mark's
    /// new mod revision, or `Lost`.
    fn put_mark(
        &self,
        worker: u64,
        lease: i64,
        mark_ms: u64,
        released: bool,
    ) -> Result<i64, LeaseError> {
        let value = format!(
            "{mark_ms} {}",
            if released { "released" } else { "reserved" }
        );
        let reply = self.call(
            "/v3/kv/txn",
            &json!({
                "compare": [{
                    "key": b64(&self.key("slot", worker)), "target": "LEASE", "result": "EQUAL",
                    "lease": lease.to_string()
                }],
                "success": [{ "request_put": { "key": b64(&self.key("mark", worker)), "value": b64(&value) } }],
                "failure": [],
            }),
        )?;
        if reply.get("succeeded").and_then(Value::as_bool) == Some(true) {
            reply
                .pointer("/header/revision")
                .and_then(as_int)
                .ok_or_else(|| self.odd("txn", &reply))
        } else {
            Err(LeaseError::lost(format!(
                "the slot key of worker id {worker} is no longer attached to this holder's lease"
            )))
        }
    }
}

impl Backend for EtcdBackend {
    fn describe(&self) -> String {
        format!("etcd at {}", self.endpoint)
    }

    fn acquire(&mut self, want: &Want, mark_ms: u64) -> Result<Grant, LeaseError> {
        self.namespace = want.namespace.clone();
        self.holder = want.holder.clone();
        self.ttl_s = want.ttl_ms.div_ceil(1000).max(1);
        let lease = self.grant_lease()?;
        // The slots in use now: try the free ones from the lowest.
        let prefix = format!("idkit/{}/slot/", self.namespace);
        let reply = self.call(
            "/v3/kv/range",
            &json!({ "key": b64(&prefix), "range_end": b64(&prefix_end(&prefix)), "keys_only": true }),
        )?;
        let mut taken: Vec<u64> = reply
            .get("kvs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|kv| kv.get("key").and_then(Value::as_str).and_then(unb64))
            .filter_map(|k| k.strip_prefix(&prefix).and_then(|w| w.parse().ok()))
            .collect();
        taken.sort_unstable();
        let mut worker = 0u64;
        let mut index = 0;
        while worker < want.slots {
            if taken.get(index) == Some(&worker) {
                index += 1;
                worker += 1;
                continue;
            }
            if let Some((token, prev, released, rev)) = self.claim(worker, lease, mark_ms, None)? {
                self.worker = worker;
                self.lease = lease;
                self.token = token;
                self.mark_rev = rev;
                return Ok(Grant {
                    worker,
                    token,
                    mark_ms: prev,
                    released,
                });
            }
            // Taken since the listing: try the next one.
            worker += 1;
        }
        self.revoke(lease);
        Err(LeaseError::all_taken(
            &want.namespace,
            want.slots,
            &self.describe(),
        ))
    }

    fn renew(&mut self, mark_ms: u64) -> Result<(), LeaseError> {
        // Keep-alive first: a lease etcd no longer knows is an expiry.
        let reply = self.call(
            "/v3/lease/keepalive",
            &json!({ "ID": self.lease.to_string() }),
        )?;
        let ttl = reply.pointer("/result/TTL").and_then(as_int).unwrap_or(0);
        if ttl <= 0 {
            return Err(LeaseError::expired(format!(
                "etcd lease {} of worker id {} expired",
                self.lease, self.worker
            )));
        }
        self.mark_rev = self.put_mark(self.worker, self.lease, mark_ms, false)?;
        Ok(())
    }

    fn regrant(&mut self, mark_ms: u64) -> Result<u64, LeaseError> {
        let lease = self.grant_lease()?;
        match self.claim(self.worker, lease, mark_ms, Some(self.mark_rev))? {
            Some((token, _, _, rev)) => {
                self.lease = lease;
                self.token = token;
                self.mark_rev = rev;
                Ok(token)
            }
            None => {
                self.revoke(lease);
                Err(LeaseError::lost(format!(
                    "worker id {} was granted to another holder after this one's lease expired",
                    self.worker
                )))
            }
        }
    }

    fn release(&mut self, mark_ms: u64) -> Result<(), LeaseError> {
        let result = self
            .put_mark(self.worker, self.lease, mark_ms, true)
            .map(drop);
        // Revoking deletes the slot key: the worker id is free at once.
        self.revoke(self.lease);
        result
    }
}

fn parse_mark(text: &str) -> Option<(u64, bool)> {
    let (ms, state) = text.split_once(' ')?;
    Some((ms.parse().ok()?, state == "released"))
}

fn uint(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// The gateway writes 64-bit integers as strings.
fn as_int(v: &Value) -> Option<i64> {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .or_else(|| v.as_i64())
}

fn int_field(v: &Value, name: &str) -> Option<i64> {
    v.get(name).and_then(as_int)
}

/// The end of the key range holding every key that starts with `prefix`.
fn prefix_end(prefix: &str) -> String {
    let mut bytes = prefix.as_bytes().to_vec();
    if let Some(last) = bytes.last_mut() {
        *last += 1;
    }
    String::from_utf8(bytes).unwrap_or_default()
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (RFC 4648, section 4), as the gateway expects for bytes.
fn b64(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(B64[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn unb64(text: &str) -> Option<String> {
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = B64.iter().position(|&b| b == c)?;
        bits = (bits << 6) | u32::try_from(v).ok()?;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push(u8::try_from((bits >> count) & 0xff).ok()?);
        }
    }
    String::from_utf8(out).ok()
}

/// One JSON POST over HTTP/1.1; reads a `Content-Length` body, or the first chunk of a
/// chunked one (a keep-alive answers with a stream; its first message is the answer).
fn post(endpoint: &str, path: &str, body: &Value) -> Result<Value, String> {
    let addr = endpoint
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .next()
        .ok_or("no address")?;
    let mut stream = TcpStream::connect_timeout(&addr, TIMEOUT).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(TIMEOUT))
        .map_err(|e| e.to_string())?;
    stream
        .set_write_timeout(Some(TIMEOUT))
        .map_err(|e| e.to_string())?;
    let body = body.to_string();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {endpoint}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).map_err(|e| e.to_string())?;
    let code: u16 = status
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("malformed status line {status:?}"))?;
    let mut length = None;
    let mut chunked = false;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).map_err(|e| e.to_string())?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = value.parse::<usize>().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding") && value.contains("chunked") {
                chunked = true;
            }
        }
    }
    let mut data = Vec::new();
    if chunked {
        // Chunks until they hold one whole JSON document (a stream may not end).
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).map_err(|e| e.to_string())?;
            let size = usize::from_str_radix(size.trim(), 16).map_err(|e| e.to_string())?;
            if size == 0 {
                break;
            }
            let start = data.len();
            data.resize(start + size, 0);
            reader
                .read_exact(&mut data[start..])
                .map_err(|e| e.to_string())?;
            let mut crlf = [0u8; 2];
            reader.read_exact(&mut crlf).map_err(|e| e.to_string())?;
            if serde_json::from_slice::<Value>(&data).is_ok() {
                break;
            }
        }
    } else if let Some(length) = length {
        data.resize(length, 0);
        reader.read_exact(&mut data).map_err(|e| e.to_string())?;
    } else {
        reader.read_to_end(&mut data).map_err(|e| e.to_string())?;
    }
    let value: Value = serde_json::from_slice(&data).map_err(|e| {
        format!(
            "HTTP {code}: not JSON ({e}): {}",
            String::from_utf8_lossy(&data)
        )
    })?;
    if code != 200 {
        return Err(format!("HTTP {code}: {value}"));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_rfc4648_vectors() {
        // RFC 4648, section 10.
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(b64(plain), coded);
            assert_eq!(unb64(coded).as_deref(), Some(plain));
        }
        assert_eq!(prefix_end("idkit/a/slot/"), "idkit/a/slot0");
        assert_eq!(parse_mark("17 released"), Some((17, true)));
        assert_eq!(parse_mark("17 reserved"), Some((17, false)));
        assert_eq!(parse_mark("x"), None);
    }
}
