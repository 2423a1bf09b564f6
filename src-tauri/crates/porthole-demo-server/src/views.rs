//! The demo server's views: HTML built from `ui/demo-views/` by `npm run build` (with the
//! official ext-apps SDK bundled in) and embedded at compile time, brotli-compressed.

use rmcp::model::MetaObject;
use serde_json::json;

pub struct DemoView {
    pub uri: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    /// Its HTML, brotli-compressed (see [`DemoView::html`]).
    pub html_brotli: &'static [u8],
    /// Origins the view may `fetch` (its `_meta.ui.csp.connectDomains`).
    pub connect_domains: &'static [&'static str],
}

impl DemoView {
    /// Its HTML, unpacked (a few milliseconds; each read unpacks it again, so the server keeps
    /// no copy between reads).
    pub fn html(&self) -> String {
        let mut html = Vec::with_capacity(self.html_brotli.len() * 6);
        brotli_decompressor::BrotliDecompress(&mut &self.html_brotli[..], &mut html)
            .expect("the demo views were compressed at build time");
        String::from_utf8(html).expect("the demo views are UTF-8")
    }

    /// The `_meta` of the view's resource contents: `ui.csp` and `ui.prefersBorder`.
    pub fn resource_meta(&self) -> Option<MetaObject> {
        let mut ui = json!({ "prefersBorder": true });
        if !self.connect_domains.is_empty() {
            ui["csp"] = json!({ "connectDomains": self.connect_domains });
        }
        let mut meta = MetaObject::default();
        meta.0.insert("ui".into(), ui);
        Some(meta)
    }
}

macro_rules! view_html {
    ($file:literal) => {
        include_bytes!(concat!(env!("OUT_DIR"), "/", $file, ".br"))
    };
}

pub const SYSTEM_MONITOR: DemoView = DemoView {
    uri: "ui://porthole-demo/system-monitor.html",
    name: "System monitor",
    description: "CPU, memory and the busiest processes, refreshed by the view.",
    html_brotli: view_html!("system-monitor.html"),
    connect_domains: &[],
};

pub const DIRECTORY: DemoView = DemoView {
    uri: "ui://porthole-demo/directory.html",
    name: "Folder browser",
    description: "A folder listing; clicking a folder lists it.",
    html_brotli: view_html!("directory.html"),
    connect_domains: &[],
};

/// The one origin the weather view may fetch: Open-Meteo's forecast API (no key, no account).
pub const WEATHER_API: &str = "https://api.open-meteo.com";

pub const WEATHER: DemoView = DemoView {
    uri: "ui://porthole-demo/weather.html",
    name: "Weather",
    description: "Current weather and a three-day forecast, fetched live from Open-Meteo (declared connectDomains).",
    html_brotli: view_html!("weather.html"),
    connect_domains: &[WEATHER_API],
};

pub static VIEWS: &[DemoView] = &[SYSTEM_MONITOR, DIRECTORY, WEATHER];
