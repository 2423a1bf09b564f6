//! Where a view is shown: the spec's display modes, and the room its container gives it
//! (`hostContext.containerDimensions`, and the clamp on the heights a view asks for).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The tallest a view's frame grows, in CSS pixels: what `containerDimensions.maxHeight` says,
/// and the clamp on `size-changed` heights. The window's frame clamps to the same number
/// (`MAX_HEIGHT` in `ui/src/lib/views.svelte.ts`).
pub const MAX_VIEW_HEIGHT: u32 = 4000;

/// A display mode the spec defines (`hostContext.displayMode`, `ui/request-display-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum DisplayMode {
    /// In the tool card, in the transcript.
    Inline,
    /// Over the whole window.
    Fullscreen,
    /// Picture-in-picture: a small frame that stays in sight.
    Pip,
}

impl DisplayMode {
    /// Every mode, in the spec's order: what the host offers (`availableDisplayModes`).
    pub const ALL: [DisplayMode; 3] = [DisplayMode::Inline, DisplayMode::Fullscreen, DisplayMode::Pip];

    /// The spec's name for the mode.
    pub fn as_str(self) -> &'static str {
        match self {
            DisplayMode::Inline => "inline",
            DisplayMode::Fullscreen => "fullscreen",
            DisplayMode::Pip => "pip",
        }
    }
}

impl fmt::Display for DisplayMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for DisplayMode {
    type Err = String;

    /// The mode the spec's name stands for; names are case-sensitive, as in the spec.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DisplayMode::ALL
            .into_iter()
            .find(|mode| mode.as_str() == s)
            .ok_or_else(|| format!("unknown display mode {s:?}"))
    }
}

/// `hostContext.containerDimensions`: the view may grow to [`MAX_VIEW_HEIGHT`], and to
/// `max_width` (rounded to whole CSS pixels) when the container's width is known.
pub fn container_dimensions(max_width: Option<f64>) -> Value {
    let mut dimensions = json!({ "maxHeight": MAX_VIEW_HEIGHT });
    if let Some(width) = max_width {
        dimensions["maxWidth"] = json!(width.round());
    }
    dimensions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_modes_read_and_write_the_spec_names() {
        for mode in DisplayMode::ALL {
            assert_eq!(mode.as_str().parse::<DisplayMode>(), Ok(mode));
            assert_eq!(serde_json::to_value(mode).unwrap(), json!(mode.as_str()));
            assert_eq!(
                serde_json::from_value::<DisplayMode>(json!(mode.as_str())).unwrap(),
                mode
            );
            assert_eq!(mode.to_string(), mode.as_str());
        }
        assert_eq!(
            DisplayMode::ALL.map(DisplayMode::as_str),
            ["inline", "fullscreen", "pip"]
        );
        assert_eq!(
            "x".parse::<DisplayMode>(),
            Err("unknown display mode \"x\"".to_string())
        );
        assert!("Inline".parse::<DisplayMode>().is_err());
        assert!(serde_json::from_value::<DisplayMode>(json!("popout")).is_err());
    }

    #[test]
    fn container_dimensions_give_the_height_limit_and_the_width_when_known() {
        assert_eq!(container_dimensions(None), json!({ "maxHeight": 4000 }));
        assert_eq!(
            container_dimensions(Some(812.4)),
            json!({ "maxHeight": 4000, "maxWidth": 812.0 })
        );
        assert_eq!(container_dimensions(Some(812.5))["maxWidth"], json!(813.0));
    }
}
