//! Calendar formatting for Unix-millisecond timestamps (RFC 3339, UTC).
//!
//! The crate formats dates itself so that no scheme crate needs a date library.

/// Formats Unix milliseconds as RFC 3339 UTC with milliseconds, e.g.
/// `2016-04-30T11:18:25.796Z`. Years past 9999 are printed with more digits.
///
/// # Examples
///
/// ```
/// use idkit_core::time::format_rfc3339_ms;
/// assert_eq!(format_rfc3339_ms(1_462_015_105_796), "2016-04-30T11:18:25.796Z");
/// assert_eq!(format_rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
/// ```
pub fn format_rfc3339_ms(unix_ms: u64) -> String {
    let millis = unix_ms % 1000;
    let secs = unix_ms / 1000;
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Converts days since 1970-01-01 to a proleptic Gregorian (year, month, day).
///
/// ```
/// use idkit_core::time::civil_from_days;
/// assert_eq!(civil_from_days(0), (1970, 1, 1));
/// assert_eq!(civil_from_days(11_016), (2000, 2, 29));
/// ```
///
/// Why this shape: the calendar repeats every 400 years (146,097 days); counting from
/// 0000-03-01 puts the leap day last in each year, so month lengths follow a fixed
/// 153-day-per-5-months pattern and no table is needed.
pub fn civil_from_days(days_since_epoch: u64) -> (u64, u64, u64) {
    // Days from 0000-03-01 to 1970-01-01.
    let z = days_since_epoch + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::format_rfc3339_ms;

    #[test]
    fn known_dates() {
        // Twitter's epoch, as given in the Snowflake source (twepoch = 1288834974657).
        assert_eq!(
            format_rfc3339_ms(1_288_834_974_657),
            "2010-11-04T01:42:54.657Z"
        );
        // Discord's epoch: the first second of 2015 (Discord API reference).
        assert_eq!(
            format_rfc3339_ms(1_420_070_400_000),
            "2015-01-01T00:00:00.000Z"
        );
        // Leap days, century rules.
        assert_eq!(
            format_rfc3339_ms(951_782_400_000),
            "2000-02-29T00:00:00.000Z"
        );
        assert_eq!(
            format_rfc3339_ms(4_107_542_400_000),
            "2100-03-01T00:00:00.000Z"
        );
        assert_eq!(
            format_rfc3339_ms(253_402_300_799_999),
            "9999-12-31T23:59:59.999Z"
        );
        // 2^48 - 1 ms: the last UUIDv7 / ULID millisecond.
        assert_eq!(
            format_rfc3339_ms((1 << 48) - 1),
            "10889-08-02T05:31:50.655Z"
        );
    }
}
