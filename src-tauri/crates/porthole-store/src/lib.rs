//! Porthole's conversation store: one SQLite file (`porthole.db` in the profile) holding conversations,
//! messages, tool calls, MCP App views, the security audit log, tool approvals and settings.
//!
//! Every call writes through at once, so killing the app mid-turn loses at most what was in flight;
//! on the next [`Store::open`] (or [`Store::claim_writer`]), messages left streaming and tool calls
//! left pending or running by a process that is gone come back as `interrupted`. Each conversation
//! has one writer at a time, across processes (see [`ConversationWriter`]). Full-text search (FTS5) covers message text and conversation titles.
//! No Tauri dependency: the agent loop, the headless CLI and the desktop app all use it.

mod error;
mod schema;
mod transfer;
mod types;
mod writers;

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OptionalExtension, Row, TransactionBehavior, params};
use serde_json::Value;

pub use error::{Result, StoreError, UnknownStatus};
pub use transfer::{EXPORT_FORMAT, EXPORT_VERSION, ExportedConversation, ExportedWidgetState};
pub use types::{
    AllowedBy, AlwaysAllowed, AuditEntry, AuditKind, Conversation, MessageRole, MessageStatus, NewAuditEntry,
    NewToolCall, NewView, SNIPPET_CLOSE, SNIPPET_OPEN, SearchHit, StoredMessage, ToolCallFinish, ToolCallRecord,
    ToolCallStatus, ViewRecord, ViewState,
};
pub use writers::ConversationWriter;

/// The schema version this build writes: `PRAGMA user_version` after all migrations.
pub const SCHEMA_VERSION: i64 = schema::MIGRATIONS.len() as i64;

const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// A handle on the store. Cheap to clone; all clones share one connection.
///
/// Methods are synchronous and short, fine to call from async code.
#[derive(Clone)]
pub struct Store {
    shared: Arc<Shared>,
}

struct Shared {
    path: Option<PathBuf>,
    inner: Mutex<Inner>,
    /// Who may write which conversation (see [`Store::claim_writer`]).
    claims: writers::Claims,
    /// Whether opening read every page to check it.
    checked: bool,
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some(path) = self.path.as_deref() {
            let inner = self.inner.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
            record_sound(&inner.conn, path);
        }
    }
}

struct Inner {
    /// The one connection. Its transactions that write begin IMMEDIATE: a deferred one that reads
    /// before it writes fails at once with "database is locked" (busy timeout or not) when
    /// another process wrote in between.
    conn: Connection,
    /// Last timestamp handed out: timestamps from one store never go backwards or repeat,
    /// so "most recently updated" is well defined even within a millisecond.
    last_ms: i64,
}

impl Inner {
    fn now(&mut self) -> i64 {
        self.last_ms = wall_clock_ms().max(self.last_ms + 1);
        self.last_ms
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.shared.path)
            .finish_non_exhaustive()
    }
}

fn wall_clock_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn new_conversation_id() -> Result<String> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| StoreError::Random(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn is_unreadable(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt)
    )
}

fn to_json_text(value: &Value) -> Result<String> {
    Ok(serde_json::to_string(value)?)
}

fn search_hit(row: &Row<'_>) -> rusqlite::Result<SearchHit> {
    Ok(SearchHit {
        conversation_id: row.get(0)?,
        conversation_title: row.get(1)?,
        message_id: row.get(2)?,
        role: row.get(3)?,
        snippet: row.get(4)?,
        rank: row.get(5)?,
    })
}

fn json_column(row: &Row<'_>, idx: usize) -> rusqlite::Result<Value> {
    let text: String = row.get(idx)?;
    serde_json::from_str(&text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e)))
}

fn opt_json_column(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<Value>> {
    let text: Option<String> = row.get(idx)?;
    text.map(|text| {
        serde_json::from_str(&text)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e)))
    })
    .transpose()
}

/// Turns arbitrary user input into an FTS5 query that cannot be a syntax error: every
/// whitespace-separated term becomes a quoted phrase (`"term"`, or with `prefix` the prefix
/// phrase `"term"*`), and all must match. Returns `None` when nothing searchable is left.
fn fts_query(input: &str, prefix: bool) -> Option<String> {
    let star = if prefix { "*" } else { "" };
    let terms: Vec<String> = input
        // FTS5 reads a NUL as the end of the query: treat control characters as spaces.
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|term| !term.is_empty())
        // A term without letters or digits tokenizes to nothing; leave it out rather than match nothing.
        .filter(|term| term.chars().any(char::is_alphanumeric))
        .map(|term| format!("\"{}\"{star}", term.replace('"', "\"\"")))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" "))
}

const CONVERSATION_COLUMNS: &str = "id, title, created_at, updated_at, agent";

fn conversation_from_row(row: &Row<'_>) -> rusqlite::Result<Conversation> {
    Ok(Conversation {
        id: row.get(0)?,
        title: row.get(1)?,
        created_at: row.get(2)?,
        updated_at: row.get(3)?,
        agent: row.get(4)?,
    })
}

const VIEW_COLUMNS: &str = "v.id, v.tool_call_id, t.conversation_id, v.server, v.tool, v.uri, v.html_sha256, v.csp, \
     v.state, v.reason, v.created_at, v.updated_at, v.expires_at";

/// A row of [`VIEW_COLUMNS`]; `now` decides whether it has expired.
fn view_from_row(row: &Row<'_>, now: i64) -> rusqlite::Result<ViewRecord> {
    let state: ViewState = row.get(8)?;
    let expires_at: i64 = row.get(12)?;
    Ok(ViewRecord {
        id: row.get(0)?,
        tool_call_id: row.get(1)?,
        conversation_id: row.get(2)?,
        server: row.get(3)?,
        tool: row.get(4)?,
        uri: row.get(5)?,
        html_sha256: row.get(6)?,
        csp: row.get(7)?,
        expired: state == ViewState::Expired || expires_at <= now,
        state,
        reason: row.get(9)?,
        created_at: row.get(10)?,
        updated_at: row.get(11)?,
        expires_at,
    })
}

const MESSAGE_COLUMNS: &str = "id, conversation_id, role, parts, status, error, created_at, updated_at";

fn message_from_row(row: &Row<'_>) -> rusqlite::Result<StoredMessage> {
    Ok(StoredMessage {
        id: row.get(0)?,
        conversation_id: row.get(1)?,
        role: row.get(2)?,
        parts: json_column(row, 3)?,
        status: row.get(4)?,
        error: row.get(5)?,
        created_at: row.get(6)?,
        updated_at: row.get(7)?,
    })
}

const TOOL_CALL_COLUMNS: &str = "id, conversation_id, message_id, call_id, server, tool, arguments, status, \
     model_facing, view_facing, error, duration_ms, created_at, updated_at, finished_at, allowed_by";

fn tool_call_from_row(row: &Row<'_>) -> rusqlite::Result<ToolCallRecord> {
    let duration_ms: Option<i64> = row.get(11)?;
    Ok(ToolCallRecord {
        id: row.get(0)?,
        conversation_id: row.get(1)?,
        message_id: row.get(2)?,
        call_id: row.get(3)?,
        server: row.get(4)?,
        tool: row.get(5)?,
        arguments: json_column(row, 6)?,
        status: row.get(7)?,
        model_facing: opt_json_column(row, 8)?,
        view_facing: opt_json_column(row, 9)?,
        error: row.get(10)?,
        duration_ms: duration_ms.map(|ms| u64::try_from(ms).unwrap_or(0)),
        created_at: row.get(12)?,
        updated_at: row.get(13)?,
        finished_at: row.get(14)?,
        allowed_by: row.get(15)?,
    })
}

const AUDIT_COLUMNS: &str = "id, at, kind, conversation_id, server, tool, uri, detail";

fn audit_from_row(row: &Row<'_>) -> rusqlite::Result<AuditEntry> {
    Ok(AuditEntry {
        id: row.get(0)?,
        at: row.get(1)?,
        kind: row.get(2)?,
        conversation_id: row.get(3)?,
        server: row.get(4)?,
        tool: row.get(5)?,
        uri: row.get(6)?,
        detail: json_column(row, 7)?,
    })
}

/// Refuses, without touching it, a non-empty file that does not start with the SQLite header.
fn check_header(path: &Path) -> Result<()> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        // Missing (SQLite creates it) or unreadable (SQLite reports it): nothing to check here.
        Err(_) => return Ok(()),
    };
    if !file.metadata().map(|m| m.is_file()).unwrap_or(false) {
        return Ok(());
    }
    let mut header = Vec::with_capacity(SQLITE_MAGIC.len());
    file.by_ref()
        .take(SQLITE_MAGIC.len() as u64)
        .read_to_end(&mut header)
        .map_err(|e| StoreError::Open {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
    if header.is_empty() || header == SQLITE_MAGIC {
        Ok(())
    } else {
        Err(StoreError::NotADatabase { path: path.to_owned() })
    }
}

/// What a database file looked like when a Porthole last left it sound (its size, modification
/// time and, on Unix, inode), kept next to it in `<file>-checked`. The whole-file check
/// ([`refuse_if_damaged`]) runs only when the file no longer looks like that, or a write-ahead
/// log with content is left beside it: after a crash, after anything else wrote or replaced the
/// file, and on first use. A store closed cleanly opens without reading every page (4.4 s for a
/// 784 MB store of a million messages).
fn fingerprint(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?.as_nanos();
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0u64;
    Some(format!("{} {modified} {inode}", meta.len()))
}

/// Whether `path` must be checked before use (see [`fingerprint`]).
fn needs_check(path: &Path) -> bool {
    let wal_has_content = std::fs::metadata(with_suffix(path, "-wal")).is_ok_and(|m| m.len() > 0);
    if wal_has_content {
        return true;
    }
    let recorded = std::fs::read_to_string(with_suffix(path, "-checked")).ok();
    recorded.is_none() || recorded != fingerprint(path)
}

/// Records `path` as sound: every committed write moved from the log into the file (the log left
/// empty), then the file's fingerprint written beside it. Skipped when another connection keeps
/// the log from being emptied: the last one to close records it.
fn record_sound(conn: &Connection, path: &Path) {
    let emptied = conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?))
        })
        .is_ok_and(|(busy, log_frames)| busy == 0 && log_frames <= 0);
    if !emptied {
        return;
    }
    let Some(print) = fingerprint(path) else {
        return;
    };
    let target = with_suffix(path, "-checked");
    let temporary = with_suffix(path, "-checked.new");
    if std::fs::write(&temporary, print)
        .and_then(|()| std::fs::rename(&temporary, &target))
        .is_err()
    {
        let _ = std::fs::remove_file(&temporary);
    }
}

/// Refuses a database whose pages SQLite finds damaged (`PRAGMA quick_check`: every page and
/// b-tree, without cross-checking indexes against their tables). It reads the whole file: about
/// 7 ms per MB here (90 ms for a 13 MB store, 240 ms for 62 MB, release build, file in cache).
fn refuse_if_damaged(conn: &Connection, path: impl Fn() -> PathBuf) -> Result<()> {
    let problems = conn.prepare("PRAGMA quick_check(3)").and_then(|mut stmt| {
        stmt.query_map([], |row| row.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()
    });
    let detail = match problems {
        Ok(rows) if rows.len() == 1 && rows[0] == "ok" => return Ok(()),
        // One line: a row may hold several lines, and "*** in database main ***" says nothing.
        Ok(rows) => rows
            .iter()
            .flat_map(|row| row.lines())
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with("***"))
            .take(3)
            .collect::<Vec<_>>()
            .join("; "),
        Err(e) if is_unreadable(&e) => e.to_string(),
        Err(e) => return Err(e.into()),
    };
    Err(StoreError::Damaged { path: path(), detail })
}

/// `<path>.damaged-<UTC time>` (`porthole.db.damaged-20250102T030405Z`), with `-2`, `-3`… when
/// that name is taken.
fn damaged_name(path: &Path, at: SystemTime) -> PathBuf {
    let secs = at.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    let stamp = format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    );
    let base = with_suffix(path, &format!(".damaged-{stamp}"));
    let taken = |p: &Path| p.exists() || with_suffix(p, "-wal").exists();
    if !taken(&base) {
        return base;
    }
    (2..)
        .map(|n| with_suffix(&base, &format!("-{n}")))
        .find(|p| !taken(p))
        .expect("some suffix is free")
}

/// The calendar date (year, month, day) of a day counted from 1970-01-01 (proleptic Gregorian).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `path` with `suffix` appended to its file name (`porthole.db` + `-wal`).
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
}

/// Applies the migrations this database lacks, each in its own transaction.
fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    loop {
        // IMMEDIATE: another process opening the same file at the same time waits, then sees our version.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version = user_version(&tx)?;
        let Some(sql) = usize::try_from(version).ok().and_then(|v| schema::MIGRATIONS.get(v)) else {
            return Ok(()); // up to date (or newer, which open() already refused)
        };
        tx.execute_batch(sql)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", version + 1))?;
        tx.commit()?;
        tracing::info!(version = version + 1, "conversation store migrated");
    }
}

impl Store {
    /// Opens (creating it and its directories if needed) the store at `path`.
    ///
    /// A file that is not a Porthole database (not SQLite, another program's database, or corrupt), or that a
    /// newer Porthole wrote, is refused and left untouched.
    ///
    /// Opened by a writer (the app, `porthole run`): messages left `streaming` and tool calls left
    /// `pending`/`running` by a process that is gone become `interrupted`. A conversation that
    /// another live Porthole is writing ([`Store::claim_writer`]) is left alone.
    pub fn open(path: &Path) -> Result<Store> {
        let store = Store::open_file(path, false)?;
        store.recover_abandoned()?;
        Ok(store)
    }

    /// Opens the store for a command that only reads (`porthole audit`, `porthole models`): it
    /// changes no stored row, not even a crashed turn's (that is left to the next writer), and
    /// SQLite refuses any write through it (`PRAGMA query_only`). A missing store is created
    /// empty, as by [`Store::open`].
    pub fn open_read_only(path: &Path) -> Result<Store> {
        let store = Store::open_file(path, false)?;
        store.lock().conn.execute_batch("PRAGMA query_only = ON")?;
        Ok(store)
    }

    /// `check`: read every page whether or not the file changed since it was last left sound.
    fn open_file(path: &Path, check: bool) -> Result<Store> {
        check_header(path)?;
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
                path: path.to_owned(),
                reason: e.to_string(),
            })?;
        }
        // One process at a time creates, checks, switches to WAL and migrates the file.
        let _opening = writers::lock_for_opening(path)?;
        let conn = Connection::open(path).map_err(|e| StoreError::Open {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        Store::init(conn, Some(path.to_owned()), check).map_err(|e| match e {
            StoreError::Sqlite(e) if e.sqlite_error_code() == Some(ErrorCode::DatabaseCorrupt) => StoreError::Damaged {
                path: path.to_owned(),
                detail: e.to_string(),
            },
            StoreError::Sqlite(e) if is_unreadable(&e) => StoreError::NotADatabase { path: path.to_owned() },
            e => e,
        })
    }

    /// Moves a damaged store aside and opens a fresh, empty one at `path`; returns it and where
    /// the old file went. The old database (with its `-wal` and `-shm` files, renamed alike so
    /// that it still opens as it was) becomes `porthole.db.damaged-<UTC time>` next to it and
    /// is never written to. A store that opens and checks fine is refused
    /// ([`StoreError::NotDamaged`]), as is one written by a newer Porthole: only a damaged file
    /// or one that is not a Porthole database is moved.
    ///
    /// The file must not be in use by another Porthole at the same time.
    pub fn recover(path: &Path) -> Result<(Store, PathBuf)> {
        // Checked whatever its fingerprint says: the person was told the store is damaged.
        match Store::open_file(path, true) {
            Ok(_) => return Err(StoreError::NotDamaged { path: path.to_owned() }),
            Err(StoreError::Damaged { .. } | StoreError::NotADatabase { .. }) => {}
            Err(e) => return Err(e),
        }
        let kept = damaged_name(path, SystemTime::now());
        let moved = |from: &Path, to: &Path| {
            std::fs::rename(from, to).map_err(|e| StoreError::Open {
                path: from.to_owned(),
                reason: format!("cannot move it to {}: {e}", to.display()),
            })
        };
        // The main file first: once it is gone, nothing opens the old -wal/-shm as the live store's.
        moved(path, &kept)?;
        for suffix in ["-wal", "-shm"] {
            let from = with_suffix(path, suffix);
            if from.exists() {
                moved(&from, &with_suffix(&kept, suffix))?;
            }
        }
        tracing::warn!(kept = %kept.display(), "a damaged conversation store was moved aside");
        Ok((Store::open(path)?, kept))
    }

    /// A store that lives in memory only, gone when the last clone is dropped.
    pub fn open_in_memory() -> Result<Store> {
        Store::init(Connection::open_in_memory()?, None, false)
    }

    fn init(mut conn: Connection, path: Option<PathBuf>, check: bool) -> Result<Store> {
        let shown = || path.clone().unwrap_or_else(|| PathBuf::from(":memory:"));
        conn.busy_timeout(Duration::from_millis(5000))?;
        // Until the checks below pass nothing is written: not even the checkpoint SQLite makes
        // when a connection to a database with a write-ahead log closes.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        // Read before writing anything: a database that is not ours, or is from a newer Porthole, stays untouched.
        let application_id: i64 = conn.query_row("PRAGMA application_id", [], |row| row.get(0))?;
        let found = user_version(&conn)?;
        let foreign = if application_id == 0 {
            // Unmarked: only a brand-new, empty database is ours to set up.
            found != 0 || conn.query_row("SELECT EXISTS (SELECT 1 FROM sqlite_schema)", [], |row| row.get(0))?
        } else {
            application_id != schema::APPLICATION_ID
        };
        if foreign {
            return Err(StoreError::NotADatabase { path: shown() });
        }
        if found > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: shown(),
                found,
                known: SCHEMA_VERSION,
            });
        }
        let checked = path.as_deref().is_some_and(|p| check || needs_check(p));
        if checked {
            refuse_if_damaged(&conn, shown)?;
        }
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, false)?;
        let _mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")?;
        conn.set_prepared_statement_cache_capacity(64);
        migrate(&mut conn)?;

        let inner = Inner { conn, last_ms: 0 };
        let claims = writers::Claims::for_store(path.as_deref());
        tracing::debug!(path = %shown().display(), version = SCHEMA_VERSION, checked, "conversation store open");
        Ok(Store {
            shared: Arc::new(Shared {
                path,
                inner: Mutex::new(inner),
                claims,
                checked,
            }),
        })
    }

    /// Whether opening read every page to check it (the file had changed since a Porthole last
    /// left it sound, or was new; see [`Store::close_cleanly`]).
    pub fn checked_on_open(&self) -> bool {
        self.shared.checked
    }

    /// The program is ending normally: records the file as sound, so the next open need not read
    /// every page to check it. Done by itself when the last clone is dropped; call this when the
    /// program may end without dropping the store (a window closing the process).
    pub fn close_cleanly(&self) {
        if let Some(path) = self.shared.path.as_deref() {
            record_sound(&self.lock().conn, path);
        }
    }

    /// The database file, or `None` for an in-memory store.
    pub fn path(&self) -> Option<&Path> {
        self.shared.path.as_deref()
    }

    /// Claims `conversation_id` for one writer (a turn, a tools-panel run), across processes:
    /// refused with [`StoreError::Busy`] (naming the holder's pid) while another holds it. Once
    /// held, whatever that conversation still has `streaming`, `pending` or `running` was left by
    /// a writer that is gone, and becomes `interrupted`. Dropping the claim frees it; so does the
    /// process ending, however it ends.
    pub fn claim_writer(&self, conversation_id: &str) -> Result<ConversationWriter> {
        let writer = self.shared.claims.try_claim(conversation_id)?;
        self.mark_interrupted(conversation_id)?;
        Ok(writer)
    }

    /// Marks the unfinished rows of every conversation no live writer holds as `interrupted`.
    fn recover_abandoned(&self) -> Result<()> {
        let unfinished: Vec<String> = {
            let inner = self.lock();
            let mut stmt = inner.conn.prepare(
                "SELECT conversation_id FROM messages WHERE status = 'streaming' \
                 UNION SELECT conversation_id FROM tool_calls WHERE status IN ('pending', 'running')",
            )?;
            stmt.query_map([], |row| row.get(0))?.collect::<rusqlite::Result<_>>()?
        };
        for conversation_id in unfinished {
            match self.claim_writer(&conversation_id) {
                Ok(_released_at_once) => {}
                Err(StoreError::Busy { pid, .. }) => {
                    tracing::debug!(conversation_id, ?pid, "left alone: a live Porthole is writing it");
                }
                Err(e) => tracing::warn!(conversation_id, "cannot recover the conversation: {e}"),
            }
        }
        Ok(())
    }

    /// Marks one conversation's streaming messages and open tool calls `interrupted`; only
    /// called by the holder of its [`ConversationWriter`].
    fn mark_interrupted(&self, conversation_id: &str) -> Result<()> {
        let mut inner = self.lock();
        let now = inner.now();
        let tx = inner.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Both through the index of unfinished rows: by the conversation's index, SQLite would
        // read every stored row's `status`, which sits past its parts or arguments (often
        // kilobytes, in overflow pages), so every turn and tools-panel run of a long
        // conversation started later (~8 ms at 1,000 calls of 32 KB, for the calls).
        let messages = tx.execute(
            "UPDATE messages INDEXED BY messages_streaming SET status = 'interrupted', updated_at = ?2 \
             WHERE status = 'streaming' AND conversation_id = ?1",
            params![conversation_id, now],
        )?;
        let tool_calls = tx.execute(
            "UPDATE tool_calls INDEXED BY tool_calls_open SET status = 'interrupted', updated_at = ?2 \
             WHERE status IN ('pending', 'running') AND conversation_id = ?1",
            params![conversation_id, now],
        )?;
        tx.commit()?;
        if messages + tool_calls > 0 {
            tracing::warn!(
                conversation_id,
                messages,
                tool_calls,
                "marked work left unfinished by a Porthole that is gone as interrupted"
            );
        }
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave SQLite half-written (an open transaction rolls
        // back when dropped), so a poisoned lock is still usable.
        self.shared
            .inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    // ---- conversations ----

    /// Creates an empty conversation with a fresh random id.
    pub fn create_conversation(&self, title: &str) -> Result<Conversation> {
        self.create_conversation_with(title, None)
    }

    /// Creates an empty conversation with a remote AG-UI agent (`agent`: its name in the
    /// config), or with the local model (`None`).
    pub fn create_conversation_with(&self, title: &str, agent: Option<&str>) -> Result<Conversation> {
        let mut inner = self.lock();
        let now = inner.now();
        loop {
            let id = new_conversation_id()?;
            let inserted = inner
                .conn
                .prepare_cached(
                    "INSERT INTO conversations (id, title, created_at, updated_at, agent) VALUES (?1, ?2, ?3, ?3, ?4) \
                 ON CONFLICT (id) DO NOTHING",
                )?
                .execute(params![id, title, now, agent])?;
            if inserted == 1 {
                return Ok(Conversation {
                    id,
                    title: title.to_owned(),
                    created_at: now,
                    updated_at: now,
                    agent: agent.map(str::to_owned),
                });
            }
            // 1 in 2^64: draw again.
        }
    }

    /// The conversation with this id, if any.
    pub fn conversation(&self, id: &str) -> Result<Option<Conversation>> {
        let inner = self.lock();
        let mut stmt = inner.conn.prepare_cached(&format!(
            "SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE id = ?1"
        ))?;
        Ok(stmt.query_row([id], conversation_from_row).optional()?)
    }

    /// All conversations, most recently updated first.
    pub fn list_conversations(&self) -> Result<Vec<Conversation>> {
        let inner = self.lock();
        let mut stmt = inner.conn.prepare_cached(&format!(
            "SELECT {CONVERSATION_COLUMNS} FROM conversations ORDER BY updated_at DESC, seq DESC"
        ))?;
        let rows = stmt.query_map([], conversation_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Up to `limit` conversations, most recently updated first, starting after the one with id
    /// `after` (from the start when `None`; none when `after` is no longer stored). Its cost
    /// follows `limit`, not the number of conversations.
    pub fn list_conversations_page(&self, limit: usize, after: Option<&str>) -> Result<Vec<Conversation>> {
        let inner = self.lock();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = match after {
            None => inner
                .conn
                .prepare_cached(&format!(
                    "SELECT {CONVERSATION_COLUMNS} FROM conversations ORDER BY updated_at DESC, seq DESC LIMIT ?1"
                ))?
                .query_map(params![limit], conversation_from_row)?
                .collect::<rusqlite::Result<_>>()?,
            Some(after) => inner
                .conn
                .prepare_cached(&format!(
                    "SELECT {CONVERSATION_COLUMNS} FROM conversations
                     WHERE (updated_at, seq) < (SELECT updated_at, seq FROM conversations WHERE id = ?2)
                     ORDER BY updated_at DESC, seq DESC LIMIT ?1"
                ))?
                .query_map(params![limit, after], conversation_from_row)?
                .collect::<rusqlite::Result<_>>()?,
        };
        Ok(rows)
    }

    /// Sets a conversation's title (without changing its place in the list).
    pub fn rename_conversation(&self, id: &str, title: &str) -> Result<()> {
        let inner = self.lock();
        let changed = inner
            .conn
            .prepare_cached("UPDATE conversations SET title = ?2 WHERE id = ?1")?
            .execute(params![id, title])?;
        if changed == 0 {
            return Err(StoreError::not_found("conversation", id));
        }
        Ok(())
    }

    /// What is kept of the conversation's remote agent's own view of the thread (JSON), if
    /// anything.
    pub fn agent_thread(&self, id: &str) -> Result<Option<Value>> {
        let inner = self.lock();
        let text: Option<Option<String>> = inner
            .conn
            .prepare_cached("SELECT agent_thread FROM conversations WHERE id = ?1")?
            .query_row([id], |row| row.get(0))
            .optional()?;
        let text = text.ok_or_else(|| StoreError::not_found("conversation", id))?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// Keeps (or, with `None`, forgets) the conversation's remote agent's view of the thread.
    pub fn set_agent_thread(&self, id: &str, thread: Option<&Value>) -> Result<()> {
        let text = thread.map(to_json_text).transpose()?;
        let inner = self.lock();
        let changed = inner
            .conn
            .prepare_cached("UPDATE conversations SET agent_thread = ?2 WHERE id = ?1")?
            .execute(params![id, text])?;
        if changed == 0 {
            return Err(StoreError::not_found("conversation", id));
        }
        Ok(())
    }

    /// Deletes a conversation with its messages, tool calls, views and search entries.
    /// Audit entries naming it are kept.
    pub fn delete_conversation(&self, id: &str) -> Result<()> {
        let inner = self.lock();
        let changed = inner
            .conn
            .prepare_cached("DELETE FROM conversations WHERE id = ?1")?
            .execute([id])?;
        if changed == 0 {
            return Err(StoreError::not_found("conversation", id));
        }
        Ok(())
    }

    // ---- messages ----

    /// Appends a message to a conversation and makes the conversation the most recently updated.
    ///
    /// `parts` is stored verbatim.
    pub fn append_message(
        &self,
        conversation_id: &str,
        role: MessageRole,
        parts: &Value,
        status: MessageStatus,
    ) -> Result<i64> {
        let parts = to_json_text(parts)?;
        let mut inner = self.lock();
        let now = inner.now();
        let tx = inner.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let bumped = tx
            .prepare_cached("UPDATE conversations SET updated_at = ?2 WHERE id = ?1")?
            .execute(params![conversation_id, now])?;
        if bumped == 0 {
            return Err(StoreError::not_found("conversation", conversation_id));
        }
        tx.prepare_cached(
            "INSERT INTO messages (conversation_id, role, parts, status, created_at, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
        )?
        .execute(params![conversation_id, role, parts, status, now])?;
        let id = tx.last_insert_rowid();
        tx.commit()?;
        Ok(id)
    }

    /// Replaces a message's parts, status and error.
    ///
    /// Meant to be called on every streamed delta: while the status stays [`MessageStatus::Streaming`]
    /// this is one cached `UPDATE`; the message is (re)indexed for search once it leaves that status.
    pub fn update_message(&self, id: i64, parts: &Value, status: MessageStatus, error: Option<&str>) -> Result<()> {
        let parts = to_json_text(parts)?;
        let mut inner = self.lock();
        let now = inner.now();
        let changed = inner
            .conn
            .prepare_cached("UPDATE messages SET parts = ?2, status = ?3, error = ?4, updated_at = ?5 WHERE id = ?1")?
            .execute(params![id, parts, status, error, now])?;
        if changed == 0 {
            return Err(StoreError::not_found("message", id));
        }
        Ok(())
    }

    /// A conversation's messages, in order (empty for an unknown conversation).
    pub fn messages(&self, conversation_id: &str) -> Result<Vec<StoredMessage>> {
        let inner = self.lock();
        let mut stmt = inner.conn.prepare_cached(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ?1 ORDER BY id"
        ))?;
        let rows = stmt.query_map([conversation_id], message_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Message `id` of a conversation, if it has it.
    pub fn message(&self, conversation_id: &str, id: i64) -> Result<Option<StoredMessage>> {
        let inner = self.lock();
        let mut stmt = inner.conn.prepare_cached(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?2 AND conversation_id = ?1"
        ))?;
        Ok(stmt
            .query_row(params![conversation_id, id], message_from_row)
            .optional()?)
    }

    /// A conversation's messages a page at a time, from its end: whole turns (a page starts at
    /// a user message, or at the first message), at least `at_least` messages when there are
    /// that many, all before message `before` (None: up to the end). Returns the page, in
    /// order, and whether earlier messages remain. Opening a long conversation reads its end,
    /// not all of it.
    pub fn messages_page(
        &self,
        conversation_id: &str,
        before: Option<i64>,
        at_least: usize,
    ) -> Result<(Vec<StoredMessage>, bool)> {
        let inner = self.lock();
        let before = before.unwrap_or(i64::MAX);
        // The `at_least`-th message from the end, then the user message that starts its turn.
        let pivot: Option<i64> = inner
            .conn
            .prepare_cached(
                "SELECT id FROM messages WHERE conversation_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT 1 OFFSET ?3",
            )?
            .query_row(params![conversation_id, before, at_least.max(1) as i64 - 1], |row| {
                row.get(0)
            })
            .optional()?;
        let start: Option<i64> = match pivot {
            None => None,
            Some(pivot) => inner
                .conn
                .prepare_cached(
                    "SELECT id FROM messages WHERE conversation_id = ?1 AND role = 'user' AND id <= ?2 \
                     ORDER BY id DESC LIMIT 1",
                )?
                .query_row(params![conversation_id, pivot], |row| row.get(0))
                .optional()?,
        };
        let start = start.unwrap_or(i64::MIN);
        let mut stmt = inner.conn.prepare_cached(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ?1 AND id >= ?2 AND id < ?3 ORDER BY id"
        ))?;
        let page = stmt
            .query_map(params![conversation_id, start, before], message_from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let earlier: bool = inner
            .conn
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM messages WHERE conversation_id = ?1 AND id < ?2)")?
            .query_row(params![conversation_id, start.min(before)], |row| row.get(0))?;
        Ok((page, earlier))
    }

    /// Deletes a message and every later one in its conversation, with their tool calls and views
    /// (edit-and-resend, retry).
    pub fn delete_messages_from(&self, conversation_id: &str, message_id: i64) -> Result<()> {
        let mut inner = self.lock();
        let tx = inner.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let exists: bool = tx
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM messages WHERE conversation_id = ?1 AND id = ?2)")?
            .query_row(params![conversation_id, message_id], |row| row.get(0))?;
        if !exists {
            return Err(StoreError::not_found(
                "message",
                format!("{message_id} in conversation {conversation_id}"),
            ));
        }
        tx.prepare_cached("DELETE FROM messages WHERE conversation_id = ?1 AND id >= ?2")?
            .execute(params![conversation_id, message_id])?;
        tx.commit()?;
        Ok(())
    }

    /// Full-text search over conversation titles and message text: what people and the model
    /// wrote (text parts) and what tools returned (the text blocks of tool results).
    ///
    /// `query` is taken as plain words (any text is safe); all must match, each as a word or as the
    /// beginning of one. Each conversation is listed once. Conversations whose title matches come
    /// first, best first (at most half of `limit` when messages match too), then conversations by
    /// their newest matching message: those with every word whole, then those where a word only
    /// begins with what was typed. Snippets mark matches with [`SNIPPET_OPEN`] and
    /// [`SNIPPET_CLOSE`]. For whole words, its cost grows with the matching messages read until
    /// `limit` conversations are found, not with the number stored; a word that only begins what
    /// was typed reads the index of every word it begins.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>> {
        let (Some(exact), Some(prefix)) = (fts_query(query, false), fts_query(query, true)) else {
            return Ok(Vec::new());
        };
        if limit == 0 {
            return Ok(Vec::new());
        }
        let inner = self.lock();
        let sql_limit = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        let mut titles = inner
            .conn
            .prepare_cached(
                "SELECT c.id, c.title, NULL, NULL, snippet(title_fts, 0, char(2), char(3), '…', 12), bm25(title_fts) AS rank
                 FROM title_fts
                 JOIN conversations AS c ON c.seq = title_fts.rowid
                 WHERE title_fts MATCH ?1
                 ORDER BY rank LIMIT ?2",
            )?
            .query_map(params![prefix, sql_limit(limit)], search_hit)?
            .collect::<rusqlite::Result<Vec<SearchHit>>>()?;
        // The newest matching message of each conversation, read only as far as what is listed
        // needs: titles keep at most half of `limit` when messages match too, so messages are
        // read until `limit` minus those titles are found from conversations no title lists
        // (the conversations of titles past that half may be listed by a message meanwhile).
        let kept_titles = titles.len().min(limit.div_ceil(2));
        let wanted = limit - kept_titles;
        let mut newest: Vec<(String, i64, &String)> = Vec::new();
        {
            let titled: std::collections::HashSet<&str> = titles.iter().map(|t| t.conversation_id.as_str()).collect();
            let kept: std::collections::HashSet<&str> = titles[..kept_titles]
                .iter()
                .map(|t| t.conversation_id.as_str())
                .collect();
            let mut conversations = std::collections::HashSet::new();
            let mut untitled = 0;
            for fts in [&exact, &prefix] {
                let mut stmt = inner.conn.prepare_cached(
                    "SELECT m.conversation_id, m.id
                     FROM message_fts
                     JOIN messages AS m ON m.id = message_fts.rowid
                     WHERE message_fts MATCH ?1
                     ORDER BY message_fts.rowid DESC",
                )?;
                let mut rows = stmt.query(params![fts])?;
                while untitled < wanted {
                    let Some(row) = rows.next()? else { break };
                    let conversation: String = row.get(0)?;
                    if kept.contains(conversation.as_str()) || conversations.contains(&conversation) {
                        continue;
                    }
                    if !titled.contains(conversation.as_str()) {
                        untitled += 1;
                    }
                    conversations.insert(conversation.clone());
                    newest.push((conversation, row.get(1)?, fts));
                }
            }
        }
        // Snippets for the chosen messages, in one pass per query over the newest matches down to
        // the oldest chosen one: a snippet is made for the chosen rows only (a `CASE` is lazy).
        // Not one query per message: each would read the index of every word a prefix begins
        // again (50 × 80 ms for a three-letter prefix on a million messages).
        let mut snippets: std::collections::HashMap<i64, String> =
            std::collections::HashMap::with_capacity(newest.len());
        for fts in [&exact, &prefix] {
            let chosen: Vec<i64> = newest
                .iter()
                .filter(|(_, _, f)| *f == fts)
                .map(|(_, id, _)| *id)
                .collect();
            let Some(oldest) = chosen.iter().min().copied() else {
                continue;
            };
            let mut stmt = inner.conn.prepare_cached(
                "SELECT message_fts.rowid,
                        CASE WHEN message_fts.rowid IN (SELECT value FROM json_each(?3))
                             THEN snippet(message_fts, 0, char(2), char(3), '…', 12) END
                 FROM message_fts
                 WHERE message_fts MATCH ?1 AND message_fts.rowid >= ?2
                 ORDER BY message_fts.rowid DESC",
            )?;
            let ids = serde_json::Value::from(chosen).to_string();
            let mut rows = stmt.query(params![fts, oldest, ids])?;
            while let Some(row) = rows.next()? {
                if let Some(snippet) = row.get::<_, Option<String>>(1)? {
                    snippets.insert(row.get(0)?, snippet);
                }
            }
        }
        let mut messages: Vec<SearchHit> = Vec::with_capacity(newest.len());
        let mut message = inner.conn.prepare_cached(
            "SELECT m.conversation_id, c.title, m.id, m.role
             FROM messages AS m JOIN conversations AS c ON c.id = m.conversation_id
             WHERE m.id = ?1",
        )?;
        for (_, message_id, _) in &newest {
            let Some(snippet) = snippets.remove(message_id) else {
                continue;
            };
            let hit = message
                .query_row(params![message_id], |row| {
                    Ok(SearchHit {
                        conversation_id: row.get(0)?,
                        conversation_title: row.get(1)?,
                        message_id: row.get(2)?,
                        role: row.get(3)?,
                        snippet,
                        rank: 0.0,
                    })
                })
                .optional()?;
            messages.extend(hit);
        }
        // Titles take at most half when messages match too; messages fill what titles leave,
        // and a conversation listed by its title is not listed again.
        let listed_by_title =
            |m: &SearchHit, titles: &[SearchHit]| titles.iter().any(|t| t.conversation_id == m.conversation_id);
        let others = messages.iter().filter(|m| !listed_by_title(m, &titles)).count();
        let title_room = if others == 0 { limit } else { limit.div_ceil(2) };
        titles.truncate(title_room);
        messages.retain(|m| !listed_by_title(m, &titles));
        messages.truncate(limit - titles.len());
        for (place, hit) in messages.iter_mut().enumerate() {
            hit.rank = place as f64;
        }
        titles.extend(messages);
        Ok(titles)
    }

    // ---- tool calls ----

    /// Records a tool call the model asked for in an assistant message of the same conversation.
    pub fn insert_tool_call(&self, call: &NewToolCall) -> Result<i64> {
        let arguments = to_json_text(&call.arguments)?;
        let mut inner = self.lock();
        let now = inner.now();
        let tx = inner.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let exists: bool = tx
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM messages WHERE conversation_id = ?1 AND id = ?2)")?
            .query_row(params![call.conversation_id, call.message_id], |row| row.get(0))?;
        if !exists {
            return Err(StoreError::not_found(
                "message",
                format!("{} in conversation {}", call.message_id, call.conversation_id),
            ));
        }
        tx.prepare_cached(
            "INSERT INTO tool_calls (conversation_id, message_id, call_id, server, tool, arguments, status, \
             created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)",
        )?
        .execute(params![
            call.conversation_id,
            call.message_id,
            call.call_id,
            call.server,
            call.tool,
            arguments,
            call.status,
            now
        ])?;
        let id = tx.last_insert_rowid();
        tx.commit()?;
        Ok(id)
    }

    /// Moves a tool call to another status (e.g. pending → running once approved).
    pub fn set_tool_call_status(&self, id: i64, status: ToolCallStatus) -> Result<()> {
        let mut inner = self.lock();
        let now = inner.now();
        let changed = inner
            .conn
            .prepare_cached("UPDATE tool_calls SET status = ?2, updated_at = ?3 WHERE id = ?1")?
            .execute(params![id, status, now])?;
        if changed == 0 {
            return Err(StoreError::not_found("tool call", id));
        }
        Ok(())
    }

    /// Marks a tool call running, and how it came to run.
    pub fn set_tool_call_running(&self, id: i64, allowed_by: AllowedBy) -> Result<()> {
        let mut inner = self.lock();
        let now = inner.now();
        let changed = inner
            .conn
            .prepare_cached("UPDATE tool_calls SET status = 'running', allowed_by = ?2, updated_at = ?3 WHERE id = ?1")?
            .execute(params![id, allowed_by, now])?;
        if changed == 0 {
            return Err(StoreError::not_found("tool call", id));
        }
        Ok(())
    }

    /// Records a tool call's outcome. `finish.status` must be final (not pending or running).
    pub fn finish_tool_call(&self, id: i64, finish: &ToolCallFinish) -> Result<()> {
        if !finish.status.is_final() {
            return Err(StoreError::invalid("final tool call status", finish.status));
        }
        let model_facing = finish.model_facing.as_ref().map(to_json_text).transpose()?;
        let view_facing = finish.view_facing.as_ref().map(to_json_text).transpose()?;
        let duration_ms = i64::try_from(finish.duration_ms).unwrap_or(i64::MAX);
        let mut inner = self.lock();
        let now = inner.now();
        let changed = inner
            .conn
            .prepare_cached(
                "UPDATE tool_calls SET status = ?2, model_facing = ?3, view_facing = ?4, error = ?5, \
                 duration_ms = ?6, updated_at = ?7, finished_at = ?7 WHERE id = ?1",
            )?
            .execute(params![
                id,
                finish.status,
                model_facing,
                view_facing,
                finish.error,
                duration_ms,
                now
            ])?;
        if changed == 0 {
            return Err(StoreError::not_found("tool call", id));
        }
        Ok(())
    }

    /// A remote agent's MCP App view for a finished call: the server the agent ran it on (as
    /// Porthole names it) and the whole `CallToolResult` its view gets. The model-facing result
    /// stays what the agent said.
    pub fn set_remote_view_result(&self, id: i64, server: &str, view_facing: &Value) -> Result<()> {
        let view_facing = to_json_text(view_facing)?;
        let inner = self.lock();
        let changed = inner
            .conn
            .prepare_cached("UPDATE tool_calls SET server = ?2, view_facing = ?3 WHERE id = ?1")?
            .execute(params![id, server, view_facing])?;
        if changed == 0 {
            return Err(StoreError::not_found("tool call", id));
        }
        Ok(())
    }

    /// A conversation's tool calls, in the order they were recorded.
    pub fn tool_calls(&self, conversation_id: &str) -> Result<Vec<ToolCallRecord>> {
        let inner = self.lock();
        let mut stmt = inner.conn.prepare_cached(&format!(
            "SELECT {TOOL_CALL_COLUMNS} FROM tool_calls WHERE conversation_id = ?1 ORDER BY id"
        ))?;
        let rows = stmt.query_map([conversation_id], tool_call_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The tool calls of a conversation's messages from `from_message` (inclusive) to `before`
    /// (exclusive; None: to the end), in order: those of a page of [`Store::messages_page`].
    pub fn tool_calls_of_messages(
        &self,
        conversation_id: &str,
        from_message: i64,
        before: Option<i64>,
    ) -> Result<Vec<ToolCallRecord>> {
        let inner = self.lock();
        let mut stmt = inner.conn.prepare_cached(&format!(
            "SELECT {TOOL_CALL_COLUMNS} FROM tool_calls INDEXED BY tool_calls_by_conversation_message \
             WHERE conversation_id = ?1 AND message_id >= ?2 AND message_id < ?3 ORDER BY id"
        ))?;
        let rows = stmt.query_map(
            params![conversation_id, from_message, before.unwrap_or(i64::MAX)],
            tool_call_from_row,
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The tool calls message `message_id` of a conversation asked for, in order.
    pub fn tool_calls_of_message(&self, conversation_id: &str, message_id: i64) -> Result<Vec<ToolCallRecord>> {
        self.tool_calls_of_messages(conversation_id, message_id, Some(message_id + 1))
    }

    /// The newest tool call of a conversation with this call id (the model's), if any.
    pub fn tool_call_by_call_id(&self, conversation_id: &str, call_id: &str) -> Result<Option<ToolCallRecord>> {
        let inner = self.lock();
        let mut stmt = inner.conn.prepare_cached(&format!(
            "SELECT {TOOL_CALL_COLUMNS} FROM tool_calls INDEXED BY tool_calls_by_call_id \
             WHERE conversation_id = ?1 AND call_id = ?2 ORDER BY id DESC LIMIT 1"
        ))?;
        Ok(stmt
            .query_row(params![conversation_id, call_id], tool_call_from_row)
            .optional()?)
    }

    /// The row id of the newest tool call of a conversation with this call id, if any: what
    /// [`Store::tool_call_by_call_id`] finds, without reading the call's arguments and results.
    pub fn tool_call_row_id(&self, conversation_id: &str, call_id: &str) -> Result<Option<i64>> {
        let inner = self.lock();
        let mut stmt = inner.conn.prepare_cached(
            "SELECT id FROM tool_calls INDEXED BY tool_calls_by_call_id \
             WHERE conversation_id = ?1 AND call_id = ?2 ORDER BY id DESC LIMIT 1",
        )?;
        Ok(stmt
            .query_row(params![conversation_id, call_id], |row| row.get(0))
            .optional()?)
    }

    /// The tool call with this row id, if any.
    pub fn tool_call(&self, id: i64) -> Result<Option<ToolCallRecord>> {
        let inner = self.lock();
        let mut stmt = inner
            .conn
            .prepare_cached(&format!("SELECT {TOOL_CALL_COLUMNS} FROM tool_calls WHERE id = ?1"))?;
        Ok(stmt.query_row([id], tool_call_from_row).optional()?)
    }

    // ---- views ----

    /// Records an MCP App view attached to a tool call, in [`ViewState::Loading`].
    pub fn insert_view(&self, view: &NewView) -> Result<i64> {
        let mut inner = self.lock();
        let now = inner.now();
        let tx = inner.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let exists: bool = tx
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM tool_calls WHERE id = ?1)")?
            .query_row([view.tool_call_id], |row| row.get(0))?;
        if !exists {
            return Err(StoreError::not_found("tool call", view.tool_call_id));
        }
        tx.prepare_cached(
            "INSERT INTO views (tool_call_id, server, tool, uri, html_sha256, csp, state, created_at, updated_at, \
             expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'loading', ?7, ?7, ?8)",
        )?
        .execute(params![
            view.tool_call_id,
            view.server,
            view.tool,
            view.uri,
            view.html_sha256,
            view.csp,
            now,
            view.expires_at
        ])?;
        let id = tx.last_insert_rowid();
        tx.commit()?;
        Ok(id)
    }

    /// Sets a view's state and the reason for it, if any. [`ViewState::Expired`] is refused:
    /// only [`Store::expire_views`] sets it.
    pub fn set_view_state(&self, id: i64, state: ViewState, reason: Option<&str>) -> Result<()> {
        if !state.is_settable() {
            return Err(StoreError::invalid("view state", state));
        }
        let mut inner = self.lock();
        let now = inner.now();
        let changed = inner
            .conn
            .prepare_cached("UPDATE views SET state = ?2, reason = ?3, updated_at = ?4 WHERE id = ?1")?
            .execute(params![id, state, reason, now])?;
        if changed == 0 {
            return Err(StoreError::not_found("view", id));
        }
        Ok(())
    }

    /// A conversation's views, in the order they were recorded.
    pub fn views(&self, conversation_id: &str) -> Result<Vec<ViewRecord>> {
        let now = wall_clock_ms();
        let inner = self.lock();
        let mut stmt = inner.conn.prepare_cached(&format!(
            "SELECT {VIEW_COLUMNS} FROM views AS v JOIN tool_calls AS t ON t.id = v.tool_call_id \
             WHERE t.conversation_id = ?1 ORDER BY v.id"
        ))?;
        let rows = stmt.query_map([conversation_id], |row| view_from_row(row, now))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The views of the tool calls of a conversation's messages from `from_message` (inclusive)
    /// to `before` (exclusive; None: to the end), in the order they were recorded: those of a
    /// page of [`Store::messages_page`], found from its calls.
    pub fn views_of_messages(
        &self,
        conversation_id: &str,
        from_message: i64,
        before: Option<i64>,
    ) -> Result<Vec<ViewRecord>> {
        let now = wall_clock_ms();
        let inner = self.lock();
        let mut stmt = inner.conn.prepare_cached(&format!(
            "SELECT {VIEW_COLUMNS} FROM tool_calls AS t INDEXED BY tool_calls_by_conversation_message \
             CROSS JOIN views AS v ON v.tool_call_id = t.id \
             WHERE t.conversation_id = ?1 AND t.message_id >= ?2 AND t.message_id < ?3 ORDER BY v.id"
        ))?;
        let rows = stmt.query_map(
            params![conversation_id, from_message, before.unwrap_or(i64::MAX)],
            |row| view_from_row(row, now),
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Keeps an Apps SDK widget's state (`setWidgetState`) for tool call `tool_call_id` (its row
    /// id), replacing what was kept.
    pub fn set_widget_state(&self, tool_call_id: i64, state: &Value) -> Result<()> {
        let mut inner = self.lock();
        let now = inner.now();
        inner
            .conn
            .prepare_cached(
                "INSERT INTO widget_states (tool_call_id, state, updated_at) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (tool_call_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
            )?
            .execute(params![tool_call_id, state.to_string(), now])?;
        Ok(())
    }

    /// The widget state kept for tool call `tool_call_id`, if any.
    pub fn widget_state(&self, tool_call_id: i64) -> Result<Option<Value>> {
        let inner = self.lock();
        let text: Option<String> = inner
            .conn
            .prepare_cached("SELECT state FROM widget_states WHERE tool_call_id = ?1")?
            .query_row([tool_call_id], |row| row.get(0))
            .optional()?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// The views of one tool call (by its row id), in the order they were recorded.
    pub fn views_of_call(&self, tool_call_id: i64) -> Result<Vec<ViewRecord>> {
        let now = wall_clock_ms();
        let inner = self.lock();
        let mut stmt = inner.conn.prepare_cached(&format!(
            "SELECT {VIEW_COLUMNS} FROM views AS v JOIN tool_calls AS t ON t.id = v.tool_call_id \
             WHERE v.tool_call_id = ?1 ORDER BY v.id"
        ))?;
        let rows = stmt.query_map([tool_call_id], |row| view_from_row(row, now))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Marks views whose `expires_at` is at or before `now_ms` as [`ViewState::Expired`] and returns how many.
    ///
    /// Only views that were shown or about to be (`loading`, `ready`, `closed`) expire; `failed` and
    /// `refused` keep their state and reason. Tool calls and their results are not touched.
    pub fn expire_views(&self, now_ms: i64) -> Result<usize> {
        let mut inner = self.lock();
        let now = inner.now();
        let changed = inner
            .conn
            .prepare_cached(
                "UPDATE views SET state = 'expired', updated_at = ?2 \
                 WHERE expires_at <= ?1 AND state IN ('loading', 'ready', 'closed')",
            )?
            .execute(params![now_ms, now])?;
        Ok(changed)
    }

    // ---- audit log ----

    /// Appends an entry to the security audit log.
    pub fn audit(&self, entry: &NewAuditEntry) -> Result<i64> {
        let detail = to_json_text(&entry.detail)?;
        let mut inner = self.lock();
        let now = inner.now();
        inner
            .conn
            .prepare_cached(
                "INSERT INTO audit (at, kind, conversation_id, server, tool, uri, detail) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                now,
                entry.kind,
                entry.conversation_id,
                entry.server,
                entry.tool,
                entry.uri,
                detail
            ])?;
        Ok(inner.conn.last_insert_rowid())
    }

    /// The `limit` most recent audit entries, oldest first.
    pub fn audit_entries(&self, limit: usize) -> Result<Vec<AuditEntry>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let inner = self.lock();
        let mut stmt = inner.conn.prepare_cached(&format!(
            "SELECT {AUDIT_COLUMNS} FROM (SELECT {AUDIT_COLUMNS} FROM audit ORDER BY id DESC LIMIT ?1) ORDER BY id"
        ))?;
        let rows = stmt.query_map([limit], audit_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    // ---- tool approvals ----

    /// Remembers (or forgets) that the user always allows `tool` on `server`.
    pub fn set_always_allowed(&self, server: &str, tool: &str, allowed: bool) -> Result<()> {
        let mut inner = self.lock();
        if allowed {
            let now = inner.now();
            inner
                .conn
                .prepare_cached(
                    "INSERT INTO approvals (server, tool, created_at) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (server, tool) DO NOTHING",
                )?
                .execute(params![server, tool, now])?;
        } else {
            inner
                .conn
                .prepare_cached("DELETE FROM approvals WHERE server = ?1 AND tool = ?2")?
                .execute(params![server, tool])?;
        }
        Ok(())
    }

    /// Whether the user chose to always allow `tool` on `server`.
    pub fn is_always_allowed(&self, server: &str, tool: &str) -> Result<bool> {
        let inner = self.lock();
        let allowed = inner
            .conn
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM approvals WHERE server = ?1 AND tool = ?2)")?
            .query_row(params![server, tool], |row| row.get(0))?;
        Ok(allowed)
    }

    /// Every always-allowed tool, by server then tool.
    pub fn always_allowed(&self) -> Result<Vec<AlwaysAllowed>> {
        let inner = self.lock();
        let mut stmt = inner
            .conn
            .prepare_cached("SELECT server, tool, created_at FROM approvals ORDER BY server, tool")?;
        let rows = stmt.query_map([], |row| {
            Ok(AlwaysAllowed {
                server: row.get(0)?,
                tool: row.get(1)?,
                created_at: row.get(2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    // ---- settings ----

    /// A setting's value, if set.
    pub fn setting(&self, key: &str) -> Result<Option<Value>> {
        let inner = self.lock();
        let mut stmt = inner.conn.prepare_cached("SELECT value FROM settings WHERE key = ?1")?;
        Ok(stmt.query_row([key], |row| json_column(row, 0)).optional()?)
    }

    /// Sets a setting (replacing any previous value).
    pub fn set_setting(&self, key: &str, value: &Value) -> Result<()> {
        let value = to_json_text(value)?;
        let mut inner = self.lock();
        let now = inner.now();
        inner
            .conn
            .prepare_cached(
                "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            )?
            .execute(params![key, value, now])?;
        Ok(())
    }

    /// Every setting whose key starts with `prefix`, in key order.
    pub fn settings_with_prefix(&self, prefix: &str) -> Result<Vec<(String, Value)>> {
        let inner = self.lock();
        // Keys are compared as text: the prefix range is [prefix, prefix + U+10FFFF).
        let end = format!("{prefix}\u{10FFFF}");
        let mut stmt = inner
            .conn
            .prepare_cached("SELECT key, value FROM settings WHERE key >= ?1 AND key < ?2 ORDER BY key")?;
        let rows = stmt.query_map(params![prefix, end], |row| {
            Ok((row.get::<_, String>(0)?, json_column(row, 1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Removes a setting; returns whether it was set.
    pub fn remove_setting(&self, key: &str) -> Result<bool> {
        let inner = self.lock();
        let changed = inner
            .conn
            .prepare_cached("DELETE FROM settings WHERE key = ?1")?
            .execute([key])?;
        Ok(changed > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fts_query_quotes_every_term_as_a_prefix() {
        assert_eq!(fts_query("hello world", true).as_deref(), Some(r#""hello"* "world"*"#));
        assert_eq!(fts_query("hello world", false).as_deref(), Some(r#""hello" "world""#));
        assert_eq!(fts_query(r#"say "hi""#, true).as_deref(), Some(r#""say"* """hi"""*"#));
        assert_eq!(fts_query("  \t ", true), None);
        assert_eq!(fts_query(r#"" * - ("#, true), None);
        assert_eq!(fts_query("a\0b", true).as_deref(), Some(r#""a"* "b"*"#));
    }

    #[test]
    fn a_moved_aside_store_is_named_by_its_utc_time() {
        let at = UNIX_EPOCH + Duration::from_secs(1_709_210_096); // 2024-02-29 12:34:56 UTC
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("porthole.db");
        let first = damaged_name(&path, at);
        assert_eq!(first, dir.path().join("porthole.db.damaged-20240229T123456Z"));
        std::fs::write(&first, b"kept").unwrap();
        assert_eq!(
            damaged_name(&path, at),
            dir.path().join("porthole.db.damaged-20240229T123456Z-2")
        );
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn the_first_migration_marks_the_file_as_porthole_s() {
        let marker = format!("PRAGMA application_id = {};", schema::APPLICATION_ID);
        assert!(schema::MIGRATIONS[0].contains(&marker));
        let store = Store::open_in_memory().unwrap();
        let id: i64 = store
            .lock()
            .conn
            .query_row("PRAGMA application_id", [], |row| row.get(0))
            .unwrap();
        assert_eq!(id, schema::APPLICATION_ID);
    }

    /// Writes a store file at `path` as a Porthole of schema version `version` would: one
    /// conversation (`00000000000000aa`), its message 1 (`role`, `parts`), the call `c1` that
    /// message made, and what `more` inserts.
    fn written_at_version(path: &Path, version: usize, role: &str, parts: &str, more: &str) {
        let conn = Connection::open(path).unwrap();
        for (applied, sql) in schema::MIGRATIONS[..version].iter().enumerate() {
            conn.execute_batch(sql).unwrap();
            conn.execute_batch(&format!("PRAGMA user_version = {}", applied + 1))
                .unwrap();
        }
        conn.execute(
            "INSERT INTO conversations (seq, id, title, created_at, updated_at) VALUES (1, '00000000000000aa', 'Old', 0, 0)",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO messages (conversation_id, role, parts, status, created_at, updated_at) \
             VALUES ('00000000000000aa', ?1, ?2, 'complete', 0, 0)",
            params![role, parts],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO tool_calls (conversation_id, message_id, call_id, server, tool, arguments, status, created_at, updated_at) \
             VALUES ('00000000000000aa', 1, 'c1', 's', 't', '{}', 'ok', 0, 0)",
            [],
        )
        .unwrap();
        conn.execute_batch(more).unwrap();
    }

    /// A store written before schema version 3 is opened: its tool results become searchable,
    /// and its calls read back with no approval recorded.
    #[test]
    fn version_3_indexes_the_tool_results_already_stored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("porthole.db");
        written_at_version(
            &path,
            2,
            "tool",
            r#"[{"type":"tool_result","tool_use_id":"c1","is_error":false,"content":[{"type":"text","text":"quinoa salad"}]}]"#,
            "",
        );
        let store = Store::open(&path).unwrap();
        let hits = store.search("quinoa", 10).unwrap();
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0].role, Some(MessageRole::Tool));
        let calls = store.tool_calls("00000000000000aa").unwrap();
        assert_eq!(calls[0].allowed_by, None);
        store.set_tool_call_running(calls[0].id, AllowedBy::Remembered).unwrap();
        assert_eq!(
            store.tool_calls("00000000000000aa").unwrap()[0].allowed_by,
            Some(AllowedBy::Remembered)
        );
    }

    /// A store written before schema version 5 is opened: its calls are found by their
    /// messages and call ids through the indexes made for them.
    #[test]
    fn version_5_indexes_the_calls_already_stored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("porthole.db");
        written_at_version(
            &path,
            4,
            "assistant",
            "[]",
            "INSERT INTO views (tool_call_id, server, tool, uri, html_sha256, csp, state, created_at, updated_at, expires_at) \
             VALUES (1, 's', 't', 'ui://s/v.html', '', '{}', 'closed', 0, 0, 0)",
        );
        let store = Store::open(&path).unwrap();
        let conversation = "00000000000000aa";
        assert_eq!(store.tool_call_by_call_id(conversation, "c1").unwrap().unwrap().id, 1);
        assert_eq!(store.tool_call_row_id(conversation, "c1").unwrap(), Some(1));
        assert_eq!(store.tool_calls_of_messages(conversation, 1, None).unwrap().len(), 1);
        assert_eq!(
            store.views_of_messages(conversation, 1, None).unwrap()[0].uri,
            "ui://s/v.html"
        );
    }

    #[test]
    fn conversation_ids_are_16_lowercase_hex() {
        let id = new_conversation_id().unwrap();
        assert_eq!(id.len(), 16);
        assert!(
            id.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
            "{id}"
        );
    }
}
