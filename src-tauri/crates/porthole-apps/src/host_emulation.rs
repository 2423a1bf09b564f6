//! Host emulation, for view authors: Porthole presents itself to a view as another host does
//! (its `hostInfo`, the capabilities it advertises, its display modes, platform, container and
//! whether `window.openai` exists), from a preset, with any field overridden. Each preset's
//! values name their source; where no source gives a value, Porthole's own is kept and the
//! source says so. The bridge also holds a view to what its host advertises: a request for a
//! capability the emulated host does not offer is refused, as that host would.
//!
//! Which views are emulated (the workbench's, or every one) is the app's business.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use ts_rs::TS;

use crate::display::DisplayMode;
use crate::theme::{Theme, theme_context};

/// A host Porthole can present itself as.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HostPreset {
    pub id: String,
    /// As shown in the workbench.
    pub name: String,
    /// `hostInfo` in the `ui/initialize` answer.
    pub host_info: Value,
    /// `hostCapabilities` (without `sandbox`, which is what the frame was granted).
    pub capabilities: Value,
    pub display_modes: Vec<DisplayMode>,
    /// `hostContext.platform`: `web`, `desktop` or `mobile`.
    pub platform: String,
    /// `hostContext.containerDimensions` when the host fixes them (`None`: the frame's own).
    pub container: Option<Value>,
    /// The view's document gets `window.openai` (the Apps SDK's globals) beside the bridge.
    pub window_openai: bool,
    /// Where the values come from.
    pub source: String,
}

/// Porthole's own `hostCapabilities` (the bridge adds `sandbox`, and `sampling` when offered).
pub fn porthole_capabilities() -> Value {
    json!({
        "openLinks": {},
        "serverTools": {"listChanged": true},
        "serverResources": {"listChanged": true},
        "logging": {},
        "updateModelContext": {"text": {}, "structuredContent": {}},
        "message": {"text": {}},
        "downloadFile": {},
    })
}

/// Porthole's own `hostInfo`.
pub fn porthole_host_info() -> Value {
    json!({"name": "Porthole", "version": env!("CARGO_PKG_VERSION")})
}

/// The id of Porthole's own preset (no emulation).
pub const PORTHOLE: &str = "porthole";

/// The presets, Porthole's own first.
pub fn presets() -> Vec<HostPreset> {
    use DisplayMode::{Fullscreen, Inline, Pip};
    vec![
        HostPreset {
            id: PORTHOLE.into(),
            name: "Porthole".into(),
            host_info: porthole_host_info(),
            capabilities: porthole_capabilities(),
            display_modes: DisplayMode::ALL.to_vec(),
            platform: "desktop".into(),
            container: None,
            window_openai: false,
            source: "Porthole itself.".into(),
        },
        HostPreset {
            id: "claude".into(),
            name: "Claude".into(),
            // No published hostInfo value: the name is the product's, the version unknown.
            host_info: json!({"name": "Claude", "version": "unknown"}),
            // MCPJam's host-compatibility catalogue (provenance "probe", verified 2026-08):
            // serverTools, serverResources, logging, updateModelContext, message, openLinks,
            // downloadFile; modes inline and fullscreen (pip is answered with inline).
            capabilities: json!({
                "openLinks": {},
                "serverTools": {},
                "serverResources": {},
                "logging": {},
                "updateModelContext": {"text": {}, "structuredContent": {}},
                "message": {"text": {}},
                "downloadFile": {},
            }),
            display_modes: vec![Inline, Fullscreen],
            platform: "desktop".into(),
            container: None,
            window_openai: false,
            source: "Capabilities and display modes: MCPJam's host-compatibility catalogue (probe, 2026-08). \
                     hostInfo: assumed (not published)."
                .into(),
        },
        HostPreset {
            id: "chatgpt".into(),
            name: "ChatGPT".into(),
            host_info: json!({"name": "ChatGPT", "version": "unknown"}),
            // MCPJam's catalogue (probe): inline, fullscreen, pip; toolInputPartial,
            // updateModelContext, message, serverTools, serverResources, logging; no
            // downloadFile; an experimental `openai/visibility`. window.openai: the Apps SDK's
            // documented globals, which ChatGPT gives every widget.
            capabilities: json!({
                "serverTools": {},
                "serverResources": {},
                "logging": {},
                "updateModelContext": {"text": {}, "structuredContent": {}},
                "message": {"text": {}},
                "experimental": {"openai/visibility": {}},
            }),
            display_modes: vec![Inline, Fullscreen, Pip],
            platform: "web".into(),
            container: None,
            window_openai: true,
            source: "Capabilities and display modes: MCPJam's host-compatibility catalogue (probe). \
                     window.openai: OpenAI's Apps SDK documentation. hostInfo: assumed (not published)."
                .into(),
        },
        HostPreset {
            id: "vscode".into(),
            name: "VS Code".into(),
            host_info: json!({"name": "Visual Studio Code", "version": "unknown"}),
            // microsoft/vscode PR #285864 (chatMcpAppModel.ts): openLinks, serverTools and
            // serverResources with listChanged, logging; ui/request-display-mode is a no-op.
            // Later: updateModelContext (#289473); MCPJam's probe: downloadFile, modes inline.
            capabilities: json!({
                "openLinks": {},
                "serverTools": {"listChanged": true},
                "serverResources": {"listChanged": true},
                "logging": {},
                "updateModelContext": {"text": {}, "structuredContent": {}},
                "downloadFile": {},
            }),
            display_modes: vec![Inline],
            platform: "desktop".into(),
            container: None,
            window_openai: false,
            source: "microsoft/vscode PR #285864 and #289473; MCPJam's catalogue (probe) for downloadFile \
                     and the display modes. hostInfo: assumed."
                .into(),
        },
        HostPreset {
            id: "goose".into(),
            name: "Goose".into(),
            // MCPJam's probe of Goose 1.38.0: hostInfo "MCP-UI Host"; serverTools, message and
            // updateModelContext not advertised; modes inline, fullscreen, pip.
            host_info: json!({"name": "MCP-UI Host", "version": "1.38.0"}),
            capabilities: json!({
                "openLinks": {},
                "serverResources": {},
                "logging": {},
            }),
            display_modes: vec![Inline, Fullscreen, Pip],
            platform: "desktop".into(),
            container: None,
            window_openai: false,
            source: "MCPJam's host-compatibility catalogue, probe of Goose 1.38.0 (openLinks, serverResources \
                     and logging assumed from Goose's source: its bridge handles them)."
                .into(),
        },
    ]
}

/// A device the view is shown on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    Desktop,
    Tablet,
    Mobile,
    Custom,
}

/// A device size: a preset (MCPJam's sizes: desktop 1280×800, tablet 820×1180, mobile 430×932)
/// or custom.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Device {
    pub kind: DeviceKind,
    /// For `custom`; the preset's size otherwise.
    #[serde(default)]
    pub width: Option<u32>,
    #[serde(default)]
    pub height: Option<u32>,
}

impl Device {
    /// Width and height in CSS pixels.
    pub fn size(&self) -> (u32, u32) {
        match self.kind {
            DeviceKind::Desktop => (1280, 800),
            DeviceKind::Tablet => (820, 1180),
            DeviceKind::Mobile => (430, 932),
            DeviceKind::Custom => (
                self.width.unwrap_or(800).clamp(200, 4000),
                self.height.unwrap_or(600).clamp(200, 4000),
            ),
        }
    }
}

/// Safe-area insets in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, TS)]
pub struct Insets {
    pub top: f64,
    pub right: f64,
    pub bottom: f64,
    pub left: f64,
}

/// Fields the person set on top of the preset; `None` keeps the preset's (or Porthole's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct EmulationOverrides {
    /// `hostCapabilities` in place of the preset's (an object).
    pub capabilities: Option<Value>,
    pub theme: Option<Theme>,
    /// Merged into `styles.variables`.
    pub style_variables: Option<Map<String, Value>>,
    pub locale: Option<String>,
    pub time_zone: Option<String>,
    pub display_mode: Option<DisplayMode>,
    pub device: Option<Device>,
    pub safe_area: Option<Insets>,
    pub hover: Option<bool>,
    pub touch: Option<bool>,
}

/// The workbench's host emulation setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct HostEmulation {
    /// A preset's id.
    pub preset: String,
    pub overrides: EmulationOverrides,
    /// Emulate in ordinary chats too, not only for the workbench's runs.
    pub in_chats: bool,
}

impl Default for HostEmulation {
    fn default() -> Self {
        HostEmulation {
            preset: PORTHOLE.into(),
            overrides: EmulationOverrides::default(),
            in_chats: false,
        }
    }
}

/// How a view is presented: what goes into its `ui/initialize` answer and documents.
#[derive(Debug, Clone, PartialEq)]
pub struct Presentation {
    pub host_info: Value,
    pub capabilities: Value,
    /// Laid over the host context Porthole would give.
    pub context: Map<String, Value>,
    pub window_openai: bool,
}

impl Presentation {
    /// What a view must be re-created for (the context alone can be changed live).
    pub fn same_document(&self, other: &Presentation) -> bool {
        self.host_info == other.host_info
            && self.capabilities == other.capabilities
            && self.window_openai == other.window_openai
    }
}

impl HostEmulation {
    /// Checks the setting: a known preset, capabilities an object, sizes and strings sane.
    pub fn checked(self) -> Result<HostEmulation, String> {
        if !presets().iter().any(|p| p.id == self.preset) {
            return Err(format!("no host preset named {:?}", self.preset));
        }
        let o = &self.overrides;
        if let Some(caps) = &o.capabilities
            && !caps.is_object()
        {
            return Err("the capabilities are a JSON object".into());
        }
        for (name, value) in [("locale", &o.locale), ("time zone", &o.time_zone)] {
            if let Some(v) = value
                && (v.trim().is_empty() || v.len() > 100)
            {
                return Err(format!("the {name} is empty or too long"));
            }
        }
        if let Some(insets) = o.safe_area
            && [insets.top, insets.right, insets.bottom, insets.left]
                .iter()
                .any(|v| !v.is_finite() || *v < 0.0 || *v > 1000.0)
        {
            return Err("safe-area insets are between 0 and 1000 pixels".into());
        }
        Ok(self)
    }

    /// Whether this emulates anything (Porthole's preset with no overrides does not).
    pub fn is_active(&self) -> bool {
        self.preset != PORTHOLE || self.overrides != EmulationOverrides::default()
    }

    /// The presentation for a view, with `theme` the window's.
    pub fn presentation(&self, theme: Theme) -> Presentation {
        let all = presets();
        let preset = all.iter().find(|p| p.id == self.preset).unwrap_or(&all[0]);
        let o = &self.overrides;
        let mut context = Map::new();
        let modes = preset.display_modes.clone();
        context.insert("availableDisplayModes".into(), json!(modes));
        context.insert("platform".into(), json!(preset.platform));
        if let Some(container) = &preset.container {
            context.insert("containerDimensions".into(), container.clone());
        }
        if let Some(theme) = o.theme.or(o.style_variables.as_ref().map(|_| theme))
            && let Value::Object(themed) = theme_context(theme)
        {
            context.extend(themed);
            if let (Some(extra), Some(vars)) = (
                &o.style_variables,
                context
                    .get_mut("styles")
                    .and_then(|s| s.get_mut("variables"))
                    .and_then(Value::as_object_mut),
            ) {
                vars.extend(extra.clone());
            }
        }
        if let Some(locale) = &o.locale {
            context.insert("locale".into(), json!(locale));
        }
        if let Some(zone) = &o.time_zone {
            context.insert("timeZone".into(), json!(zone));
        }
        if let Some(mode) = o.display_mode {
            context.insert("displayMode".into(), json!(mode));
        }
        let mut touch = None;
        let mut hover = None;
        if let Some(device) = &o.device {
            let (width, height) = device.size();
            context.insert(
                "containerDimensions".into(),
                json!({"maxWidth": width, "maxHeight": height}),
            );
            let handheld = matches!(device.kind, DeviceKind::Tablet | DeviceKind::Mobile);
            if device.kind == DeviceKind::Mobile {
                context.insert("platform".into(), json!("mobile"));
            }
            touch = Some(handheld);
            hover = Some(!handheld);
        }
        let touch = o.touch.or(touch);
        let hover = o.hover.or(hover);
        if touch.is_some() || hover.is_some() {
            context.insert(
                "deviceCapabilities".into(),
                json!({"touch": touch.unwrap_or(false), "hover": hover.unwrap_or(true)}),
            );
        }
        if let Some(insets) = o.safe_area {
            context.insert("safeAreaInsets".into(), json!(insets));
        }
        context.insert(
            "userAgent".into(),
            json!(format!(
                "{}/{}",
                preset.host_info["name"].as_str().unwrap_or("host"),
                preset.host_info["version"].as_str().unwrap_or("unknown")
            )),
        );
        if preset.id == PORTHOLE {
            context.remove("userAgent");
        }
        Presentation {
            host_info: preset.host_info.clone(),
            capabilities: o.capabilities.clone().unwrap_or_else(|| preset.capabilities.clone()),
            context,
            window_openai: preset.window_openai,
        }
    }
}

/// The frame's width for an emulated device, if it sets one.
pub fn frame_width(emulation: &HostEmulation) -> Option<u32> {
    emulation.overrides.device.as_ref().map(|d| d.size().0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porthole_itself_emulates_nothing_and_matches_the_bridge() {
        let own = HostEmulation::default();
        assert!(!own.is_active());
        let p = own.presentation(Theme::Light);
        assert_eq!(p.host_info, porthole_host_info());
        assert_eq!(p.capabilities, porthole_capabilities());
        assert!(!p.window_openai);
        assert_eq!(
            p.context["availableDisplayModes"],
            json!(["inline", "fullscreen", "pip"])
        );
        assert!(!p.context.contains_key("theme"), "the window's theme stays in charge");
    }

    #[test]
    fn each_preset_names_a_source_and_the_hosts_differ() {
        let all = presets();
        let ids: Vec<_> = all.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["porthole", "claude", "chatgpt", "vscode", "goose"]);
        assert!(all.iter().all(|p| !p.source.is_empty() && p.capabilities.is_object()));
        let chatgpt = HostEmulation {
            preset: "chatgpt".into(),
            ..Default::default()
        }
        .presentation(Theme::Dark);
        assert!(chatgpt.window_openai);
        assert_eq!(chatgpt.context["platform"], "web");
        assert!(chatgpt.capabilities.get("downloadFile").is_none());
        let vscode = HostEmulation {
            preset: "vscode".into(),
            ..Default::default()
        }
        .presentation(Theme::Dark);
        assert_eq!(vscode.context["availableDisplayModes"], json!(["inline"]));
        let goose = HostEmulation {
            preset: "goose".into(),
            ..Default::default()
        }
        .presentation(Theme::Dark);
        assert_eq!(goose.host_info["name"], "MCP-UI Host");
        assert!(goose.capabilities.get("message").is_none());
        assert_eq!(goose.context["userAgent"], "MCP-UI Host/1.38.0");
    }

    #[test]
    fn overrides_lay_over_the_preset() {
        let emulation = HostEmulation {
            preset: "claude".into(),
            overrides: EmulationOverrides {
                capabilities: Some(json!({"logging": {}})),
                theme: Some(Theme::Dark),
                style_variables: Some(Map::from_iter([("--color-text-primary".into(), json!("#ff0000"))])),
                locale: Some("fr-CA".into()),
                time_zone: Some("America/Montreal".into()),
                display_mode: Some(DisplayMode::Fullscreen),
                device: Some(Device {
                    kind: DeviceKind::Mobile,
                    width: None,
                    height: None,
                }),
                safe_area: Some(Insets {
                    top: 47.0,
                    right: 0.0,
                    bottom: 34.0,
                    left: 0.0,
                }),
                hover: None,
                touch: None,
            },
            in_chats: false,
        }
        .checked()
        .unwrap();
        let p = emulation.presentation(Theme::Light);
        assert_eq!(p.capabilities, json!({"logging": {}}));
        assert_eq!(p.context["theme"], "dark");
        assert_eq!(p.context["styles"]["variables"]["--color-text-primary"], "#ff0000");
        assert!(p.context["styles"]["variables"]["--color-background-primary"].is_string());
        assert_eq!(p.context["locale"], "fr-CA");
        assert_eq!(p.context["timeZone"], "America/Montreal");
        assert_eq!(p.context["displayMode"], "fullscreen");
        assert_eq!(p.context["platform"], "mobile");
        assert_eq!(
            p.context["containerDimensions"],
            json!({"maxWidth": 430, "maxHeight": 932})
        );
        assert_eq!(p.context["deviceCapabilities"], json!({"touch": true, "hover": false}));
        assert_eq!(p.context["safeAreaInsets"]["top"], 47.0);
        assert_eq!(frame_width(&emulation), Some(430));
    }

    #[test]
    fn bad_settings_are_refused_with_a_reason() {
        let bad = |o: EmulationOverrides| {
            HostEmulation {
                overrides: o,
                ..Default::default()
            }
            .checked()
        };
        assert!(
            HostEmulation {
                preset: "netscape".into(),
                ..Default::default()
            }
            .checked()
            .unwrap_err()
            .contains("netscape")
        );
        assert!(
            bad(EmulationOverrides {
                capabilities: Some(json!([1])),
                ..Default::default()
            })
            .is_err()
        );
        assert!(
            bad(EmulationOverrides {
                locale: Some(" ".into()),
                ..Default::default()
            })
            .is_err()
        );
        let insets = Insets {
            top: -1.0,
            right: 0.0,
            bottom: 0.0,
            left: 0.0,
        };
        assert!(
            bad(EmulationOverrides {
                safe_area: Some(insets),
                ..Default::default()
            })
            .is_err()
        );
    }
}
