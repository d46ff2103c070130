// Pointer input on a pane's canvas: drag to pan, click to select, double
// click to expand or collapse, wheel to zoom, the context menu, and the
// hover tooltip.
import { type LayoutNode, OverflowLevel } from "../api/client";
import { formatIndex } from "./paint";

/** What the pointer drives on its pane. */
export interface PointerTarget {
  nodeAt(sx: number, sy: number): LayoutNode | null;
  panBy(dx: number, dy: number): void;
  zoomAt(factor: number, sx: number, sy: number): void;
  stopAnimation(): void;
  /** The node under the pointer (-1: none), on every move. */
  hoverAt(index: number): void;
  select(node: LayoutNode | null): void;
  toggle(node: LayoutNode): void;
  /** False when the pane has no context menu. */
  contextMenu(node: LayoutNode, x: number, y: number): boolean;
}

export function bindPointer(c: HTMLCanvasElement, tooltip: HTMLDivElement, pane: PointerTarget) {
  let drag: { x: number; y: number; moved: boolean } | null = null;
  const local = (e: MouseEvent) => {
    const r = c.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  };
  const hideTooltip = () => {
    tooltip.hidden = true;
  };
  const updateHover = (e: PointerEvent) => {
    const p = local(e);
    const n = pane.nodeAt(p.x, p.y);
    pane.hoverAt(n ? n.index : -1);
    if (!n) return hideTooltip();
    tooltip.textContent =
      n.name +
      (n.hasPrecision ? `\nprecision ${formatIndex(n.precisionIndex)}` : "") +
      (n.overflow !== OverflowLevel.OVERFLOW_NONE
        ? `\n${n.overflow.replace("OVERFLOW_", "overflow ").toLowerCase()}`
        : "");
    tooltip.hidden = false;
    const x = Math.min(e.clientX + 14, window.innerWidth - tooltip.offsetWidth - 8);
    const y = Math.min(e.clientY + 16, window.innerHeight - tooltip.offsetHeight - 8);
    tooltip.style.transform = `translate(${Math.max(0, x)}px, ${Math.max(0, y)}px)`;
  };
  c.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    c.setPointerCapture(e.pointerId);
    drag = { x: e.clientX, y: e.clientY, moved: false };
    pane.stopAnimation();
  });
  c.addEventListener("pointermove", (e) => {
    if (drag) {
      const dx = e.clientX - drag.x;
      const dy = e.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      drag.moved = true;
      drag.x = e.clientX;
      drag.y = e.clientY;
      c.style.cursor = "grabbing";
      hideTooltip();
      pane.panBy(dx, dy);
      return;
    }
    updateHover(e);
  });
  c.addEventListener("pointerup", (e) => {
    const d = drag;
    drag = null;
    c.style.cursor = "";
    if (d && !d.moved) {
      const p = local(e);
      pane.select(pane.nodeAt(p.x, p.y));
    }
  });
  c.addEventListener("pointerleave", () => {
    pane.hoverAt(-1);
    hideTooltip();
  });
  c.addEventListener("dblclick", (e) => {
    const p = local(e);
    const n = pane.nodeAt(p.x, p.y);
    if (n && n.expandable && n.parent >= 0) pane.toggle(n);
  });
  c.addEventListener("contextmenu", (e) => {
    const p = local(e);
    const n = pane.nodeAt(p.x, p.y);
    if (n && pane.contextMenu(n, e.clientX, e.clientY)) e.preventDefault();
  });
  c.addEventListener(
    "wheel",
    (e) => {
      e.preventDefault();
      pane.stopAnimation();
      const p = local(e);
      const delta = e.deltaMode === 1 ? e.deltaY * 16 : e.deltaY;
      pane.zoomAt(Math.exp(-delta * 0.0015), p.x, p.y);
    },
    { passive: false },
  );
}
