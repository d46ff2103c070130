// One graph (NPU, Bench or the single graph of a build) drawn on a canvas.
//
// The service lays the hierarchy out (reference §6) and answers with the
// visible nodes in absolute layout units. The pane asks only for the part
// around the screen when the graph is big (the viewport Rect of the request),
// draws only the nodes that intersect the screen, and refetches when panning
// leaves the fetched window. Drawing is batched by colour so that thousands of
// nodes stay within a frame.
import {
  type ColorBucket,
  type GraphApi,
  type LayoutNode,
  type Rect,
  type ViewKey,
  type ViewReply,
  Side,
} from "../api/client";
import { t } from "../i18n";
import { PaneKeys } from "./keys";
import { Minimap } from "./minimap";
import { HEADER, nodeFill } from "./paint";
import { bindPointer } from "./pointer";
import { type Label, drawScene } from "./scene";

const MIN_SCALE = 0.01;
const MAX_SCALE = 12;
const KEEP_NODES = 30_000; // loaded nodes kept across window refetches

export interface PaneEvents {
  select(pane: GraphPane, node: LayoutNode | null): void;
  toggle(pane: GraphPane, node: LayoutNode): void;
  contextMenu?(pane: GraphPane, node: LayoutNode, x: number, y: number): void;
  error(message: string): void;
}

export class GraphPane {
  readonly el: HTMLDivElement;
  readonly side: Side;
  private readonly canvas: HTMLCanvasElement;
  private readonly ctx: CanvasRenderingContext2D;
  private readonly minimap: Minimap;
  private readonly titleEl: HTMLDivElement;
  private readonly statusEl: HTMLDivElement;
  private readonly spinner: HTMLDivElement;
  private readonly tooltip: HTMLDivElement;

  key: ViewKey | null = null;
  private legend: ColorBucket[] = [];
  private compare = false;

  nodes: LayoutNode[] = [];
  private pos = new Map<number, number>();
  private fills: string[] = [];
  private labels: (Label | undefined)[] = [];
  rootWidth = 0;
  rootHeight = 0;
  totalVisible = 0;
  /** The layout region the nodes cover; null when the reply held every visible node. */
  private window: Rect | null = null;

  tx = 0;
  ty = 0;
  scale = 1;
  private cssWidth = 1;
  private cssHeight = 1;
  private dpr = 1;

  selected = -1;
  counterpart = -1;
  private hover = -1;

  private frameRequested = false;
  private epoch = 0; // bumped by every layout-changing request
  private queue: Promise<unknown> = Promise.resolve();
  private refetchTimer: ReturnType<typeof setTimeout> | undefined;
  private refetchAbort: AbortController | null = null;
  private animation: number | null = null;
  private readonly keys = new PaneKeys(this);
  private pending = 0;
  /** Nodes drawn by the last frame, for the frame-time benchmark. */
  drawn = 0;
  /** Called with the time spent taking each reply (the frame-time bench reads it). */
  onApply: ((ms: number, nodes: number) => void) | null = null;
  /** Frame callbacks, for the frame-time benchmark. */
  onFrame: ((ms: number) => void) | null = null;

  constructor(
    private readonly api: GraphApi,
    side: Side,
    private readonly events: PaneEvents,
    tooltip: HTMLDivElement,
  ) {
    this.side = side;
    this.tooltip = tooltip;
    this.el = document.createElement("div");
    this.el.className = "pane";
    this.el.dataset.side = side === Side.SIDE_BENCH ? "bench" : "npu";
    this.canvas = document.createElement("canvas");
    this.canvas.className = "graph-canvas";
    this.canvas.tabIndex = 0;
    const ctx = this.canvas.getContext("2d", { alpha: false });
    if (!ctx) throw new Error("canvas 2d context unavailable");
    this.ctx = ctx;
    this.titleEl = document.createElement("div");
    this.titleEl.className = "pane-title";
    this.statusEl = document.createElement("div");
    this.statusEl.className = "pane-status";
    this.spinner = document.createElement("div");
    this.spinner.className = "pane-spinner";
    this.spinner.hidden = true;
    this.minimap = new Minimap(this);
    this.el.append(this.canvas, this.titleEl, this.statusEl, this.spinner, this.minimap.el);
    bindPointer(this.canvas, this.tooltip, {
      nodeAt: (x, y) => this.nodeAt(x, y),
      panBy: (dx, dy) => this.panBy(dx, dy),
      zoomAt: (f, x, y) => this.zoomAt(f, x, y),
      stopAnimation: () => this.stopAnimation(),
      hoverAt: (index) => {
        if (index === this.hover) return;
        this.hover = index;
        this.invalidate();
      },
      select: (n) => this.events.select(this, n),
      toggle: (n) => this.events.toggle(this, n),
      contextMenu: (n, x, y) => {
        if (!this.events.contextMenu) return false;
        this.events.contextMenu(this, n, x, y);
        return true;
      },
    });
    new ResizeObserver(() => this.resize()).observe(this.el);
  }

  setTitle(text: string) {
    this.titleEl.textContent = text;
  }

  /** The accessible name of the canvas. */
  setLabel(text: string) {
    this.canvas.setAttribute("aria-label", text);
  }

  /** Fills and the minimap follow the new palette. */
  themeChanged() {
    this.recolour();
    this.minimap.invalidate();
  }

  setMinimapVisible(on: boolean) {
    this.minimap.setVisible(on);
  }

  /** Starts a fresh view of a file (the service creates it with the root expanded). */
  async open(key: ViewKey, legend: ColorBucket[], compare: boolean): Promise<void> {
    this.key = key;
    this.legend = legend;
    this.compare = compare;
    this.nodes = [];
    this.pos.clear();
    this.selected = -1;
    this.counterpart = -1;
    this.hover = -1;
    this.window = null;
    this.resize();
    this.scale = 1.5;
    this.tx = 24;
    this.ty = 16;
    await this.mutate("getView", -1);
    this.resetView();
  }

  setLegend(legend: ColorBucket[]) {
    this.legend = legend;
    this.recolour();
  }

  /** Re-reads the layout (after matching changed colours or links). */
  refresh(): Promise<void> {
    return this.mutate("getView", -1);
  }

  expand(index: number): Promise<void> {
    return this.mutate("expand", index);
  }

  collapse(index: number): Promise<void> {
    return this.mutate("collapse", index);
  }

  /** Expands every ancestor of the node, then centres and selects it. */
  async reveal(index: number, select = true): Promise<LayoutNode | null> {
    await this.mutate("reveal", index);
    const n = this.node(index);
    if (!n) return null;
    if (select) this.selected = index;
    this.centerOn(index);
    return n;
  }

  node(index: number): LayoutNode | undefined {
    const p = this.pos.get(index);
    return p === undefined ? undefined : this.nodes[p];
  }

  setSelected(index: number) {
    this.selected = index;
    this.invalidate();
  }

  setCounterpart(index: number) {
    this.counterpart = index;
    this.invalidate();
  }

  /** Layout-space rectangle on screen. */
  viewRect(): Rect {
    return {
      x: -this.tx / this.scale,
      y: -this.ty / this.scale,
      width: this.cssWidth / this.scale,
      height: this.cssHeight / this.scale,
    };
  }

  fit() {
    if (!this.rootWidth || !this.rootHeight) return;
    const s = clamp(
      Math.min(this.cssWidth / (this.rootWidth + 24), this.cssHeight / (this.rootHeight + 24)),
      MIN_SCALE,
      3,
    );
    this.animateTo(s, (this.cssWidth - this.rootWidth * s) / 2, (this.cssHeight - this.rootHeight * s) / 2);
  }

  /** Puts the whole root width on screen at a readable scale, top aligned. */
  private resetView() {
    const s = clamp(Math.min(1.6, (this.cssWidth - 32) / Math.max(1, this.rootWidth)), 0.25, 1.6);
    this.scale = s;
    this.tx = Math.max(16, (this.cssWidth - this.rootWidth * s) / 2);
    this.ty = 16;
    this.viewChanged();
  }

  centerOn(index: number, animate = true) {
    const n = this.node(index);
    if (!n) return;
    let s = this.scale;
    if (n.width * s > this.cssWidth * 0.9) s = clamp((this.cssWidth * 0.9) / n.width, MIN_SCALE, MAX_SCALE);
    if (s < 0.6 && n.width * 0.6 < this.cssWidth * 0.9) s = 0.6; // readable labels when a small node is the goal
    const tx = this.cssWidth / 2 - (n.x + n.width / 2) * s;
    const boxH = n.expanded ? n.height : HEADER;
    const ty =
      boxH * s > this.cssHeight * 0.7 ? this.cssHeight * 0.2 - n.y * s : this.cssHeight / 2 - (n.y + boxH / 2) * s;
    if (animate) this.animateTo(s, tx, ty);
    else {
      this.scale = s;
      this.tx = tx;
      this.ty = ty;
      this.viewChanged();
    }
  }

  /** Canvas coordinates of the middle of a loaded node's header (tests and automation click there). */
  locate(name: string): { x: number; y: number } | null {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) return null;
    return { x: (n.x + n.width / 2) * this.scale + this.tx, y: (n.y + HEADER / 2) * this.scale + this.ty };
  }

  /** Whether the node is loaded and its header is on screen. */
  isOnScreen(index: number): boolean {
    const n = this.node(index);
    if (!n) return false;
    const sx = n.x * this.scale + this.tx;
    const sy = n.y * this.scale + this.ty;
    return sx + n.width * this.scale > 0 && sx < this.cssWidth && sy + HEADER * this.scale > 0 && sy < this.cssHeight;
  }

  panBy(dx: number, dy: number) {
    this.tx += dx;
    this.ty += dy;
    this.viewChanged();
  }

  zoomAt(factor: number, sx: number, sy: number) {
    const s = clamp(this.scale * factor, MIN_SCALE, MAX_SCALE);
    const k = s / this.scale;
    this.tx = sx - (sx - this.tx) * k;
    this.ty = sy - (sy - this.ty) * k;
    this.scale = s;
    this.viewChanged();
  }

  /** Centres the screen on a layout point (the minimap uses it). */
  lookAt(lx: number, ly: number) {
    this.tx = this.cssWidth / 2 - lx * this.scale;
    this.ty = this.cssHeight / 2 - ly * this.scale;
    this.viewChanged();
  }

  keyDown(key: string): boolean {
    return this.keys.keyDown(key);
  }

  keyUp(key: string) {
    this.keys.keyUp(key);
  }

  releaseKeys() {
    this.keys.releaseKeys();
  }

  // ---------------------------------------------------------------- requests

  private mutate(kind: "getView" | "expand" | "collapse" | "reveal", index: number): Promise<void> {
    const run = async () => {
      if (!this.key) return;
      const epoch = ++this.epoch;
      this.cancelRefetch();
      // A jump asks for the screen around the node, wherever the node lands (viewportFromNode).
      const fromNode = kind === "reveal";
      const viewport = fromNode ? this.aroundNode() : this.wantRect();
      this.setBusy(+1);
      try {
        let reply: ViewReply;
        if (kind === "getView") reply = await this.api.call("getView", { view: this.key, viewport });
        else reply = await this.api.call(kind, { view: this.key, node: index, viewport, viewportFromNode: fromNode });
        const applied = reply.viewport && reply.viewport.width > 0 ? reply.viewport : fromNode ? null : viewport;
        if (kind === "reveal" && (!applied || reply.nodes.every((n) => n.index !== index))) {
          // A service that cannot place the window: take every visible node.
          reply = await this.api.call("getView", { view: this.key });
          this.apply(reply, null);
        } else {
          this.apply(reply, applied);
        }
      } catch (e) {
        this.events.error((e as Error).message);
        throw e;
      } finally {
        this.setBusy(-1);
        if (epoch === this.epoch) this.scheduleRefetch();
      }
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  private setBusy(delta: number) {
    this.pending += delta;
    this.spinner.hidden = this.pending <= 0;
  }

  /**
   * The screen's layout rectangle grown on each side, in whole units: by 3/4
   * of a screen when zoomed in, less when zoomed far out, where one screen
   * already holds thousands of nodes to transfer.
   */
  private wantRect(): Rect {
    const v = this.viewRect();
    const k = this.scale >= 0.2 ? 0.75 : 0.4;
    const mx = v.width * k;
    const my = v.height * k;
    const x = Math.floor(Math.max(0, v.x - mx));
    const y = Math.floor(Math.max(0, v.y - my));
    return { x, y, width: Math.ceil(v.x + v.width + mx) - x, height: Math.ceil(v.y + v.height + my) - y };
  }

  /** Two screens around a node's top-left corner, relative to it. */
  private aroundNode(): Rect {
    const w = Math.ceil(this.cssWidth / this.scale);
    const hh = Math.ceil(this.cssHeight / this.scale);
    return { x: -w, y: -hh, width: 2 * w, height: 2 * hh };
  }

  /**
   * Takes a reply's nodes. `keep` (a window refetch, the layout unchanged)
   * also keeps the nodes already loaded outside the new window, up to
   * KEEP_NODES in all, so panning back shows them at once. The nodes stay in
   * an order where every node comes after its ancestors: a new node's
   * ancestors are all in the reply, and kept nodes keep their old order.
   */
  private apply(reply: ViewReply, cut: Rect | null, keep = false) {
    const t0 = performance.now();
    let nodes = reply.nodes;
    if (keep && this.nodes.length && nodes.length < reply.totalVisible) {
      const fresh = new Set(nodes.map((n) => n.index));
      const kept = this.nodes.filter((n) => !fresh.has(n.index));
      if (kept.length && nodes.length + kept.length <= KEEP_NODES) nodes = nodes.concat(kept);
    }
    this.nodes = nodes;
    this.pos.clear();
    for (let i = 0; i < this.nodes.length; i++) this.pos.set(this.nodes[i].index, i);
    this.rootWidth = reply.width;
    this.rootHeight = reply.height;
    this.totalVisible = reply.totalVisible;
    this.window = this.nodes.length >= reply.totalVisible ? null : cut;
    this.labels = new Array(this.nodes.length);
    this.recolour();
    this.statusEl.textContent = t("visible", { n: reply.totalVisible });
    this.minimap.invalidate();
    this.onApply?.(performance.now() - t0, nodes.length);
  }

  private recolour() {
    this.fills = this.nodes.map((n) => nodeFill(n, this.legend, this.compare));
    this.invalidate();
  }

  /** Whether the screen, with a quarter screen to spare, is leaving the fetched window. */
  private needsRefetch(): boolean {
    if (!this.window || !this.key) return false;
    const v = this.viewRect();
    const w = this.window;
    const gx = v.width * 0.25;
    const gy = v.height * 0.25;
    const left = Math.max(0, v.x - gx);
    const top = Math.max(0, v.y - gy);
    const right = Math.min(this.rootWidth, v.x + v.width + gx);
    const bottom = Math.min(this.rootHeight, v.y + v.height + gy);
    if (right <= left || bottom <= top) return false; // nothing of the graph on screen
    return left < w.x || top < w.y || right > w.x + w.width || bottom > w.y + w.height;
  }

  private scheduleRefetch() {
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
    if (!this.key || this.refetchAbort || !this.needsRefetch()) return;
    const epoch = this.epoch;
    const viewport = this.wantRect();
    const abort = new AbortController();
    this.refetchAbort = abort;
    try {
      const reply = await this.api.call("getView", { view: this.key, viewport }, abort.signal);
      if (epoch !== this.epoch || abort.signal.aborted) return;
      this.apply(reply, viewport, true);
    } catch (e) {
      if (!abort.signal.aborted) this.events.error((e as Error).message);
    } finally {
      if (this.refetchAbort === abort) this.refetchAbort = null;
    }
    this.scheduleRefetch();
  }

  // ---------------------------------------------------------------- drawing

  private resize() {
    const r = this.el.getBoundingClientRect();
    const w = Math.max(1, Math.round(r.width));
    const hgt = Math.max(1, Math.round(r.height));
    const dpr = window.devicePixelRatio || 1;
    if (w === this.cssWidth && hgt === this.cssHeight && dpr === this.dpr) return;
    this.cssWidth = w;
    this.cssHeight = hgt;
    this.dpr = dpr;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(hgt * dpr);
    this.canvas.style.width = `${w}px`;
    this.canvas.style.height = `${hgt}px`;
    this.minimap.invalidate();
    this.viewChanged();
  }

  private viewChanged() {
    this.tooltip.hidden = true;
    this.invalidate();
    this.scheduleRefetch();
  }

  invalidate() {
    if (this.frameRequested) return;
    this.frameRequested = true;
    requestAnimationFrame(() => {
      this.frameRequested = false;
      const t0 = performance.now();
      this.draw();
      this.minimap.draw();
      this.onFrame?.(performance.now() - t0);
    });
  }

  private draw() {
    this.drawn = drawScene({
      ctx: this.ctx,
      side: this.side,
      legend: this.legend,
      nodes: this.nodes,
      fills: this.fills,
      labels: this.labels,
      scale: this.scale,
      tx: this.tx,
      ty: this.ty,
      cssWidth: this.cssWidth,
      cssHeight: this.cssHeight,
      dpr: this.dpr,
      view: this.viewRect(),
      hover: this.hover,
      selected: this.selected,
      counterpart: this.counterpart,
      node: (i) => this.node(i),
    });
  }

  // ---------------------------------------------------------------- input

  /** The deepest loaded node under a screen point. */
  nodeAt(sx: number, sy: number): LayoutNode | null {
    const lx = (sx - this.tx) / this.scale;
    const ly = (sy - this.ty) / this.scale;
    for (let i = this.nodes.length - 1; i >= 0; i--) {
      const n = this.nodes[i];
      const hgt = n.expanded ? n.height : HEADER;
      if (lx >= n.x && lx <= n.x + n.width && ly >= n.y && ly <= n.y + hgt) return n;
    }
    return null;
  }

  private animateTo(scale: number, tx: number, ty: number) {
    this.stopAnimation();
    const from = { s: this.scale, x: this.tx, y: this.ty };
    const start = performance.now();
    const duration = 280;
    const step = (now: number) => {
      const k = Math.min(1, (now - start) / duration);
      const e = 1 - Math.pow(1 - k, 3);
      this.scale = from.s + (scale - from.s) * e;
      this.tx = from.x + (tx - from.x) * e;
      this.ty = from.y + (ty - from.y) * e;
      this.viewChanged();
      this.animation = k < 1 ? requestAnimationFrame(step) : null;
    };
    this.animation = requestAnimationFrame(step);
  }

  private stopAnimation() {
    if (this.animation !== null) cancelAnimationFrame(this.animation);
    this.animation = null;
  }

  /** Whether a centring animation is running (the view is still moving). */
  isAnimating(): boolean {
    return this.animation !== null;
  }

  /** Waits for every queued layout request. */
  idle(): Promise<unknown> {
    return this.queue;
  }

  size() {
    return { width: this.cssWidth, height: this.cssHeight };
  }

  fillOf(n: LayoutNode): string {
    const p = this.pos.get(n.index);
    return p === undefined ? nodeFill(n, this.legend, this.compare) : this.fills[p];
  }
}

function clamp(v: number, lo: number, hi: number) {
  return Math.min(hi, Math.max(lo, v));
}
