// The view transform of a pane: screen = layout * scale + (tx, ty). Fitting,
// centring on a node, zooming about a point and the easing between views.
import type { LayoutNode, Rect } from "../api/client";
import { HEADER, NODE_API } from "./paint";

export const MIN_SCALE = 0.01;
export const MAX_SCALE = 12;
/** The label size a jump zooms to (px), when the node's width allows. */
export const READABLE_PX = 10;

export interface View {
  tx: number;
  ty: number;
  scale: number;
}

export class Camera implements View {
  tx = 0;
  ty = 0;
  scale = 1;
  width = 1; // CSS px of the screen
  height = 1;
  private animation: number | null = null;

  /** `changed` runs after every move (each animation frame too). */
  constructor(private readonly changed: () => void) {}

  /** Layout-space rectangle on screen. */
  viewRect(): Rect {
    return {
      x: -this.tx / this.scale,
      y: -this.ty / this.scale,
      width: this.width / this.scale,
      height: this.height / this.scale,
    };
  }

  set(v: View, animate = false) {
    if (animate) return this.animateTo(v.scale, v.tx, v.ty);
    this.stopAnimation();
    this.tx = v.tx;
    this.ty = v.ty;
    this.scale = clamp(v.scale, MIN_SCALE, MAX_SCALE);
    this.changed();
  }

  panBy(dx: number, dy: number) {
    this.tx += dx;
    this.ty += dy;
    this.changed();
  }

  zoomAt(factor: number, sx: number, sy: number) {
    const s = clamp(this.scale * factor, MIN_SCALE, MAX_SCALE);
    const k = s / this.scale;
    this.tx = sx - (sx - this.tx) * k;
    this.ty = sy - (sy - this.ty) * k;
    this.scale = s;
    this.changed();
  }

  /** Centres the screen on a layout point (the minimap uses it). */
  lookAt(lx: number, ly: number) {
    this.tx = this.width / 2 - lx * this.scale;
    this.ty = this.height / 2 - ly * this.scale;
    this.changed();
  }

  /**
   * The whole root box on screen. `clear`: px at the right kept free of nodes when the box does not fit
   * whole (the minimap shows then, in that corner; it hides when the box fits).
   */
  fit(rootWidth: number, rootHeight: number, clear = 0) {
    let s = clamp(Math.min(this.width / (rootWidth + 24), this.height / (rootHeight + 24)), MIN_SCALE, 3);
    const whole = rootWidth * s <= this.width && rootHeight * s <= this.height;
    const width = whole ? this.width : Math.max(1, this.width - clear);
    if (!whole) s = clamp(Math.min(width / (rootWidth + 24), this.height / (rootHeight + 24)), MIN_SCALE, 3);
    this.animateTo(s, (width - rootWidth * s) / 2, (this.height - rootHeight * s) / 2);
  }

  /**
   * The whole root width on screen at a readable scale, top aligned; `clear` as in fit, kept free when the
   * graph runs below the screen.
   */
  reset(rootWidth: number, rootHeight = 0, clear = 0) {
    const scale = (width: number) => clamp(Math.min(1.6, (width - 32) / Math.max(1, rootWidth)), 0.25, 1.6);
    let width = this.width;
    if (rootHeight * scale(width) + 16 > this.height) width = Math.max(1, width - clear);
    const s = scale(width);
    this.set({ scale: s, tx: Math.max(16, (width - rootWidth * s) / 2), ty: 16 });
  }

  /**
   * The view centred on a node, zoomed so that its label reads (READABLE_PX at `font`, the label's size in
   * layout units, by default the size before fitting), or its width fits.
   */
  centred(n: LayoutNode, font = n.nodeType === NODE_API && !n.expandable ? 6 : 8): View {
    let s = this.scale;
    const fits = (this.width * 0.9) / n.width;
    const readable = READABLE_PX / font;
    if (s < readable) s = Math.min(readable, Math.max(s, fits));
    if (n.width * s > this.width * 0.9) s = clamp(fits, MIN_SCALE, MAX_SCALE);
    const tx = this.width / 2 - (n.x + n.width / 2) * s;
    const boxH = n.expanded ? n.height : HEADER;
    const ty = boxH * s > this.height * 0.7 ? this.height * 0.2 - n.y * s : this.height / 2 - (n.y + boxH / 2) * s;
    return { scale: s, tx, ty };
  }

  /**
   * The least pan that brings a layout box on screen (with a margin), its
   * top-left corner winning when it is larger than the screen; null when it
   * is already there.
   */
  scrolledTo(box: Rect, margin = 24): View | null {
    const s = this.scale;
    const x1 = box.x * s + this.tx;
    const y1 = box.y * s + this.ty;
    const x2 = x1 + box.width * s;
    const y2 = y1 + box.height * s;
    let dx = 0;
    let dy = 0;
    if (x2 > this.width - margin) dx = this.width - margin - x2;
    if (x1 + dx < margin) dx = margin - x1;
    if (y2 > this.height - margin) dy = this.height - margin - y2;
    if (y1 + dy < margin) dy = margin - y1;
    if (Math.abs(dx) < 1 && Math.abs(dy) < 1) return null;
    return { scale: s, tx: this.tx + dx, ty: this.ty + dy };
  }

  animateTo(scale: number, tx: number, ty: number) {
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
      this.animation = k < 1 ? requestAnimationFrame(step) : null;
      this.changed();
    };
    this.animation = requestAnimationFrame(step);
  }

  stopAnimation() {
    if (this.animation !== null) cancelAnimationFrame(this.animation);
    this.animation = null;
  }

  /** Whether an animation is running (the view is still moving). */
  isAnimating(): boolean {
    return this.animation !== null;
  }
}

export function clamp(v: number, lo: number, hi: number) {
  return Math.min(hi, Math.max(lo, v));
}
