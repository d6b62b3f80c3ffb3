//! Dates in one place: the proleptic Gregorian calendar, RFC 3339 parsing and
//! formatting of Unix milliseconds. Shared by the CLI, the lease stores (an
//! etcd member's HTTP `Date` header) and the bindings that have no date
//! library of their own (C). No allocation: parsing reads the bytes in place
//! and [`Iso8601`] writes through [`core::fmt`].
//!
//! ```
//! use snowmint::time::{days_from_civil, parse_rfc3339};
//! assert_eq!(days_from_civil(2016, 4, 30), Some(16_921));
//! assert_eq!(parse_rfc3339("2016-04-30T13:18:25.796+02:00"), Some(1_462_015_105_796));
//! assert_eq!(parse_rfc3339("2016-02-30"), None);
//! ```

use core::fmt;

/// The largest year (and the negation of the smallest) the calendar
/// functions accept: far past any Unix-millisecond time (`u64::MAX` ms is in
/// the year 584,556,019), small enough that no computation overflows.
pub const MAX_YEAR: i64 = 1_000_000_000;

/// Unix milliseconds as an RFC 3339 (ISO-8601) UTC time with milliseconds,
/// e.g. `2016-04-30T11:18:25.796Z`. [`parse_rfc3339`] reads it back.
///
/// ```
/// use snowmint::Iso8601;
/// assert_eq!(Iso8601(1462015105796).to_string(), "2016-04-30T11:18:25.796Z");
/// assert_eq!(Iso8601(0).to_string(), "1970-01-01T00:00:00.000Z");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iso8601(pub u64);

impl fmt::Display for Iso8601 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0 % 1000;
        let secs = self.0 / 1000;
        let rem = secs % 86_400;
        // At most u64::MAX / 86_400_000 days: an i64 holds it.
        let (year, month, day) = civil_from_days((secs / 86_400) as i64);
        write!(
            f,
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{ms:03}Z",
            rem / 3600,
            rem / 60 % 60,
            rem % 60
        )
    }
}

/// Whether `year` has a 29 February in the proleptic Gregorian calendar.
const fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// The number of days of `month` (1 to 12) in `year`; 0 for a month that
/// does not exist.
const fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 1970-01-01 of a date (negative before it), or `None` when the
/// date does not exist (month not 1 to 12, day not in the month, year beyond
/// ±[`MAX_YEAR`]).
///
/// ```
/// use snowmint::time::days_from_civil;
/// assert_eq!(days_from_civil(1970, 1, 1), Some(0));
/// assert_eq!(days_from_civil(1969, 12, 31), Some(-1));
/// assert_eq!(days_from_civil(2028, 2, 29), Some(21_243));
/// assert_eq!(days_from_civil(2027, 2, 29), None);
/// ```
pub const fn days_from_civil(year: i64, month: u32, day: u32) -> Option<i64> {
    if year < -MAX_YEAR || year > MAX_YEAR || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    // Howard Hinnant's days_from_civil: years start on 1 March, so the leap
    // day is the last day of the year before.
    let (month, day) = (month as i64, day as i64);
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// The date `(year, month, day)` of a number of days since 1970-01-01, the
/// inverse of [`days_from_civil`]. `days` must be within the years
/// ±[`MAX_YEAR`] (any `i64` does not overflow, but past them the date is
/// meaningless).
///
/// ```
/// use snowmint::time::civil_from_days;
/// assert_eq!(civil_from_days(0), (1970, 1, 1));
/// assert_eq!(civil_from_days(-1), (1969, 12, 31));
/// assert_eq!(civil_from_days(21_243), (2028, 2, 29));
/// ```
pub const fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Howard Hinnant's civil_from_days. Saturating keeps i64::MIN/MAX from
    // overflowing; such inputs are out of the documented range anyway.
    let z = days.saturating_add(719_468);
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe.saturating_add(era.saturating_mul(400)) + (month <= 2) as i64;
    (year, month, day)
}

/// Unix milliseconds (negative before 1970) of an RFC 3339 date-time, or
/// `None` if `s` is not one.
///
/// Accepted: `2022-06-28T16:07:40Z`, `2022-06-28T18:07:40.105+02:00`, `t` or
/// a space for `T`, `z` for `Z`, and a date alone (`2022-06-28`, midnight
/// UTC). A fraction may have any number of digits; past milliseconds it is
/// cut. Unix time has no leap second: second 60 (whatever its fraction) is
/// the last millisecond of the minute, `:59.999`. Offsets are at most
/// ±23:59.
///
/// ```
/// use snowmint::time::parse_rfc3339;
/// assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
/// assert_eq!(parse_rfc3339("1970-01-01T00:00:00.0019Z"), Some(1));
/// assert_eq!(parse_rfc3339("1970-01-01T00:00:00+01:00"), Some(-3_600_000));
/// assert_eq!(parse_rfc3339("2016-12-31T23:59:60Z"), Some(1_483_228_799_999));
/// assert_eq!(parse_rfc3339("2022-06-28T16:07:40"), None); // no offset
/// ```
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let sep = |at: usize, any: &[u8]| b.get(at).is_some_and(|x| any.contains(x));
    let (year, month, day) = (digits(b, 0, 4)?, digits(b, 5, 2)?, digits(b, 8, 2)?);
    if !sep(4, b"-") || !sep(7, b"-") {
        return None;
    }
    let days = days_from_civil(year as i64, month, day)?;
    let mut ms = days * 86_400_000;
    if b.len() == 10 {
        return Some(ms);
    }
    if !sep(10, b"Tt ") || !sep(13, b":") || !sep(16, b":") {
        return None;
    }
    let (h, mi, sec) = (digits(b, 11, 2)?, digits(b, 14, 2)?, digits(b, 17, 2)?);
    if h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    ms += i64::from((h * 3600 + mi * 60 + sec.min(59)) * 1000);
    let mut at = 19;
    if sep(at, b".") {
        let start = at + 1;
        at = start;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        if at == start {
            return None;
        }
        // The first three digits, as milliseconds (`.1` is 100 ms).
        let frac = b[start..at]
            .iter()
            .chain(b"000")
            .take(3)
            .fold(0, |n, d| n * 10 + u32::from(d - b'0'));
        if sec < 60 {
            ms += i64::from(frac);
        }
    }
    if sec == 60 {
        ms += 999;
    }
    match b.get(at)? {
        b'Z' | b'z' if at + 1 == b.len() => Some(ms),
        &sign @ (b'+' | b'-') if at + 6 == b.len() && sep(at + 3, b":") => {
            let (oh, om) = (digits(b, at + 1, 2)?, digits(b, at + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let offset = i64::from((oh * 60 + om) * 60_000);
            Some(if sign == b'+' {
                ms - offset
            } else {
                ms + offset
            })
        }
        _ => None,
    }
}

/// The number written by the `len` ASCII digits of `b` at `from`, if they
/// are all there and all digits.
fn digits(b: &[u8], from: usize, len: usize) -> Option<u32> {
    let part = b.get(from..from + len)?;
    part.iter().try_fold(0, |n, d| {
        d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
    })
}

#[cfg(test)]
mod tests {
    // The test harness has std even when the crate is built without it
    // (with it, `std` is already in scope and this would be redundant).
    #[cfg(not(feature = "std"))]
    extern crate std;
    use super::*;
    use std::string::ToString;

    #[test]
    fn leap_years() {
        assert!(is_leap_year(2000) && is_leap_year(2024) && is_leap_year(-4));
        assert!(!is_leap_year(1900) && !is_leap_year(2100) && !is_leap_year(2023));
        assert_eq!(days_in_month(2000, 2), 29);
        assert_eq!(days_in_month(1900, 2), 28);
        assert_eq!(days_in_month(2023, 13), 0);
        assert_eq!(days_from_civil(1900, 2, 29), None);
        assert_eq!(days_from_civil(2000, 2, 29), Some(11_016));
        assert_eq!(parse_rfc3339("2100-02-29"), None);
        assert_eq!(parse_rfc3339("2400-02-29"), Some(13_574_563_200_000));
    }

    #[test]
    fn calendar_round_trips() {
        // Every day of 1600 to 2400, and a wide stride beyond.
        let first = days_from_civil(1600, 1, 1).unwrap();
        let last = days_from_civil(2400, 12, 31).unwrap();
        let (mut y, mut m, mut d) = (1600, 1, 1);
        for days in first..=last {
            assert_eq!(civil_from_days(days), (y, m, d));
            assert_eq!(days_from_civil(y, m, d), Some(days));
            d += 1;
            if d > days_in_month(y, m) {
                (m, d) = (m % 12 + 1, 1);
                y += i64::from(m == 1);
            }
        }
        for days in (-300_000_000_000..300_000_000_000i64).step_by(7_777_777_777) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), Some(days));
        }
    }

    #[test]
    fn bounds() {
        assert!(days_from_civil(MAX_YEAR, 12, 31).is_some());
        assert_eq!(days_from_civil(MAX_YEAR + 1, 1, 1), None);
        assert!(days_from_civil(-MAX_YEAR, 1, 1).is_some());
        assert_eq!(days_from_civil(-MAX_YEAR - 1, 1, 1), None);
        assert_eq!(days_from_civil(2020, 0, 1), None);
        assert_eq!(days_from_civil(2020, 1, 0), None);
        assert_eq!(days_from_civil(2020, 1, 32), None);
        // The extremes of u64 milliseconds format and parse back where four
        // digits of year allow.
        assert_eq!(
            Iso8601(u64::MAX).to_string(),
            "584556019-04-03T14:25:51.615Z"
        );
        assert_eq!(
            parse_rfc3339("0000-01-01T00:00:00Z"),
            Some(-62_167_219_200_000)
        );
        assert_eq!(
            parse_rfc3339("9999-12-31T23:59:59.999Z"),
            Some(253_402_300_799_999)
        );
        assert_eq!(
            Iso8601(253_402_300_799_999).to_string(),
            "9999-12-31T23:59:59.999Z"
        );
    }

    #[test]
    fn offsets_and_fractions() {
        let utc = parse_rfc3339("2022-06-28T16:07:40.105Z");
        assert_eq!(utc, Some(1_656_432_460_105));
        assert_eq!(parse_rfc3339("2022-06-28T18:07:40.105+02:00"), utc);
        assert_eq!(parse_rfc3339("2022-06-28T14:37:40.105-01:30"), utc);
        assert_eq!(parse_rfc3339("2022-06-28t16:07:40.105z"), utc);
        assert_eq!(parse_rfc3339("2022-06-28 16:07:40.105Z"), utc);
        assert_eq!(parse_rfc3339("2022-06-28T16:07:40.1059999Z"), utc);
        assert_eq!(
            parse_rfc3339("2022-06-28T16:07:40.1Z"),
            Some(1_656_432_460_100)
        );
        assert_eq!(
            parse_rfc3339("2022-06-28T16:07:40.10Z"),
            Some(1_656_432_460_100)
        );
        assert_eq!(
            parse_rfc3339("2022-06-28T00:00:00-23:59"),
            Some(1_656_460_740_000)
        );
        // Second 60 is the minute's last millisecond, fraction or not.
        let leap = Some(1_483_228_799_999);
        assert_eq!(parse_rfc3339("2016-12-31T23:59:60Z"), leap);
        assert_eq!(parse_rfc3339("2016-12-31T23:59:60.5Z"), leap);
        assert_eq!(parse_rfc3339("2017-01-01T00:59:60+01:00"), leap);
    }

    #[test]
    fn bad_input() {
        for s in [
            "",
            "2022",
            "2022-06",
            "22-06-28",
            "2022/06/28",
            "2022-6-28",
            "2022-06-28T",
            "2022-06-28X16:07:40Z",
            "2022-06-28T16:07Z",
            "2022-06-28T16:07:40",
            "2022-06-28T24:00:00Z",
            "2022-06-28T16:60:00Z",
            "2022-06-28T16:07:61Z",
            "2022-06-28T16:07:40.Z",
            "2022-06-28T16:07:40,5Z",
            "2022-06-28T16:07:40ZZ",
            "2022-06-28T16:07:40+02",
            "2022-06-28T16:07:40+0200",
            "2022-06-28T16:07:40+24:00",
            "2022-06-28T16:07:40+02:60",
            "2022-06-28T16:07:40+02:00 ",
            " 2022-06-28",
            "2022-06-28 ",
            "-022-06-28",
            "+2022-06-28",
            "2022-02-30",
            "2022-04-31",
            "2022-00-10",
            "2022-13-10",
            "２０２２-06-28",
        ] {
            assert_eq!(parse_rfc3339(s), None, "{s:?}");
        }
    }

    #[test]
    fn formatting_and_parsing_agree() {
        for ms in [
            0,
            1,
            999,
            86_399_999,
            951_782_400_000,
            1_462_015_105_796,
            4_102_444_799_999,
        ] {
            let text = Iso8601(ms).to_string();
            assert_eq!(parse_rfc3339(&text), Some(ms as i64), "{text}");
        }
    }
}
