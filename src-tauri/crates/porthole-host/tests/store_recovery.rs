//! A damaged conversation store in the app: the window is told why the store cannot be used (with
//! the code that offers recovery), nothing writes to the file, and `recover_store` keeps the old
//! file, starts a fresh one and restarts the app.

use std::path::Path;
use std::sync::Arc;

use porthole_host::ports::{RecordingDesktop, RecordingOutbox};
use porthole_host::{ErrorCode, Host, HostOptions, ModelFlags};
use porthole_store::Store;

fn start(profile: &Path) -> (Host, Arc<RecordingDesktop>) {
    std::fs::write(profile.join("config.json"), r#"{"mcpServers": {}}"#).unwrap();
    let desktop = Arc::new(RecordingDesktop::default());
    let host = Host::start(
        HostOptions::for_profile(profile, ModelFlags::default()).unwrap(),
        Arc::new(RecordingOutbox::default()),
        desktop.clone(),
        tokio::runtime::Handle::current(),
    );
    (host, desktop)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_damaged_store_is_reported_left_untouched_and_moved_aside_on_request() {
    let profile = tempfile::tempdir().unwrap();
    let database = profile.path().join("porthole.db");
    let damaged: Vec<u8> = (0..8192u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&database, &damaged).unwrap();

    let (host, desktop) = start(profile.path());
    let problem = host
        .app_info()
        .store_problem
        .expect("the window is told the store's problem");
    assert_eq!(problem.code, ErrorCode::StoreDamaged);
    assert!(problem.message.contains(&database.display().to_string()), "{problem:?}");
    let refused = host.send_message(None, "hello").unwrap_err();
    assert_eq!(refused.code, ErrorCode::StoreDamaged);
    assert_eq!(host.list_conversations().unwrap_err().code, ErrorCode::StoreDamaged);
    assert_eq!(std::fs::read(&database).unwrap(), damaged, "nothing was written to it");

    let said = host.recover_store().unwrap();
    assert_eq!(
        *desktop.restarts.lock().unwrap(),
        1,
        "the app restarts with the fresh store"
    );
    let kept: Vec<_> = std::fs::read_dir(profile.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("porthole.db.damaged-")
        })
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        std::fs::read(&kept[0]).unwrap(),
        damaged,
        "the old file is kept as it was"
    );
    assert!(said.contains(&kept[0].display().to_string()), "{said}");
    let fresh = Store::open(&database).unwrap();
    assert!(fresh.list_conversations().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_healthy_store_is_not_moved() {
    let profile = tempfile::tempdir().unwrap();
    let (host, desktop) = start(profile.path());
    assert!(host.app_info().store_problem.is_none());
    let id = host.send_message(None, "hello").unwrap();
    let refused = host.recover_store().unwrap_err();
    assert_eq!(refused.code, ErrorCode::Invalid);
    assert_eq!(*desktop.restarts.lock().unwrap(), 0);
    assert!(host.open_conversation(&id).is_ok(), "the store is still there");
}
