// What every demo view does with the host: connect, follow its theme and style variables, and
// show errors where the user can see them.
import {
  App,
  applyDocumentTheme,
  applyHostStyleVariables,
} from "@modelcontextprotocol/ext-apps/app-with-deps";

type HostContext = ReturnType<App["getHostContext"]>;

function applyContext(ctx: HostContext | undefined) {
  if (!ctx) return;
  if (ctx.theme) applyDocumentTheme(ctx.theme);
  if (ctx.styles?.variables) applyHostStyleVariables(ctx.styles.variables);
}

export function createApp(name: string): App {
  const app = new App({ name, version: "1.0.0" }, {}, { autoResize: true });
  app.onhostcontextchanged = (ctx) => applyContext({ ...app.getHostContext(), ...ctx });
  return app;
}

export async function connect(app: App): Promise<void> {
  await app.connect();
  applyContext(app.getHostContext());
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<HTMLElementTagNameMap[K]> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

export function showError(root: HTMLElement, message: string) {
  root.replaceChildren(el("p", { className: "error" }, message));
}

export const mib = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MiB`;
