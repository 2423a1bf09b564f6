use std::path::PathBuf;

/// Everything that can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file exists but is not a Porthole database (not SQLite, another program's database, or corrupt).
    /// It was not modified.
    #[error(
        "{} is not a Porthole database (or it is corrupt); it was left untouched. \
         `porthole store recover` moves it aside (keeping it) and starts a fresh store",
        path.display()
    )]
    NotADatabase { path: PathBuf },

    /// The file is a Porthole database, but SQLite's check (`PRAGMA quick_check`) found it damaged.
    /// It was not modified: writing to a damaged database can lose what is still readable.
    #[error(
        "the conversation store {} is damaged ({detail}); it was left untouched. \
         `porthole store recover` moves it aside (the damaged file is kept) and starts a fresh store",
        path.display()
    )]
    Damaged { path: PathBuf, detail: String },

    /// `Store::recover` was asked to move aside a store that opens and checks fine.
    #[error("the conversation store {} is not damaged; nothing was moved", path.display())]
    NotDamaged { path: PathBuf },

    /// The database was written by a newer Porthole. It was not modified.
    #[error(
        "{} was written by a newer version of Porthole (schema version {found}, this version knows up to {known}); \
         it was left untouched: update Porthole to open it",
        path.display()
    )]
    TooNew { path: PathBuf, found: i64, known: i64 },

    /// The database file (or its directory) could not be opened or created.
    #[error("cannot open the conversation store at {}: {reason}", path.display())]
    Open { path: PathBuf, reason: String },

    /// Another turn writes this conversation, in this process or another Porthole (`pid`, when known).
    #[error("conversation {conversation} is busy {}: wait for its turn to end, or stop it", busy_in(*pid))]
    Busy { conversation: String, pid: Option<u32> },

    /// No row with this id.
    #[error("{what} {id:?} not found")]
    NotFound { what: &'static str, id: String },

    /// An argument the store cannot accept (e.g. an unknown role or view state).
    #[error("invalid {what}: {value:?}")]
    Invalid { what: &'static str, value: String },

    /// The operating system gave no randomness for a new id.
    #[error("cannot generate a random id: {0}")]
    Random(String),

    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),

    #[error("JSON error: {0}")]
    Json(#[from] serde_json::Error),
}

impl StoreError {
    pub(crate) fn not_found(what: &'static str, id: impl ToString) -> Self {
        StoreError::NotFound {
            what,
            id: id.to_string(),
        }
    }

    pub(crate) fn invalid(what: &'static str, value: impl ToString) -> Self {
        StoreError::Invalid {
            what,
            value: value.to_string(),
        }
    }
}

/// Where a busy conversation's writer is, for [`StoreError::Busy`]'s message.
fn busy_in(pid: Option<u32>) -> String {
    match pid {
        Some(pid) if pid == std::process::id() => "in this Porthole".to_owned(),
        Some(pid) => format!("in another Porthole (pid {pid})"),
        None => "in another Porthole".to_owned(),
    }
}

/// The store's result type.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A status string in the database that this version does not know.
#[derive(Debug, thiserror::Error)]
#[error("unknown {what} {value:?}")]
pub struct UnknownStatus {
    pub what: &'static str,
    pub value: String,
}
