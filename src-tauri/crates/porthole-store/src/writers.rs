//! One writer per conversation, across processes: the app's window, `porthole run` and any
//! other Porthole on the same profile exclude each other.
//!
//! A conversation is claimed with an OS file lock on `locks/<conversation>.lock` next to the
//! database, which the operating system releases when its holder dies (however it dies). So a
//! row left `streaming`, `pending` or `running` in a conversation whose lock is free was left
//! by a process that is gone: only such rows are marked `interrupted`, never those of a turn
//! that is still running somewhere. The lock file holds its holder's process id, for the
//! message that says who is busy.
//!
//! `locks/store.lock` serializes opening the database (creating it, switching it to WAL,
//! migrating it), so processes started together on a fresh profile never meet half-set-up.

use std::collections::HashSet;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::{Result, StoreError};

/// The folder, next to the database file, that holds its lock files.
pub(crate) fn locks_dir(db_path: &Path) -> PathBuf {
    db_path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join("locks")
}

fn open_lock_file(path: &Path) -> Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| StoreError::Open {
            path: path.to_owned(),
            reason: e.to_string(),
        })
}

/// Held while a process opens the database at `db_path`; others wait for it.
pub(crate) fn lock_for_opening(db_path: &Path) -> Result<File> {
    let path = locks_dir(db_path).join("store.lock");
    let file = open_lock_file(&path)?;
    file.lock().map_err(|e| StoreError::Open {
        path,
        reason: format!("cannot lock: {e}"),
    })?;
    Ok(file)
}

/// The right to write one conversation, held by one Porthole at a time. Dropping it (or the
/// process ending) frees the conversation.
#[derive(Debug)]
pub struct ConversationWriter {
    conversation_id: String,
    hold: Hold,
}

#[derive(Debug)]
enum Hold {
    /// An OS lock on the conversation's lock file (a store with a file).
    File(#[allow(dead_code, reason = "held for its lock, released when closed")] File),
    /// An entry in the in-memory store's own set (no other process can open it).
    Memory(Arc<Mutex<HashSet<String>>>),
}

impl ConversationWriter {
    /// The conversation this writer holds.
    pub fn conversation_id(&self) -> &str {
        &self.conversation_id
    }
}

impl Drop for ConversationWriter {
    fn drop(&mut self) {
        if let Hold::Memory(held) = &self.hold {
            held.lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&self.conversation_id);
        }
    }
}

/// Where claims are kept: lock files next to the database, or a set for an in-memory store.
#[derive(Debug)]
pub(crate) enum Claims {
    Files(PathBuf),
    Memory(Arc<Mutex<HashSet<String>>>),
}

impl Claims {
    pub(crate) fn for_store(db_path: Option<&Path>) -> Claims {
        match db_path {
            Some(path) => Claims::Files(locks_dir(path)),
            None => Claims::Memory(Arc::default()),
        }
    }

    /// Claims `conversation_id` at once, or says who holds it ([`StoreError::Busy`]).
    pub(crate) fn try_claim(&self, conversation_id: &str) -> Result<ConversationWriter> {
        // The id names a file: nothing that could leave the folder.
        let plain = !conversation_id.is_empty()
            && conversation_id.len() <= 64
            && conversation_id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !plain {
            return Err(StoreError::invalid("conversation id", conversation_id));
        }
        let busy = |pid| StoreError::Busy {
            conversation: conversation_id.to_owned(),
            pid,
        };
        let hold = match self {
            Claims::Memory(held) => {
                let mut set = held.lock().unwrap_or_else(|p| p.into_inner());
                if !set.insert(conversation_id.to_owned()) {
                    return Err(busy(Some(std::process::id())));
                }
                Hold::Memory(held.clone())
            }
            Claims::Files(dir) => {
                let path = dir.join(format!("{conversation_id}.lock"));
                let mut file = open_lock_file(&path)?;
                match file.try_lock() {
                    Ok(()) => {}
                    Err(TryLockError::WouldBlock) => return Err(busy(holder_pid(&mut file))),
                    Err(TryLockError::Error(e)) => {
                        return Err(StoreError::Open {
                            path,
                            reason: format!("cannot lock: {e}"),
                        });
                    }
                }
                // Who holds it, for the message another process shows; the lock is what counts.
                let written = file
                    .set_len(0)
                    .and_then(|()| file.rewind())
                    .and_then(|()| writeln!(file, "{}", std::process::id()));
                if let Err(e) = written {
                    tracing::debug!("cannot write the pid into {}: {e}", path.display());
                }
                Hold::File(file)
            }
        };
        Ok(ConversationWriter {
            conversation_id: conversation_id.to_owned(),
            hold,
        })
    }
}

/// The process id written in a held lock file, if it can be read (it cannot on Windows, where
/// a locked file cannot be read by others).
fn holder_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}
