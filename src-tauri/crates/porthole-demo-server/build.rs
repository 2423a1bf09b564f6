//! Embeds the demo views that `npm run build` (in `ui/`) writes to `ui/dist-views/`,
//! brotli-compressed (the program is 1.4 MB smaller for it), and fails with a clear message
//! when they have not been built yet. Lays the program's code out in the order of
//! `src-tauri/link-order/porthole-demo-server.txt` in release builds (its README.md).

use std::path::PathBuf;

include!("../../link-order/link_order.rs");

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    link_order("porthole-demo-server", &manifest.join("../../link-order"));
    let dir = manifest.join("../../../ui/dist-views");
    let dir = dir.canonicalize().unwrap_or(dir);
    for file in ["system-monitor.html", "directory.html", "weather.html"] {
        let path = dir.join(file);
        let Ok(html) = std::fs::read(&path) else {
            panic!(
                "the demo MCP App views are not built: {} is missing. Run `make ui` \
                 (or `npm ci && npm run build` in ui/) first.",
                path.display()
            );
        };
        println!("cargo:rerun-if-changed={}", path.display());
        let mut packed = Vec::new();
        let params = brotli::enc::BrotliEncoderParams {
            quality: 9,
            lgwin: 22,
            ..Default::default()
        };
        brotli::BrotliCompress(&mut html.as_slice(), &mut packed, &params).expect("compressing a view");
        std::fs::write(out.join(format!("{file}.br")), packed).expect("writing a compressed view");
    }
}
