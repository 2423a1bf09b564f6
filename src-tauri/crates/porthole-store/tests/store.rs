//! The store against real SQLite files in a temporary directory.

use std::path::{Path, PathBuf};

use porthole_store::{
    AuditKind, MessageRole, MessageStatus, NewAuditEntry, NewToolCall, NewView, SCHEMA_VERSION, Store, StoreError,
    ToolCallFinish, ToolCallStatus, ViewState,
};
use serde_json::{Value, json};

fn db_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("profile").join("porthole.db")
}

fn text(s: &str) -> Value {
    json!([{ "type": "text", "text": s }])
}

fn new_call(conversation_id: &str, message_id: i64, call_id: &str, status: ToolCallStatus) -> NewToolCall {
    NewToolCall {
        conversation_id: conversation_id.to_owned(),
        message_id,
        call_id: call_id.to_owned(),
        server: "weather".to_owned(),
        tool: "forecast".to_owned(),
        arguments: json!({ "city": "Lyon", "days": 3 }),
        status,
    }
}

fn new_view(tool_call_id: i64, expires_at: i64) -> NewView {
    NewView {
        tool_call_id,
        server: "weather".to_owned(),
        tool: "forecast".to_owned(),
        uri: "ui://weather/forecast.html".to_owned(),
        html_sha256: "ab".repeat(32),
        csp: "default-src 'none'".to_owned(),
        expires_at,
    }
}

/// A snippet with its match marks shown as `[` and `]`.
fn marked(snippet: &str) -> String {
    snippet
        .replace(porthole_store::SNIPPET_OPEN, "[")
        .replace(porthole_store::SNIPPET_CLOSE, "]")
}

fn search_ids(store: &Store, query: &str) -> Vec<(String, Option<i64>)> {
    store
        .search(query, 50)
        .unwrap()
        .into_iter()
        .map(|hit| (hit.conversation_id, hit.message_id))
        .collect()
}

fn raw_user_version(path: &Path) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row("PRAGMA user_version", [], |row| row.get(0)).unwrap()
}

#[test]
fn conversations_and_messages_survive_closing_and_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    let parts = json!([
        { "type": "reasoning", "text": "think…", "signature": "c2ln" },
        { "type": "text", "text": "Voilà — 3 days: ☀️ 🌧" },
        { "type": "tool_use", "id": "call_1", "name": "forecast", "arguments": { "z": 1, "a": [1.5, null, true] } },
    ]);
    let (conversation, first, second) = {
        let store = Store::open(&path).unwrap();
        assert_eq!(store.path(), Some(path.as_path()));
        let conversation = store.create_conversation("Weather in Lyon").unwrap();
        let first = store
            .append_message(
                &conversation.id,
                MessageRole::User,
                &text("forecast?"),
                MessageStatus::Complete,
            )
            .unwrap();
        let second = store
            .append_message(
                &conversation.id,
                MessageRole::Assistant,
                &parts,
                MessageStatus::Complete,
            )
            .unwrap();
        (conversation, first, second)
    };

    let store = Store::open(&path).unwrap();
    let reopened = store.conversation(&conversation.id).unwrap().unwrap();
    assert_eq!(reopened.title, "Weather in Lyon");
    assert_eq!(reopened.created_at, conversation.created_at);
    let messages = store.messages(&conversation.id).unwrap();
    assert_eq!(messages.iter().map(|m| m.id).collect::<Vec<_>>(), [first, second]);
    assert_eq!(messages[0].role, MessageRole::User);
    assert_eq!(messages[0].parts, text("forecast?"));
    assert_eq!(messages[1].role, MessageRole::Assistant);
    assert_eq!(messages[1].parts, parts, "parts come back verbatim");
    assert_eq!(
        serde_json::to_string(&messages[1].parts).unwrap(),
        serde_json::to_string(&parts).unwrap(),
        "key order too"
    );
    assert_eq!(messages[1].status, MessageStatus::Complete);
    assert_eq!(store.list_conversations().unwrap().len(), 1);
}

#[test]
fn conversation_ids_are_random_16_lowercase_hex() {
    let store = Store::open_in_memory().unwrap();
    let a = store.create_conversation("a").unwrap();
    let b = store.create_conversation("b").unwrap();
    for id in [&a.id, &b.id] {
        assert_eq!(id.len(), 16);
        assert!(
            id.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)),
            "{id}"
        );
    }
    assert_ne!(a.id, b.id);
}

#[test]
fn conversations_are_listed_most_recently_updated_first() {
    let store = Store::open_in_memory().unwrap();
    let a = store.create_conversation("a").unwrap();
    let b = store.create_conversation("b").unwrap();
    let c = store.create_conversation("c").unwrap();
    let titles = |store: &Store| {
        store
            .list_conversations()
            .unwrap()
            .into_iter()
            .map(|c| c.title)
            .collect::<Vec<_>>()
    };
    assert_eq!(titles(&store), ["c", "b", "a"]);

    store
        .append_message(&a.id, MessageRole::User, &text("hi"), MessageStatus::Complete)
        .unwrap();
    assert_eq!(titles(&store), ["a", "c", "b"]);
    assert!(store.conversation(&a.id).unwrap().unwrap().updated_at > a.updated_at);

    // Renaming does not reorder.
    store.rename_conversation(&b.id, "b2").unwrap();
    assert_eq!(titles(&store), ["a", "c", "b2"]);
    let _ = c;
}

#[test]
fn a_message_left_streaming_comes_back_interrupted_with_its_partial_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    let (conversation_id, done, partial) = {
        let store = Store::open(&path).unwrap();
        let conversation = store.create_conversation("crash").unwrap();
        let done = store
            .append_message(
                &conversation.id,
                MessageRole::User,
                &text("tell me"),
                MessageStatus::Complete,
            )
            .unwrap();
        let partial = store
            .append_message(
                &conversation.id,
                MessageRole::Assistant,
                &json!([]),
                MessageStatus::Streaming,
            )
            .unwrap();
        let mut so_far = String::new();
        for word in ["Once ", "upon ", "a ", "ti"] {
            so_far.push_str(word);
            store
                .update_message(partial, &text(&so_far), MessageStatus::Streaming, None)
                .unwrap();
        }
        (conversation.id, done, partial)
        // dropped here without finishing: as if the app had been killed
    };

    let store = Store::open(&path).unwrap();
    let messages = store.messages(&conversation_id).unwrap();
    assert_eq!(messages[0].id, done);
    assert_eq!(messages[0].status, MessageStatus::Complete);
    assert_eq!(messages[1].id, partial);
    assert_eq!(messages[1].status, MessageStatus::Interrupted);
    assert_eq!(messages[1].parts, text("Once upon a ti"));
    // The recovered text is searchable.
    assert_eq!(search_ids(&store, "upon"), [(conversation_id, Some(partial))]);
}

#[test]
fn tool_calls_left_pending_or_running_come_back_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    let conversation_id = {
        let store = Store::open(&path).unwrap();
        let conversation = store.create_conversation("tools").unwrap();
        let message = store
            .append_message(
                &conversation.id,
                MessageRole::Assistant,
                &text("calling"),
                MessageStatus::Complete,
            )
            .unwrap();
        store
            .insert_tool_call(&new_call(&conversation.id, message, "c1", ToolCallStatus::Pending))
            .unwrap();
        let running = store
            .insert_tool_call(&new_call(&conversation.id, message, "c2", ToolCallStatus::Pending))
            .unwrap();
        store.set_tool_call_status(running, ToolCallStatus::Running).unwrap();
        let finished = store
            .insert_tool_call(&new_call(&conversation.id, message, "c3", ToolCallStatus::Running))
            .unwrap();
        let finish = ToolCallFinish {
            status: ToolCallStatus::Ok,
            model_facing: Some(json!({ "content": [{ "type": "text", "text": "sunny" }] })),
            view_facing: None,
            error: None,
            duration_ms: 42,
        };
        store.finish_tool_call(finished, &finish).unwrap();
        store
            .insert_tool_call(&new_call(&conversation.id, message, "c4", ToolCallStatus::Denied))
            .unwrap();
        conversation.id
    };

    let store = Store::open(&path).unwrap();
    let calls = store.tool_calls(&conversation_id).unwrap();
    let statuses: Vec<_> = calls.iter().map(|c| (c.call_id.as_str(), c.status)).collect();
    assert_eq!(
        statuses,
        [
            ("c1", ToolCallStatus::Interrupted),
            ("c2", ToolCallStatus::Interrupted),
            ("c3", ToolCallStatus::Ok),
            ("c4", ToolCallStatus::Denied),
        ]
    );
    assert_eq!(
        calls[2].model_facing,
        Some(json!({ "content": [{ "type": "text", "text": "sunny" }] }))
    );
    assert_eq!(calls[2].duration_ms, Some(42));
    assert!(calls[2].finished_at.is_some());
    assert_eq!(calls[0].arguments, json!({ "city": "Lyon", "days": 3 }));
    assert_eq!(calls[0].duration_ms, None);
}

/// 10 turns of a user message, then 4 assistant messages each with a tool call.
fn ten_turns(store: &Store) -> (String, Vec<i64>, Vec<i64>) {
    let conversation = store.create_conversation("long").unwrap();
    let (mut messages, mut calls) = (Vec::new(), Vec::new());
    for t in 0..10 {
        messages.push(
            store
                .append_message(
                    &conversation.id,
                    MessageRole::User,
                    &text(&format!("turn {t}")),
                    MessageStatus::Complete,
                )
                .unwrap(),
        );
        for i in 0..4 {
            let m = store
                .append_message(
                    &conversation.id,
                    MessageRole::Assistant,
                    &text("step"),
                    MessageStatus::Complete,
                )
                .unwrap();
            messages.push(m);
            calls.push(
                store
                    .insert_tool_call(&new_call(
                        &conversation.id,
                        m,
                        &format!("c{t}_{i}"),
                        ToolCallStatus::Running,
                    ))
                    .unwrap(),
            );
        }
    }
    (conversation.id, messages, calls)
}

#[test]
fn a_conversation_is_read_from_its_end_a_page_of_whole_turns_at_a_time() {
    let store = Store::open_in_memory().unwrap();
    let (id, messages, calls) = ten_turns(&store);
    // At least 7 messages, from the start of a turn: the last two turns (10 messages).
    let (page, earlier) = store.messages_page(&id, None, 7).unwrap();
    assert_eq!(page.iter().map(|m| m.id).collect::<Vec<_>>(), messages[40..]);
    assert_eq!(page[0].role, MessageRole::User);
    assert!(earlier);
    let page_calls = store.tool_calls_of_messages(&id, page[0].id, None).unwrap();
    assert_eq!(page_calls.iter().map(|c| c.id).collect::<Vec<_>>(), calls[32..]);
    // Exactly a turn's worth: that turn alone.
    let (page, _) = store.messages_page(&id, None, 5).unwrap();
    assert_eq!(page.len(), 5);
    // The turns before it, then the rest; the last page says nothing is earlier.
    let (before, earlier) = store.messages_page(&id, Some(messages[40]), 12).unwrap();
    assert_eq!(before.iter().map(|m| m.id).collect::<Vec<_>>(), messages[25..40]);
    assert!(earlier);
    let before_calls = store
        .tool_calls_of_messages(&id, before[0].id, Some(messages[40]))
        .unwrap();
    assert_eq!(before_calls.iter().map(|c| c.id).collect::<Vec<_>>(), calls[20..32]);
    let (first, earlier) = store.messages_page(&id, Some(messages[25]), 1000).unwrap();
    assert_eq!(first.iter().map(|m| m.id).collect::<Vec<_>>(), messages[..25]);
    assert!(!earlier);
    // Asking for more than there is, or for a page before the first message.
    let (all, earlier) = store.messages_page(&id, None, 1000).unwrap();
    assert_eq!((all.len(), earlier), (50, false));
    let (none, earlier) = store.messages_page(&id, Some(messages[0]), 10).unwrap();
    assert!(none.is_empty() && !earlier);
    // A conversation that does not start with a user message still pages from its start.
    let other = store.create_conversation("runs").unwrap();
    for _ in 0..3 {
        store
            .append_message(&other.id, MessageRole::Tool, &json!([]), MessageStatus::Complete)
            .unwrap();
    }
    let (page, earlier) = store.messages_page(&other.id, None, 2).unwrap();
    assert_eq!((page.len(), earlier), (3, false));
}

#[test]
fn one_calls_views_and_a_call_by_its_id_are_read_alone() {
    let store = Store::open_in_memory().unwrap();
    let (id, messages, calls) = ten_turns(&store);
    let first = store.insert_view(&new_view(calls[3], i64::MAX)).unwrap();
    let fifth = store.insert_view(&new_view(calls[5], i64::MAX)).unwrap();
    let again = store.insert_view(&new_view(calls[3], i64::MAX)).unwrap();
    let views = store.views_of_call(calls[3]).unwrap();
    assert_eq!(views.iter().map(|v| v.id).collect::<Vec<_>>(), [first, again]);
    assert_eq!(views[0].conversation_id, id);
    // A page's views: those of its messages' calls, in the order recorded; not another
    // conversation's, written later.
    let (other, other_messages, other_calls) = ten_turns(&store);
    store.insert_view(&new_view(other_calls[0], i64::MAX)).unwrap();
    let ids = |views: Vec<porthole_store::ViewRecord>| views.iter().map(|v| v.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.views_of_messages(&id, messages[0], None).unwrap()),
        [first, fifth, again]
    );
    assert_eq!(
        ids(store.views_of_messages(&id, messages[0], Some(messages[5])).unwrap()),
        [first, again]
    );
    assert_eq!(
        ids(store.views_of_messages(&id, messages[5], Some(messages[10])).unwrap()),
        [fifth]
    );
    assert!(store.views_of_messages(&id, messages[10], None).unwrap().is_empty());
    // One message by its id, and only in its own conversation.
    let one = store.message(&id, messages[5]).unwrap().unwrap();
    assert_eq!(
        (one.id, one.role, one.parts.clone()),
        (messages[5], MessageRole::User, text("turn 1"))
    );
    assert!(store.message(&other, messages[5]).unwrap().is_none());
    assert!(store.message(&id, other_messages[0]).unwrap().is_none());
    assert_eq!(
        store.views_of_messages(&other, other_messages[0], None).unwrap().len(),
        1
    );
    assert_eq!(store.tool_call_by_call_id(&id, "c0_3").unwrap().unwrap().id, calls[3]);
    assert!(store.tool_call_by_call_id(&id, "nope").unwrap().is_none());
    assert!(store.tool_call_by_call_id("other", "c0_3").unwrap().is_none());
    // The row id alone, of the newest call with that id (a model may use one id in two turns).
    assert_eq!(store.tool_call_row_id(&id, "c0_3").unwrap(), Some(calls[3]));
    assert_eq!(store.tool_call_row_id(&id, "nope").unwrap(), None);
    assert_eq!(store.tool_call_row_id("other", "c0_3").unwrap(), None);
    let last = store
        .append_message(&id, MessageRole::Assistant, &text("again"), MessageStatus::Complete)
        .unwrap();
    let reused = store
        .insert_tool_call(&new_call(&id, last, "c0_3", ToolCallStatus::Running))
        .unwrap();
    assert_eq!(store.tool_call_row_id(&id, "c0_3").unwrap(), Some(reused));
    assert_eq!(store.tool_call_by_call_id(&id, "c0_3").unwrap().unwrap().id, reused);
    // The calls of one message, in order, and no other's.
    let second = store
        .insert_tool_call(&new_call(&id, last, "c9", ToolCallStatus::Running))
        .unwrap();
    let of_last: Vec<_> = store
        .tool_calls_of_message(&id, last)
        .unwrap()
        .iter()
        .map(|c| (c.id, c.call_id.clone()))
        .collect();
    assert_eq!(of_last, [(reused, "c0_3".to_string()), (second, "c9".to_string())]);
    let asked_by = store.tool_call(calls[5]).unwrap().unwrap().message_id;
    let of_one: Vec<_> = store
        .tool_calls_of_message(&id, asked_by)
        .unwrap()
        .iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(of_one, [calls[5]]);
    assert!(store.tool_calls_of_message("other", last).unwrap().is_empty());
}

#[test]
fn tool_calls_record_their_outcome() {
    let store = Store::open_in_memory().unwrap();
    let conversation = store.create_conversation("t").unwrap();
    let message = store
        .append_message(
            &conversation.id,
            MessageRole::Assistant,
            &json!([]),
            MessageStatus::Complete,
        )
        .unwrap();
    let id = store
        .insert_tool_call(&new_call(&conversation.id, message, "c1", ToolCallStatus::Running))
        .unwrap();
    let finish = ToolCallFinish {
        status: ToolCallStatus::Error,
        model_facing: Some(json!({ "content": [{ "type": "text", "text": "no such city" }], "isError": true })),
        view_facing: Some(json!({ "structuredContent": { "city": null } })),
        error: Some("no such city".to_owned()),
        duration_ms: 7,
    };
    store.finish_tool_call(id, &finish).unwrap();
    let call = store.tool_call(id).unwrap().unwrap();
    assert_eq!(call.status, ToolCallStatus::Error);
    assert_eq!(call.model_facing, finish.model_facing);
    assert_eq!(call.view_facing, finish.view_facing);
    assert_eq!(call.error.as_deref(), Some("no such city"));
    assert_eq!(call.message_id, message);
    assert_eq!(call.server, "weather");
    assert_eq!(call.tool, "forecast");

    // A finish must be final; unknown ids and mismatched messages are errors.
    let not_final = ToolCallFinish {
        status: ToolCallStatus::Running,
        ..finish.clone()
    };
    assert!(matches!(
        store.finish_tool_call(id, &not_final),
        Err(StoreError::Invalid { .. })
    ));
    assert!(matches!(
        store.finish_tool_call(9999, &finish),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.set_tool_call_status(9999, ToolCallStatus::Ok),
        Err(StoreError::NotFound { .. })
    ));
    let other = store.create_conversation("other").unwrap();
    assert!(matches!(
        store.insert_tool_call(&new_call(&other.id, message, "c1", ToolCallStatus::Pending)),
        Err(StoreError::NotFound { .. })
    ));
    // Records serialize in camelCase for the CLI and the GUI.
    let json = serde_json::to_value(&call).unwrap();
    assert_eq!(json["callId"], "c1");
    assert_eq!(json["status"], "error");
    assert_eq!(json["modelFacing"]["isError"], true);
}

#[test]
fn search_finds_words_from_messages_and_titles() {
    let store = Store::open_in_memory().unwrap();
    let trip = store.create_conversation("Trip to Kyoto").unwrap();
    let cooking = store.create_conversation("Cooking").unwrap();
    let m1 = store
        .append_message(
            &cooking.id,
            MessageRole::User,
            &text("How long to boil an artichoke?"),
            MessageStatus::Complete,
        )
        .unwrap();
    let tool_only = json!([
        { "type": "tool_use", "id": "x", "name": "lookup", "arguments": { "q": "zucchini" } },
        { "type": "reasoning", "text": "zucchini maybe" },
    ]);
    store
        .append_message(&cooking.id, MessageRole::Assistant, &tool_only, MessageStatus::Complete)
        .unwrap();

    assert_eq!(search_ids(&store, "artichoke"), [(cooking.id.clone(), Some(m1))]);
    assert_eq!(search_ids(&store, "kyoto"), [(trip.id.clone(), None)]);
    assert!(search_ids(&store, "zucchini").is_empty(), "only text parts are indexed");

    let hits = store.search("ARTICHOKE", 10).unwrap();
    assert_eq!(marked(&hits[0].snippet), "How long to boil an [artichoke]?");
    assert_eq!(hits[0].conversation_title, "Cooking");
    assert_eq!(hits[0].role, Some(MessageRole::User));
    let hits = store.search("kyoto", 10).unwrap();
    assert_eq!(marked(&hits[0].snippet), "Trip to [Kyoto]");

    // Every term must match.
    assert_eq!(search_ids(&store, "boil artichoke"), [(cooking.id.clone(), Some(m1))]);
    assert!(search_ids(&store, "boil kyoto").is_empty());
    assert_eq!(store.search("artichoke", 0).unwrap(), []);
}

#[test]
fn search_matches_prefixes_and_ignores_accents() {
    let store = Store::open_in_memory().unwrap();
    let conversation = store.create_conversation("Résumé help").unwrap();
    let id = store
        .append_message(
            &conversation.id,
            MessageRole::User,
            &text("Internationalization is hard"),
            MessageStatus::Complete,
        )
        .unwrap();
    assert_eq!(search_ids(&store, "intern"), [(conversation.id.clone(), Some(id))]);
    assert_eq!(search_ids(&store, "resum"), [(conversation.id.clone(), None)]);
    assert_eq!(search_ids(&store, "résumé"), [(conversation.id.clone(), None)]);
}

#[test]
fn search_survives_hostile_input() {
    let store = Store::open_in_memory().unwrap();
    let conversation = store.create_conversation("AND NOT OR").unwrap();
    let id = store
        .append_message(
            &conversation.id,
            MessageRole::User,
            &text("near the -dash- \"quoted\" café 東京 emoji 🎉 c++ a*b"),
            MessageStatus::Complete,
        )
        .unwrap();
    for query in [
        "\"",
        "\"\"",
        "*",
        "**",
        "NEAR(",
        "NEAR(a b",
        "AND",
        "OR",
        "NOT",
        "-",
        "^",
        ":",
        "(",
        ")",
        "{",
        "}",
        "col:near",
        "+",
        "'",
        "\\",
        "\0",
        "a\0b",
        "\u{7}",
        "x\u{200b}y",
        "\u{93f}",
        "🎉",
        "东",
        "a\"b",
        "\"near",
        "near\"",
        "x OR",
        "- near",
        "",
        "   ",
        "body:near",
        "title:and",
        "NEAR(near, 3)",
        "near*",
        "*near",
    ] {
        let result = store.search(query, 10);
        assert!(result.is_ok(), "{query:?}: {result:?}");
    }
    let message_hit = vec![(conversation.id.clone(), Some(id))];
    assert_eq!(search_ids(&store, "near("), message_hit);
    assert_eq!(search_ids(&store, "\"quoted"), message_hit);
    assert_eq!(search_ids(&store, "dash-"), message_hit);
    assert_eq!(search_ids(&store, "CAFE"), message_hit);
    assert_eq!(search_ids(&store, "東京"), message_hit);
    assert_eq!(search_ids(&store, "c++"), message_hit);
    assert_eq!(search_ids(&store, "near\0dash"), message_hit);
    assert_eq!(
        search_ids(&store, "and"),
        [(conversation.id.clone(), None)],
        "AND is a word, not an operator"
    );
    assert_eq!(search_ids(&store, "not"), [(conversation.id.clone(), None)]);

    // Odd text in a message does not stop it from being stored or found.
    let odd = store
        .append_message(
            &conversation.id,
            MessageRole::Assistant,
            &text("nul\0inside"),
            MessageStatus::Complete,
        )
        .unwrap();
    assert_eq!(store.messages(&conversation.id).unwrap()[1].parts, text("nul\0inside"));
    assert_eq!(search_ids(&store, "nul"), [(conversation.id.clone(), Some(odd))]);
}

#[test]
fn search_forgets_text_that_was_updated_or_deleted() {
    let store = Store::open_in_memory().unwrap();
    let conversation = store.create_conversation("Old title").unwrap();
    let id = store
        .append_message(
            &conversation.id,
            MessageRole::User,
            &text("pineapple"),
            MessageStatus::Complete,
        )
        .unwrap();
    assert_eq!(search_ids(&store, "pineapple").len(), 1);

    store
        .update_message(id, &text("mango"), MessageStatus::Complete, None)
        .unwrap();
    assert!(search_ids(&store, "pineapple").is_empty());
    assert_eq!(search_ids(&store, "mango"), [(conversation.id.clone(), Some(id))]);

    store.rename_conversation(&conversation.id, "New title").unwrap();
    assert!(search_ids(&store, "old").is_empty());
    assert_eq!(search_ids(&store, "new"), [(conversation.id.clone(), None)]);

    store.delete_messages_from(&conversation.id, id).unwrap();
    assert!(search_ids(&store, "mango").is_empty());

    let again = store
        .append_message(
            &conversation.id,
            MessageRole::User,
            &text("papaya"),
            MessageStatus::Complete,
        )
        .unwrap();
    assert_eq!(search_ids(&store, "papaya"), [(conversation.id.clone(), Some(again))]);
    store.delete_conversation(&conversation.id).unwrap();
    assert!(search_ids(&store, "papaya").is_empty());
    assert!(search_ids(&store, "new").is_empty());
}

#[test]
fn streaming_text_becomes_searchable_when_the_message_finishes() {
    let store = Store::open_in_memory().unwrap();
    let conversation = store.create_conversation("s").unwrap();
    let id = store
        .append_message(
            &conversation.id,
            MessageRole::Assistant,
            &text("quin"),
            MessageStatus::Streaming,
        )
        .unwrap();
    store
        .update_message(id, &text("quince jam"), MessageStatus::Streaming, None)
        .unwrap();
    assert!(search_ids(&store, "quince").is_empty());
    store
        .update_message(id, &text("quince jam"), MessageStatus::Complete, None)
        .unwrap();
    assert_eq!(search_ids(&store, "quince"), [(conversation.id.clone(), Some(id))]);

    // A failed message keeps its partial text, searchable, and its error.
    let failed = store
        .append_message(
            &conversation.id,
            MessageRole::Assistant,
            &json!([]),
            MessageStatus::Streaming,
        )
        .unwrap();
    store
        .update_message(
            failed,
            &text("half a sentenc"),
            MessageStatus::Failed,
            Some("HTTP 529 overloaded"),
        )
        .unwrap();
    let messages = store.messages(&conversation.id).unwrap();
    assert_eq!(messages[1].status, MessageStatus::Failed);
    assert_eq!(messages[1].error.as_deref(), Some("HTTP 529 overloaded"));
    assert_eq!(search_ids(&store, "sentenc"), [(conversation.id.clone(), Some(failed))]);
}

#[test]
fn deleting_a_conversation_deletes_everything_in_it_but_the_audit_log() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&db_path(&dir)).unwrap();
    let doomed = store.create_conversation("doomed").unwrap();
    let kept = store.create_conversation("kept").unwrap();
    for conversation in [&doomed, &kept] {
        let message = store
            .append_message(
                &conversation.id,
                MessageRole::Assistant,
                &text("hello"),
                MessageStatus::Complete,
            )
            .unwrap();
        let call = store
            .insert_tool_call(&new_call(&conversation.id, message, "c1", ToolCallStatus::Running))
            .unwrap();
        store.insert_view(&new_view(call, i64::MAX)).unwrap();
    }
    store
        .audit(&NewAuditEntry {
            kind: AuditKind::View,
            conversation_id: Some(doomed.id.clone()),
            server: Some("weather".to_owned()),
            tool: None,
            uri: None,
            detail: json!({}),
        })
        .unwrap();

    store.delete_conversation(&doomed.id).unwrap();

    assert_eq!(store.conversation(&doomed.id).unwrap(), None);
    assert!(store.messages(&doomed.id).unwrap().is_empty());
    assert!(store.tool_calls(&doomed.id).unwrap().is_empty());
    assert!(store.views(&doomed.id).unwrap().is_empty());
    assert_eq!(
        search_ids(&store, "hello"),
        [(kept.id.clone(), store.messages(&kept.id).unwrap().first().map(|m| m.id))]
    );
    assert_eq!(store.messages(&kept.id).unwrap().len(), 1);
    assert_eq!(store.tool_calls(&kept.id).unwrap().len(), 1);
    assert_eq!(store.views(&kept.id).unwrap().len(), 1);
    let audit = store.audit_entries(10).unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].conversation_id.as_deref(), Some(doomed.id.as_str()));

    // And nothing is left over in the file.
    drop(store);
    let conn = rusqlite::Connection::open(db_path(&dir)).unwrap();
    for table in ["messages", "tool_calls", "views", "message_fts", "title_fts"] {
        let count: i64 = conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |row| row.get(0))
            .unwrap();
        assert_eq!(count, 1, "{table}");
    }
}

#[test]
fn unknown_ids_are_not_found() {
    let store = Store::open_in_memory().unwrap();
    let err = store.rename_conversation("0123456789abcdef", "x").unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");
    assert_eq!(err.to_string(), "conversation \"0123456789abcdef\" not found");
    assert!(matches!(
        store.delete_conversation("nope"),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.append_message("nope", MessageRole::User, &text("x"), MessageStatus::Complete),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.update_message(12345, &text("x"), MessageStatus::Complete, None),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.delete_messages_from("nope", 1),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.insert_view(&new_view(12345, 0)),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.set_view_state(12345, ViewState::Ready, None),
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(store.conversation("nope").unwrap(), None);
    assert!(store.messages("nope").unwrap().is_empty());
}

#[test]
fn expired_is_set_by_the_store_only() {
    let store = Store::open_in_memory().unwrap();
    let conversation = store.create_conversation("c").unwrap();
    let message = store
        .append_message(
            &conversation.id,
            MessageRole::Assistant,
            &text("x"),
            MessageStatus::Complete,
        )
        .unwrap();
    let call = store
        .insert_tool_call(&new_call(&conversation.id, message, "c", ToolCallStatus::Ok))
        .unwrap();
    let view = store.insert_view(&new_view(call, i64::MAX)).unwrap();
    let err = store.set_view_state(view, ViewState::Expired, None).unwrap_err();
    assert!(matches!(err, StoreError::Invalid { .. }), "{err:?}");
    assert_eq!(err.to_string(), "invalid view state: \"expired\"");
    assert_eq!(store.views(&conversation.id).unwrap()[0].state, ViewState::Loading);
}

/// Roles, view states and audit kinds are enums in Rust and the same text as before in the file,
/// so databases written before they were enums read the same, and `porthole audit --json` prints
/// the same lines.
#[test]
fn roles_view_states_and_audit_kinds_are_stored_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    let store = Store::open(&path).unwrap();
    let conversation = store.create_conversation("c").unwrap();
    for role in MessageRole::ALL {
        store
            .append_message(&conversation.id, *role, &text("x"), MessageStatus::Complete)
            .unwrap();
    }
    let message = store.messages(&conversation.id).unwrap()[1].id;
    let call = store
        .insert_tool_call(&new_call(&conversation.id, message, "c", ToolCallStatus::Ok))
        .unwrap();
    let settable: Vec<ViewState> = ViewState::ALL.iter().copied().filter(|s| s.is_settable()).collect();
    for state in &settable {
        let view = store.insert_view(&new_view(call, i64::MAX)).unwrap();
        store.set_view_state(view, *state, None).unwrap();
    }
    for kind in AuditKind::KNOWN {
        store
            .audit(&NewAuditEntry {
                kind: kind.clone(),
                conversation_id: None,
                server: None,
                tool: None,
                uri: None,
                detail: json!({}),
            })
            .unwrap();
    }
    drop(store);

    let conn = rusqlite::Connection::open(&path).unwrap();
    let texts = |sql: &str| -> Vec<String> {
        let mut stmt = conn.prepare(sql).unwrap();
        stmt.query_map([], |row| row.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };
    assert_eq!(
        texts("SELECT role FROM messages ORDER BY id"),
        ["user", "assistant", "tool"]
    );
    assert_eq!(
        texts("SELECT state FROM views ORDER BY id"),
        ["loading", "ready", "failed", "refused", "closed"]
    );
    assert_eq!(
        texts("SELECT kind FROM audit ORDER BY id"),
        ["view", "refused", "call", "csp-dropped", "suppressed", "devices"]
    );
    // A kind this version does not know, as a later version could write it.
    conn.execute(
        "INSERT INTO audit (at, kind, detail) VALUES (1, 'widget-opened', '{\"n\":1}')",
        [],
    )
    .unwrap();
    drop(conn);

    let store = Store::open(&path).unwrap();
    let views = store.views(&conversation.id).unwrap();
    assert_eq!(views.iter().map(|v| v.state).collect::<Vec<_>>(), settable);
    let audit = store.audit_entries(100).unwrap();
    let last = audit.last().unwrap();
    assert_eq!(last.kind, AuditKind::Other("widget-opened".into()));
    assert_eq!(
        serde_json::to_string(last).unwrap(),
        r#"{"id":7,"at":1,"kind":"widget-opened","conversationId":null,"server":null,"tool":null,"uri":null,"detail":{"n":1}}"#
    );
    let csp = &audit[3];
    assert_eq!(csp.kind, AuditKind::CspDropped);
    assert_eq!(serde_json::to_value(csp).unwrap()["kind"], "csp-dropped");
    assert_eq!(format!("[{:<12}]", csp.kind), "[csp-dropped ]");
    let back: porthole_store::AuditEntry = serde_json::from_value(serde_json::to_value(last).unwrap()).unwrap();
    assert_eq!(&back, last);
    // Written back as read.
    store
        .audit(&NewAuditEntry {
            kind: last.kind.clone(),
            conversation_id: None,
            server: None,
            tool: None,
            uri: None,
            detail: json!({}),
        })
        .unwrap();
    assert_eq!(store.audit_entries(1).unwrap()[0].kind.as_str(), "widget-opened");
    let messages = store.messages(&conversation.id).unwrap();
    assert_eq!(messages.iter().map(|m| m.role).collect::<Vec<_>>(), MessageRole::ALL);
    assert_eq!(serde_json::to_value(&messages[2]).unwrap()["role"], "tool");
}

#[test]
fn delete_messages_from_removes_that_message_and_every_later_one() {
    let store = Store::open_in_memory().unwrap();
    let conversation = store.create_conversation("retry").unwrap();
    let other = store.create_conversation("other").unwrap();
    let other_message = store
        .append_message(
            &other.id,
            MessageRole::User,
            &text("untouched"),
            MessageStatus::Complete,
        )
        .unwrap();
    let ids: Vec<i64> = ["one", "two", "three", "four"]
        .iter()
        .enumerate()
        .map(|(i, word)| {
            let role = if i % 2 == 0 {
                MessageRole::User
            } else {
                MessageRole::Assistant
            };
            store
                .append_message(&conversation.id, role, &text(word), MessageStatus::Complete)
                .unwrap()
        })
        .collect();
    let early_call = store
        .insert_tool_call(&new_call(&conversation.id, ids[1], "early", ToolCallStatus::Ok))
        .unwrap();
    let late_call = store
        .insert_tool_call(&new_call(&conversation.id, ids[3], "late", ToolCallStatus::Ok))
        .unwrap();
    store.insert_view(&new_view(early_call, i64::MAX)).unwrap();
    store.insert_view(&new_view(late_call, i64::MAX)).unwrap();

    store.delete_messages_from(&conversation.id, ids[2]).unwrap();

    let left: Vec<i64> = store.messages(&conversation.id).unwrap().iter().map(|m| m.id).collect();
    assert_eq!(left, &ids[..2]);
    let calls = store.tool_calls(&conversation.id).unwrap();
    assert_eq!(calls.iter().map(|c| c.call_id.as_str()).collect::<Vec<_>>(), ["early"]);
    let views = store.views(&conversation.id).unwrap();
    assert_eq!(views.iter().map(|v| v.tool_call_id).collect::<Vec<_>>(), [early_call]);
    assert_eq!(store.messages(&other.id).unwrap()[0].id, other_message);

    // A message of another conversation is not found there.
    assert!(matches!(
        store.delete_messages_from(&conversation.id, other_message),
        Err(StoreError::NotFound { .. })
    ));
    // New messages get fresh ids, never the deleted ones.
    let next = store
        .append_message(
            &conversation.id,
            MessageRole::User,
            &text("three again"),
            MessageStatus::Complete,
        )
        .unwrap();
    assert!(next > ids[3]);
}

#[test]
fn audit_entries_round_trip_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    {
        let store = Store::open(&path).unwrap();
        let kinds = [
            AuditKind::View,
            AuditKind::Refused,
            AuditKind::Call,
            AuditKind::CspDropped,
            AuditKind::Call,
        ];
        for (i, kind) in kinds.into_iter().enumerate() {
            store
                .audit(&NewAuditEntry {
                    kind,
                    conversation_id: Some("0123456789abcdef".to_owned()),
                    server: Some("weather".to_owned()),
                    tool: (i % 2 == 0).then(|| "forecast".to_owned()),
                    uri: Some(format!("ui://weather/{i}")),
                    detail: json!({ "n": i, "why": "test" }),
                })
                .unwrap();
        }
    }
    let store = Store::open(&path).unwrap();
    let all = store.audit_entries(100).unwrap();
    assert_eq!(
        all.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(),
        ["view", "refused", "call", "csp-dropped", "call"]
    );
    assert_eq!(all[1].detail, json!({ "n": 1, "why": "test" }));
    assert_eq!(all[1].tool, None);
    assert_eq!(all[2].tool.as_deref(), Some("forecast"));
    assert!(all.windows(2).all(|w| w[0].at < w[1].at && w[0].id < w[1].id));

    let last_two = store.audit_entries(2).unwrap();
    assert_eq!(
        last_two
            .iter()
            .map(|e| e.detail["n"].as_i64().unwrap())
            .collect::<Vec<_>>(),
        [3, 4]
    );
    assert!(store.audit_entries(0).unwrap().is_empty());
}

#[test]
fn always_allowed_round_trips_and_persists() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    {
        let store = Store::open(&path).unwrap();
        assert!(!store.is_always_allowed("weather", "forecast").unwrap());
        store.set_always_allowed("weather", "forecast", true).unwrap();
        store.set_always_allowed("weather", "forecast", true).unwrap();
        store.set_always_allowed("files", "read", true).unwrap();
        store.set_always_allowed("files", "write", true).unwrap();
        store.set_always_allowed("files", "write", false).unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert!(store.is_always_allowed("weather", "forecast").unwrap());
    assert!(store.is_always_allowed("files", "read").unwrap());
    assert!(!store.is_always_allowed("files", "write").unwrap());
    assert!(!store.is_always_allowed("forecast", "weather").unwrap());
    let listed: Vec<_> = store
        .always_allowed()
        .unwrap()
        .into_iter()
        .map(|a| (a.server, a.tool))
        .collect();
    assert_eq!(
        listed,
        [
            ("files".to_owned(), "read".to_owned()),
            ("weather".to_owned(), "forecast".to_owned())
        ]
    );
}

#[test]
fn settings_round_trip_and_persist() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    {
        let store = Store::open(&path).unwrap();
        assert_eq!(store.setting("theme").unwrap(), None);
        store.set_setting("theme", &json!("dark")).unwrap();
        store
            .set_setting("model", &json!({ "provider": "anthropic", "maxTokens": 4096 }))
            .unwrap();
        store.set_setting("model", &json!({ "provider": "openai" })).unwrap();
        store.set_setting("gone", &json!(true)).unwrap();
        assert!(store.remove_setting("gone").unwrap());
        assert!(!store.remove_setting("gone").unwrap());
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(store.setting("theme").unwrap(), Some(json!("dark")));
    assert_eq!(store.setting("model").unwrap(), Some(json!({ "provider": "openai" })));
    assert_eq!(store.setting("gone").unwrap(), None);
}

#[test]
fn views_expire_and_the_tool_calls_model_facing_result_stays() {
    let store = Store::open_in_memory().unwrap();
    let conversation = store.create_conversation("views").unwrap();
    let message = store
        .append_message(
            &conversation.id,
            MessageRole::Assistant,
            &text("here"),
            MessageStatus::Complete,
        )
        .unwrap();
    let call = store
        .insert_tool_call(&new_call(&conversation.id, message, "c1", ToolCallStatus::Running))
        .unwrap();
    let result = json!({ "content": [{ "type": "text", "text": "18°C" }] });
    store
        .finish_tool_call(
            call,
            &ToolCallFinish {
                status: ToolCallStatus::Ok,
                model_facing: Some(result.clone()),
                view_facing: Some(json!({ "structuredContent": { "temp": 18 } })),
                error: None,
                duration_ms: 5,
            },
        )
        .unwrap();
    let past = 1_000;
    let future = i64::MAX;
    let old = store.insert_view(&new_view(call, past)).unwrap();
    let refused = store.insert_view(&new_view(call, past)).unwrap();
    let fresh = store.insert_view(&new_view(call, future)).unwrap();
    store.set_view_state(old, ViewState::Ready, None).unwrap();
    store
        .set_view_state(refused, ViewState::Refused, Some("CSP asks for frame-ancestors *"))
        .unwrap();
    store.set_view_state(fresh, ViewState::Ready, None).unwrap();

    let before = store.views(&conversation.id).unwrap();
    assert_eq!(before[0].state, ViewState::Ready);
    assert!(before[0].expired, "computed from expires_at");
    assert!(!before[2].expired);
    assert_eq!(before[1].reason.as_deref(), Some("CSP asks for frame-ancestors *"));
    assert_eq!(before[0].conversation_id, conversation.id);
    assert_eq!(before[0].html_sha256, "ab".repeat(32));

    assert_eq!(store.expire_views(2_000).unwrap(), 1);
    assert_eq!(store.expire_views(2_000).unwrap(), 0);

    let after = store.views(&conversation.id).unwrap();
    assert_eq!(
        after.iter().map(|v| v.state.as_str()).collect::<Vec<_>>(),
        ["expired", "refused", "ready"]
    );
    assert!(after[0].expired);
    let calls = store.tool_calls(&conversation.id).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].status, ToolCallStatus::Ok);
    assert_eq!(calls[0].model_facing, Some(result));
}

#[test]
fn a_database_from_a_newer_porthole_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    {
        let store = Store::open(&path).unwrap();
        store.create_conversation("from the future").unwrap();
    }
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(&format!("PRAGMA user_version = {}", SCHEMA_VERSION + 1))
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();

    let err = Store::open(&path).unwrap_err();
    match &err {
        StoreError::TooNew { path: p, found, known } => {
            assert_eq!(p, &path);
            assert_eq!(*found, SCHEMA_VERSION + 1);
            assert_eq!(*known, SCHEMA_VERSION);
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
    let message = err.to_string();
    assert!(message.contains("newer version of Porthole"), "{message}");
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "file untouched");
    assert_eq!(raw_user_version(&path), SCHEMA_VERSION + 1);
}

#[test]
fn a_file_that_is_not_a_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let garbage: Vec<u8> = (0..10_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut fake_header = b"SQLite format 3\0".to_vec();
    fake_header.extend_from_slice(&garbage);
    let cases: [(&str, Vec<u8>); 4] = [
        ("notes.txt", b"these are my notes, not a database\n".to_vec()),
        ("short", b"x".to_vec()),
        ("noise", garbage),
        ("fake-header", fake_header),
    ];
    for (name, bytes) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let err = Store::open(&path).unwrap_err();
        assert!(matches!(err, StoreError::NotADatabase { .. }), "{name}: {err:?}");
        let message = err.to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains("not a Porthole database"), "{message}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name} untouched");
    }
}

#[test]
fn another_programs_sqlite_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let unmarked = dir.path().join("unmarked.db");
    let marked = dir.path().join("marked.db");
    for (path, setup) in [
        (&unmarked, "CREATE TABLE bookmarks (url TEXT);"),
        (&marked, "PRAGMA application_id = 42; CREATE TABLE t (x);"),
    ] {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.execute_batch(setup).unwrap();
        drop(conn);
        let before = std::fs::read(path).unwrap();
        let err = Store::open(path).unwrap_err();
        assert!(matches!(err, StoreError::NotADatabase { .. }), "{err:?}");
        assert_eq!(std::fs::read(path).unwrap(), before);
        assert_eq!(raw_user_version(path), 0);
    }
}

#[test]
fn migrations_run_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    const { assert!(SCHEMA_VERSION >= 1) };
    let id = {
        let store = Store::open(&path).unwrap();
        let conversation = store.create_conversation("kept").unwrap();
        store
            .append_message(
                &conversation.id,
                MessageRole::User,
                &text("still here"),
                MessageStatus::Complete,
            )
            .unwrap();
        conversation.id
    };
    assert_eq!(raw_user_version(&path), SCHEMA_VERSION);
    for _ in 0..3 {
        let store = Store::open(&path).unwrap();
        assert_eq!(store.list_conversations().unwrap().len(), 1);
        assert_eq!(store.messages(&id).unwrap()[0].parts, text("still here"));
        assert_eq!(
            search_ids(&store, "still"),
            [(id.clone(), Some(store.messages(&id).unwrap()[0].id))]
        );
    }
    assert_eq!(raw_user_version(&path), SCHEMA_VERSION);

    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |row| row.get(0)).unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn open_creates_missing_directories_and_refuses_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a").join("b").join("porthole.db");
    Store::open(&path).unwrap();
    assert!(path.is_file());
    let err = Store::open(dir.path()).unwrap_err();
    assert!(err.to_string().contains(&dir.path().display().to_string()), "{err}");
}

#[test]
fn two_stores_on_one_file_see_each_others_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    let app = Store::open(&path).unwrap();
    let cli = Store::open(&path).unwrap();
    let conversation = cli.create_conversation("from the CLI").unwrap();
    cli.append_message(
        &conversation.id,
        MessageRole::User,
        &text("hello app"),
        MessageStatus::Complete,
    )
    .unwrap();
    assert_eq!(app.list_conversations().unwrap()[0].id, conversation.id);
    assert_eq!(app.messages(&conversation.id).unwrap().len(), 1);
}

#[test]
fn one_store_is_shared_across_threads() {
    fn assert_send_sync_clone<T: Send + Sync + Clone + 'static>() {}
    assert_send_sync_clone::<Store>();

    let store = Store::open_in_memory().unwrap();
    let conversation = store.create_conversation("threads").unwrap();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let store = store.clone();
            let id = conversation.id.clone();
            std::thread::spawn(move || {
                for i in 0..25 {
                    store
                        .append_message(
                            &id,
                            MessageRole::User,
                            &text(&format!("t{t} m{i}")),
                            MessageStatus::Complete,
                        )
                        .unwrap();
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    let messages = store.messages(&conversation.id).unwrap();
    assert_eq!(messages.len(), 100);
    assert!(
        messages
            .windows(2)
            .all(|w| w[0].id < w[1].id && w[0].created_at < w[1].created_at)
    );
}

/// A store with one conversation of many messages, closed (so everything is in the main file).
/// Returns the conversation's id.
fn store_with_history(path: &Path) -> String {
    let store = Store::open(path).unwrap();
    let id = store.create_conversation("Kept").unwrap().id;
    for i in 0..200 {
        let line = format!("message {i}: {}", "the quick brown fox ".repeat(25));
        store
            .append_message(&id, MessageRole::User, &text(&line), MessageStatus::Complete)
            .unwrap();
    }
    id
}

/// Writes garbage over the page that holds the root of `table` (found through SQLite itself).
fn damage_root_page_of(path: &Path, table: &str, read_from: &Path) {
    let conn = rusqlite::Connection::open(read_from).unwrap();
    let page_size: u32 = conn.query_row("PRAGMA page_size", [], |row| row.get(0)).unwrap();
    let root: u32 = conn
        .query_row("SELECT rootpage FROM sqlite_schema WHERE name = ?1", [table], |row| {
            row.get(0)
        })
        .unwrap();
    drop(conn);
    let mut bytes = std::fs::read(path).unwrap();
    let (root, page_size) = (root as usize, page_size as usize);
    let start = (root - 1) * page_size;
    for (i, b) in bytes[start..start + page_size].iter_mut().enumerate() {
        *b = (i as u32).wrapping_mul(2_654_435_761).to_be_bytes()[1];
    }
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_damaged_database_is_refused_untouched_and_recover_moves_it_aside_keeping_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    store_with_history(&path);
    damage_root_page_of(&path, "messages", &path);
    let damaged = std::fs::read(&path).unwrap();

    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Damaged { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("damaged"), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
    assert!(message.contains("porthole store recover"), "{message}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        damaged,
        "the damaged file was written to"
    );

    let (fresh, kept) = Store::recover(&path).unwrap();
    let name = kept.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("porthole.db.damaged-"), "{name}");
    assert_eq!(kept.parent(), path.parent());
    assert_eq!(std::fs::read(&kept).unwrap(), damaged, "the old file is kept as it was");
    assert!(fresh.list_conversations().unwrap().is_empty());
    let id = fresh.create_conversation("After").unwrap().id;
    drop(fresh);
    let reopened = Store::open(&path).unwrap();
    assert_eq!(reopened.conversation(&id).unwrap().unwrap().title, "After");
    drop(reopened);

    let err = Store::recover(&path).unwrap_err();
    assert!(matches!(err, StoreError::NotDamaged { .. }), "{err:?}");
    assert!(path.exists(), "a healthy store is never moved");
}

/// A copy of a store taken while it was open (as a crash leaves it: the main file plus a
/// write-ahead log not yet copied back) with a damaged page: refusing it writes neither file,
/// not even the checkpoint SQLite makes on close, and recover keeps the log beside the old file.
#[test]
fn a_damaged_database_with_a_write_ahead_log_is_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live").join("porthole.db");
    store_with_history(&live);
    let open = Store::open(&live).unwrap();
    open.set_setting("theme", &json!("dark")).unwrap();
    let crashed = dir.path().join("crashed");
    std::fs::create_dir_all(&crashed).unwrap();
    let path = crashed.join("porthole.db");
    let wal = crashed.join("porthole.db-wal");
    std::fs::copy(&live, &path).unwrap();
    std::fs::copy(dir.path().join("live").join("porthole.db-wal"), &wal).unwrap();
    assert!(std::fs::metadata(&wal).unwrap().len() > 0, "the log holds the setting");
    damage_root_page_of(&path, "messages", &live);
    drop(open);
    let (damaged, log) = (std::fs::read(&path).unwrap(), std::fs::read(&wal).unwrap());

    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Damaged { .. }), "{err:?}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        damaged,
        "the damaged file was written to"
    );
    assert_eq!(std::fs::read(&wal).unwrap(), log, "the log was checkpointed or changed");

    let (_fresh, kept) = Store::recover(&path).unwrap();
    assert_eq!(std::fs::read(&kept).unwrap(), damaged);
    let mut kept_wal = kept.clone().into_os_string();
    kept_wal.push("-wal");
    assert_eq!(
        std::fs::read(kept_wal).unwrap(),
        log,
        "the log is kept beside the old file"
    );
}

/// Opening a store a Porthole left sound does not read every page; one that changed since (a
/// crash's log, another program's write) is checked again. A damaged page its fingerprint does
/// not show (the file's time put back) is still found by `recover`, which always checks.
#[test]
fn only_a_store_changed_since_it_was_left_sound_is_checked_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    let first = Store::open(&path).unwrap();
    assert!(first.checked_on_open(), "a new file is checked");
    drop(first);
    store_with_history(&path);

    let store = Store::open(&path).unwrap();
    assert!(!store.checked_on_open(), "closed cleanly: not read again");
    store.set_setting("theme", &json!("dark")).unwrap();
    store.close_cleanly();
    std::mem::forget(store); // the program ends without dropping it, as a window does
    let store = Store::open(&path).unwrap();
    assert!(!store.checked_on_open(), "close_cleanly recorded it");
    assert_eq!(store.setting("theme").unwrap(), Some(json!("dark")));

    // Killed with writes in the log.
    store.set_setting("theme", &json!("light")).unwrap();
    std::mem::forget(store);
    let store = Store::open(&path).unwrap();
    assert!(store.checked_on_open(), "a log with content left beside it");
    drop(store);
    assert!(!Store::open(&path).unwrap().checked_on_open());

    // Another program wrote to it.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE conversations SET title = 'Changed'", []).unwrap();
    drop(conn);
    assert!(
        Store::open(&path).unwrap().checked_on_open(),
        "changed by another program"
    );

    // Damaged behind a fingerprint that still matches: the open does not see it, recover does.
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    damage_root_page_of(&path, "messages", &path);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    let unseen = Store::open(&path).unwrap();
    assert!(!unseen.checked_on_open());
    drop(unseen);
    let (_fresh, kept) = Store::recover(&path).unwrap();
    assert!(kept.exists());
}

/// Titles first (at most half the hits when messages match too), then conversations by their
/// newest matching message: those with the whole word before those where it only begins a word.
#[test]
fn search_puts_titles_first_then_whole_words_then_word_beginnings_newest_first() {
    let store = Store::open_in_memory().unwrap();
    let titled = store.create_conversation("Deploy plan").unwrap();
    let say = |title: &str, t: &str| {
        let chat = store.create_conversation(title).unwrap();
        let id = store
            .append_message(&chat.id, MessageRole::User, &text(t), MessageStatus::Complete)
            .unwrap();
        (chat.id, id)
    };
    let old_whole = say("Fridays", "we deploy on fridays");
    let beginning = say("Failure", "the deployment failed");
    let new_whole = say("Again", "deploy again");
    let hits = store.search("deploy", 10).unwrap();
    let order: Vec<Option<i64>> = hits.iter().map(|h| h.message_id).collect();
    assert_eq!(order, [None, Some(new_whole.1), Some(old_whole.1), Some(beginning.1)]);
    assert_eq!(hits[0].conversation_id, titled.id);
    // Each message's own snippet and conversation, whole word or word beginning.
    let shown: Vec<(String, String)> = hits[1..]
        .iter()
        .map(|h| (h.conversation_title.clone(), marked(&h.snippet)))
        .collect();
    assert_eq!(
        shown,
        [
            ("Again".to_string(), "[deploy] again".to_string()),
            ("Fridays".to_string(), "we [deploy] on fridays".to_string()),
            ("Failure".to_string(), "the [deployment] failed".to_string()),
        ]
    );
    assert_eq!(hits[3].role, Some(MessageRole::User));
    assert!(
        hits.windows(2).all(|w| w[0].rank <= w[1].rank),
        "rank follows the order"
    );

    // Limited: the title keeps half, messages the rest, whole words first.
    let hits = store.search("deploy", 2).unwrap();
    let order: Vec<Option<i64>> = hits.iter().map(|h| h.message_id).collect();
    assert_eq!(order, [None, Some(new_whole.1)]);
    // Only word beginnings match: they are found.
    let hits = store.search("deplo", 10).unwrap();
    assert_eq!(hits.len(), 4);
}

/// With more matches than room: titles keep half, and the rest are the newest matching messages
/// of conversations not already listed, a conversation whose title did not make the cut included.
#[test]
fn search_fills_what_titles_leave_with_the_newest_messages_of_other_conversations() {
    let store = Store::open_in_memory().unwrap();
    let titled: Vec<String> = ["Alpha notes", "Alpha plans", "Alpha ideas"]
        .iter()
        .map(|t| store.create_conversation(t).unwrap().id)
        .collect();
    let say = |c: &str, t: &str| {
        store
            .append_message(c, MessageRole::User, &text(t), MessageStatus::Complete)
            .unwrap()
    };
    let others: Vec<String> = (0..4)
        .map(|i| store.create_conversation(&format!("Other {i}")).unwrap().id)
        .collect();
    // Oldest first: every titled conversation and every other one says alpha.
    let mut said = Vec::new();
    for c in titled.iter().chain(others.iter()) {
        said.push((c.clone(), say(c, "alpha again")));
    }
    // Then the titled ones again, newest of all.
    for c in &titled {
        said.push((c.clone(), say(c, "alpha once more")));
    }
    let hits = store.search("alpha", 4).unwrap();
    let titles: Vec<&str> = hits
        .iter()
        .filter(|h| h.message_id.is_none())
        .map(|h| h.conversation_id.as_str())
        .collect();
    assert_eq!(titles.len(), 2, "titles keep half: {hits:?}");
    let messages: Vec<(String, Option<i64>)> = hits
        .iter()
        .filter(|h| h.message_id.is_some())
        .map(|h| (h.conversation_id.clone(), h.message_id))
        .collect();
    // The two newest messages of conversations not listed by a kept title.
    let mut listed = std::collections::HashSet::new();
    let expected: Vec<(String, Option<i64>)> = said
        .iter()
        .rev()
        .filter(|(c, _)| !titles.contains(&c.as_str()) && listed.insert(c.clone()))
        .take(2)
        .map(|(c, id)| (c.clone(), Some(*id)))
        .collect();
    assert_eq!(messages, expected);
    // The titled conversation past the cut is among them, by its newest message.
    assert!(
        titled
            .iter()
            .any(|t| !titles.contains(&t.as_str()) && messages[0].0 == *t)
    );
    // With room for all, the title that did not make the cut is listed by its title again.
    let hits = store.search("alpha", 10).unwrap();
    assert_eq!(hits.iter().filter(|h| h.message_id.is_none()).count(), 3);
    assert_eq!(hits.len(), 7, "three titles, then the four others by message: {hits:?}");
}

/// A conversation is listed once: by its title when that matches, else by its newest matching
/// message, however many of its messages match.
#[test]
fn search_lists_each_conversation_once() {
    let store = Store::open_in_memory().unwrap();
    let titled = store.create_conversation("Pasta night").unwrap();
    let chat = store.create_conversation("Dinner").unwrap();
    let say = |c: &str, t: &str| {
        store
            .append_message(c, MessageRole::User, &text(t), MessageStatus::Complete)
            .unwrap()
    };
    say(&titled.id, "which pasta shape?");
    say(&chat.id, "pasta or rice");
    let newest = say(&chat.id, "pasta it is");
    say(&chat.id, "pastas everywhere");
    assert_eq!(
        search_ids(&store, "pasta"),
        [(titled.id.clone(), None), (chat.id.clone(), Some(newest))]
    );
    // The limit counts conversations, not messages.
    assert_eq!(store.search("pasta", 1).unwrap().len(), 1);
}

/// Tool results are searched: the text blocks of what each tool returned, but not Porthole's
/// own note to the model, nor the arguments the model sent.
#[test]
fn search_finds_text_in_tool_results() {
    let store = Store::open_in_memory().unwrap();
    let chat = store.create_conversation("Weather").unwrap();
    store
        .append_message(
            &chat.id,
            MessageRole::Assistant,
            &json!([{ "type": "tool_use", "id": "c1", "name": "forecast", "arguments": { "city": "Reykjavik" } }]),
            MessageStatus::Complete,
        )
        .unwrap();
    let results = json!([{
        "type": "tool_result",
        "tool_use_id": "c1",
        "is_error": false,
        "content": [
            { "type": "text", "text": "Sleet in Akureyri tomorrow" },
            { "type": "image", "data": "AAAA", "mimeType": "image/png" },
            { "type": "text", "text": "[Porthole: this tool's interactive view is shown to the user.]" },
        ],
    }]);
    let tool = store
        .append_message(&chat.id, MessageRole::Tool, &results, MessageStatus::Complete)
        .unwrap();
    let hits = store.search("akureyri", 10).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].message_id, Some(tool));
    assert_eq!(hits[0].role, Some(MessageRole::Tool));
    assert_eq!(marked(&hits[0].snippet), "Sleet in [Akureyri] tomorrow");
    assert!(
        search_ids(&store, "interactive").is_empty(),
        "Porthole's note is not indexed"
    );
    assert!(search_ids(&store, "reykjavik").is_empty(), "arguments are not indexed");
}

/// The conversation list a page at a time: every conversation once, in the order of the whole
/// list, however the pages fall; a page after a conversation since deleted is empty.
#[test]
fn the_conversation_list_comes_a_page_at_a_time_in_the_same_order() {
    let store = Store::open_in_memory().unwrap();
    let ids: Vec<String> = (0..7)
        .map(|i| store.create_conversation(&format!("c{i}")).unwrap().id)
        .collect();
    // One updated later moves to the top.
    store
        .append_message(&ids[2], MessageRole::User, &text("later"), MessageStatus::Complete)
        .unwrap();
    let whole: Vec<String> = store.list_conversations().unwrap().into_iter().map(|c| c.id).collect();
    assert_eq!(whole[0], ids[2]);
    let mut paged = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = store.list_conversations_page(3, after.as_deref()).unwrap();
        if page.is_empty() {
            break;
        }
        assert!(page.len() <= 3);
        after = page.last().map(|c| c.id.clone());
        paged.extend(page.into_iter().map(|c| c.id));
    }
    assert_eq!(paged, whole);
    store.delete_conversation(&whole[3]).unwrap();
    assert!(store.list_conversations_page(3, Some(&whole[3])).unwrap().is_empty());
}

/// A widget's state is kept with its tool call, replaced on each save, and goes with the call
/// (a rewind or a deleted conversation takes it).
#[test]
fn widget_state_is_kept_with_its_tool_call_and_goes_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&db_path(&dir)).unwrap();
    let conversation = store.create_conversation("Pizza").unwrap();
    let message = store
        .append_message(
            &conversation.id,
            MessageRole::Assistant,
            &text("ordering"),
            MessageStatus::Complete,
        )
        .unwrap();
    let call = store
        .insert_tool_call(&new_call(&conversation.id, message, "c1", ToolCallStatus::Ok))
        .unwrap();
    assert_eq!(store.widget_state(call).unwrap(), None);
    store
        .set_widget_state(call, &json!({"selected": "margherita"}))
        .unwrap();
    store
        .set_widget_state(call, &json!({"selected": "diavola", "count": 2}))
        .unwrap();
    drop(store);
    let store = Store::open(&db_path(&dir)).unwrap();
    assert_eq!(
        store.widget_state(call).unwrap(),
        Some(json!({"selected": "diavola", "count": 2}))
    );
    store.delete_messages_from(&conversation.id, message).unwrap();
    assert_eq!(store.widget_state(call).unwrap(), None, "gone with the call");
}

/// A conversation with a remote agent keeps the agent's name, what is kept of the agent's view
/// of the thread, and a call's remote view (its server and whole result) — through a restart
/// and through an export and import.
#[test]
fn a_conversation_with_a_remote_agent_keeps_its_agent_and_thread() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    let (id, call) = {
        let store = Store::open(&path).unwrap();
        let local = store.create_conversation("local").unwrap();
        assert_eq!(local.agent, None);
        let with_agent = store.create_conversation_with("remote", Some("planner")).unwrap();
        assert_eq!(with_agent.agent.as_deref(), Some("planner"));
        assert_eq!(store.agent_thread(&with_agent.id).unwrap(), None);
        store
            .set_agent_thread(&with_agent.id, Some(&json!({"state": {"step": 2}})))
            .unwrap();
        let message = store
            .append_message(
                &with_agent.id,
                MessageRole::Assistant,
                &text("calling"),
                MessageStatus::Complete,
            )
            .unwrap();
        let call = store
            .insert_tool_call(&new_call(&with_agent.id, message, "c1", ToolCallStatus::Pending))
            .unwrap();
        store
            .set_remote_view_result(call, "planner/clock", &json!({"structuredContent": {"time": "12:00"}}))
            .unwrap();
        (with_agent.id, call)
    };
    let store = Store::open(&path).unwrap();
    let kept = store.conversation(&id).unwrap().unwrap();
    assert_eq!(kept.agent.as_deref(), Some("planner"));
    assert_eq!(store.agent_thread(&id).unwrap(), Some(json!({"state": {"step": 2}})));
    let row = store
        .tool_calls(&id)
        .unwrap()
        .into_iter()
        .find(|c| c.id == call)
        .unwrap();
    assert_eq!(row.server, "planner/clock");
    assert_eq!(row.view_facing, Some(json!({"structuredContent": {"time": "12:00"}})));
    store.set_agent_thread(&id, None).unwrap();
    assert_eq!(store.agent_thread(&id).unwrap(), None);
    assert!(store.agent_thread("0000000000000000").is_err(), "no such conversation");

    let imported = store
        .import_conversation(&store.export_conversation(&id).unwrap())
        .unwrap();
    assert_eq!(imported.agent.as_deref(), Some("planner"));
    assert_eq!(
        store.conversation(&imported.id).unwrap().unwrap().agent.as_deref(),
        Some("planner")
    );
}
