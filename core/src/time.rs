//! ISO-8601 rendering of Unix milliseconds, shared by the CLI and the bindings
//! that have no date library of their own (C).

use core::fmt;

/// Unix milliseconds as an ISO-8601 UTC time with milliseconds, e.g.
/// `2016-04-30T11:18:25.796Z`.
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
        let days = secs / 86_400;
        let rem = secs % 86_400;
        // Howard Hinnant's civil_from_days, for days since 1970-01-01 >= 0.
        let z = days + 719_468;
        let era = z / 146_097;
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + u64::from(month <= 2);
        write!(
            f,
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{ms:03}Z",
            rem / 3600,
            rem / 60 % 60,
            rem % 60
        )
    }
}
