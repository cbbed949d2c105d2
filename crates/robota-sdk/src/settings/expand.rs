//! Environment expansion in settings strings: `$ENV:NAME` (the whole value), `${NAME}` and
//! `${NAME:-default}` (anywhere in the value). Unset variables expand to the empty string
//! (or the default).

/// Expands a string with `lookup` giving variable values.
pub(crate) fn expand_with(value: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    if let Some(name) = value.strip_prefix("$ENV:") {
        return lookup(name.trim()).unwrap_or_default();
    }
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        if is_name(name) {
            match (lookup(name).filter(|v| !v.is_empty()), default) {
                (Some(v), _) => out.push_str(&v),
                (None, Some(d)) => out.push_str(d),
                (None, None) => {}
            }
        } else {
            out.push_str(&rest[start..start + 2 + end + 1]);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Expands with the process environment.
pub fn expand(value: &str) -> String {
    expand_with(value, &|name| std::env::var(name).ok())
}

fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// Expands every string inside a JSON value, in place.
pub(crate) fn expand_value(value: &mut serde_json::Value, lookup: &dyn Fn(&str) -> Option<String>) {
    match value {
        serde_json::Value::String(s) if s.contains('$') => *s = expand_with(s, lookup),
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| expand_value(v, lookup)),
        serde_json::Value::Object(map) => map.values_mut().for_each(|v| expand_value(v, lookup)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME_DIR" => Some("/home/u".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn all_three_forms_expand() {
        assert_eq!(expand_with("$ENV:HOME_DIR", &env), "/home/u");
        assert_eq!(expand_with("$ENV:MISSING", &env), "");
        assert_eq!(expand_with("${HOME_DIR}/x", &env), "/home/u/x");
        assert_eq!(expand_with("a${MISSING:-dflt}b", &env), "adfltb");
        assert_eq!(expand_with("${EMPTY:-dflt}", &env), "dflt");
        assert_eq!(expand_with("${MISSING}", &env), "");
        assert_eq!(
            expand_with("keep ${not a name} and $HOME", &env),
            "keep ${not a name} and $HOME"
        );
        assert_eq!(expand_with("open ${HOME_DIR", &env), "open ${HOME_DIR");
    }

    #[test]
    fn values_expand_recursively() {
        let mut v = serde_json::json!({"a": ["${HOME_DIR}", 1], "b": {"c": "$ENV:HOME_DIR"}});
        expand_value(&mut v, &env);
        assert_eq!(
            v,
            serde_json::json!({"a": ["/home/u", 1], "b": {"c": "/home/u"}})
        );
    }
}
