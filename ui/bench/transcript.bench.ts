// Timings of the transcript with 2,000 messages (1,000 exchanges, each reply a few paragraphs of
// Markdown with a code block): reading it from the store, the first render (windowed, and with
// every item rendered for comparison), a streamed delta, and scrolling. Numbers, not a test:
//   npx vitest bench --run bench/transcript.bench.ts
// (jsdom, Svelte in dev mode: absolute numbers are slower than the app's; compare the rows.)
import { flushSync, mount, unmount } from "svelte";
import { afterAll, bench, describe } from "vitest";
import { markdownBlocks, markdownToHtml } from "../src/lib/markdown";
import type { TurnEvent } from "../src/lib/api";
import { ev, record } from "../src/lib/testing/turns";
import { Transcript } from "../src/lib/transcript.svelte";
import TranscriptView from "../src/components/TranscriptView.svelte";

const EXCHANGES = 1000;
/** Rows in the document after the first render, as last measured. */
const rendered = { windowed: 0, everything: 0 };

function reply(i: number): string {
  return [
    `Answer **${i}**: here is what I found, with a [link](https://example.com/${i}) and \`inline code\`.`,
    "- first point\n- second point\n- third point",
    "```ts\nexport function add(a: number, b: number): number {\n  return a + b; // " + i + "\n}\n```",
    "That should do it.",
  ].join("\n\n");
}

const events: TurnEvent[] = [];
for (let i = 0; i < EXCHANGES; i++) {
  events.push(ev.user(`Question ${i}: how do I add two numbers?`), ev.step(1), ev.assistant([{ type: "text", text: reply(i) }]), ev.done("end_turn"));
}
const stored = record(events);

function loaded(): Transcript {
  const t = new Transcript();
  t.load(stored);
  return t;
}

/** Mounts the view in a log of `height` px (jsdom lays nothing out: the height is stubbed). */
function show(transcript: Transcript, height: number) {
  const target = document.createElement("div");
  document.body.append(target);
  const view = mount(TranscriptView, { target, props: { transcript, servers: [] } });
  const log = target.querySelector<HTMLElement>("[data-testid=transcript]")!;
  Object.defineProperty(log, "clientHeight", { get: () => height, configurable: true });
  // Tall enough that a reader scrolled anywhere in the middle is not at the end.
  Object.defineProperty(log, "scrollHeight", { get: () => 10_000_000, configurable: true });
  log.dispatchEvent(new Event("scroll"));
  flushSync();
  return {
    log,
    rows: () => target.querySelectorAll(".row").length,
    done: () => {
      unmount(view);
      target.remove();
    },
  };
}

describe(`transcript of ${EXCHANGES * 2} messages`, () => {
  bench("read from the store (Transcript.load)", () => {
    loaded();
  });

  const windowed = loaded();
  bench("first render, windowed (800 px log)", () => {
    const view = show(windowed, 800);
    rendered.windowed = view.rows();
    view.done();
  });

  const everything = loaded();
  bench(
    "first render, every item (a log tall enough for all)",
    () => {
      const view = show(everything, 10_000_000);
      rendered.everything = view.rows();
      view.done();
    },
    { iterations: 1, time: 0, warmupIterations: 0, warmupTime: 0 },
  );

  // One frame of a streaming reply: the text grew by a word since the last frame.
  const long = Array.from({ length: 8 }, (_, i) => reply(i)).join("\n\n");
  let words = 0;
  bench(`Markdown, one frame of a ${long.length}-char streaming reply, whole text rendered`, () => {
    markdownToHtml(`${long}\n\nand ${"word ".repeat(++words % 50)}`);
  });
  bench(`Markdown, one frame of a ${long.length}-char streaming reply, by blocks (as the app does)`, () => {
    markdownBlocks(`${long}\n\nand ${"word ".repeat(++words % 50)}`);
  });

  let streaming: { transcript: Transcript; view: ReturnType<typeof show> } | null = null;
  bench(
    "one streamed delta into the last reply, rendered",
    () => {
      const { transcript } = streaming!;
      transcript.apply(ev.text(" more **words**"));
      flushSync();
    },
    {
      setup: () => {
        const transcript = loaded();
        transcript.apply(ev.user("One more?"));
        transcript.apply(ev.step(1));
        streaming = { transcript, view: show(transcript, 800) };
      },
      teardown: () => streaming?.view.done(),
    },
  );

  let scrolling: ReturnType<typeof show> | null = null;
  let position = 0;
  bench(
    "scroll by one screen (800 px), rendered",
    () => {
      const log = scrolling!.log;
      position = (position + 800) % 100_000;
      log.scrollTop = position;
      log.dispatchEvent(new Event("scroll"));
      flushSync();
    },
    {
      setup: () => {
        scrolling = show(loaded(), 800);
        position = 0;
      },
      teardown: () => scrolling?.done(),
    },
  );
});

afterAll(() => {
  console.log(`rows in the document: windowed ${rendered.windowed}, everything ${rendered.everything} (of ${EXCHANGES * 2} messages)`);
});
