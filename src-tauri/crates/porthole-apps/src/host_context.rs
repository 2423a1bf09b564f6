//! The host context a view starts with (`hostContext` in the `ui/initialize` answer, without
//! `toolInfo`, which the bridge adds): theme and style variables, display modes, the container's
//! limits, locale, time zone, platform, user agent, device capabilities and safe-area insets. The locale and time zone are the system's,
//! read once into a [`HostEnvironment`] so the context itself is built from plain values.

use serde_json::{Value, json};

use crate::display::{DisplayMode, container_dimensions};
use crate::theme::{Theme, theme_context};

/// The locale when the environment names none (or the C / POSIX locale).
pub const DEFAULT_LOCALE: &str = "en-US";
/// The time zone when the system's cannot be found.
pub const DEFAULT_TIME_ZONE: &str = "UTC";

/// What the system says about the person's language and time zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostEnvironment {
    /// A BCP 47 language tag, such as `en-GB`.
    pub locale: String,
    /// An IANA time zone name, such as `Europe/London`.
    pub time_zone: String,
}

impl HostEnvironment {
    /// The locale from `LC_ALL` / `LANG`, and the time zone from `TZ`, the `/etc/localtime`
    /// link or `/etc/timezone` (each falling back to [`DEFAULT_LOCALE`] / [`DEFAULT_TIME_ZONE`]).
    pub fn from_system() -> HostEnvironment {
        let var = |name: &str| std::env::var(name).ok();
        let localtime_target = std::fs::read_link("/etc/localtime")
            .ok()
            .map(|p| p.to_string_lossy().into_owned());
        let etc_timezone = std::fs::read_to_string("/etc/timezone").ok();
        HostEnvironment {
            locale: locale_from(var("LC_ALL").as_deref(), var("LANG").as_deref()),
            time_zone: time_zone_from(
                var("TZ").as_deref(),
                localtime_target.as_deref(),
                etc_timezone.as_deref(),
            ),
        }
    }
}

/// The BCP 47 tag of a POSIX locale setting: `LC_ALL` when set and not empty, else `LANG`;
/// `de_CH.UTF-8@euro` becomes `de-CH`. No locale, or the C / POSIX one, is [`DEFAULT_LOCALE`].
pub fn locale_from(lc_all: Option<&str>, lang: Option<&str>) -> String {
    let raw = lc_all.filter(|v| !v.is_empty()).or(lang).unwrap_or_default();
    let tag = raw.split(['.', '@']).next().unwrap_or_default().replace('_', "-");
    if tag.is_empty() || tag == "C" || tag == "POSIX" {
        DEFAULT_LOCALE.into()
    } else {
        tag
    }
}

/// The IANA time zone from what the system says, first that names one: `TZ` (unless empty or
/// in the `:file` form), the target of the `/etc/localtime` link (what follows `zoneinfo/`),
/// the contents of `/etc/timezone`. None of them is [`DEFAULT_TIME_ZONE`].
pub fn time_zone_from(tz: Option<&str>, localtime_target: Option<&str>, etc_timezone: Option<&str>) -> String {
    if let Some(tz) = tz.filter(|tz| !tz.is_empty() && !tz.starts_with(':')) {
        return tz.to_string();
    }
    localtime_target
        .and_then(|target| target.split("zoneinfo/").nth(1))
        .filter(|zone| !zone.is_empty())
        .or_else(|| etc_timezone.map(str::trim).filter(|zone| !zone.is_empty()))
        .unwrap_or(DEFAULT_TIME_ZONE)
        .to_string()
}

/// The host context a view starts with, shown inline in `theme`.
pub fn host_context(theme: Theme, env: &HostEnvironment) -> Value {
    let mut context = json!({
        "displayMode": DisplayMode::Inline,
        "availableDisplayModes": DisplayMode::ALL,
        "containerDimensions": container_dimensions(None),
        "locale": env.locale,
        "timeZone": env.time_zone,
        "platform": "desktop",
        "userAgent": format!("Porthole/{}", env!("CARGO_PKG_VERSION")),
        // A desktop window: a pointer that hovers; no insets around an inline frame.
        "deviceCapabilities": { "touch": false, "hover": true },
        "safeAreaInsets": { "top": 0, "right": 0, "bottom": 0, "left": 0 },
    });
    if let (Some(context), Value::Object(themed)) = (context.as_object_mut(), theme_context(theme)) {
        context.extend(themed);
    }
    context
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_locale_is_a_language_tag_from_lc_all_or_lang() {
        assert_eq!(locale_from(None, Some("de_CH.UTF-8")), "de-CH");
        assert_eq!(locale_from(Some("fr_FR.UTF-8@euro"), Some("de_CH.UTF-8")), "fr-FR");
        assert_eq!(
            locale_from(Some(""), Some("nb_NO")),
            "nb-NO",
            "an empty LC_ALL is unset"
        );
        assert_eq!(locale_from(Some("sr_RS@latin"), None), "sr-RS");
        for unnamed in [None, Some(""), Some("C"), Some("C.UTF-8"), Some("POSIX")] {
            assert_eq!(locale_from(None, unnamed), "en-US", "{unnamed:?}");
        }
    }

    #[test]
    fn the_time_zone_is_the_first_source_that_names_one() {
        let link = Some("/usr/share/zoneinfo/Europe/Oslo");
        let file = Some("America/Chicago\n");
        assert_eq!(time_zone_from(Some("Asia/Tokyo"), link, file), "Asia/Tokyo");
        assert_eq!(time_zone_from(Some(":/etc/localtime"), link, file), "Europe/Oslo");
        assert_eq!(time_zone_from(Some(""), link, file), "Europe/Oslo");
        assert_eq!(
            time_zone_from(None, Some("/var/db/timezone/zoneinfo/Australia/Perth"), None),
            "Australia/Perth",
            "macOS's link"
        );
        assert_eq!(
            time_zone_from(None, Some("/etc/some-other-file"), file),
            "America/Chicago"
        );
        assert_eq!(
            time_zone_from(None, Some("/usr/share/zoneinfo/"), file),
            "America/Chicago"
        );
        assert_eq!(time_zone_from(None, None, file), "America/Chicago");
        assert_eq!(time_zone_from(None, None, Some("  \n")), "UTC");
        assert_eq!(time_zone_from(None, None, None), "UTC");
    }

    #[test]
    fn a_view_starts_inline_with_every_mode_and_the_environment() {
        let env = HostEnvironment {
            locale: "en-GB".into(),
            time_zone: "Europe/London".into(),
        };
        let context = host_context(Theme::Dark, &env);
        assert_eq!(
            context,
            json!({
                "displayMode": "inline",
                "availableDisplayModes": ["inline", "fullscreen", "pip"],
                "containerDimensions": { "maxHeight": 4000 },
                "locale": "en-GB",
                "timeZone": "Europe/London",
                "platform": "desktop",
                "userAgent": format!("Porthole/{}", env!("CARGO_PKG_VERSION")),
                "deviceCapabilities": { "touch": false, "hover": true },
                "safeAreaInsets": { "top": 0, "right": 0, "bottom": 0, "left": 0 },
                "theme": "dark",
                "styles": {
                    "variables": crate::theme::style_variables(Theme::Dark),
                    "css": { "fonts": crate::theme::HOST_FONTS },
                },
            })
        );
        assert_eq!(host_context(Theme::Light, &env)["theme"], "light");
    }

    #[test]
    fn the_system_environment_names_a_locale_and_a_time_zone() {
        let env = HostEnvironment::from_system();
        assert!(!env.locale.is_empty() && !env.locale.contains('_'), "{env:?}");
        assert!(!env.time_zone.is_empty(), "{env:?}");
    }
}
