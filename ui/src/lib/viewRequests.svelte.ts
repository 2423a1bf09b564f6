// The requests of one kind views put to the person (a link to open, a prompt for the model, files
// to save): oldest first, one shown at a time. A request comes with its `request` event and goes
// once answered here, or with its `settled` event (answered elsewhere, or given up waiting).
import { api, errorMessage, type ViewEvent } from "./api";

type Kind = ViewEvent["type"];
type Of<K extends Kind> = Extract<ViewEvent, { type: K }>;

export class ViewRequests<R extends Kind, S extends Kind> {
  queue = $state<Of<R>[]>([]);
  /** An answer is on its way to Rust. */
  busy = $state(false);
  /** What the person is told after (a failure, or the outcome `settled` carries). */
  note = $state<string | null>(null);

  constructor(
    private readonly request: R,
    private readonly settled: S,
    /** What a `settled` event does besides taking its request away (by default nothing). */
    private readonly onSettled: (event: Of<S>, requests: ViewRequests<R, S>) => void = () => {},
  ) {}

  get current(): Of<R> | null {
    return this.queue[0] ?? null;
  }

  /** Listens for the view events (call from `onMount`; the function it returns stops it). */
  start(): () => void {
    let unlisten: (() => void) | undefined;
    let stopped = false;
    void api
      .onViewEvent((event) => {
        if (event.type === this.request) this.queue = [...this.queue, event as Of<R>];
        if (event.type === this.settled) {
          const done = event as Of<S>;
          if ("requestId" in done) this.queue = this.queue.filter((r) => !("requestId" in r) || r.requestId !== done.requestId);
          this.onSettled(done, this);
        }
      })
      .then((stop) => {
        if (stopped) stop();
        else unlisten = stop;
      });
    return () => {
      stopped = true;
      unlisten?.();
    };
  }

  /** Answers the shown request with `send`; a failure is said with `failed` before its reason. */
  async answer(send: (request: Of<R>) => Promise<unknown>, failed: string) {
    const request = this.current;
    if (!request || this.busy) return;
    this.busy = true;
    try {
      await send(request);
    } catch (e) {
      this.note = `${failed}: ${errorMessage(e)}`;
    } finally {
      this.busy = false;
      this.queue = this.queue.filter((r) => r !== request);
    }
  }
}
