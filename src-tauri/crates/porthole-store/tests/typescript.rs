//! The TypeScript declarations of the types the window gets (ts-rs) follow serde's names.
//! 64-bit integers are declared as `number` with the large-int setting the bindings use.

use porthole_store::{
    AuditEntry, AuditKind, Conversation, MessageRole, MessageStatus, SearchHit, StoredMessage, ToolCallRecord,
    ToolCallStatus, ViewState,
};
use ts_rs::{Config, TS};

fn config() -> Config {
    Config::new().with_large_int("number")
}

/// The declaration with its doc comments left out.
fn decl<T: TS>() -> String {
    let decl = T::decl(&config());
    let mut out = String::new();
    let mut rest = decl.as_str();
    while let Some(start) = rest.find("/**") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("a closed doc comment") + start + 2;
        rest = &rest[end..];
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn records_use_camel_case_names_and_numbers() {
    let record = decl::<ToolCallRecord>();
    for field in [
        "conversationId: string,",
        "messageId: number,",
        "callId: string,",
        "status: ToolCallStatus,",
        "modelFacing: JsonValue | null,",
        "durationMs: number | null,",
        "finishedAt: number | null,",
    ] {
        assert!(record.contains(field), "{field} in {record}");
    }
    assert!(
        !record.contains("duration_ms") && !record.contains("bigint"),
        "{record}"
    );

    let message = decl::<StoredMessage>();
    assert!(message.contains("role: MessageRole,"), "{message}");
    assert!(message.contains("status: MessageStatus,"), "{message}");
    assert!(message.contains("error: string | null,"), "{message}");

    assert_eq!(
        decl::<Conversation>(),
        "type Conversation = { id: string, title: string, createdAt: number, updatedAt: number, agent?: string, };"
    );
    let hit = decl::<SearchHit>();
    assert!(hit.contains("conversationTitle: string,"), "{hit}");
    assert!(hit.contains("role: MessageRole | null,"), "{hit}");
    let audit = decl::<AuditEntry>();
    assert!(audit.contains("kind: AuditKind,"), "{audit}");
    assert!(audit.contains("at: number,"), "{audit}");
}

#[test]
fn enums_are_unions_of_their_stored_texts() {
    assert_eq!(
        decl::<MessageRole>(),
        r#"type MessageRole = "user" | "assistant" | "tool";"#
    );
    assert_eq!(
        decl::<MessageStatus>(),
        r#"type MessageStatus = "complete" | "streaming" | "interrupted" | "failed";"#
    );
    assert_eq!(
        decl::<ToolCallStatus>(),
        r#"type ToolCallStatus = "pending" | "running" | "ok" | "error" | "failed" | "denied" | "cancelled" | "interrupted";"#
    );
    assert_eq!(
        decl::<ViewState>(),
        r#"type ViewState = "loading" | "ready" | "failed" | "refused" | "closed" | "expired";"#
    );
    // A kind a later version wrote reads as its text.
    assert_eq!(
        decl::<AuditKind>(),
        r#"type AuditKind = "view" | "refused" | "call" | "csp-dropped" | "suppressed" | "devices" | string;"#
    );
}
