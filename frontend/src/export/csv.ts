// CSV of the page's tables: a search or filter list (every hit, paged from
// the service again, not only the rows loaded on screen) and a node's detail table.
import type { NodeList } from "../api/client";
import type { AppContext } from "../app_context";
import { formatIndex } from "../graph/paint";
import { downloadCsv, fileStem } from "./download";

const PAGE = 10_000;

type Fetch = (offset: number, limit: number, signal: AbortSignal) => Promise<NodeList>;

/** Downloads every hit of a list as name, ancestors, bucket, precision index and overflow level. */
export async function hitsCsv(ctx: AppContext, list: string, fetch: Fetch | null): Promise<void> {
  const file = ctx.file();
  if (!file || !fetch) return;
  const legend = ctx.info()?.meta?.legend ?? [];
  const rows: string[][] = [["name", "ancestors", "bucket", "precision_index", "overflow"]];
  const abort = new AbortController();
  try {
    for (let offset = 0; ; offset += PAGE) {
      const page = await fetch(offset, PAGE, abort.signal);
      for (const hit of page.hits) {
        rows.push([
          hit.name,
          (hit.ancestorsOmitted ? "… > " : "") + hit.ancestors.join(" > "),
          hit.bucket >= 0 && hit.bucket < legend.length ? legend[hit.bucket].name || String(hit.bucket) : "",
          hit.hasPrecision ? formatIndex(hit.precisionIndex) : "",
          hit.overflow === "OVERFLOW_NONE" ? "" : String(hit.overflow).replace("OVERFLOW_", "").toLowerCase(),
        ]);
      }
      if (!page.hits.length || offset + PAGE >= page.total) break;
    }
  } catch (e) {
    ctx.toast((e as Error).message, "error");
    return;
  }
  downloadCsv(`${fileStem(file.path)}_${list}.csv`, rows);
}

/** Downloads a node's detail table (its header row first). */
export function tableCsv(ctx: AppContext, node: string, rows: string[][]) {
  const file = ctx.file();
  if (!file || rows.length < 2) return;
  const stem = node.replace(/[^\w.-]+/g, "_").slice(0, 120);
  downloadCsv(`${fileStem(file.path)}_${stem}.csv`, rows);
}
