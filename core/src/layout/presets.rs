//! The named layouts, and the one entry point that reads a layout from text.

use super::Layout;
use crate::error::{Error, Result};

impl Layout {
    // ---- presets -------------------------------------------------------

    /// The names of the presets, in a fixed order.
    pub const PRESETS: [&'static str; 10] = [
        "twitter",
        "discord",
        "instagram",
        "sonyflake",
        "sonyflake-v2",
        "shardingsphere",
        "leaf",
        "baidu",
        "tsid",
        "mastodon",
    ];

    /// A preset layout by name.
    ///
    /// | name | epoch | fields (most significant first) |
    /// |---|---|---|
    /// | `twitter` | 1288834974657 | timestamp 41 ms, datacenter 5, worker 5, sequence 12 |
    /// | `discord` | 1420070400000 | timestamp 42 ms, worker 5, process 5, sequence 12 |
    /// | `instagram` | 1314220021721 | timestamp 41 ms, shard 13, sequence 10 |
    /// | `sonyflake` | 1409529600000 | timestamp 39 x 10 ms, sequence 8, machine 16 |
    /// | `sonyflake-v2` | 1735689600000 | as `sonyflake` |
    /// | `shardingsphere` | 1477958400000 | timestamp 41 ms, worker 10, sequence 12 |
    /// | `leaf` | 1288834974657 | timestamp 41 ms, worker 10, sequence 12 |
    /// | `baidu` | 1463673600000 | timestamp 28 x 1 s, worker 22, sequence 13 |
    /// | `tsid` | 1577836800000 | timestamp 42 ms, node 10, sequence 12 |
    /// | `mastodon` | 0 | timestamp 48 ms, sequence 16 |
    ///
    /// `baidu`'s 28-bit seconds field ran out on 2024-11-20: generating with it
    /// fails with `time_overflow`, decoding still works.
    pub fn preset(name: &str) -> Result<Layout> {
        let (epoch, unit, fields): (u64, u64, &[(&str, u32)]) = match name {
            "twitter" => (
                1288834974657,
                1,
                &[
                    ("timestamp", 41),
                    ("datacenter", 5),
                    ("worker", 5),
                    ("sequence", 12),
                ],
            ),
            "discord" => (
                1420070400000,
                1,
                &[
                    ("timestamp", 42),
                    ("worker", 5),
                    ("process", 5),
                    ("sequence", 12),
                ],
            ),
            "instagram" => (
                1314220021721,
                1,
                &[("timestamp", 41), ("shard", 13), ("sequence", 10)],
            ),
            "sonyflake" => (
                1409529600000,
                10,
                &[("timestamp", 39), ("sequence", 8), ("machine", 16)],
            ),
            "sonyflake-v2" => (
                1735689600000,
                10,
                &[("timestamp", 39), ("sequence", 8), ("machine", 16)],
            ),
            "shardingsphere" => (
                1477958400000,
                1,
                &[("timestamp", 41), ("worker", 10), ("sequence", 12)],
            ),
            "leaf" => (
                1288834974657,
                1,
                &[("timestamp", 41), ("worker", 10), ("sequence", 12)],
            ),
            "baidu" => (
                1463673600000,
                1000,
                &[("timestamp", 28), ("worker", 22), ("sequence", 13)],
            ),
            "tsid" => (
                1577836800000,
                1,
                &[("timestamp", 42), ("node", 10), ("sequence", 12)],
            ),
            "mastodon" => (0, 1, &[("timestamp", 48), ("sequence", 16)]),
            _ => return Err(Error::UnknownPreset),
        };
        Layout::new(epoch, unit, fields)
    }

    /// The name of the preset equal to this layout, if any.
    pub fn preset_name(&self) -> Option<&'static str> {
        Self::PRESETS
            .iter()
            .copied()
            .find(|n| Layout::preset(n).ok().as_ref() == Some(self))
    }

    // ---- JSON descriptor ------------------------------------------------

    /// A layout from what a user typed: a JSON descriptor (starting with `{`
    /// or `"`, after any whitespace) or else a preset name. Every binding
    /// accepts layouts through this one function.
    ///
    /// ```
    /// use snowmint::Layout;
    /// assert_eq!(Layout::parse("discord").unwrap(), Layout::preset("discord").unwrap());
    /// assert_eq!(Layout::parse(" \"tsid\"").unwrap(), Layout::preset("tsid").unwrap());
    /// ```
    pub fn parse(s: &str) -> Result<Layout> {
        match s.trim_start().as_bytes().first() {
            Some(b'{' | b'"') => Layout::from_json(s),
            _ => Layout::preset(s),
        }
    }
}
