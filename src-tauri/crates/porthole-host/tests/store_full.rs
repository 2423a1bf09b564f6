//! The disk fills up while a reply streams into the window: the turn stops with an error the
//! transcript shows, the reply so far has reached the window, and what was saved before is kept.
//! Needs root to mount a small tmpfs (CI runs as root): `.ci/test` runs it with `--ignored`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use porthole_agent::{StopReason, TurnEvent};
use porthole_fake_llm::{FakeLlm, Reply, Script};
use porthole_host::ports::{RecordingDesktop, RecordingOutbox};
use porthole_host::{Host, HostOptions, ModelFlags};
use porthole_store::{MessageStatus, Store};

/// A tmpfs of `size` on `dir`, unmounted when dropped (also when the test fails).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .expect("cannot run mount");
        assert!(mounted.success(), "mounting a tmpfs failed: this test needs root");
        Tmpfs(dir.to_owned())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let unmounted = Command::new("umount").arg("-l").arg(&self.0).status();
        if !unmounted.is_ok_and(|s| s.success()) {
            eprintln!("could not unmount the tmpfs at {}", self.0.display());
        }
    }
}

/// Fills the file system holding `dir`, then frees `leave` bytes of it.
fn fill_leaving(dir: &Path, leave: u64) -> PathBuf {
    let filler = dir.join("filler");
    let mut file = std::fs::File::create(&filler).unwrap();
    let chunk = vec![0x5a_u8; 64 * 1024];
    while let Ok(n) = file.write(&chunk) {
        if n == 0 {
            break;
        }
    }
    let full = file.metadata().unwrap().len();
    file.set_len(full - leave).unwrap();
    filler
}

/// The chat events of one conversation's turn, once it is done.
async fn turn_events(outbox: &RecordingOutbox, conversation_id: &str) -> Vec<TurnEvent> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let events: Vec<TurnEvent> = outbox
            .chat_events()
            .into_iter()
            .filter(|e| e.conversation_id == conversation_id)
            .map(|e| e.event)
            .collect();
        if events.iter().any(|e| matches!(e, TurnEvent::Done { .. })) {
            return events;
        }
        assert!(Instant::now() < deadline, "the turn did not end: {events:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs root to mount a tmpfs; .ci/test runs it"]
async fn a_full_disk_stops_the_turn_in_the_window_and_keeps_what_was_saved() {
    let dir = tempfile::tempdir().unwrap();
    let mount = dir.path().join("small-disk");
    let _tmpfs = Tmpfs::mount(&mount, "4m");
    let profile = mount.join("profile");
    std::fs::create_dir_all(&profile).unwrap();
    std::fs::write(profile.join("config.json"), r#"{"mcpServers": {}}"#).unwrap();

    let reply: String = (0..800_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
    let llm = FakeLlm::start(Script::new(vec![
        Reply::text("First answer."),
        Reply::text(reply.clone()),
    ]))
    .await
    .unwrap();
    let outbox = Arc::new(RecordingOutbox::default());
    let host = Host::start(
        HostOptions::for_profile(&profile, ModelFlags::openai_compatible(llm.base_url(), "m")).unwrap(),
        outbox.clone(),
        Arc::new(RecordingDesktop::default()),
        tokio::runtime::Handle::current(),
    );

    let earlier = host.send_message(None, "first question").unwrap();
    let first = turn_events(&outbox, &earlier).await;
    assert!(
        matches!(
            first.last(),
            Some(TurnEvent::Done {
                stop_reason: StopReason::EndTurn,
                ..
            })
        ),
        "{first:?}"
    );

    let filler = fill_leaving(&mount, 512 * 1024);
    let current = host.send_message(None, "second question").unwrap();
    let events = turn_events(&outbox, &current).await;
    let errors: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Error { message } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        errors
            .iter()
            .any(|m| m.contains("could not be saved") && m.contains("disk is full")),
        "the transcript is told why: {errors:?}"
    );
    assert!(
        matches!(
            events.last(),
            Some(TurnEvent::Done {
                stop_reason: StopReason::Error,
                ..
            })
        ),
        "the turn ends as failed"
    );
    let shown: String = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(shown, reply, "the window got the whole reply as it streamed");

    // Room again: what was saved before is all there.
    std::fs::remove_file(filler).unwrap();
    let store = Store::open(&profile.join("porthole.db")).unwrap();
    let before = store.messages(&earlier).unwrap();
    assert_eq!(before.len(), 2);
    assert!(before.iter().all(|m| m.status == MessageStatus::Complete));
    let messages = store.messages(&current).unwrap();
    assert_eq!(messages[0].parts[0]["text"], "second question");
}
