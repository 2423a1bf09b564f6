//! Text from servers and models made safe to show on a terminal.
//!
//! Tool names, results, model text, progress messages, server names and error texts come from
//! programs Porthole does not control; printed raw, their control characters would drive the
//! person's terminal (an escape sequence can retitle the window, hide or rewrite earlier lines,
//! or worse on some terminals). On a terminal the command-line tools print every control
//! character except newline and tab as a JSON-style escape (`\u001b`), which keeps a JSON
//! line valid JSON with the same meaning; to a pipe or a file text goes as it is (so the
//! `porthole run --json` lines stay byte for byte what they were).

use std::borrow::Cow;
use std::io::IsTerminal;
use std::sync::OnceLock;

/// Whether a character would be taken as a command by a terminal: C0 controls (but newline
/// and tab, which only lay text out), DEL and the C1 controls (U+0080 to U+009F, which some
/// terminals obey in UTF-8 too: U+009B is CSI).
fn is_control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// `text` with each control character but newline and tab written as `\u00XX`.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_control(c) {
            escaped.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            escaped.push(c);
        }
    }
    Cow::Owned(escaped)
}

/// `text` as it should go to stdout: escaped when stdout is a terminal, as it is otherwise.
pub fn for_stdout(text: &str) -> Cow<'_, str> {
    static TERMINAL: OnceLock<bool> = OnceLock::new();
    shown(text, *TERMINAL.get_or_init(|| std::io::stdout().is_terminal()))
}

/// `text` as it should go to stderr: escaped when stderr is a terminal, as it is otherwise.
pub fn for_stderr(text: &str) -> Cow<'_, str> {
    static TERMINAL: OnceLock<bool> = OnceLock::new();
    shown(text, *TERMINAL.get_or_init(|| std::io::stderr().is_terminal()))
}

/// `text` escaped for a terminal, untouched for anything else.
fn shown(text: &str, terminal: bool) -> Cow<'_, str> {
    if terminal {
        escape_controls(text)
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_shown_not_obeyed() {
        assert_eq!(
            escape_controls("ok\x1b]0;pwned\x07 \x1b[2J\r\u{9b}31m\x7f\0"),
            "ok\\u001b]0;pwned\\u0007 \\u001b[2J\\u000d\\u009b31m\\u007f\\u0000"
        );
    }

    #[test]
    fn plain_text_newlines_tabs_and_other_scripts_are_untouched() {
        let text = "two\nlines\tand → ünïcode 漢字 🙂";
        assert!(matches!(escape_controls(text), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn json_stays_json_with_the_same_meaning_when_escaped() {
        let value = serde_json::json!({"text": "a\u{9b}b\u{7f}c\x1b[0m", "n": [1, 2]});
        let line = serde_json::to_string(&value).unwrap();
        let escaped = escape_controls(&line);
        assert!(!escaped.chars().any(is_control), "{escaped}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&escaped).unwrap(), value);
    }

    #[test]
    fn only_a_terminal_gets_escapes() {
        assert_eq!(shown("\x1b[31mred", true), "\\u001b[31mred");
        assert_eq!(shown("\x1b[31mred", false), "\x1b[31mred");
    }
}
