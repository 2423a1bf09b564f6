// Weather view: its resource declares connectDomains ["https://api.open-meteo.com"], so the
// host's CSP lets it fetch Open-Meteo's key-less forecast API and nothing else. It shows both
// outcomes honestly: the forecast, or why there is none (offline, refused by the CSP, an error).
import { connect, createApp, el, showError } from "./shared";

const root = document.getElementById("root")!;
const app = createApp("porthole-weather");

type Forecast = {
  current?: { temperature_2m?: number; wind_speed_10m?: number; weather_code?: number };
  current_units?: { temperature_2m?: string; wind_speed_10m?: string };
  daily?: { time?: string[]; temperature_2m_max?: number[]; temperature_2m_min?: number[]; weather_code?: number[] };
  timezone?: string;
};

// WMO weather interpretation codes, as Open-Meteo documents them, in words.
function describe(code: number | undefined): string {
  if (code === undefined) return "";
  if (code === 0) return "Clear sky";
  if (code <= 2) return "Partly cloudy";
  if (code === 3) return "Overcast";
  if (code <= 48) return "Fog";
  if (code <= 57) return "Drizzle";
  if (code <= 67) return "Rain";
  if (code <= 77) return "Snow";
  if (code <= 82) return "Rain showers";
  if (code <= 86) return "Snow showers";
  return "Thunderstorm";
}

const day = (iso: string) => new Date(`${iso}T12:00:00Z`).toLocaleDateString(undefined, { weekday: "short", timeZone: "UTC" });

async function show(place: string, forecastUrl: string) {
  root.replaceChildren(el("h1", {}, place), el("p", { className: "muted" }, "Fetching the forecast from Open-Meteo …"));
  try {
    const response = await fetch(forecastUrl);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const doc = (await response.json()) as Forecast;
    const now = doc.current ?? {};
    const units = doc.current_units ?? {};
    const daily = doc.daily ?? {};
    const days = (daily.time ?? []).map((time, i) =>
      el(
        "li",
        {},
        el("strong", {}, day(time)),
        ` ${describe(daily.weather_code?.[i])}, ${daily.temperature_2m_min?.[i] ?? "?"}–${daily.temperature_2m_max?.[i] ?? "?"}${units.temperature_2m ?? ""}`,
      ),
    );
    root.replaceChildren(
      el("h1", {}, place),
      el("p", {}, el("strong", {}, `${now.temperature_2m ?? "?"}${units.temperature_2m ?? ""}`), ` ${describe(now.weather_code)}`),
      el("p", { className: "muted" }, `Wind ${now.wind_speed_10m ?? "?"} ${units.wind_speed_10m ?? ""}`),
      el("ul", {}, ...days),
      el("p", { className: "muted" }, `Fetched live from Open-Meteo${doc.timezone ? ` · ${doc.timezone}` : ""}`),
    );
  } catch (e) {
    showError(root, `Could not reach Open-Meteo for ${place} (${e instanceof Error ? e.message : String(e)}). ` +
      "The view may only connect to https://api.open-meteo.com, as its CSP declares; this machine may be offline.");
  }
}

app.ontoolresult = (result) => {
  const data = result.structuredContent as { place?: string; forecastUrl?: string } | undefined;
  if (result.isError || !data?.place || !data.forecastUrl) {
    showError(root, "weather returned no place to show.");
    return;
  }
  void show(data.place, data.forecastUrl);
};

connect(app).catch((e) => showError(root, `Could not connect to the host: ${String(e)}`));
