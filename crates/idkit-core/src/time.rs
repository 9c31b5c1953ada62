//! Calendar formatting and reading for Unix-millisecond timestamps (RFC 3339).
//!
//! The crate formats dates itself so that no scheme crate needs a date library.

use crate::prelude::*;

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

/// Converts a proleptic Gregorian (year, month, day) to days since 1970-01-01, the inverse of
/// [`civil_from_days`]; `None` before 1970, for a month or day that does not exist, or for a
/// year so far ahead that its day count does not fit 64 bits.
///
/// ```
/// use idkit_core::time::days_from_civil;
/// assert_eq!(days_from_civil(1970, 1, 1), Some(0));
/// assert_eq!(days_from_civil(2000, 2, 29), Some(11_016));
/// assert_eq!(days_from_civil(2001, 2, 29), None);
/// assert_eq!(days_from_civil(u64::MAX, 1, 1), None);
/// ```
pub fn days_from_civil(year: u64, month: u64, day: u64) -> Option<u64> {
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if year < 1970 || day == 0 || day > days_in_month {
        return None;
    }
    // The same count from 0000-03-01 as civil_from_days, run backwards.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y / 400;
    let yoe = y % 400;
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era.checked_mul(146_097)?
        .checked_add(doe)?
        .checked_sub(719_468)
}

/// Reads a time as Unix milliseconds: a whole number of Unix milliseconds, a date
/// (`2026-11-01`, midnight UTC), or an RFC 3339 date and time with its offset
/// (`2026-11-01T08:30:00Z`, `2026-11-01 08:30:00.250+01:00`). Digits past the millisecond
/// are dropped (the time is taken down to its millisecond).
///
/// # Errors
///
/// [`TimeError`] naming what is wrong: empty text, a date or time that does not exist, a
/// missing offset, a time before 1970-01-01T00:00:00Z, or one past `u64::MAX` milliseconds.
///
/// # Examples
///
/// ```
/// use idkit_core::time::parse_time_ms;
/// assert_eq!(parse_time_ms("2016-04-30T11:18:25.796Z")?, 1_462_015_105_796);
/// assert_eq!(parse_time_ms("2016-04-30T13:18:25.796+02:00")?, 1_462_015_105_796);
/// assert_eq!(parse_time_ms("2016-04-30")?, 1_461_974_400_000);
/// assert_eq!(parse_time_ms("1462015105796")?, 1_462_015_105_796);
/// assert!(parse_time_ms("2016-04-31").is_err());
/// assert!(parse_time_ms("2016-04-30T11:18:25").is_err()); // no offset
/// # Ok::<(), idkit_core::time::TimeError>(())
/// ```
pub fn parse_time_ms(text: &str) -> Result<u64, TimeError> {
    let bad = |why: &str| TimeError {
        text: text.to_owned(),
        why: why.to_owned(),
    };
    if text.is_empty() {
        return Err(bad(
            "empty: expected Unix milliseconds, YYYY-MM-DD, or an RFC 3339 time",
        ));
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse::<u64>()
            .map_err(|_| bad("more milliseconds than 64 bits hold"));
    }
    let number = |part: &str, what: &str| -> Result<u64, TimeError> {
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad(&format!("expected digits for the {what}")));
        }
        part.parse::<u64>()
            .map_err(|_| bad(&format!("the {what} is too large")))
    };
    let (date, rest) = match text.find(['T', 't', ' ']) {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    let mut parts = date.splitn(3, '-');
    let (Some(y), Some(m), Some(d)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad(
            "expected Unix milliseconds, YYYY-MM-DD, or an RFC 3339 time",
        ));
    };
    let (year, month, day) = (number(y, "year")?, number(m, "month")?, number(d, "day")?);
    // u64 milliseconds end in the year 584,556,019: a later year is no time here.
    if year > 584_556_019 {
        return Err(bad("more milliseconds than 64 bits hold"));
    }
    let days = days_from_civil(year, month, day)
        .ok_or_else(|| bad("no such date on or after 1970-01-01"))?;
    let mut ms = u128::from(days) * 86_400_000;
    if let Some(rest) = rest {
        // The offset: Z, or +HH:MM / -HH:MM at the end.
        let (clock, offset_ms): (&str, i128) = if let Some(c) = rest.strip_suffix(['Z', 'z']) {
            (c, 0)
        } else {
            let at = rest
                .rfind(['+', '-'])
                .ok_or_else(|| bad("the offset is missing (Z or +HH:MM)"))?;
            let (c, off) = rest.split_at(at);
            let sign: i128 = if off.starts_with('-') { -1 } else { 1 };
            let (h, m) = off[1..]
                .split_once(':')
                .ok_or_else(|| bad("expected the offset as +HH:MM"))?;
            let (h, m) = (number(h, "offset's hours")?, number(m, "offset's minutes")?);
            if h > 23 || m > 59 {
                return Err(bad("the offset is out of range"));
            }
            (c, sign * i128::from(h * 3_600_000 + m * 60_000))
        };
        let (hms, fraction) = match clock.split_once('.') {
            Some((hms, f)) => (hms, Some(f)),
            None => (clock, None),
        };
        let mut fields = hms.split(':');
        let (Some(h), Some(mi), Some(s), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(bad("expected the time of day as HH:MM:SS"));
        };
        let (h, mi, s) = (
            number(h, "hour")?,
            number(mi, "minute")?,
            number(s, "second")?,
        );
        // RFC 3339 allows second 60 for a leap second; Unix time has none, so it reads as
        // the next second's start, as most readers of RFC 3339 do.
        if h > 23 || mi > 59 || s > 60 {
            return Err(bad("the time of day is out of range"));
        }
        let millis = match fraction {
            Some(f) => {
                number(f, "fraction of a second")?;
                f.bytes()
                    .chain(core::iter::repeat(b'0'))
                    .take(3)
                    .fold(0, |acc, b| acc * 10 + u64::from(b - b'0'))
            }
            None => 0,
        };
        let local = ms + u128::from(((h * 60 + mi) * 60 + s) * 1000 + millis);
        let utc = i128::try_from(local).unwrap_or(i128::MAX) - offset_ms;
        ms = u128::try_from(utc).map_err(|_| bad("before 1970-01-01T00:00:00Z"))?;
    }
    u64::try_from(ms).map_err(|_| bad("more milliseconds than 64 bits hold"))
}

/// Text that is not a time [`parse_time_ms`] reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeError {
    text: String,
    why: String,
}

impl core::fmt::Display for TimeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:?} is not a time: {}", self.text, self.why)
    }
}

impl core::error::Error for TimeError {}

#[cfg(test)]
mod tests {
    use super::{civil_from_days, days_from_civil, format_rfc3339_ms, parse_time_ms};

    /// Found by the `text` fuzz target (fuzz/): a year whose day count overflowed 64 bits
    /// panicked in a debug build and would wrap to a wrong time in a release one.
    #[test]
    fn a_year_past_what_64_bits_of_milliseconds_hold_is_refused() {
        let err = parse_time_ms("202577645455776452-01-01").unwrap_err();
        assert!(
            err.to_string()
                .contains("more milliseconds than 64 bits hold"),
            "{err}"
        );
        assert_eq!(days_from_civil(202_577_645_455_776_452, 1, 1), None);
        assert!(parse_time_ms("584556019-01-01").is_ok());
        assert!(parse_time_ms("584556020-01-01").is_err());
        assert!(parse_time_ms("584556019-12-31T23:59:59Z").is_err());
    }

    #[test]
    fn days_round_trip_through_the_calendar() {
        // Every day from 1970 to past 2400 (leap centuries and the 400-year rule).
        for days in 0..160_000 {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), Some(days), "{y}-{m}-{d}");
        }
        assert_eq!(days_from_civil(1900, 2, 29), None);
        assert_eq!(days_from_civil(2000, 13, 1), None);
        assert_eq!(days_from_civil(1969, 12, 31), None);
    }

    #[test]
    fn times_read_back_what_format_writes() {
        for ms in [0, 1_288_834_974_657, 951_782_400_000, (1 << 48) - 1] {
            assert_eq!(parse_time_ms(&format_rfc3339_ms(ms)), Ok(ms));
        }
        // RFC 3339 section 5.8's examples that fall after 1970.
        assert_eq!(
            parse_time_ms("1985-04-12T23:20:50.52Z"),
            Ok(482_196_050_520)
        );
        assert_eq!(
            parse_time_ms("1996-12-19T16:39:57-08:00"),
            Ok(851_042_397_000)
        );
        assert_eq!(parse_time_ms("1990-12-31T23:59:60Z"), Ok(662_688_000_000));
        // Digits past the millisecond are dropped.
        assert_eq!(parse_time_ms("1970-01-01T00:00:00.0019Z"), Ok(1));
    }

    #[test]
    fn bad_times_are_errors_that_say_why() {
        for (text, why) in [
            ("", "empty"),
            ("2026-02-30", "no such date"),
            ("2026-11-01T10:00:00", "offset is missing"),
            ("2026-11-01T24:00:00Z", "out of range"),
            ("2026-11-01T10:00Z", "HH:MM:SS"),
            ("1970-01-01T00:30:00+01:00", "before 1970"),
            ("99999999999999999999999", "64 bits"),
            ("2026-11", "YYYY-MM-DD"),
            ("2026-11-01T10:00:00+0100", "+HH:MM"),
            ("2026-x1-01", "month"),
        ] {
            let e = parse_time_ms(text).unwrap_err().to_string();
            assert!(e.contains(why), "{text:?}: {e}");
        }
    }

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
