//! The schema, as an ordered list of migrations. `PRAGMA user_version` counts the ones applied.
//!
//! Never edit a migration that has shipped: append a new one.

/// `PRAGMA application_id` of a Porthole store ("Prth"), set by the first migration.
pub(crate) const APPLICATION_ID: i64 = 0x5072_7468;

/// Migration `i` takes the database from `user_version = i` to `user_version = i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[V1, V2, V3, V4, V5];

/// A conversation's tool calls found by the messages that asked for them (a transcript page's)
/// and by the model's call id (a card's): through `tool_calls_by_conversation`, SQLite read
/// every call of the conversation back to the one it wanted, so a page or a card far back in a
/// long conversation took longer the longer the conversation was.
const V5: &str = r#"
CREATE INDEX tool_calls_by_conversation_message ON tool_calls (conversation_id, message_id);
CREATE INDEX tool_calls_by_call_id ON tool_calls (conversation_id, call_id);
"#;

/// The remote AG-UI agent a conversation is with (by its name in the config; `NULL`: the
/// local model), and what is kept of that agent's own view of the thread (JSON: its state and
/// messages, sent with its next run).
const V4: &str = r#"
ALTER TABLE conversations ADD COLUMN agent TEXT;
ALTER TABLE conversations ADD COLUMN agent_thread TEXT;
"#;

/// An Apps SDK widget's own state (`setWidgetState`), kept with its tool call and given back
/// when its view is shown again; it goes with the call.
const V2: &str = r#"
CREATE TABLE widget_states (
    tool_call_id INTEGER PRIMARY KEY REFERENCES tool_calls (id) ON DELETE CASCADE,
    state        TEXT NOT NULL,
    updated_at   INTEGER NOT NULL
);
"#;

/// How each tool call came to run (`AllowedBy`); and search reaches tool results: a tool
/// message's indexed text is the text blocks of its results (Porthole's own notes left out), so
/// the message triggers are made again and the tool messages already stored are indexed.
const V3: &str = r#"
ALTER TABLE tool_calls ADD COLUMN allowed_by TEXT;

DROP TRIGGER message_fts_insert;
DROP TRIGGER message_fts_update;

CREATE TRIGGER message_fts_insert AFTER INSERT ON messages WHEN new.status <> 'streaming' BEGIN
    INSERT INTO message_fts (rowid, body)
    SELECT new.id, body FROM (
            SELECT group_concat(t, char(10)) AS body FROM (
                SELECT json_extract(p.value, '$.text') AS t
                FROM json_each(new.parts) AS p
                WHERE CASE WHEN p.type = 'object' THEN json_extract(p.value, '$.type') END = 'text'
                UNION ALL
                SELECT json_extract(c.value, '$.text')
                FROM json_each(new.parts) AS p,
                     json_each(CASE WHEN p.type = 'object' THEN p.value ELSE '{}' END, '$.content') AS c
                WHERE CASE WHEN p.type = 'object' THEN json_extract(p.value, '$.type') END = 'tool_result'
                  AND CASE WHEN c.type = 'object' THEN json_extract(c.value, '$.type') END = 'text'
                  AND json_extract(c.value, '$.text') NOT LIKE '[Porthole: %'
            )
        ) WHERE body IS NOT NULL;
END;

CREATE TRIGGER message_fts_update AFTER UPDATE OF parts, status ON messages
WHEN old.status <> 'streaming' OR new.status <> 'streaming' BEGIN
    DELETE FROM message_fts WHERE rowid = old.id;
    INSERT INTO message_fts (rowid, body)
    SELECT new.id, body FROM (
            SELECT group_concat(t, char(10)) AS body FROM (
                SELECT json_extract(p.value, '$.text') AS t
                FROM json_each(new.parts) AS p
                WHERE CASE WHEN p.type = 'object' THEN json_extract(p.value, '$.type') END = 'text'
                UNION ALL
                SELECT json_extract(c.value, '$.text')
                FROM json_each(new.parts) AS p,
                     json_each(CASE WHEN p.type = 'object' THEN p.value ELSE '{}' END, '$.content') AS c
                WHERE CASE WHEN p.type = 'object' THEN json_extract(p.value, '$.type') END = 'tool_result'
                  AND CASE WHEN c.type = 'object' THEN json_extract(c.value, '$.type') END = 'text'
                  AND json_extract(c.value, '$.text') NOT LIKE '[Porthole: %'
            )
        ) WHERE body IS NOT NULL AND new.status <> 'streaming';
END;

-- Tool messages stored before: indexed now (touching parts runs the update trigger).
UPDATE messages SET parts = parts WHERE role = 'tool' AND status <> 'streaming';
"#;

const V1: &str = r#"
PRAGMA application_id = 1349678184; -- APPLICATION_ID

CREATE TABLE conversations (
    seq        INTEGER PRIMARY KEY,           -- stable integer key, used as the title's FTS rowid
    id         TEXT NOT NULL UNIQUE,          -- 16 lowercase hex chars, the public id
    title      TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX conversations_by_update ON conversations (updated_at DESC, seq DESC);

CREATE TABLE messages (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused, so a stale id never names a new message
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    role            TEXT NOT NULL,
    parts           TEXT NOT NULL,                      -- JSON array of parts, verbatim
    status          TEXT NOT NULL,
    error           TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE UNIQUE INDEX messages_by_conversation ON messages (conversation_id, id);
CREATE INDEX messages_streaming ON messages (status) WHERE status = 'streaming';

CREATE TABLE tool_calls (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    message_id      INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    call_id         TEXT NOT NULL,
    server          TEXT NOT NULL,
    tool            TEXT NOT NULL,
    arguments       TEXT NOT NULL,
    status          TEXT NOT NULL,
    model_facing    TEXT,
    view_facing     TEXT,
    error           TEXT,
    duration_ms     INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    finished_at     INTEGER
);
CREATE INDEX tool_calls_by_conversation ON tool_calls (conversation_id, id);
CREATE INDEX tool_calls_by_message ON tool_calls (message_id);
CREATE INDEX tool_calls_open ON tool_calls (status) WHERE status IN ('pending', 'running');

CREATE TABLE views (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    tool_call_id INTEGER NOT NULL REFERENCES tool_calls (id) ON DELETE CASCADE,
    server       TEXT NOT NULL,
    tool         TEXT NOT NULL,
    uri          TEXT NOT NULL,
    html_sha256  TEXT NOT NULL,
    csp          TEXT NOT NULL,
    state        TEXT NOT NULL,
    reason       TEXT,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
);
CREATE INDEX views_by_tool_call ON views (tool_call_id);
CREATE INDEX views_by_expiry ON views (expires_at) WHERE state IN ('loading', 'ready', 'closed');

-- No foreign keys: the security log outlives the conversations it mentions.
CREATE TABLE audit (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    at              INTEGER NOT NULL,
    kind            TEXT NOT NULL,
    conversation_id TEXT,
    server          TEXT,
    tool            TEXT,
    uri             TEXT,
    detail          TEXT NOT NULL
);

CREATE TABLE approvals (
    server     TEXT NOT NULL,
    tool       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (server, tool)
) WITHOUT ROWID;

CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Full-text search. Both tables keep their own copy of the text (for snippet()) and are
-- maintained by the triggers below, so they follow every insert, update and (cascading) delete.
-- message_fts: rowid = messages.id, body = the "text" fields of the message's text parts.
-- A message is indexed only once it is no longer streaming, so streamed deltas cost no FTS work.
CREATE VIRTUAL TABLE message_fts USING fts5 (body, tokenize = 'unicode61 remove_diacritics 2');
-- title_fts: rowid = conversations.seq.
CREATE VIRTUAL TABLE title_fts USING fts5 (title, tokenize = 'unicode61 remove_diacritics 2');

CREATE TRIGGER message_fts_insert AFTER INSERT ON messages WHEN new.status <> 'streaming' BEGIN
    INSERT INTO message_fts (rowid, body)
    SELECT new.id, body FROM (
        SELECT group_concat(json_extract(p.value, '$.text'), char(10)) AS body
        FROM json_each(new.parts) AS p
        WHERE CASE WHEN p.type = 'object' THEN json_extract(p.value, '$.type') END = 'text'
    ) WHERE body IS NOT NULL;
END;

CREATE TRIGGER message_fts_update AFTER UPDATE OF parts, status ON messages
WHEN old.status <> 'streaming' OR new.status <> 'streaming' BEGIN
    DELETE FROM message_fts WHERE rowid = old.id;
    INSERT INTO message_fts (rowid, body)
    SELECT new.id, body FROM (
        SELECT group_concat(json_extract(p.value, '$.text'), char(10)) AS body
        FROM json_each(new.parts) AS p
        WHERE CASE WHEN p.type = 'object' THEN json_extract(p.value, '$.type') END = 'text'
    ) WHERE body IS NOT NULL AND new.status <> 'streaming';
END;

CREATE TRIGGER message_fts_delete AFTER DELETE ON messages BEGIN
    DELETE FROM message_fts WHERE rowid = old.id;
END;

CREATE TRIGGER title_fts_insert AFTER INSERT ON conversations BEGIN
    INSERT INTO title_fts (rowid, title) VALUES (new.seq, new.title);
END;

CREATE TRIGGER title_fts_update AFTER UPDATE OF title ON conversations BEGIN
    DELETE FROM title_fts WHERE rowid = old.seq;
    INSERT INTO title_fts (rowid, title) VALUES (new.seq, new.title);
END;

CREATE TRIGGER title_fts_delete AFTER DELETE ON conversations BEGIN
    DELETE FROM title_fts WHERE rowid = old.seq;
END;
"#;
