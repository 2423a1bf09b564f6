//! A conversation with a remote AG-UI agent in the app, with no window: a real [`Host`] on a
//! profile whose config names the agent, the real store. What the window is told when the agent
//! cannot be reached, and when it is no longer in the config.

use std::sync::Arc;
use std::time::{Duration, Instant};

use porthole_agent::TurnEvent;
use porthole_host::ports::{RecordingDesktop, RecordingOutbox};
use porthole_host::{Host, HostOptions, ModelFlags};
use serde_json::json;

const PATIENCE: Duration = Duration::from_secs(10);

/// The turn errors the window was told of in `conversation`, once its turns are done.
async fn errors(outbox: &RecordingOutbox, conversation: &str, turns: usize) -> Vec<String> {
    let start = Instant::now();
    loop {
        let events: Vec<TurnEvent> = outbox
            .chat_events()
            .into_iter()
            .filter(|e| e.conversation_id == conversation)
            .map(|e| e.event)
            .collect();
        if events.iter().filter(|e| matches!(e, TurnEvent::Done { .. })).count() >= turns {
            return events
                .into_iter()
                .filter_map(|e| match e {
                    TurnEvent::Error { message } => Some(message),
                    _ => None,
                })
                .collect();
        }
        assert!(start.elapsed() < PATIENCE, "the turns did not end: {events:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_conversation_with_an_agent_says_when_it_cannot_answer_and_keeps_the_message() {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let profile = tempfile::tempdir().unwrap();
    let config = profile.path().join("config.json");
    let with_agent = json!({"mcpServers": {}, "agents": {"planner": {"url": format!("http://127.0.0.1:{port}/")}}});
    std::fs::write(&config, with_agent.to_string()).unwrap();
    let outbox = Arc::new(RecordingOutbox::default());
    let host = Host::start(
        HostOptions::for_profile(profile.path(), ModelFlags::default()).unwrap(),
        outbox.clone(),
        Arc::new(RecordingDesktop::default()),
        tokio::runtime::Handle::current(),
    );
    assert_eq!(
        host.list_agents().iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
        ["planner"]
    );
    // An agent not in the config is refused before anything is kept.
    let refused = host.send_message_to(None, "hello", Some("nobody")).unwrap_err();
    assert!(
        refused.message.contains("no agent named \"nobody\""),
        "{}",
        refused.message
    );

    let id = host.send_message_to(None, "plan my week", Some("planner")).unwrap();
    let store = host.store().unwrap();
    assert_eq!(
        store.conversation(&id).unwrap().unwrap().agent.as_deref(),
        Some("planner")
    );
    let said = errors(&outbox, &id, 1).await;
    assert!(
        said[0].contains("the agent planner at") && said[0].contains("cannot be reached"),
        "{said:?}"
    );

    // Removed from the config: the next message is kept, and the reason is where the reply would be.
    std::fs::write(&config, json!({"mcpServers": {}}).to_string()).unwrap();
    host.send_message(Some(id.clone()), "still there?").unwrap();
    let said = errors(&outbox, &id, 2).await;
    assert!(said[1].contains("no agent named \"planner\" in the config"), "{said:?}");
    let texts: Vec<String> = store
        .messages(&id)
        .unwrap()
        .iter()
        .filter_map(|m| m.parts[0]["text"].as_str().map(String::from))
        .collect();
    assert!(texts.contains(&"still there?".to_string()), "{texts:?}");
}
