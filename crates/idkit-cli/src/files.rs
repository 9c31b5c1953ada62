//! Room for `idkit serve`'s connections in the process's limit on open files: each open
//! connection holds a file descriptor, and many systems start a process with a soft limit
//! of 1,024, barely more than the default `max_connections` of 1,000 alone.

/// Descriptors the service holds beside its connections: its two listeners, the
/// connections of its worker-id leases and range stores, its log, the runtime's own.
pub const OTHER_FILES: u64 = 64;

/// Raises the soft limit on open files to `max_connections` + [`OTHER_FILES`], as far as
/// the hard limit allows, and warns when that is not far enough: past the limit `accept`
/// fails, and new connections wait in the listen queue until one closes. A limit that is
/// already high enough is left as it is; none is ever lowered.
#[cfg(unix)]
pub fn make_room(max_connections: usize) {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

    let need = u64::try_from(max_connections)
        .unwrap_or(u64::MAX)
        .saturating_add(OTHER_FILES);
    let Rlimit { current, maximum } = getrlimit(Resource::Nofile);
    // `None` is no limit.
    let soft = current.unwrap_or(u64::MAX);
    if soft >= need {
        return;
    }
    let raised = need.min(maximum.unwrap_or(u64::MAX));
    let mut limit = soft;
    if raised > soft {
        match setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(raised),
                maximum,
            },
        ) {
            Ok(()) => {
                tracing::info!(
                    "idkit serve: open-file limit raised from {soft} to {raised} for \
                     max_connections = {max_connections}"
                );
                limit = raised;
            }
            Err(e) => tracing::warn!("idkit serve: cannot raise the open-file limit: {e}"),
        }
    }
    if limit < need {
        let room = limit.saturating_sub(OTHER_FILES);
        tracing::warn!(
            "idkit serve: the open-file limit is {limit} (hard limit {}): room for about \
             {room} connections, not max_connections = {max_connections}; connections past it \
             wait unaccepted. Raise the hard limit (ulimit -Hn, systemd's LimitNOFILE=) or \
             lower max_connections",
            maximum.map_or_else(|| "none".to_owned(), |h| h.to_string())
        );
    }
}

/// Other systems keep their limits as they are.
#[cfg(not(unix))]
pub fn make_room(_max_connections: usize) {}
