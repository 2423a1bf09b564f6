// Web addresses a view or a server asks to open, as the person should judge them.

/** The origin an address leads to, when it is a web page (https:// or http://); null for
 * anything else, which Porthole does not open. */
export function webOrigin(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.origin : null;
  } catch {
    return null;
  }
}
