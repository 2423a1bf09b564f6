"use strict";
// Put first in a view's document, before its own scripts (`porthole_e2e::bench::with_stamps`): it
// records, in wall clock milliseconds (performance.timeOrigin + performance.now()), when things
// reach the view, without taking part in the protocol (the view speaks it: stamp.html's few
// lines, or the official SDK in the demo folder view); it only watches the host's messages,
// before the view's own listener sees them:
//   origin  navigation start of this frame's document (performance.timeOrigin)
//   script  this script starts running
//   init    the host's answer to ui/initialize arrives
//   input   ui/notifications/tool-input arrives
//   result  ui/notifications/tool-result arrives
// plus `readAt` (filled in by whoever produced the HTML: the bench server stamps when it served
// resources/read), the tool result's text and structuredContent, and the navigation timing. Once
// the result is in, it writes them as JSON into <pre id="t"> (a hidden one when the view has
// none) and sends them once as a notifications/message (logger "bench").
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
        let pre = document.getElementById("t");
        if (!pre) {
          pre = document.createElement("pre");
          pre.id = "t";
          pre.hidden = true;
          document.documentElement.appendChild(pre);
        }
        pre.textContent = JSON.stringify(t);
        window.parent.postMessage(
          { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", logger: "bench", data: t } },
          "*",
        );
      }
    },
    true,
  );
})();
