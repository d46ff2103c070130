// Sync expand (reference §8.4): expanding or collapsing a node on one side
// does the same to the corresponding node on the other side.
import type { LayoutNode } from "../api/client";
import type { GraphPane } from "./pane";

/** What the walk up the tree needs of a node, loaded or not. */
export interface Link {
  index: number;
  parent: number;
  matched: number;
}

/**
 * The other side's node matched with n or, when n has no match, with its
 * nearest matched ancestor; -1 when none is. Ancestors come from the loaded
 * nodes, and from `summary` (the service) only where the loaded window misses one.
 */
export async function correspondingIndex(
  p: GraphPane,
  n: LayoutNode,
  summary: (index: number) => Promise<Link | undefined>,
): Promise<number> {
  let cur: Link | undefined = n;
  for (let guard = 0; cur && guard < 100_000; guard++) {
    if (cur.matched >= 0) return cur.matched;
    if (cur.parent < 0) return -1;
    const parent: number = cur.parent;
    cur = p.node(parent) ?? (await summary(parent));
  }
  return -1;
}

/** The other side's node takes the new state when its own state differs. */
export async function syncExpand(other: GraphPane, index: number, expand: boolean) {
  if (index < 0) return;
  const m = other.node(index);
  if (expand && !(m && m.expanded)) {
    if (!m) await other.reveal(index, false);
    await other.expand(index);
  } else if (!expand && m && m.expanded) {
    await other.collapse(index);
  }
}
