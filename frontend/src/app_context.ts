// What the page's parts (side panels, detail board, tools) need from the page; App implements it.
import type { DistributedLink, FileInfo, GraphApi, RunFile, Side, ViewKey } from "./api/client";

export interface AppContext {
  readonly api: GraphApi;
  file(): RunFile | null;
  info(): FileInfo | null;
  isCompare(): boolean;
  viewKey(side: Side): ViewKey;
  /** Expands the ancestors, centres and selects the node (and shows its details). */
  jumpTo(side: Side, index: number): Promise<void>;
  /** Switches to the peer's rank (same run and step) and selects the peer node on the same side. */
  jumpToPeer(side: Side, link: DistributedLink): Promise<void>;
  toast(message: string, kind?: "info" | "error"): void;
  /** Re-reads layouts, lists and details after matches changed. */
  matchesChanged(info: FileInfo | undefined): Promise<void>;
}
