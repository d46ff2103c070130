// One graph (NPU, Bench or the single graph of a build) drawn on a canvas.
//
// The service lays the hierarchy out (reference §6) and answers with the
// visible nodes in absolute layout units. The pane asks only for the part
// around the screen when the graph is big (the viewport Rect of the request),
// draws only the nodes that intersect the screen, and refetches when panning
// leaves the fetched window. Drawing is batched by colour so that thousands of
// nodes stay within a frame.
import "./pane.css";
import {
  type ColorBucket,
  type GraphApi,
  type LayoutNode,
  type Rect,
  type ViewKey,
  type ViewReply,
  Side,
} from "../api/client";
import { onLangChange, t } from "../i18n";
import { Camera, type View } from "./camera";
import { type Change, type FetchTarget, ViewFetcher } from "./fetcher";
import { PaneKeys } from "./keys";
import { Minimap } from "./minimap";
import { HEADER, nodeFill } from "./paint";
import { bindPointer } from "./pointer";
import { type Label, MIN_LABEL_PX, drawScene, labelColour, nodeLabel } from "./scene";

const KEEP_NODES = 30_000; // loaded nodes kept across window refetches

export interface PaneEvents {
  select(pane: GraphPane, node: LayoutNode | null): void;
  /** `inPlace`: a double-click, whose node stays under the pointer. */
  toggle(pane: GraphPane, node: LayoutNode, inPlace: boolean): void;
  contextMenu?(pane: GraphPane, node: LayoutNode, x: number, y: number): void;
  error(message: string): void;
}

export class GraphPane implements FetchTarget {
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

  private readonly camera = new Camera(() => this.viewChanged());
  private readonly fetcher: ViewFetcher;
  private dpr = 1;

  selected = -1;
  counterpart = -1;
  private hover = -1;

  private frameRequested = false;
  private readonly keys = new PaneKeys(this);
  private pending = 0;
  /** Nodes drawn by the last frame, for the frame-time benchmark. */
  drawn = 0;
  /** Nodes whose name the last frame drew as a tag (their label too small to read). */
  tagged: number[] = [];
  /** Called with the time spent taking each reply (the frame-time bench reads it). */
  onApply: ((ms: number, nodes: number) => void) | null = null;
  /** Frame callbacks, for the frame-time benchmark. */
  onFrame: ((ms: number) => void) | null = null;

  constructor(
    api: GraphApi,
    side: Side,
    private readonly events: PaneEvents,
    tooltip: HTMLDivElement,
  ) {
    this.side = side;
    this.fetcher = new ViewFetcher(api, this);
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
      toggle: (n) => this.events.toggle(this, n, true),
      contextMenu: (n, x, y) => {
        if (!this.events.contextMenu) return false;
        this.events.contextMenu(this, n, x, y);
        return true;
      },
    });
    new ResizeObserver(() => this.resize()).observe(this.el);
    onLangChange(() => this.showStatus());
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
    this.fetcher.window = null;
    this.resize();
    this.camera.stopAnimation();
    Object.assign(this.camera, { scale: 1.5, tx: 24, ty: 16 });
    await this.mutate("getView", -1);
    this.camera.reset(this.rootWidth, this.rootHeight, this.minimap.footprint());
  }

  setLegend(legend: ColorBucket[]) {
    this.legend = legend;
    this.recolour();
  }

  /** Re-reads the layout (after matching changed colours or links). */
  refresh(): Promise<void> {
    return this.mutate("getView", -1);
  }

  /** Expands a node; when its children land past an edge of the screen, the view moves them into it. */
  async expand(index: number, inPlace = false): Promise<void> {
    if (inPlace) return this.inPlace(index, () => this.mutate("expand", index));
    await this.mutate("expand", index);
    const n = this.node(index);
    if (!n) return;
    // The whole box when it fits, else as much of it as fits from its top-left corner.
    const { width, height } = this.camera;
    const box = {
      x: n.x,
      y: n.y,
      width: Math.min(n.width, (width - 48) / this.scale),
      height: Math.min(n.height, (height - 48) / this.scale),
    };
    const to = this.camera.scrolledTo(box);
    if (to) this.camera.set(to, true);
  }

  collapse(index: number, inPlace = false): Promise<void> {
    if (inPlace) return this.inPlace(index, () => this.mutate("collapse", index));
    return this.mutate("collapse", index);
  }

  /** Runs a layout change and moves the view so that the node's header stays where it was on screen. */
  private async inPlace(index: number, change: () => Promise<void>): Promise<void> {
    const before = this.node(index);
    const at = before ? { x: before.x * this.scale + this.tx, y: before.y * this.scale + this.ty } : null;
    await change();
    const n = this.node(index);
    if (!n || !at) return;
    const s = this.scale;
    this.camera.set({ scale: s, tx: at.x - n.x * s, ty: at.y - n.y * s });
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

  /** The view transform: screen = layout * scale + (tx, ty). */
  get tx() {
    return this.camera.tx;
  }

  get ty() {
    return this.camera.ty;
  }

  get scale() {
    return this.camera.scale;
  }

  /** Moves the view (a saved or linked place), optionally easing there. */
  setView(v: View, animate = false) {
    this.camera.set(v, animate);
  }

  /** Layout-space rectangle on screen. */
  viewRect(): Rect {
    return this.camera.viewRect();
  }

  fit() {
    if (this.rootWidth && this.rootHeight) this.camera.fit(this.rootWidth, this.rootHeight, this.minimap.footprint());
  }

  centerOn(index: number, animate = true) {
    const n = this.node(index);
    // The label as fitted to the node (it may be set smaller than the node type's font).
    if (n) this.camera.set(this.camera.centred(n, nodeLabel(this.ctx, n).font), animate);
  }

  /** Canvas coordinates of the middle of a loaded node's header (tests and automation click there). */
  locate(name: string): { x: number; y: number } | null {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) return null;
    return { x: (n.x + n.width / 2) * this.scale + this.tx, y: (n.y + HEADER / 2) * this.scale + this.ty };
  }

  /** The label a loaded node's header shows (tests read it). */
  labelOf(name: string): string | null {
    const n = this.nodes.find((x) => x.name === name);
    return n ? nodeLabel(this.ctx, n).text : null;
  }

  /** Where a loaded node's label is drawn, in canvas px, and its colours (tests read it). */
  labelBox(
    name: string,
  ): { text: string; left: number; right: number; markRight: number; colour: string; fill: string } | null {
    const i = this.nodes.findIndex((x) => x.name === name);
    if (i < 0) return null;
    const n = this.nodes[i];
    const l = nodeLabel(this.ctx, n);
    const s = this.scale;
    const centre = (n.x + n.width / 2 + l.dx) * s + this.tx;
    const m = Math.max(3, Math.min(7, HEADER * s * 0.32));
    const marked = n.divergent || n.containsDivergence;
    const drawn = HEADER * s >= 8 && n.width * s >= 12 && l.font * s >= MIN_LABEL_PX;
    return {
      text: drawn ? l.text : "",
      left: centre - (l.width * s) / 2,
      right: centre + (l.width * s) / 2,
      markRight: marked ? n.x * s + this.tx + 2 * m + 3 : -Infinity,
      colour: labelColour(this.fills[i]),
      fill: this.fills[i],
    };
  }

  /** Whether the node is loaded and its header is on screen. */
  isOnScreen(index: number): boolean {
    const n = this.node(index);
    if (!n) return false;
    const sx = n.x * this.scale + this.tx;
    const sy = n.y * this.scale + this.ty;
    const { width, height } = this.camera;
    return sx + n.width * this.scale > 0 && sx < width && sy + HEADER * this.scale > 0 && sy < height;
  }

  panBy(dx: number, dy: number) {
    this.camera.panBy(dx, dy);
  }

  zoomAt(factor: number, sx: number, sy: number) {
    this.camera.zoomAt(factor, sx, sy);
  }

  /** Centres the screen on a layout point (the minimap uses it). */
  lookAt(lx: number, ly: number) {
    this.camera.lookAt(lx, ly);
  }

  keyDown(key: string, shift = false): boolean {
    return this.keys.keyDown(key, shift);
  }

  keyUp(key: string) {
    this.keys.keyUp(key);
  }

  releaseKeys() {
    this.keys.releaseKeys();
  }

  // ---------------------------------------------------------------- replies

  private mutate(kind: Change, index: number): Promise<void> {
    return this.fetcher.change(kind, index);
  }

  busy(delta: number) {
    this.pending += delta;
    this.spinner.hidden = this.pending <= 0;
  }

  error(message: string) {
    this.events.error(message);
  }

  /**
   * Takes a reply's nodes. `keep` (a window refetch, the layout unchanged)
   * also keeps the nodes already loaded outside the new window, up to
   * KEEP_NODES in all, so panning back shows them at once. The nodes stay in
   * an order where every node comes after its ancestors: a new node's
   * ancestors are all in the reply, and kept nodes keep their old order.
   */
  apply(reply: ViewReply, cut: Rect | null, keep: boolean) {
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
    this.fetcher.window = this.nodes.length >= reply.totalVisible ? null : cut;
    this.labels = new Array(this.nodes.length);
    this.recolour();
    this.showStatus();
    this.minimap.invalidate();
    this.onApply?.(performance.now() - t0, nodes.length);
  }

  private showStatus() {
    this.statusEl.textContent = this.key ? t("visible", { n: this.totalVisible }) : "";
  }

  private recolour() {
    this.fills = this.nodes.map((n) => nodeFill(n, this.legend, this.compare));
    this.invalidate();
  }

  // ---------------------------------------------------------------- drawing

  private resize() {
    const r = this.el.getBoundingClientRect();
    const w = Math.max(1, Math.round(r.width));
    const hgt = Math.max(1, Math.round(r.height));
    const dpr = window.devicePixelRatio || 1;
    if (w === this.camera.width && hgt === this.camera.height && dpr === this.dpr) return;
    this.camera.width = w;
    this.camera.height = hgt;
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
    this.fetcher.scheduleRefetch();
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
    this.tagged = [];
    this.drawn = drawScene({
      tagged: this.tagged,
      ctx: this.ctx,
      side: this.side,
      legend: this.legend,
      nodes: this.nodes,
      fills: this.fills,
      labels: this.labels,
      scale: this.scale,
      tx: this.tx,
      ty: this.ty,
      cssWidth: this.camera.width,
      cssHeight: this.camera.height,
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

  stopAnimation() {
    this.camera.stopAnimation();
  }

  /** Whether a centring animation is running (the view is still moving). */
  isAnimating(): boolean {
    return this.camera.isAnimating();
  }

  /** Waits for every queued layout request. */
  idle(): Promise<unknown> {
    return this.fetcher.idle();
  }

  size() {
    return { width: this.camera.width, height: this.camera.height };
  }

  fillOf(n: LayoutNode): string {
    const p = this.pos.get(n.index);
    return p === undefined ? nodeFill(n, this.legend, this.compare) : this.fills[p];
  }
}
