//! Hot reload (prints numbers, asserts nothing beyond each run working): `cargo bench -p
//! porthole-e2e --bench hot_reload`, on a display (`make bench` gives it Xvfb). The app runs the
//! built-in demo server with a `watch`ed file; its `system_monitor` view (built on the official
//! SDK) is shown and inspected; each run writes the file and times until the view is re-created
//! and ready again (server restarted, resource read again, view mounted and initialized). The
//! release build when there is one (`make bench` makes it).

use std::time::{Duration, Instant};

use porthole_e2e::bench::{median, use_release_porthole};
use porthole_e2e::{App, porthole_binary};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);

fn main() {
    use_release_porthole();
    println!("porthole: {}", porthole_binary().display());
    let profile = tempfile::tempdir().unwrap();
    let watched = profile.path().join("view-source.html");
    std::fs::write(&watched, "0").unwrap();
    let config = json!({"mcpServers": {"porthole-demo": {
        "command": "porthole", "args": ["demo-server"], "watch": [watched.display().to_string()],
    }}});
    std::fs::write(profile.path().join("config.json"), config.to_string()).unwrap();
    let app = App::launch(profile.path(), &[], &[]).unwrap();
    let s = &app.session;
    s.wait_for_element(
        "[data-testid=server][data-server-name=porthole-demo][data-state=connected]",
        WAIT,
    )
    .unwrap();
    s.click(&s.find("[data-testid=tools-button]").unwrap()).unwrap();
    s.click(&s.wait_for_element("[data-testid=inspect-views]", WAIT).unwrap())
        .unwrap();
    s.click(
        &s.wait_for_element("[data-testid=tool-entry][data-tool-name=system_monitor]", WAIT)
            .unwrap(),
    )
    .unwrap();
    s.click(&s.wait_for_element("[data-testid=tool-run]", WAIT).unwrap())
        .unwrap();
    let card = "[data-testid=tool-call][data-tool-name=system_monitor]";
    s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=ready]"), WAIT)
        .unwrap();
    // Opened (again, when a click landed while the view was still growing under it).
    let toggle = format!("{card} [data-testid=view-inspect-toggle]");
    s.wait_for("the inspector", WAIT, |s| {
        let el = s.wait_for_element(&toggle, WAIT)?;
        if s.attribute(&el, "aria-expanded")?.as_deref() == Some("true") {
            return Ok(Some(()));
        }
        let _ = s.click(&el);
        Ok(None)
    })
    .unwrap();
    let summary = format!("{card} [data-testid=inspect-summary]");
    // Mounted n times, and that view initialized.
    let ready = |n: u32| {
        let wanted = format!("Mounted {n} time");
        s.wait_for("the re-created view", WAIT, |s| {
            let text = match s.find_all(&summary)?.first() {
                Some(el) => s.text(el)?,
                None => return Ok(None),
            };
            Ok((text.starts_with(&wanted) && text.contains("ready after")).then_some(()))
        })
        .unwrap();
    };
    ready(1);
    let runs = 10;
    let mut took = Vec::new();
    for run in 0..runs {
        std::thread::sleep(Duration::from_millis(600));
        let saved = Instant::now();
        std::fs::write(&watched, format!("{}", run + 1)).unwrap();
        ready(run + 2);
        took.push(saved.elapsed().as_secs_f64() * 1000.0);
    }
    let mut sorted = took.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "hot reload, saved file to re-created and initialized view ({runs} runs, the demo server's system_monitor): \
         median {:.0} ms, fastest {:.0} ms, slowest {:.0} ms (target < 1500 ms)",
        median(took),
        sorted[0],
        sorted[sorted.len() - 1]
    );
}
