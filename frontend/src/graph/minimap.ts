// The minimap of a pane: the root box and the loaded nodes at a small scale,
// with the screen as a rectangle. Clicking or dragging moves the screen.
// The node layer is redrawn only when the layout changes.
import type { LayoutNode, Rect } from "../api/client";
import { palette } from "../theme";
import { HEADER } from "./paint";

const MAX_W = 120;
const MAX_H = 150;
/** A graph many times taller than wide still gets this much across (px), when the pane allows. */
export const MIN_SIDE = 72;
/** Its distance from the pane's right and bottom edges (as .minimap in pane.css). */
const INSET = 8;

/** What the minimap reads and drives on its pane. */
export interface MinimapTarget {
  readonly nodes: LayoutNode[];
  readonly rootWidth: number;
  readonly rootHeight: number;
  viewRect(): Rect;
  size(): { width: number; height: number };
  fillOf(n: LayoutNode): string;
  lookAt(lx: number, ly: number): void;
  panBy(dx: number, dy: number): void;
  invalidate(): void;
}

export class Minimap {
  readonly el: HTMLCanvasElement;
  private readonly ctx: CanvasRenderingContext2D;
  private base: HTMLCanvasElement = document.createElement("canvas");
  private dirty = true;
  private visible = true;
  private kx = 1; // minimap px per layout unit, across
  private ky = 1; // and down (a tall graph is squeezed less across than down, so it is not a sliver)
  private w = MAX_W;
  private h = 60;

  constructor(private readonly pane: MinimapTarget) {
    this.el = document.createElement("canvas");
    this.el.className = "minimap";
    const ctx = this.el.getContext("2d");
    if (!ctx) throw new Error("canvas 2d context unavailable");
    this.ctx = ctx;
    let dragging = false;
    const move = (e: PointerEvent) => {
      const r = this.el.getBoundingClientRect();
      this.pane.lookAt((e.clientX - r.left) / this.kx, (e.clientY - r.top) / this.ky);
    };
    this.el.addEventListener("pointerdown", (e) => {
      dragging = true;
      this.el.setPointerCapture(e.pointerId);
      move(e);
    });
    this.el.addEventListener("pointermove", (e) => dragging && move(e));
    this.el.addEventListener("pointerup", () => (dragging = false));
    this.el.addEventListener(
      "wheel",
      (e) => {
        e.preventDefault();
        this.pane.panBy(0, -e.deltaY);
      },
      { passive: false },
    );
  }

  setVisible(on: boolean) {
    this.visible = on;
    this.el.hidden = !on;
    if (on) this.pane.invalidate();
  }

  invalidate() {
    this.dirty = true;
  }

  draw() {
    const p = this.pane;
    if (!this.visible || !p.rootWidth || !p.rootHeight) {
      this.el.hidden = true;
      return;
    }
    const v = p.viewRect();
    // Hidden when the screen shows nearly all of the graph (reference §8.5).
    const covers = v.x <= 0 && v.y <= 0 && v.x + v.width >= p.rootWidth && v.y + v.height >= p.rootHeight;
    this.el.hidden = covers;
    if (covers) return;
    const dpr = window.devicePixelRatio || 1;
    if (this.dirty) this.redrawBase(dpr);
    const ctx = this.ctx;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, this.w, this.h);
    ctx.drawImage(this.base, 0, 0, this.w, this.h);
    const pal = palette();
    const x = v.x * this.kx;
    const y = v.y * this.ky;
    ctx.fillStyle = pal.minimapViewport;
    ctx.fillRect(x, y, v.width * this.kx, v.height * this.ky);
    ctx.strokeStyle = pal.minimapViewportStroke;
    ctx.lineWidth = 1;
    ctx.strokeRect(x + 0.5, y + 0.5, Math.max(2, v.width * this.kx - 1), Math.max(2, v.height * this.ky - 1));
  }

  /** Its scales and size for the pane's size and root box. */
  private measure() {
    const p = this.pane;
    const size = p.size();
    const maxW = Math.min(MAX_W, size.width * 0.25);
    const maxH = Math.min(MAX_H, size.height * 0.3);
    const k = Math.min(maxW / p.rootWidth, maxH / p.rootHeight);
    // At least MIN_SIDE px each way: a graph many times taller than wide is stretched across.
    const kx = Math.max(k, Math.min(maxW, MIN_SIDE) / p.rootWidth);
    const ky = Math.max(k, Math.min(maxH, MIN_SIDE) / p.rootHeight);
    return { kx, ky, w: Math.max(20, Math.ceil(p.rootWidth * kx)), h: Math.max(20, Math.ceil(p.rootHeight * ky)) };
  }

  /**
   * The strip at the pane's right that a view keeps clear of nodes so that the minimap, when shown, covers
   * none (px, 0 when it is switched off).
   */
  footprint(): number {
    if (!this.visible || !this.pane.rootWidth || !this.pane.rootHeight) return 0;
    return this.measure().w + 2 * INSET;
  }

  private redrawBase(dpr: number) {
    this.dirty = false;
    const p = this.pane;
    ({ kx: this.kx, ky: this.ky, w: this.w, h: this.h } = this.measure());
    for (const c of [this.el, this.base]) {
      c.width = Math.round(this.w * dpr);
      c.height = Math.round(this.h * dpr);
    }
    this.el.style.width = `${this.w}px`;
    this.el.style.height = `${this.h}px`;
    const ctx = this.base.getContext("2d");
    if (!ctx) return;
    const pal = palette();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = pal.minimapBackground;
    ctx.fillRect(0, 0, this.w, this.h);
    const kx = this.kx;
    const ky = this.ky;
    for (const n of p.nodes) {
      const w = n.width * kx;
      if (w < 0.3) continue;
      if (n.expanded) {
        ctx.strokeStyle = pal.stroke;
        ctx.lineWidth = 0.5;
        ctx.strokeRect(n.x * kx, n.y * ky, w, n.height * ky);
      } else {
        ctx.fillStyle = p.fillOf(n);
        ctx.fillRect(n.x * kx, n.y * ky, Math.max(0.5, w), Math.max(0.5, HEADER * ky));
      }
    }
  }
}
