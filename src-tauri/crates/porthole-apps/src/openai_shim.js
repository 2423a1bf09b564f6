/* Porthole: window.openai for a view written for the OpenAI Apps SDK. It speaks the MCP Apps
   bridge to the host on the widget's behalf (the frame's one channel, the same checks and audit
   as any view): ui/initialize, then tool input and results, host context changes, and each
   method as the ui/* request it stands for. Methods Porthole does not offer are left undefined,
   so a widget can feature-detect them. */
(function () {
  "use strict";
  if (window.openai) return;
  var parent = window.parent;
  var globals = {
    toolInput: {},
    toolOutput: null,
    toolResponseMetadata: null,
    widgetState: __WIDGET_STATE__,
    theme: "light",
    displayMode: "inline",
    maxHeight: undefined,
    locale: navigator.language || "en-US",
    safeArea: { insets: { top: 0, bottom: 0, left: 0, right: 0 } },
    userAgent: { device: { type: "desktop" }, capabilities: { hover: true, touch: false } },
    view: { mode: "inline" },
  };
  var pending = {};
  var next = 1;
  var ready = false;
  var queued = [];
  var stateTimer = null;

  function post(message) {
    parent.postMessage(message, "*");
  }
  /* Requests wait for the handshake: the host answers nothing else before it. */
  function request(method, params) {
    return new Promise(function (resolve, reject) {
      var id = "openai-" + next++;
      pending[id] = { resolve: resolve, reject: reject };
      var message = { jsonrpc: "2.0", id: id, method: method, params: params || {} };
      if (ready || method === "ui/initialize") post(message);
      else queued.push(message);
    });
  }
  function notify(method, params) {
    var message = { jsonrpc: "2.0", method: method, params: params || {} };
    if (ready) post(message);
    else queued.push(message);
  }
  /* Sets globals and tells the widget, as ChatGPT does (openai:set_globals). */
  function set(changes) {
    var changed = {};
    var any = false;
    for (var key in changes) {
      if (Object.prototype.hasOwnProperty.call(changes, key) && changes[key] !== undefined) {
        globals[key] = changes[key];
        changed[key] = changes[key];
        any = true;
      }
    }
    if (!any) return;
    try {
      window.dispatchEvent(new CustomEvent("openai:set_globals", { detail: { globals: changed } }));
    } catch (e) {}
  }
  /* Sends the widget's latest state now, if it has not been sent. */
  function flushState() {
    if (!stateTimer) return;
    clearTimeout(stateTimer);
    stateTimer = null;
    notify("__WIDGET_STATE_METHOD__", { state: globals.widgetState });
  }
  window.addEventListener("pagehide", flushState);
  function fromContext(ctx) {
    if (!ctx || typeof ctx !== "object") return {};
    var out = {};
    if (ctx.theme === "light" || ctx.theme === "dark") out.theme = ctx.theme;
    if (typeof ctx.displayMode === "string") {
      out.displayMode = ctx.displayMode;
      out.view = { mode: ctx.displayMode };
    }
    if (ctx.containerDimensions && typeof ctx.containerDimensions.maxHeight === "number") {
      out.maxHeight = ctx.containerDimensions.maxHeight;
    }
    if (typeof ctx.locale === "string") out.locale = ctx.locale;
    if (ctx.safeAreaInsets && typeof ctx.safeAreaInsets === "object") out.safeArea = { insets: ctx.safeAreaInsets };
    if (ctx.deviceCapabilities || ctx.platform) {
      var caps = ctx.deviceCapabilities || {};
      out.userAgent = {
        device: { type: ctx.platform === "mobile" ? "mobile" : ctx.platform === "web" ? "unknown" : "desktop" },
        capabilities: { hover: caps.hover !== false, touch: caps.touch === true },
      };
    }
    return out;
  }
  function failure(error) {
    var e = new Error((error && error.message) || "the host refused the request");
    if (error && typeof error.code === "number") e.code = error.code;
    return e;
  }

  /* Whether the widget speaks the bridge itself too (frameworks such as skybridge use the MCP
     Apps bridge and window.openai side by side): seen from the host answering a request that is
     not ours. From then on the host's requests are the widget's to answer, not the shim's. */
  var widgetSpeaksBridge = false;

  window.addEventListener("message", function (event) {
    if (event.source !== parent) return;
    var m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.id !== undefined && m.method === undefined) {
      var waiting = pending[m.id];
      if (!waiting) {
        if (!(typeof m.id === "string" && m.id.indexOf("openai-") === 0)) widgetSpeaksBridge = true;
        return;
      }
      delete pending[m.id];
      if (m.error) waiting.reject(failure(m.error));
      else waiting.resolve(m.result);
      return;
    }
    var params = m.params || {};
    switch (m.method) {
      case "ui/notifications/tool-input":
        set({ toolInput: params.arguments || {} });
        break;
      case "ui/notifications/tool-result":
        set({
          toolOutput: params.structuredContent === undefined ? null : params.structuredContent,
          toolResponseMetadata: params._meta === undefined ? null : params._meta,
        });
        break;
      case "ui/notifications/host-context-changed":
        set(fromContext(params));
        break;
      case "ui/resource-teardown":
        flushState();
        if (!widgetSpeaksBridge) post({ jsonrpc: "2.0", id: m.id, result: {} });
        break;
      case "ping":
        if (m.id !== undefined && !widgetSpeaksBridge) post({ jsonrpc: "2.0", id: m.id, result: {} });
        break;
      default:
        /* Requests a widget that only knows window.openai cannot answer get an error;
           notifications are dropped. */
        if (m.id !== undefined && m.method !== undefined && !widgetSpeaksBridge) {
          post({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "not handled by the widget" } });
        }
    }
  });

  var openai = {
    callTool: function (name, args) {
      return request("tools/call", { name: String(name), arguments: args || {} });
    },
    sendFollowUpMessage: function (options) {
      var prompt = options && typeof options.prompt === "string" ? options.prompt : "";
      return request("ui/message", { role: "user", content: [{ type: "text", text: prompt }] }).then(function () {});
    },
    /* Checked by the host, like any view's link (https only), so a refusal is in the audit log. */
    openExternal: function (options) {
      var href = options && typeof options.href === "string" ? options.href : "";
      return request("ui/open-link", { url: href }).then(function () {});
    },
    requestDisplayMode: function (options) {
      var mode = options && typeof options.mode === "string" ? options.mode : "inline";
      return request("ui/request-display-mode", { mode: mode }).then(function (result) {
        return { mode: (result && result.mode) || globals.displayMode };
      });
    },
    notifyIntrinsicHeight: function (height) {
      if (typeof height === "number" && isFinite(height) && height >= 0) {
        notify("ui/notifications/size-changed", { height: Math.ceil(height) });
      }
    },
    /* The state is the widget's at once; the host gets the latest a moment later, so a widget
       that saves on every keystroke sends a few messages a second, never a flood. */
    setWidgetState: function (state) {
      set({ widgetState: state === undefined ? null : state });
      if (!stateTimer) stateTimer = setTimeout(flushState, 100);
      return Promise.resolve();
    },
    requestClose: function () {
      notify("ui/notifications/request-teardown", {});
    },
  };
  ["toolInput", "toolOutput", "toolResponseMetadata", "widgetState", "theme", "displayMode", "maxHeight", "locale", "safeArea", "userAgent", "view"].forEach(function (key) {
    Object.defineProperty(openai, key, {
      enumerable: true,
      get: function () {
        return globals[key];
      },
    });
  });
  Object.defineProperty(window, "openai", { value: Object.freeze(openai), enumerable: true });

  request("ui/initialize", {
    protocolVersion: "2026-01-26",
    appInfo: { name: "openai-apps-sdk-widget", version: "1" },
    appCapabilities: { availableDisplayModes: ["inline", "fullscreen", "pip"] },
  }).then(
    function (result) {
      ready = true;
      set(fromContext(result && result.hostContext));
      post({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
      var waiting = queued;
      queued = [];
      waiting.forEach(post);
    },
    function () {}
  );
})();
