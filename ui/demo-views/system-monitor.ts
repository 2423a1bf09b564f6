// System monitor view: renders the system_monitor tool's structuredContent, then refreshes by
// calling the app-only tool poll_system_stats every few seconds while it is visible.
import { connect, createApp, el, mib, showError } from "./shared";

interface Stats {
  host: string | null;
  cpuPercent: number;
  cores: number;
  memory: { totalBytes: number; usedBytes: number };
  loadAverage: [number, number, number];
  topProcesses: { name: string; pid: number; cpuPercent: number; memoryBytes: number }[];
  takenAtUnixMs: number;
}

const root = document.getElementById("root")!;
const app = createApp("porthole-system-monitor");
let timer: number | undefined;

function bar(percent: number) {
  const fill = el("div");
  fill.style.width = `${Math.min(100, Math.max(0, percent)).toFixed(1)}%`;
  return el("div", { className: "bar" }, fill);
}

function render(stats: Stats) {
  const memPercent = (100 * stats.memory.usedBytes) / Math.max(1, stats.memory.totalBytes);
  const rows = stats.topProcesses.map((p) =>
    el("tr", {},
      el("td", {}, p.name),
      el("td", { className: "num" }, String(p.pid)),
      el("td", { className: "num" }, `${p.cpuPercent.toFixed(1)}%`),
      el("td", { className: "num" }, mib(p.memoryBytes))),
  );
  const refresh = el("button", { type: "button", textContent: "Refresh" });
  refresh.dataset.testid = "refresh";
  refresh.onclick = () => void poll();
  root.replaceChildren(
    el("div", { className: "row" },
      el("h1", {}, stats.host ?? "This computer"),
      refresh),
    el("div", {}, `CPU ${stats.cpuPercent.toFixed(1)}% of ${stats.cores} cores · load ${stats.loadAverage.map((l) => l.toFixed(2)).join(" ")}`),
    bar(stats.cpuPercent),
    el("div", {}, `Memory ${mib(stats.memory.usedBytes)} of ${mib(stats.memory.totalBytes)}`),
    bar(memPercent),
    el("table", {},
      el("thead", {}, el("tr", {}, el("th", {}, "Process"), el("th", { className: "num" }, "PID"), el("th", { className: "num" }, "CPU"), el("th", { className: "num" }, "Memory"))),
      el("tbody", {}, ...rows)),
    el("p", { className: "muted" }, `Updated ${new Date(stats.takenAtUnixMs).toLocaleTimeString()}`),
  );
}

async function poll() {
  try {
    const result = await app.callServerTool({ name: "poll_system_stats", arguments: {} });
    if (result.isError) throw new Error(JSON.stringify(result.content));
    render(result.structuredContent as unknown as Stats);
  } catch (e) {
    showError(root, `Refresh failed: ${e instanceof Error ? e.message : String(e)}`);
    clearInterval(timer);
  }
}

app.ontoolresult = (result) => {
  if (result.isError || !result.structuredContent) {
    showError(root, "The system_monitor tool returned no figures.");
    return;
  }
  render(result.structuredContent as unknown as Stats);
  clearInterval(timer);
  timer = window.setInterval(() => { if (!document.hidden) void poll(); }, 5000);
};
app.onteardown = async () => {
  clearInterval(timer);
  return {};
};

connect(app).catch((e) => showError(root, `Could not connect to the host: ${String(e)}`));
