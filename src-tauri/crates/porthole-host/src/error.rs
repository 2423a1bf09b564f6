//! The one error the app's commands return: a code the front end branches on, and a message in
//! words for the person. The front end never reads the message to decide anything.

use std::fmt;

use serde::Serialize;
use ts_rs::TS;

/// What kind of failure an [`AppError`] is. The front end chooses what to offer (retry, a
/// settings link, nothing) by this alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// What was sent is not acceptable (an empty message, a bad URL, a form field); the
    /// message says what to change.
    Invalid,
    /// The thing named (a conversation, a view, a server, a question) does not exist (any more).
    NotFound,
    /// A reply is still being written in this conversation; stop it or wait.
    Busy,
    /// The asking window may not do this (it does not show that view, it is not a pop-out…).
    Forbidden,
    /// The conversation store cannot be opened or a read or write failed.
    Store,
    /// The conversation store's file is damaged: Porthole does not write to it, and can move it
    /// aside and start a fresh one (`recover_store`).
    StoreDamaged,
    /// The OS keyring refused or is missing.
    Keyring,
    /// The model provider cannot be used or answered with an error.
    Provider,
    /// An MCP server is not connected, or a request to it failed.
    Server,
    /// A file could not be read or written.
    Io,
    /// Nobody is waiting for this answer any more (the turn or the server moved on).
    Expired,
}

/// An error at the boundary between the app and its window: `{code, message}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct AppError {
    pub code: ErrorCode,
    pub message: String,
}

impl AppError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> AppError {
        AppError {
            code,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> AppError {
        AppError::new(ErrorCode::Invalid, message)
    }

    pub fn not_found(message: impl Into<String>) -> AppError {
        AppError::new(ErrorCode::NotFound, message)
    }

    pub fn busy(message: impl Into<String>) -> AppError {
        AppError::new(ErrorCode::Busy, message)
    }

    pub fn forbidden(message: impl Into<String>) -> AppError {
        AppError::new(ErrorCode::Forbidden, message)
    }

    pub fn store(message: impl fmt::Display) -> AppError {
        AppError::new(ErrorCode::Store, message.to_string())
    }

    pub fn keyring(message: impl Into<String>) -> AppError {
        AppError::new(ErrorCode::Keyring, message)
    }

    pub fn provider(message: impl Into<String>) -> AppError {
        AppError::new(ErrorCode::Provider, message)
    }

    pub fn server(message: impl Into<String>) -> AppError {
        AppError::new(ErrorCode::Server, message)
    }

    pub fn io(message: impl Into<String>) -> AppError {
        AppError::new(ErrorCode::Io, message)
    }

    pub fn expired(message: impl Into<String>) -> AppError {
        AppError::new(ErrorCode::Expired, message)
    }
}

impl fmt::Display for AppError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AppError {}

impl From<porthole_store::StoreError> for AppError {
    fn from(e: porthole_store::StoreError) -> AppError {
        use porthole_store::StoreError;
        match e {
            StoreError::Damaged { .. } | StoreError::NotADatabase { .. } => {
                AppError::new(ErrorCode::StoreDamaged, e.to_string())
            }
            e => AppError::store(e),
        }
    }
}

pub type AppResult<T> = Result<T, AppError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_reaches_the_window_as_code_and_message() {
        let e = AppError::busy("a reply is still being written");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"code": "busy", "message": "a reply is still being written"})
        );
        assert_eq!(e.to_string(), "a reply is still being written");
    }
}
