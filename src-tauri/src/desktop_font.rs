//! The desktop's interface font, named for the app's page.
//!
//! The page's text is in the desktop's own font. CSS's `system-ui` says so, but WebKitGTK
//! resolves it by reading GTK's settings in the web process, which cost ~11 ms of the page's
//! first style on the way to the composer (22 → 11 ms for the whole first style, 2 vCPU;
//! BENCHMARKS.md, session 25). The app process has those settings at hand: it names the family
//! in `--desktop-font` on the page's root element before the page's own code runs. `styles.css`
//! falls back to `system-ui` without it (other platforms, or no GTK setting). The family is
//! read once, at start: a change of the desktop's font shows from the next start.

use std::sync::OnceLock;

use tauri::{Manager, WebviewWindowBuilder};

/// The script that names `family` on the page's root element (a user script at document start
/// runs once the root element exists).
fn script(family: &str) -> String {
    // A CSS string: `"` and `\` escaped, as a JavaScript string.
    let css = format!("\"{}\"", family.replace('\\', "\\\\").replace('"', "\\\""));
    let js = serde_json::to_string(&css).unwrap_or_else(|_| "\"\"".into());
    format!("document.documentElement?.style.setProperty(\"--desktop-font\", {js});")
}

/// GTK's interface font's family, read once on GTK's main thread (windows may be opened from
/// any thread; GTK may be asked only from that one).
static FAMILY: OnceLock<Option<String>> = OnceLock::new();

/// Reads the desktop's interface font. On GTK's main thread, before the first window is built.
pub fn read() {
    FAMILY.get_or_init(family);
}

/// The family of GTK's interface font (`gtk-font-name`, e.g. "Cantarell 11" → "Cantarell").
#[cfg(target_os = "linux")]
fn family() -> Option<String> {
    use gtk::prelude::*;
    let name = gtk::Settings::default()?.gtk_font_name()?;
    let family = gtk::pango::FontDescription::from_string(&name).family()?;
    let family = family.trim();
    (!family.is_empty()).then(|| family.to_string())
}

#[cfg(not(target_os = "linux"))]
fn family() -> Option<String> {
    None
}

/// `builder` with the desktop's font named in its page (once `read`).
pub fn named<'a, R: tauri::Runtime, M: Manager<R>>(
    builder: WebviewWindowBuilder<'a, R, M>,
) -> WebviewWindowBuilder<'a, R, M> {
    match FAMILY.get() {
        Some(Some(family)) => builder.initialization_script(script(family)),
        _ => builder,
    }
}

#[cfg(test)]
mod tests {
    use super::script;

    #[test]
    fn the_family_is_quoted_for_css_inside_a_javascript_string() {
        assert_eq!(
            script("Cantarell"),
            r#"document.documentElement?.style.setProperty("--desktop-font", "\"Cantarell\"");"#
        );
        // A name with a quote or a backslash stays one CSS string, in one JavaScript string.
        assert_eq!(
            script(r#"Odd "Sans\"#),
            r#"document.documentElement?.style.setProperty("--desktop-font", "\"Odd \\\"Sans\\\\\"");"#
        );
    }
}
