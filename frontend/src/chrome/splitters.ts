// The splitters: NPU | Bench side by side, graphs above the details.
import "./splitters.css";

/** Drags `splitter` to size `left` inside `row`, each side at least 160 px. */
export function bindColumnSplitter(splitter: HTMLElement, row: HTMLElement, left: HTMLElement) {
  splitter.addEventListener("pointerdown", (e) => {
    splitter.setPointerCapture(e.pointerId);
    const move = (ev: PointerEvent) => {
      const r = row.getBoundingClientRect();
      const x = Math.min(r.width - 160, Math.max(160, ev.clientX - r.left));
      left.style.flex = `0 0 ${x}px`;
    };
    const up = () => {
      splitter.removeEventListener("pointermove", move);
      splitter.removeEventListener("pointerup", up);
    };
    splitter.addEventListener("pointermove", move);
    splitter.addEventListener("pointerup", up);
  });
}

/** Drags `splitter` to size `below` (at least 60 px, leaving 160 px above it). */
export function bindRowSplitter(splitter: HTMLElement, below: HTMLElement) {
  splitter.addEventListener("pointerdown", (e) => {
    splitter.setPointerCapture(e.pointerId);
    const move = (ev: PointerEvent) => {
      const r = below.parentElement!.getBoundingClientRect();
      const height = Math.min(r.height - 160, Math.max(60, r.bottom - ev.clientY));
      below.style.height = `${height}px`;
    };
    const up = () => {
      splitter.removeEventListener("pointermove", move);
      splitter.removeEventListener("pointerup", up);
    };
    splitter.addEventListener("pointermove", move);
    splitter.addEventListener("pointerup", up);
  });
}
