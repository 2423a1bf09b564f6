//! Fuzzing the MCP config loader (`parse_config`, `LoadedConfig::load`) with proptest.
//!
//! Inputs: arbitrary text, config-shaped JSON built from the fields the loader knows (with wrong
//! types, placeholders and odd names), and the kept corpus (`tests/corpus/config/`: Claude
//! Desktop, Cursor, VS Code and Porthole files, and broken ones) mutated at the text level.
//! Properties:
//! - it never panics;
//! - every problem names the file it is in (and is printed starting with that file), with a line
//!   inside the file when it gives one;
//! - every server entry of a well-formed file is either loaded (named by its key, from that file)
//!   or reported as a problem naming it — never both, never dropped;
//! - across files, a name seen again replaces the earlier entry: each name once, from its last file.
//!
//! The corpus files are also checked whole on every run. Failures proptest finds are kept in
//! `proptest-regressions/config_fuzz.txt` (committed) and replayed first. Cases: 256 by default,
//! `PROPTEST_CASES=N` for a longer run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use porthole_mcp::LoadedConfig;
use porthole_mcp::config::parse_config;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{Map, Value, json};

fn fuzz_config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/config_fuzz.txt",
        ))),
        ..ProptestConfig::default()
    }
}

/// The kept corpus: every file of `tests/corpus/config/`, by name.
fn corpus() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/config");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            (path.file_name().unwrap().to_string_lossy().into_owned(), text)
        })
        .collect();
    files.sort();
    assert!(files.len() >= 8, "the config corpus is missing: {}", dir.display());
    files
}

/// The server entries a well-formed file holds: (section, name), in order.
fn entries(text: &str) -> Option<Vec<String>> {
    // A leading byte-order mark is allowed (Notepad writes one).
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let root: Value = serde_json::from_str(text).ok()?;
    let root = root.as_object()?;
    Some(
        ["mcpServers", "servers"]
            .iter()
            .filter_map(|key| root.get(*key)?.as_object())
            .flat_map(|section| section.keys().cloned())
            .collect(),
    )
}

/// Checks every property of one file's text; returns what it loaded.
fn check_one(file: &Path, text: &str) -> LoadedConfig {
    let loaded = parse_config(file, text);
    let lines = text.matches('\n').count() + 1;
    for problem in &loaded.problems {
        assert_eq!(problem.file, file, "{problem}");
        let shown = problem.to_string();
        assert!(
            shown.starts_with(&file.display().to_string()),
            "a problem that does not start with its file: {shown}"
        );
        assert!(!problem.message.trim().is_empty(), "{shown}");
        if let Some(line) = problem.line {
            assert!(
                (1..=lines).contains(&line),
                "line {line} of a {lines}-line file: {shown}"
            );
        }
    }
    for server in &loaded.servers {
        assert_eq!(server.source, file, "{}", server.name);
        assert!(!server.name.trim().is_empty());
        assert!(server.timeout.as_secs_f64() > 0.0);
    }
    if let Some(entries) = entries(text) {
        let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
        for name in loaded
            .servers
            .iter()
            .map(|s| s.name.as_str())
            .chain(loaded.problems.iter().filter_map(|p| p.server.as_deref()))
        {
            *outcomes.entry(name).or_default() += 1;
        }
        let mut expected: BTreeMap<&str, usize> = BTreeMap::new();
        for name in &entries {
            *expected.entry(name.as_str()).or_default() += 1;
        }
        assert_eq!(
            outcomes,
            expected,
            "each entry must load or be reported, once: {:?} {:?}",
            loaded.servers.iter().map(|s| &s.name).collect::<Vec<_>>(),
            loaded.problems.iter().map(ToString::to_string).collect::<Vec<_>>()
        );
    } else {
        assert!(loaded.servers.is_empty());
        assert!(
            !loaded.problems.is_empty(),
            "a file that is not a JSON object must be reported"
        );
    }
    loaded
}

/// Loads `texts` as files of a fresh directory (plus one missing file) and checks the merge.
fn check_files(texts: &[String]) {
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<PathBuf> = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let path = dir.path().join(format!("config-{i}.json"));
        std::fs::write(&path, text).unwrap();
        files.push(path);
    }
    let missing = dir.path().join("missing.json");
    files.push(missing.clone());
    let loaded = LoadedConfig::load(&files);
    for problem in &loaded.problems {
        assert!(files.contains(&problem.file), "{problem}");
    }
    assert!(
        loaded.problems.iter().any(|p| p.file == missing && p.line.is_none()),
        "the missing file is not reported"
    );
    // Each name once, from the last file that loads it.
    let mut last_source: BTreeMap<String, PathBuf> = BTreeMap::new();
    for (text, file) in texts.iter().zip(&files) {
        for server in parse_config(file, text).servers {
            last_source.insert(server.name, file.clone());
        }
    }
    let got: BTreeMap<String, PathBuf> = loaded
        .servers
        .iter()
        .map(|s| (s.name.clone(), s.source.clone()))
        .collect();
    assert_eq!(got.len(), loaded.servers.len(), "a name loaded twice");
    assert_eq!(got, last_source);
}

#[test]
fn the_corpus_loads_or_reports_every_entry_with_its_file() {
    let corpus = corpus();
    for (name, text) in &corpus {
        let file = PathBuf::from(format!("/fuzz/{name}"));
        let loaded = check_one(&file, text);
        // The real clients' files load (the servers with unset placeholders or a legacy transport
        // are reported); the broken ones are reported.
        match name.as_str() {
            "porthole-profile.json"
            | "claude-desktop.json"
            | "cursor.json"
            | "vscode.json"
            | "porthole-settings.json"
            // Notepad's byte-order mark and CRLF.
            | "bom-crlf.json" => {
                assert!(!loaded.servers.is_empty(), "{name}: nothing loaded");
            }
            _ => assert!(!loaded.problems.is_empty(), "{name}: nothing reported"),
        }
    }
    check_files(&corpus.iter().map(|(_, text)| text.clone()).collect::<Vec<_>>());
}

/// Bits of text that matter to JSON and to the loader.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(vec![
            "{", "}", "[", "]", ",", ":", "\"", "\\", "\n", "\r\n", " ", "null", "true", "1e999", "-0",
            "\"mcpServers\"", "\"servers\"", "\"command\"", "\"url\"", "\"type\"", "\"args\"", "\"env\"",
            "\"timeout\"", "${env:HOME}", "${env:", "${input:x}", "}}", "\u{feff}", "é", "\u{0}", "\"\":",
        ])
        .prop_map(str::to_string),
        1 => "\\PC{1,6}",
    ]
}

/// A corpus file changed in a few places (at character boundaries), or truncated.
fn mutated_corpus() -> impl Strategy<Value = String> {
    let n = corpus().len();
    let edit = (any::<usize>(), 0usize..3, token());
    (
        0..n,
        prop::collection::vec(edit, 1..6),
        prop::option::of(any::<usize>()),
    )
        .prop_map(|(file, edits, truncate)| {
            let mut chars: Vec<char> = corpus()[file].1.chars().collect();
            for (at, kind, piece) in edits {
                let at = at % (chars.len() + 1);
                let piece: Vec<char> = piece.chars().collect();
                let end = (at + piece.len()).min(chars.len());
                match kind {
                    0 => drop(chars.splice(at..at, piece)),
                    1 => drop(chars.drain(at..end)),
                    _ => drop(chars.splice(at..end, piece)),
                }
            }
            if let Some(t) = truncate {
                chars.truncate(t % (chars.len() + 1));
            }
            chars.into_iter().collect()
        })
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        prop::sample::select(vec![0.0, -1.0, 0.001, 86_400.0, 86_400.5, 1e300]).prop_map(|f| json!(f)),
        prop::sample::select(vec![
            "",
            " ",
            "npx",
            "https://example.com/mcp",
            "http://127.0.0.1:1/mcp",
            "ftp://x",
            "stdio",
            "http",
            "sse",
            "streamable-http",
            "${env:HOME}",
            "${env:PORTHOLE_FUZZ_UNSET}",
            "${input:id}",
            "${env:",
            "a\nb",
        ])
        .prop_map(|s| json!(s)),
        "\\PC{0,8}".prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,4}", inner, 0..3).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A server entry: mostly the fields the loader knows, with right or wrong values.
fn server_entry() -> impl Strategy<Value = Value> {
    let field = prop::sample::select(vec![
        "type",
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "headers",
        "enabled",
        "disabled",
        "mcpApps",
        "timeout",
        "alwaysAllow",
        "autoApprove",
        "envFile",
        "description",
        "comand",
    ]);
    let value = prop_oneof![
        3 => json_leaf(),
        1 => prop::collection::vec(json_leaf(), 0..3).prop_map(Value::Array),
        1 => prop::collection::btree_map("[A-Z_]{1,5}", json_leaf(), 0..3)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
    ];
    prop_oneof![
        8 => prop::collection::btree_map(field, value, 0..6)
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        1 => json_value(),
    ]
}

/// A config file's text built from the shapes the loader reads.
fn config_shaped() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        4 => "[a-z][a-z0-9-]{0,8}",
        1 => "\\PC{0,6}",
        1 => Just(String::new()),
        1 => Just("dup".to_string()),
    ];
    let section = prop_oneof![
        8 => prop::collection::vec((name, server_entry()), 0..5).prop_map(|entries| {
            Value::Object(entries.into_iter().collect::<Map<String, Value>>())
        }),
        1 => json_value(),
    ];
    (
        prop::option::of(section.clone()),
        prop::option::of(section),
        prop::option::of(json_leaf()),
        prop::option::of(json_value()),
        any::<bool>(),
    )
        .prop_map(|(claude, vscode, apps, inputs, pretty)| {
            let mut root = Map::new();
            if let Some(s) = claude {
                root.insert("mcpServers".into(), s);
            }
            if let Some(s) = vscode {
                root.insert("servers".into(), s);
            }
            if let Some(a) = apps {
                root.insert("mcpApps".into(), a);
            }
            if let Some(i) = inputs {
                root.insert("inputs".into(), json!([{"id": "id", "description": i}]));
            }
            let root = Value::Object(root);
            if pretty {
                serde_json::to_string_pretty(&root).unwrap()
            } else {
                root.to_string()
            }
        })
}

fn config_text() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => any::<String>(),
        2 => prop::collection::vec(token(), 0..40).prop_map(|t| t.concat()),
        4 => config_shaped(),
        4 => mutated_corpus(),
    ]
}

proptest! {
    #![proptest_config(fuzz_config())]

    #[test]
    fn any_text_loads_or_reports_every_entry_with_its_file(text in config_text()) {
        check_one(Path::new("/fuzz/config.json"), &text);
    }

    #[test]
    fn several_files_merge_with_the_last_entry_of_each_name(
        texts in prop::collection::vec(prop_oneof![config_shaped(), mutated_corpus()], 1..4),
    ) {
        check_files(&texts);
    }
}
