//! The empty Tauri window of `porthole-baseline-window`, plus one custom URI scheme, `bare:`,
//! that serves one view's HTML the way Porthole serves views over `mcpview:` (an asynchronous
//! scheme handler answering from memory, with the headers it is given) and nothing else around
//! it: no tokens, no host, no card. The views benchmark loads its views into a sandboxed frame
//! from here, beside the `srcdoc` frame of the plain baseline window, so that the cost of a
//! custom scheme's document load is measured apart from what Porthole adds.
//!
//! `porthole-baseline-scheme-window [--header "Name: value"]... <view.html>`: every request
//! for `bare://localhost/…?read_at=<ms>` gets the file's HTML (read once, at start) with its
//! `__READ_AT__` replaced by `<ms>` (the benchmark's clock when it inserted the frame).
//!
//! A second program rather than a switch in the first, so the start-up, memory and size
//! benchmarks' baseline stays an empty window.

use tauri::http;

fn main() {
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut path = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--header" {
            let header = args.next().expect("--header needs \"Name: value\"");
            let (name, value) = header.split_once(": ").expect("a header is \"Name: value\"");
            headers.push((name.to_string(), value.to_string()));
        } else {
            path = Some(arg);
        }
    }
    let path = path.expect("usage: porthole-baseline-scheme-window [--header \"Name: value\"]... <view.html>");
    let html = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let parts: Vec<String> = html.split("__READ_AT__").map(String::from).collect();
    tauri::Builder::default()
        .register_asynchronous_uri_scheme_protocol("bare", move |_, request, responder| {
            let read_at = request
                .uri()
                .query()
                .and_then(|q| q.strip_prefix("read_at="))
                .unwrap_or("0");
            let body = parts.join(read_at);
            let mut response = http::Response::builder().status(200);
            for (name, value) in &headers {
                response = response.header(name, value);
            }
            responder.respond(response.body(body.into_bytes()).expect("valid headers"));
        })
        .run(tauri::generate_context!())
        .expect("cannot start the baseline window");
}
