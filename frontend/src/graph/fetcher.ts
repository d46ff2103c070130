// The requests of a pane. Layout changes (open, expand, collapse, reveal)
// run one after another; between them, a window refetch follows the screen
// when panning leaves the fetched region of a big graph.
import type { GraphApi, Rect, ViewKey, ViewReply } from "../api/client";

export type Change = "getView" | "expand" | "collapse" | "reveal";

/** What the fetcher reads of its pane and hands back to it. */
export interface FetchTarget {
  readonly key: ViewKey | null;
  viewRect(): Rect;
  size(): { width: number; height: number };
  readonly scale: number;
  readonly rootWidth: number;
  readonly rootHeight: number;
  /** Takes a reply; `cut` is the region it covers (null: every visible node), `keep` keeps loaded nodes outside it. */
  apply(reply: ViewReply, cut: Rect | null, keep: boolean): void;
  busy(delta: number): void;
  error(message: string): void;
}

export class ViewFetcher {
  /** The layout region the nodes cover; null when the reply held every visible node. */
  window: Rect | null = null;
  private epoch = 0; // bumped by every layout-changing request
  private queue: Promise<unknown> = Promise.resolve();
  private refetchTimer: ReturnType<typeof setTimeout> | undefined;
  private refetchAbort: AbortController | null = null;

  constructor(
    private readonly api: GraphApi,
    private readonly pane: FetchTarget,
  ) {}

  /** Queues a layout change; `index` is the node (-1 for getView). */
  change(kind: Change, index: number): Promise<void> {
    const run = async () => {
      const key = this.pane.key;
      if (!key) return;
      const epoch = ++this.epoch;
      this.cancelRefetch();
      // A jump asks for the screen around the node, wherever the node lands (viewportFromNode).
      const fromNode = kind === "reveal";
      const viewport = fromNode ? this.aroundNode() : this.wantRect();
      this.pane.busy(+1);
      try {
        let reply: ViewReply;
        if (kind === "getView") reply = await this.api.call("getView", { view: key, viewport });
        else reply = await this.api.call(kind, { view: key, node: index, viewport, viewportFromNode: fromNode });
        const applied = reply.viewport && reply.viewport.width > 0 ? reply.viewport : fromNode ? null : viewport;
        if (kind === "reveal" && (!applied || reply.nodes.every((n) => n.index !== index))) {
          // A service that cannot place the window: take every visible node.
          reply = await this.api.call("getView", { view: key });
          this.pane.apply(reply, null, false);
        } else {
          this.pane.apply(reply, applied, false);
        }
      } catch (e) {
        this.pane.error((e as Error).message);
        throw e;
      } finally {
        this.pane.busy(-1);
        if (epoch === this.epoch) this.scheduleRefetch();
      }
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  /** Waits for every queued layout request. */
  idle(): Promise<unknown> {
    return this.queue;
  }

  /**
   * The screen's layout rectangle grown on each side, in whole units: by 3/4
   * of a screen when zoomed in, less when zoomed far out, where one screen
   * already holds thousands of nodes to transfer.
   */
  private wantRect(): Rect {
    const v = this.pane.viewRect();
    const k = this.pane.scale >= 0.2 ? 0.75 : 0.4;
    const mx = v.width * k;
    const my = v.height * k;
    const x = Math.floor(Math.max(0, v.x - mx));
    const y = Math.floor(Math.max(0, v.y - my));
    return { x, y, width: Math.ceil(v.x + v.width + mx) - x, height: Math.ceil(v.y + v.height + my) - y };
  }

  /** Two screens around a node's top-left corner, relative to it. */
  private aroundNode(): Rect {
    const { width, height } = this.pane.size();
    const w = Math.ceil(width / this.pane.scale);
    const hh = Math.ceil(height / this.pane.scale);
    return { x: -w, y: -hh, width: 2 * w, height: 2 * hh };
  }

  /** Whether the screen, with a quarter screen to spare, is leaving the fetched window. */
  private needsRefetch(): boolean {
    if (!this.window || !this.pane.key) return false;
    const v = this.pane.viewRect();
    const w = this.window;
    const gx = v.width * 0.25;
    const gy = v.height * 0.25;
    const left = Math.max(0, v.x - gx);
    const top = Math.max(0, v.y - gy);
    const right = Math.min(this.pane.rootWidth, v.x + v.width + gx);
    const bottom = Math.min(this.pane.rootHeight, v.y + v.height + gy);
    if (right <= left || bottom <= top) return false; // nothing of the graph on screen
    return left < w.x || top < w.y || right > w.x + w.width || bottom > w.y + w.height;
  }

  /** Called when the screen moved: refetches soon if it leaves the window. */
  scheduleRefetch() {
    if (!this.needsRefetch()) return;
    if (this.refetchTimer !== undefined) return;
    this.refetchTimer = setTimeout(() => {
      this.refetchTimer = undefined;
      void this.refetch();
    }, 60);
  }

  private cancelRefetch() {
    if (this.refetchTimer !== undefined) clearTimeout(this.refetchTimer);
    this.refetchTimer = undefined;
    this.refetchAbort?.abort();
    this.refetchAbort = null;
  }

  /**
   * Fetches the window around the screen. One at a time: a fetch is never
   * aborted for a newer screen position (the service would still do the
   * work, and a steady pan would abort every fetch); when it lands, the next
   * one starts if the screen has moved on. Layout changes abort it.
   */
  private async refetch() {
    const key = this.pane.key;
    if (!key || this.refetchAbort || !this.needsRefetch()) return;
    const epoch = this.epoch;
    const viewport = this.wantRect();
    const abort = new AbortController();
    this.refetchAbort = abort;
    try {
      const reply = await this.api.call("getView", { view: key, viewport }, abort.signal);
      if (epoch !== this.epoch || abort.signal.aborted) return;
      this.pane.apply(reply, viewport, true);
    } catch (e) {
      if (!abort.signal.aborted) this.pane.error((e as Error).message);
    } finally {
      if (this.refetchAbort === abort) this.refetchAbort = null;
    }
    this.scheduleRefetch();
  }
}
