import { describe, expect, it } from "vitest";
import { deviceList } from "./devices";

describe("deviceList", () => {
  it("names the devices in words, joined as a sentence", () => {
    expect(deviceList(["camera"])).toBe("your camera");
    expect(deviceList(["camera", "clipboard-write"])).toBe("your camera and the clipboard (to copy into it)");
    expect(deviceList(["camera", "microphone", "geolocation"])).toBe("your camera, your microphone and your location");
  });

  it("names an unknown feature as it is", () => {
    expect(deviceList(["usb"])).toBe("usb");
  });
});
