//! Tool input schemas made acceptable to Gemini. They are sent as `parametersJsonSchema`
//! (plain JSON Schema, what Gemini CLI sends), not as the OpenAPI-subset `parameters`
//! field, whose protobuf rejects `additionalProperties`, `const`, type lists and more
//! (wire.md §4.2; zed, opencode and hermes-agent reports). Even the JSON Schema field
//! rejects a `$ref` with sibling keywords and dangling `$ref`s, so local references
//! (`#/$defs/…`, `#/definitions/…`) are inlined (siblings override the target; cycles and
//! non-local references become a plain schema), meta keywords (`$schema`, `$id`,
//! `$comment`) and the definition tables are dropped, and the root is always an object
//! schema. Property names are never touched.

use serde_json::{Map, Value, json};

/// Nesting beyond this is cut to an unconstrained schema (a guard against pathological input).
const MAX_DEPTH: usize = 64;

/// Keywords whose value is one subschema.
const SCHEMA_KEYWORDS: &[&str] = &[
    "items",
    "additionalProperties",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
];
/// Keywords whose value is an array of subschemas.
const SCHEMA_ARRAY_KEYWORDS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems", "items"];
/// Keywords whose value maps names to subschemas.
const SCHEMA_MAP_KEYWORDS: &[&str] = &["properties", "patternProperties", "dependentSchemas"];
/// Keywords dropped wherever they appear in schema position.
const DROPPED_KEYWORDS: &[&str] = &["$schema", "$id", "$comment", "$defs", "definitions"];

/// The `parametersJsonSchema` value for a tool's `input_schema`.
pub(crate) fn function_parameters(input_schema: &Value) -> Value {
    let defs = Definitions::of(input_schema);
    let mut active = Vec::new();
    let mut out = prepare(input_schema, &defs, &mut active, 0);
    if !out.is_object() {
        out = json!({});
    }
    if let Some(obj) = out.as_object_mut() {
        if !obj.contains_key("type") {
            obj.insert("type".into(), json!("object"));
        }
        if obj.get("type") == Some(&json!("object")) && !obj.contains_key("properties") {
            obj.insert("properties".into(), json!({}));
        }
    }
    out
}

/// The definition tables of the root schema.
struct Definitions<'a> {
    defs: Option<&'a Map<String, Value>>,
    definitions: Option<&'a Map<String, Value>>,
}

impl<'a> Definitions<'a> {
    fn of(root: &'a Value) -> Self {
        Definitions {
            defs: root.get("$defs").and_then(Value::as_object),
            definitions: root.get("definitions").and_then(Value::as_object),
        }
    }

    /// The schema a local reference names; `None` for anything else.
    fn resolve(&self, reference: &str) -> Option<&'a Value> {
        if let Some(name) = reference.strip_prefix("#/$defs/") {
            return self.defs?.get(&unescape_pointer(name));
        }
        if let Some(name) = reference.strip_prefix("#/definitions/") {
            return self.definitions?.get(&unescape_pointer(name));
        }
        None
    }
}

fn unescape_pointer(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn prepare(
    schema: &Value,
    defs: &Definitions<'_>,
    active: &mut Vec<String>,
    depth: usize,
) -> Value {
    let Some(obj) = schema.as_object() else {
        // `true` / `false` schemas and malformed values pass as they are.
        return schema.clone();
    };
    if depth > MAX_DEPTH {
        return json!({});
    }
    if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
        return inline_reference(reference, obj, defs, active, depth);
    }
    let mut out = Map::new();
    for (key, value) in obj {
        if DROPPED_KEYWORDS.contains(&key.as_str()) {
            continue;
        }
        let prepared = if SCHEMA_MAP_KEYWORDS.contains(&key.as_str()) && value.is_object() {
            let mut map = Map::new();
            for (name, sub) in value.as_object().into_iter().flatten() {
                map.insert(name.clone(), prepare(sub, defs, active, depth + 1));
            }
            Value::Object(map)
        } else if SCHEMA_ARRAY_KEYWORDS.contains(&key.as_str()) && value.is_array() {
            Value::Array(
                value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|sub| prepare(sub, defs, active, depth + 1))
                    .collect(),
            )
        } else if SCHEMA_KEYWORDS.contains(&key.as_str()) {
            prepare(value, defs, active, depth + 1)
        } else {
            value.clone()
        };
        out.insert(key.clone(), prepared);
    }
    Value::Object(out)
}

/// A `$ref` node replaced by its target, with the node's other keywords laid over it.
fn inline_reference(
    reference: &str,
    node: &Map<String, Value>,
    defs: &Definitions<'_>,
    active: &mut Vec<String>,
    depth: usize,
) -> Value {
    let mut siblings = node.clone();
    siblings.remove("$ref");
    let siblings = prepare(&Value::Object(siblings), defs, active, depth + 1);
    let target = match defs.resolve(reference) {
        Some(target) if !active.iter().any(|r| r == reference) => {
            active.push(reference.to_string());
            let prepared = prepare(target, defs, active, depth + 1);
            active.pop();
            prepared
        }
        Some(_) => {
            tracing::debug!(reference, "recursive schema reference cut for Gemini");
            json!({"type": "object"})
        }
        None => {
            tracing::debug!(
                reference,
                "unresolvable schema reference dropped for Gemini"
            );
            json!({})
        }
    };
    match (target, siblings) {
        (Value::Object(mut merged), Value::Object(siblings)) => {
            merged.extend(siblings);
            Value::Object(merged)
        }
        (_, siblings) => siblings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_keywords_go_and_everything_else_stays() {
        let input = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "$schema": {"type": "string", "$comment": "a property named $schema stays"},
                "-i": {"type": "boolean"},
                "mode": {"type": ["string", "null"], "enum": ["a", "b", null]},
                "k": {"const": "x"}
            },
            "required": ["-i"]
        });
        let out = function_parameters(&input);
        assert_eq!(
            out,
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "$schema": {"type": "string"},
                    "-i": {"type": "boolean"},
                    "mode": {"type": ["string", "null"], "enum": ["a", "b", null]},
                    "k": {"const": "x"}
                },
                "required": ["-i"]
            })
        );
    }

    #[test]
    fn local_references_are_inlined_with_siblings_winning() {
        let input = json!({
            "type": "object",
            "$defs": {"Opt": {"type": "object", "properties": {"label": {"type": "string"}}, "description": "an option"}},
            "definitions": {"Id": {"type": "integer"}},
            "properties": {
                "options": {"type": "array", "items": {"$ref": "#/$defs/Opt", "description": "override"}},
                "id": {"$ref": "#/definitions/Id"},
                "remote": {"$ref": "https://example.com/schema.json", "description": "kept"}
            }
        });
        let out = function_parameters(&input);
        assert!(out.get("$defs").is_none() && out.get("definitions").is_none());
        assert_eq!(
            out["properties"]["options"]["items"],
            json!({"type": "object", "properties": {"label": {"type": "string"}}, "description": "override"})
        );
        assert_eq!(out["properties"]["id"], json!({"type": "integer"}));
        assert_eq!(out["properties"]["remote"], json!({"description": "kept"}));
        assert!(!out.to_string().contains("$ref"));
    }

    #[test]
    fn recursive_references_terminate() {
        let input = json!({
            "type": "object",
            "$defs": {"Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}},
            "properties": {"root": {"$ref": "#/$defs/Node"}}
        });
        let out = function_parameters(&input);
        assert_eq!(
            out["properties"]["root"]["properties"]["children"]["items"],
            json!({"type": "object"})
        );
    }

    #[test]
    fn the_root_is_always_an_object_schema() {
        assert_eq!(
            function_parameters(&json!({})),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            function_parameters(&Value::Null),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            function_parameters(&json!({"properties": {"a": {"type": "string"}}})),
            json!({"properties": {"a": {"type": "string"}}, "type": "object"})
        );
    }

    #[test]
    fn absurd_nesting_is_cut() {
        let mut schema = json!({"type": "string"});
        for _ in 0..200 {
            schema = json!({"type": "array", "items": schema});
        }
        let out = function_parameters(&json!({"type":"object","properties":{"deep": schema}}));
        assert!(out.to_string().len() < 200 * 40);
    }
}
