//! `porthole call --args`: the tool's arguments as a JSON object, given inline, from a file
//! (`@FILE`) or from stdin (`-`), so arguments larger than the command line allows can be passed.

use std::io::Read;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

/// Reads `--args`: inline JSON, `@FILE` (the file's contents) or `-` (all of stdin), which must
/// be a JSON object.
pub fn read(spec: &str, stdin: impl Read) -> Result<Map<String, Value>> {
    let (text, from) = if spec == "-" {
        let mut text = String::new();
        let mut stdin = stdin;
        stdin
            .read_to_string(&mut text)
            .context("--args -: cannot read the arguments from stdin")?;
        (text, "stdin".to_string())
    } else if let Some(path) = spec.strip_prefix('@') {
        let text = std::fs::read_to_string(path).with_context(|| format!("--args @{path}: cannot read {path}"))?;
        (text, path.to_string())
    } else {
        (spec.to_string(), String::new())
    };
    let place = if from.is_empty() {
        "--args".to_string()
    } else {
        format!("--args (from {from})")
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => bail!("{place} must be a JSON object, such as '{{\"path\": \"/tmp\"}}'"),
        Err(e) => bail!("{place} is not valid JSON: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inline_file_and_stdin_arguments() {
        let nothing: &[u8] = b"";
        assert_eq!(
            read(r#"{"a": 1}"#, nothing).unwrap(),
            json!({"a": 1}).as_object().unwrap().clone()
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("args.json");
        std::fs::write(&file, r#"{"text": "from a file"}"#).unwrap();
        let from_file = read(&format!("@{}", file.display()), nothing).unwrap();
        assert_eq!(from_file["text"], "from a file");
        let from_stdin = read("-", &br#"{"text": "from stdin"}"#[..]).unwrap();
        assert_eq!(from_stdin["text"], "from stdin");
    }

    #[test]
    fn what_is_wrong_is_named() {
        let nothing: &[u8] = b"";
        let not_object = read("[1]", nothing).unwrap_err().to_string();
        assert!(not_object.starts_with("--args must be a JSON object"), "{not_object}");
        let bad = read("-", &b"{nope"[..]).unwrap_err().to_string();
        assert!(bad.starts_with("--args (from stdin) is not valid JSON"), "{bad}");
        let missing = read("@/no/such/file.json", nothing).unwrap_err();
        assert!(
            format!("{missing:#}").starts_with("--args @/no/such/file.json: cannot read"),
            "{missing:#}"
        );
    }
}
