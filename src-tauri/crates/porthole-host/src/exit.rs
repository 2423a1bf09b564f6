//! The command-line tools' exit codes, in one place:
//!
//! - 0: done;
//! - 1: the command ran and what it did failed (`porthole run`: the turn failed; `porthole call`:
//!   the tool reported an error, `isError`);
//! - 2: the command line is wrong (clap's own errors and the values we check ourselves, such as
//!   `--args`, `--base-url` or an empty prompt), and for `porthole call` any other way of getting
//!   no result at all (no such server or tool, the server failed or timed out);
//! - 130: stopped with Ctrl-C.

use std::fmt;

/// What a usage error exits with (clap's own choice for its errors).
pub const USAGE: u8 = 2;

/// What `porthole call` exits with when it gets no result at all, for any reason (a usage error
/// included): the same 2, as 1 is the tool's own `isError`.
pub const NO_RESULT: u8 = 2;

/// An error that ends the command with `code` rather than 1; its text is the error's.
#[derive(Debug)]
pub struct Exit {
    pub code: u8,
    pub error: anyhow::Error,
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#}", self.error)
    }
}

impl std::error::Error for Exit {}

/// A mistake on the command line: the command exits [`USAGE`].
pub fn usage(error: impl Into<anyhow::Error>) -> anyhow::Error {
    with_code(USAGE, error)
}

/// `error`, ending the command with `code`.
pub fn with_code(code: u8, error: impl Into<anyhow::Error>) -> anyhow::Error {
    anyhow::Error::new(Exit {
        code,
        error: error.into(),
    })
}

/// The exit code an error ends the command with: the innermost [`Exit`]'s code, else 1.
pub fn code_of(error: &anyhow::Error) -> u8 {
    error
        .chain()
        .filter_map(|e| e.downcast_ref::<Exit>())
        .last()
        .map_or(1, |e| e.code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_exits_1_unless_it_says_otherwise() {
        assert_eq!(code_of(&anyhow::anyhow!("the turn failed")), 1);
        let wrong = usage(anyhow::anyhow!("--args must be a JSON object"));
        assert_eq!(code_of(&wrong), 2);
        assert_eq!(wrong.to_string(), "--args must be a JSON object");
        assert_eq!(code_of(&wrong.context("while reading the arguments")), 2);
    }
}
