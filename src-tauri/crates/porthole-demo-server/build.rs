//! Points `include_str!` at the demo views that `npm run build` (in `ui/`) writes to
//! `ui/dist-views/`, and fails with a clear message when they have not been built yet.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let dir = manifest.join("../../../ui/dist-views");
    let dir = dir.canonicalize().unwrap_or(dir);
    for file in ["system-monitor.html", "directory.html", "weather.html"] {
        let path = dir.join(file);
        if !path.is_file() {
            panic!(
                "the demo MCP App views are not built: {} is missing. Run `make ui` \
                 (or `npm ci && npm run build` in ui/) first.",
                path.display()
            );
        }
        println!("cargo:rerun-if-changed={}", path.display());
    }
    println!("cargo:rustc-env=PORTHOLE_DEMO_VIEWS_DIR={}", dir.display());
}
