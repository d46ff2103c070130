// A node of a view found by its full name: the selection kept across files,
// ranks and micro steps, communication peers and deep links.
import type { GraphApi, ViewKey } from "../api/client";

/** The node's index, or -1 when the view has no node of that name (or the search failed). */
export async function findNode(api: GraphApi, view: ViewKey, name: string): Promise<number> {
  try {
    const reply = await api.call("search", {
      view,
      query: `^${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`,
      regex: true,
      caseInsensitive: false,
      offset: 0,
      limit: 5,
    });
    return reply.hits.find((hit) => hit.name === name)?.index ?? -1;
  } catch {
    return -1;
  }
}
