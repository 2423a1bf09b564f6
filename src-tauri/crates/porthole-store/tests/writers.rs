//! One writer per conversation: claims, and what opening the store may and may not mark
//! interrupted. Two `Store`s on one file stand for two processes (each holds its own lock file
//! handle, and the OS locks exclude each other within one process as across processes); the
//! real-process cases are in the `porthole run` tests.

use porthole_store::{MessageRole, MessageStatus, NewToolCall, Store, StoreError, ToolCallStatus};
use serde_json::json;

struct Turn {
    conversation: String,
    reply: i64,
    call: i64,
}

/// A conversation with a reply still streaming and a tool call still running, as a live turn
/// (or a killed one) leaves it.
fn unfinished_turn(store: &Store, conversation: &str) -> Turn {
    let conversation = conversation.to_owned();
    let reply = store
        .append_message(
            &conversation,
            MessageRole::Assistant,
            &json!([{"type": "text", "text": "Looking"}]),
            MessageStatus::Streaming,
        )
        .unwrap();
    let call = store
        .insert_tool_call(&NewToolCall {
            conversation_id: conversation.clone(),
            message_id: reply,
            call_id: "c1".into(),
            server: "test".into(),
            tool: "slow".into(),
            arguments: json!({}),
            status: ToolCallStatus::Running,
        })
        .unwrap();
    Turn {
        conversation,
        reply,
        call,
    }
}

fn statuses(store: &Store, turn: &Turn) -> (MessageStatus, ToolCallStatus) {
    let message = store
        .messages(&turn.conversation)
        .unwrap()
        .into_iter()
        .find(|m| m.id == turn.reply)
        .unwrap();
    (message.status, store.tool_call(turn.call).unwrap().unwrap().status)
}

#[test]
fn opening_the_store_leaves_a_live_writers_turn_alone_and_recovers_an_abandoned_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("porthole.db");
    let running = Store::open(&path).unwrap();
    let id = running.create_conversation("live").unwrap().id;
    let _writer = running.claim_writer(&id).unwrap();
    let live = unfinished_turn(&running, &id);
    let abandoned = unfinished_turn(&running, &running.create_conversation("killed").unwrap().id);

    let other = Store::open(&path).unwrap();
    assert_eq!(
        statuses(&other, &live),
        (MessageStatus::Streaming, ToolCallStatus::Running),
        "a turn still being written is not another process's to mark"
    );
    assert_eq!(
        statuses(&other, &abandoned),
        (MessageStatus::Interrupted, ToolCallStatus::Interrupted),
        "nobody holds it: its writer is gone"
    );
}

#[test]
fn a_second_writer_is_refused_with_the_reason_until_the_first_lets_go() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("porthole.db");
    let first = Store::open(&path).unwrap();
    let second = Store::open(&path).unwrap();
    let id = first.create_conversation("one writer").unwrap().id;
    let held = first.claim_writer(&id).unwrap();
    assert_eq!(held.conversation_id(), id);

    let err = second.claim_writer(&id).unwrap_err();
    assert!(
        matches!(&err, StoreError::Busy { conversation, pid: Some(pid) } if *conversation == id && *pid == std::process::id()),
        "{err:?}"
    );
    assert!(err.to_string().contains(&format!("conversation {id} is busy")), "{err}");
    let other = second.create_conversation("another").unwrap().id;
    assert!(second.claim_writer(&other).is_ok(), "other conversations are free");

    drop(held);
    assert!(second.claim_writer(&id).is_ok(), "free once the first writer is done");
}

#[test]
fn claiming_a_conversation_recovers_what_a_writer_that_is_gone_left_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("porthole.db");
    let store = Store::open(&path).unwrap();
    let turn = unfinished_turn(&store, &store.create_conversation("killed").unwrap().id);
    let other = unfinished_turn(&store, &store.create_conversation("another").unwrap().id);
    let _writer = store.claim_writer(&turn.conversation).unwrap();
    assert_eq!(
        statuses(&store, &turn),
        (MessageStatus::Interrupted, ToolCallStatus::Interrupted)
    );
    assert_eq!(
        statuses(&store, &other),
        (MessageStatus::Streaming, ToolCallStatus::Running),
        "another conversation's unfinished turn is its own writer's to recover"
    );
}

#[test]
fn a_conversation_id_that_could_name_another_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("porthole.db")).unwrap();
    for id in ["../x", "a/b", "", "x.lock"] {
        assert!(
            matches!(store.claim_writer(id), Err(StoreError::Invalid { .. })),
            "{id:?}"
        );
    }
}

#[test]
fn a_reader_changes_nothing_even_what_a_crash_left() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("porthole.db");
    let crashed = Store::open(&path).unwrap();
    let turn = unfinished_turn(&crashed, &crashed.create_conversation("killed").unwrap().id);
    drop(crashed);

    let reader = Store::open_read_only(&path).unwrap();
    assert_eq!(
        statuses(&reader, &turn),
        (MessageStatus::Streaming, ToolCallStatus::Running)
    );
    assert!(reader.create_conversation("no").is_err(), "a reader cannot write");
    drop(reader);

    let writer = Store::open(&path).unwrap();
    assert_eq!(
        statuses(&writer, &turn),
        (MessageStatus::Interrupted, ToolCallStatus::Interrupted),
        "the next writer recovers it"
    );
}

#[test]
fn an_in_memory_store_has_one_writer_per_conversation_too() {
    let store = Store::open_in_memory().unwrap();
    let held = store.claim_writer("c").unwrap();
    assert!(matches!(store.claim_writer("c"), Err(StoreError::Busy { .. })));
    drop(held);
    assert!(store.claim_writer("c").is_ok());
}

/// Many openers of a database that does not exist yet, all at once (as Portholes started
/// together on a fresh profile): every one opens it and writes, none reads "database is locked".
#[test]
fn a_fresh_store_opened_by_many_at_once_never_reports_it_locked() {
    let openers = 8;
    for _ in 0..25 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("porthole.db");
        let start = std::sync::Barrier::new(openers);
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..openers)
                .map(|i| {
                    let (path, start) = (&path, &start);
                    scope.spawn(move || {
                        start.wait();
                        let store = Store::open(path)?;
                        let id = store.create_conversation(&format!("opener {i}"))?.id;
                        let _writer = store.claim_writer(&id)?;
                        store.append_message(&id, MessageRole::User, &json!([]), MessageStatus::Complete)
                    })
                })
                .collect();
            for handle in handles {
                if let Err(e) = handle.join().unwrap() {
                    panic!("an opener failed: {e}");
                }
            }
        });
        let store = Store::open_read_only(&path).unwrap();
        assert_eq!(store.list_conversations().unwrap().len(), openers);
    }
}
