//! Resource templates' URIs (RFC 6570): the variables a template names, and the URI it makes
//! with values for them. Levels 1–3 (`{var}`, `{+var}`, `{#var}`, `{/var}`, `{.var}`,
//! `{;var}`, `{?var}`, `{&var}`, several variables per expression); the level-4 modifiers
//! (`:3`, `*`) are read and ignored, so such a variable is still asked for.

use std::collections::HashMap;

/// Each variable of `template`, in order, once.
pub fn variables(template: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for expression in expressions(template) {
        let (_, list) = operator(expression);
        for name in list.split(',').map(variable_name).filter(|n| !n.is_empty()) {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// `template` with each expression replaced by its values; a variable with no value (or an
/// empty one) is left out, as RFC 6570 says of undefined variables.
pub fn expand(template: &str, values: &HashMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else { break };
        out.push_str(&rest[..start]);
        out.push_str(&expand_expression(&rest[start + 1..start + len], values));
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out
}

fn expressions(template: &str) -> impl Iterator<Item = &str> {
    let mut rest = template;
    std::iter::from_fn(move || {
        let start = rest.find('{')?;
        let len = rest[start..].find('}')?;
        let expression = &rest[start + 1..start + len];
        rest = &rest[start + len + 1..];
        Some(expression)
    })
}

fn operator(expression: &str) -> (Option<char>, &str) {
    match expression.chars().next() {
        Some(c @ ('+' | '#' | '/' | '.' | ';' | '?' | '&')) => (Some(c), &expression[1..]),
        _ => (None, expression),
    }
}

fn variable_name(spec: &str) -> &str {
    let spec = spec.trim();
    let spec = spec.strip_suffix('*').unwrap_or(spec);
    spec.split(':').next().unwrap_or("")
}

fn expand_expression(expression: &str, values: &HashMap<String, String>) -> String {
    let (op, list) = operator(expression);
    let (first, separator, named, reserved) = match op {
        None => ("", ",", false, false),
        Some('+') => ("", ",", false, true),
        Some('#') => ("#", ",", false, true),
        Some('/') => ("/", "/", false, false),
        Some('.') => (".", ".", false, false),
        Some(';') => (";", ";", true, false),
        Some('?') => ("?", "&", true, false),
        Some(_) => ("&", "&", true, false),
    };
    let parts: Vec<String> = list
        .split(',')
        .map(variable_name)
        .filter_map(|name| {
            let value = values.get(name).filter(|v| !v.is_empty())?;
            let value = encode(value, reserved);
            Some(if named { format!("{name}={value}") } else { value })
        })
        .collect();
    if parts.is_empty() {
        return String::new();
    }
    format!("{first}{}", parts.join(separator))
}

/// Percent-encodes everything but unreserved characters (and, for `+` and `#`, reserved ones).
fn encode(value: &str, allow_reserved: bool) -> String {
    let mut out = String::new();
    for byte in value.bytes() {
        let c = byte as char;
        let keep =
            c.is_ascii_alphanumeric() || "-._~".contains(c) || (allow_reserved && ":/?#[]@!$&'()*+,;=%".contains(c));
        if keep {
            out.push(c);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn variables_are_named_once_in_order() {
        assert_eq!(variables("demo://resource/dynamic/text/{resourceId}"), ["resourceId"]);
        assert_eq!(variables("file:///{+path}{?q,lang}{&q}"), ["path", "q", "lang"]);
        assert_eq!(variables("x://{a:3}/{b*}"), ["a", "b"]);
        assert!(variables("plain://uri").is_empty());
    }

    #[test]
    fn values_are_expanded_and_encoded() {
        let v = values(&[("id", "12"), ("path", "docs/a b.md"), ("q", "x&y"), ("empty", "")]);
        assert_eq!(
            expand("demo://resource/dynamic/text/{id}", &v),
            "demo://resource/dynamic/text/12"
        );
        assert_eq!(expand("file:///{path}", &v), "file:///docs%2Fa%20b.md");
        assert_eq!(expand("file:///{+path}", &v), "file:///docs/a%20b.md");
        assert_eq!(expand("s://find{?q,empty,missing}", &v), "s://find?q=x%26y");
        assert_eq!(expand("s://x{/id,path}", &v), "s://x/12/docs%2Fa%20b.md");
        assert_eq!(expand("s://x{#id}", &v), "s://x#12");
    }
}
