//! One line on stderr per event (start, lease change, error, shutdown), as
//! text or JSON. Callers pass only values that hold no secret: lease URLs
//! are logged as the store describes itself (password masked), tokens never.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

/// Where and how lines go.
#[derive(Clone, Copy, Debug)]
pub struct Log {
    /// JSON lines instead of text.
    pub json: bool,
}

impl Log {
    /// Writes one event with its fields.
    pub fn event(&self, level: &str, event: &str, fields: &[(&str, Value)]) {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let line = if self.json {
            let mut m = Map::new();
            m.insert("ts".into(), snowmint::Iso8601(ms).to_string().into());
            m.insert("level".into(), level.into());
            m.insert("event".into(), event.into());
            for (k, v) in fields {
                m.insert((*k).into(), v.clone());
            }
            Value::Object(m).to_string()
        } else {
            let mut s = format!("{} {level} {event}", snowmint::Iso8601(ms));
            for (k, v) in fields {
                match v {
                    Value::String(t) => s.push_str(&format!(" {k}={t:?}")),
                    other => s.push_str(&format!(" {k}={other}")),
                }
            }
            s
        };
        // A log that cannot be written is not a reason to stop serving.
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    }
}
