// The page's keyboard: keys go to the divergence navigator and the pane
// under the pointer, never while the user types in a field.
import type { GraphPane } from "../graph/pane";

export interface ShortcutHost {
  readonly npu: GraphPane;
  readonly bench: GraphPane;
  /** The pane the keys drive (the last one the pointer entered or clicked). */
  activePane(): GraphPane;
  setActivePane(p: GraphPane): void;
  /** Escape: closes menus and overlays. */
  dismiss(): void;
  /** "/": the search box. */
  focusSearch(): void;
  /** "?": the shortcut help. */
  toggleHelp(): void;
  /** Other keys of the page (divergence navigation); true when taken. */
  keyDown(key: string): boolean;
}

/** Whether a key event comes from a field that takes text. */
export function typing(e: KeyboardEvent): boolean {
  const el = e.target as HTMLElement | null;
  return (
    !!el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable)
  );
}

/** Whether the key belongs to a focused list or menu (they move with the arrows). */
function ownedByWidget(e: KeyboardEvent): boolean {
  const el = e.target as HTMLElement | null;
  return e.key.startsWith("Arrow") && !!el?.closest?.(".vlist, .context-menu, .help-overlay");
}

export function bindShortcuts(host: ShortcutHost) {
  for (const p of [host.npu, host.bench]) p.el.addEventListener("pointerenter", () => host.setActivePane(p));
  window.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e)) return;
    if (e.key === "Escape") {
      host.dismiss();
      return;
    }
    if (e.key === "/") {
      e.preventDefault();
      host.focusSearch();
      return;
    }
    if (e.key === "?") {
      e.preventDefault();
      host.toggleHelp();
      return;
    }
    if (ownedByWidget(e)) return;
    if (host.keyDown(e.key) || host.activePane().keyDown(e.key, e.shiftKey)) e.preventDefault();
  });
  window.addEventListener("keyup", (e) => {
    host.npu.keyUp(e.key);
    host.bench.keyUp(e.key);
  });
  window.addEventListener("blur", () => {
    host.npu.releaseKeys();
    host.bench.releaseKeys();
  });
}
