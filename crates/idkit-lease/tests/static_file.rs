//! The static backend: an operator-given worker id, a lock file that refuses a second
//! holder and names the first, and a mark file that a new holder starts above.

mod common;

use idkit_core::{Clock, IdScheme};
use idkit_lease::{IdentitySource, Lease, LeaseErrorKind, STATIC_WINDOW};
use idkit_snowflake::{Snowflake, Twitter};

#[test]
fn a_static_worker_id_is_held_once_and_restarts_above_its_mark() {
    let dir = std::env::temp_dir().join(common::unique("idkit-lease-static"));
    let source = IdentitySource::parse("static:5")
        .unwrap()
        .with_state_dir(Some(&dir));
    let lease = Lease::acquire(&source, "snowflake-twitter", 1024).unwrap();
    assert_eq!((lease.worker(), lease.token()), (5, 1));
    let status = lease.status();
    // The reservation on disk covers the fence (write-ahead).
    let mark_file = dir.join("snowflake-twitter-worker-5.mark");
    let text = std::fs::read_to_string(&mark_file).unwrap();
    let on_disk: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("mark_ms="))
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        on_disk >= status.fence_ms,
        "{on_disk} < fence {}",
        status.fence_ms
    );
    assert!(status.fence_ms <= status.now_ms + u64::try_from(STATIC_WINDOW.as_millis()).unwrap());

    let second = Lease::acquire(&source, "snowflake-twitter", 1024).unwrap_err();
    assert_eq!(second.kind(), LeaseErrorKind::Held);
    let pid = format!("pid {}", std::process::id());
    assert!(
        second.to_string().contains(&pid),
        "names the holder: {second}"
    );

    // Another scheme, or another worker id, is another file.
    let other = Lease::acquire(&source, "snowflake-discord", 1024).unwrap();
    drop(other);
    let too_big = IdentitySource::parse("static:1024")
        .unwrap()
        .with_state_dir(Some(&dir));
    let e = Lease::acquire(&too_big, "snowflake-twitter", 1024).unwrap_err();
    assert_eq!(e.kind(), LeaseErrorKind::Invalid);
    assert!(e.to_string().contains("0 to 1023"), "{e}");
    // A scope of no worker ids has nothing to lease (no 0 - 1 worker id to name).
    let e = Lease::acquire(&too_big, "snowflake-twitter", 0).unwrap_err();
    assert_eq!(e.kind(), LeaseErrorKind::Invalid);
    assert!(
        e.to_string()
            .contains("snowflake-twitter has no worker ids to lease (slots 0)"),
        "{e}"
    );

    let g = Snowflake::builder(Twitter)
        .field("worker", 5)
        .guard(lease.guard())
        .build()
        .unwrap();
    let last = g.take(1000).unwrap().pop().unwrap();
    lease.release();

    let again = Lease::acquire(&source, "snowflake-twitter", 1024).unwrap();
    assert_eq!(again.token(), 2, "the token counts grants");
    let floor = again.status().floor_ms;
    assert!(floor >= (last >> 22) + 1_288_834_974_657);
    assert!(floor <= again.guard().clock().now_ms() + 1);
    drop(again);
    std::fs::remove_dir_all(&dir).ok();
}

/// A holder that died with time reserved ahead (kill -9 right after a renewal): the next
/// holder waits the reservation out, and then starts with a whole window proven, not what
/// the wait left of the one it asked for when it started (which left it fenced, its first
/// requests refused, until its first renewal a third of the window later).
#[test]
fn a_restart_that_waits_out_a_reservation_opens_with_a_whole_window() {
    let dir = std::env::temp_dir().join(common::unique("idkit-lease-static-wait"));
    std::fs::create_dir_all(&dir).unwrap();
    let now = idkit_core::MonotonicClock::new().now_ms();
    let ahead = 2_500;
    std::fs::write(
        dir.join("snowflake-twitter-worker-6.mark"),
        format!("mark_ms={}\nreleased=false\ngrants=1\n", now + ahead),
    )
    .unwrap();
    let source = IdentitySource::parse("static:6")
        .unwrap()
        .with_state_dir(Some(&dir));
    let lease = Lease::acquire(&source, "snowflake-twitter", 1024).unwrap();
    let status = lease.status();
    assert!(status.floor_ms >= now + ahead, "{status:?}");
    let window = u64::try_from(STATIC_WINDOW.as_millis()).unwrap();
    // A whole window less what the renewal and this line took; before, about nothing.
    assert!(
        status.fence_ms > status.now_ms + window / 2,
        "fence {} ms ahead of {} ms",
        status.fence_ms.saturating_sub(status.now_ms),
        window
    );
    let g = Snowflake::builder(Twitter)
        .field("worker", 6)
        .guard(lease.guard())
        .build()
        .unwrap();
    let id = g.next_id().unwrap();
    assert!((id >> 22) + 1_288_834_974_657 > now + ahead);
    drop(lease);
    std::fs::remove_dir_all(&dir).ok();
}
