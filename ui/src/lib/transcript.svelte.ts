// The open conversation's messages, as the transcript shows them.
export type Role = "user" | "assistant";

export interface Message {
  id: number;
  role: Role;
  text: string;
}

export interface Notice {
  id: number;
  kind: "info" | "error";
  text: string;
}

let nextId = 1;

export class Transcript {
  messages = $state<Message[]>([]);
  notices = $state<Notice[]>([]);

  /** Adds the user's message; returns false (and adds nothing) for blank input. */
  addUserMessage(text: string): boolean {
    const trimmed = text.trim();
    if (!trimmed) return false;
    this.messages.push({ id: nextId++, role: "user", text: trimmed });
    return true;
  }

  addNotice(kind: Notice["kind"], text: string) {
    this.notices.push({ id: nextId++, kind, text });
  }

  clear() {
    this.messages = [];
    this.notices = [];
  }
}
