import { describe, expect, it } from "vitest";
import { webOrigin } from "./links";

describe("webOrigin", () => {
  it("gives a web page's origin, and nothing for other schemes", () => {
    expect(webOrigin("https://example.com/authorize?state=abc")).toBe("https://example.com");
    expect(webOrigin("http://localhost:8080/x")).toBe("http://localhost:8080");
    expect(webOrigin("file:///etc/passwd")).toBeNull();
    expect(webOrigin("javascript:alert(1)")).toBeNull();
    expect(webOrigin("not a url")).toBeNull();
  });
});
