// Deep links: the file, step, rank, micro step, side and selected node in
// the URL, so a reload or a colleague opening the link lands on the same
// node. Inside TensorBoard the page is an iframe of the same origin; the
// state goes in TensorBoard's own address after its tab name
// ("#graph_ascend&file=…&node=…"), which TensorBoard keeps. Opened by
// itself, the page uses its own "#…".
export interface DeepLink {
  file: string;
  step: string;
  rank: string;
  micro: number; // -1: all
  side: "npu" | "bench";
  node: string; // "" when nothing is selected
}

const TAB = "graph_ascend";

/** The window whose address carries the link: TensorBoard's when it can be reached. */
function host(): Window {
  try {
    if (window.parent !== window && window.parent.location.href) return window.parent;
  } catch {
    // Another origin: the page's own address.
  }
  return window;
}

/** The link's query part of a hash ("#graph_ascend&a=b" or "#a=b"). */
function params(hash: string): URLSearchParams {
  let h = hash.replace(/^#/, "");
  if (h === TAB || h.startsWith(`${TAB}&`)) h = h.slice(TAB.length + 1);
  return new URLSearchParams(h);
}

export function readLink(): DeepLink | null {
  const p = params(host().location.hash);
  const file = p.get("file");
  if (!file) return null;
  const micro = Number(p.get("micro") ?? "-1");
  return {
    file,
    step: p.get("step") ?? "",
    rank: p.get("rank") ?? "",
    micro: Number.isInteger(micro) && micro >= -1 ? micro : -1,
    side: p.get("side") === "bench" ? "bench" : "npu",
    node: p.get("node") ?? "",
  };
}

export function linkHash(link: DeepLink, inTensorBoard: boolean): string {
  const p = new URLSearchParams({ file: link.file });
  if (link.step) p.set("step", link.step);
  if (link.rank) p.set("rank", link.rank);
  if (link.micro !== -1) p.set("micro", String(link.micro));
  if (link.node) {
    p.set("side", link.side);
    p.set("node", link.node);
  }
  return `#${inTensorBoard ? `${TAB}&` : ""}${p.toString()}`;
}

/** Replaces the address's hash (no history entry, no reload). */
export function writeLink(link: DeepLink) {
  const w = host();
  const hash = linkHash(link, w !== window);
  if (w.location.hash === hash) return;
  try {
    w.history.replaceState(w.history.state, "", hash);
  } catch {
    // A sandboxed frame may not change the address; the link is only not kept.
  }
}
