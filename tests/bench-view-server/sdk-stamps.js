"use strict";
// Put before the script of an SDK-built view (the demo folder view: React and the official
// ext-apps SDK, about 600 KB) by `porthole_e2e::bench::sdk_stamp_view`. It records the stamps
// stamp.html records (see there; `script` is when this script runs, before the SDK's) without
// taking part in the protocol, which the view's own SDK speaks: it only watches the host's
// messages, before the SDK's listener sees them. Once the result is in, it writes the stamps as
// JSON into a hidden <pre id="t"> and sends them once as a notifications/message (logger "bench").
(() => {
  const now = () => performance.timeOrigin + performance.now();
  const t = {
    origin: performance.timeOrigin,
    script: now(),
    readAt: __READ_AT__,
    init: null,
    input: null,
    result: null,
    resultText: null,
    structured: null,
    nav: null,
  };
  window.addEventListener(
    "message",
    (e) => {
      const at = now();
      if (e.source !== window.parent) return;
      const m = e.data;
      if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
      if (m.method === undefined && m.result && "protocolVersion" in m.result) {
        if (t.init === null) t.init = at;
      } else if (m.method === "ui/notifications/tool-input") {
        if (t.input === null) t.input = at;
      } else if (m.method === "ui/notifications/tool-result" && t.result === null) {
        t.result = at;
        t.resultText = m.params && m.params.content && m.params.content[0] ? m.params.content[0].text : null;
        t.structured = m.params ? m.params.structuredContent || null : null;
        const entry = performance.getEntriesByType("navigation")[0];
        if (entry) {
          t.nav = {
            fetchStart: entry.fetchStart,
            responseStart: entry.responseStart,
            responseEnd: entry.responseEnd,
            domInteractive: entry.domInteractive,
          };
        }
        const pre = document.createElement("pre");
        pre.id = "t";
        pre.hidden = true;
        pre.textContent = JSON.stringify(t);
        document.documentElement.appendChild(pre);
        window.parent.postMessage(
          { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", logger: "bench", data: t } },
          "*",
        );
      }
    },
    true,
  );
})();
