//! Merging settings layers: scalars from a higher layer replace lower ones, arrays
//! concatenate (equal items kept once), objects merge key by key. Every leaf and array
//! item remembers the layer it came from, so `robota config` can say where a value is set.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// Which file set each value: JSON pointer → source label.
pub type Provenance = BTreeMap<String, String>;

/// Merges `upper` into `lower`, recording `source` for everything `upper` sets.
pub fn merge_into(
    lower: &mut Value,
    upper: Value,
    source: &str,
    path: &str,
    prov: &mut Provenance,
) {
    match (lower, upper) {
        (Value::Object(low), Value::Object(up)) => {
            for (key, value) in up {
                let child = format!("{path}/{}", escape(&key));
                match low.get_mut(&key) {
                    Some(existing) => merge_into(existing, value, source, &child, prov),
                    None => {
                        record(&value, source, &child, prov);
                        low.insert(key, value);
                    }
                }
            }
        }
        (Value::Array(low), Value::Array(up)) => {
            for item in up {
                if !low.contains(&item) {
                    let child = format!("{path}/{}", low.len());
                    record(&item, source, &child, prov);
                    low.push(item);
                }
            }
        }
        (slot, value) => {
            prov.retain(|k, _| !(k == path || k.starts_with(&format!("{path}/"))));
            record(&value, source, path, prov);
            *slot = value;
        }
    }
}

fn record(value: &Value, source: &str, path: &str, prov: &mut Provenance) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                record(v, source, &format!("{path}/{}", escape(k)), prov);
            }
            if map.is_empty() {
                prov.insert(path.to_string(), source.to_string());
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                record(v, source, &format!("{path}/{i}"), prov);
            }
            if items.is_empty() {
                prov.insert(path.to_string(), source.to_string());
            }
        }
        _ => {
            prov.insert(path.to_string(), source.to_string());
        }
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// An empty object to merge layers into.
pub fn empty() -> Value {
    Value::Object(Map::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_override_arrays_concatenate_objects_merge() {
        let mut merged = empty();
        let mut prov = Provenance::new();
        merge_into(
            &mut merged,
            json!({"model": "a", "permissions": {"allow": ["Read", "Bash(ls)"], "defaultMode": "plan"}, "env": {"A": "1"}}),
            "user",
            "",
            &mut prov,
        );
        merge_into(
            &mut merged,
            json!({"model": "b", "permissions": {"allow": ["Bash(ls)", "Edit"]}, "env": {"B": "2"}}),
            "project",
            "",
            &mut prov,
        );
        assert_eq!(
            merged,
            json!({"model": "b", "permissions": {"allow": ["Read", "Bash(ls)", "Edit"], "defaultMode": "plan"}, "env": {"A": "1", "B": "2"}})
        );
        assert_eq!(prov["/model"], "project");
        assert_eq!(prov["/permissions/allow/0"], "user");
        assert_eq!(prov["/permissions/allow/2"], "project");
        assert_eq!(prov["/permissions/defaultMode"], "user");
        assert_eq!(prov["/env/B"], "project");
    }

    #[test]
    fn a_scalar_replacing_an_object_drops_the_old_provenance() {
        let mut merged = empty();
        let mut prov = Provenance::new();
        merge_into(&mut merged, json!({"x": {"y": 1}}), "low", "", &mut prov);
        merge_into(&mut merged, json!({"x": 5}), "high", "", &mut prov);
        assert_eq!(merged, json!({"x": 5}));
        assert_eq!(prov.get("/x/y"), None);
        assert_eq!(prov["/x"], "high");
    }
}
