// The devices a view may ask for (`_meta.ui.permissions`, as Permission-Policy feature names),
// in words for its card.

const NAMES: Record<string, string> = {
  camera: "your camera",
  microphone: "your microphone",
  geolocation: "your location",
  "clipboard-write": "the clipboard (to copy into it)",
};

/** "your camera, your microphone and your location"; an unknown feature is named as it is. */
export function deviceList(features: string[]): string {
  const names = features.map((f) => NAMES[f] ?? f);
  if (names.length <= 1) return names.join("");
  return `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}
