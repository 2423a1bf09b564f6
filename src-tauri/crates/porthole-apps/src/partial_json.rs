//! Tool arguments while the model still streams them: the JSON so far, closed into an object a
//! view can be shown (`ui/notifications/tool-input-partial`).

use serde_json::Value;

/// Best-effort JSON for arguments still streaming: closes open strings, arrays and objects.
/// `None` when even that does not give a JSON object.
pub fn heal_json(partial: &str) -> Option<Value> {
    if partial.trim().is_empty() {
        return None;
    }
    if let Ok(v @ Value::Object(_)) = serde_json::from_str(partial) {
        return Some(v);
    }
    let mut closers = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for c in partial.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => closers.push('}'),
            '[' => closers.push(']'),
            '}' | ']' => {
                closers.pop();
            }
            _ => {}
        }
    }
    let mut healed = partial.to_string();
    if escaped {
        healed.pop();
    }
    if in_string {
        healed.push('"');
    }
    let trimmed = healed.trim_end();
    let mut healed = trimmed.trim_end_matches([',', ':']).to_string();
    while let Some(c) = closers.pop() {
        healed.push(c);
    }
    match serde_json::from_str(&healed) {
        Ok(v @ Value::Object(_)) => Some(v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn streaming_arguments_are_healed_into_objects() {
        assert_eq!(heal_json(r#"{"city":"Ber"#), Some(json!({"city": "Ber"})));
        assert_eq!(heal_json(r#"{"a":[1,2"#), Some(json!({"a": [1, 2]})));
        assert_eq!(heal_json(r#"{"a":{"b":"x\""#), Some(json!({"a": {"b": "x\""}})));
        assert_eq!(heal_json(r#"{"a":1,"#), Some(json!({"a": 1})));
        assert_eq!(heal_json(r#"{"city":"Bergen"}"#), Some(json!({"city": "Bergen"})));
        assert_eq!(heal_json(""), None);
        assert_eq!(heal_json("[1,2"), None, "only objects are arguments");
    }

    #[test]
    fn an_escape_cut_in_half_is_dropped() {
        assert_eq!(heal_json(r#"{"path":"C:\"#), Some(json!({"path": "C:"})));
        assert_eq!(heal_json(r#"{"a":"x\\"#), Some(json!({"a": "x\\"})));
    }

    /// Any JSON value that can be an object's field value.
    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "[ -~]{0,12}".prop_map(Value::from),
            "\\PC{0,6}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map("[a-z\"\\\\]{0,5}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn healing_never_panics_and_only_gives_objects(text in "\\PC{0,64}") {
            if let Some(healed) = heal_json(&text) {
                prop_assert!(healed.is_object());
            }
        }

        #[test]
        fn every_prefix_of_a_streamed_object_heals_to_an_object_or_nothing(
            object in prop::collection::btree_map("[a-z\"\\\\ ]{0,6}", json_value(), 0..5)
        ) {
            let text = Value::Object(object.into_iter().collect()).to_string();
            let cuts = text.char_indices().map(|(i, _)| i).chain([text.len()]);
            for cut in cuts {
                let prefix = &text[..cut];
                if let Some(healed) = heal_json(prefix) {
                    prop_assert!(healed.is_object(), "{prefix:?} -> {healed}");
                    // What the view is shown parses back as the same object.
                    let again: Value = serde_json::from_str(&healed.to_string()).unwrap();
                    prop_assert_eq!(&again, &healed);
                }
            }
            let whole: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(heal_json(&text), Some(whole), "the complete object is itself");
        }

        #[test]
        fn a_prefix_cut_after_a_field_heals_to_the_fields_so_far(
            object in prop::collection::btree_map("[a-z\"\\\\ ]{0,6}", json_value(), 1..5),
            comma in any::<bool>(),
        ) {
            let members: Vec<(String, Value)> = object.into_iter().collect();
            for complete in 1..=members.len() {
                let fields: Vec<String> = members[..complete]
                    .iter()
                    .map(|(k, v)| format!("{}:{v}", Value::from(k.as_str())))
                    .collect();
                let prefix = format!("{{{}{}", fields.join(","), if comma { "," } else { "" });
                let expected: serde_json::Map<String, Value> = members[..complete].iter().cloned().collect();
                prop_assert_eq!(heal_json(&prefix), Some(Value::Object(expected)), "{}", prefix);
            }
        }
    }
}
