// The lists of nodes the side panels share: a titled, virtualised hit list and the side's name.
import "./hit_list.css";
import type { NodeHit, NodeList } from "../api/client";
import { Side } from "../api/client";
import type { AppContext } from "../app_context";
import { h } from "../dom";
import { hitsCsv } from "../export/csv";
import { bucketColour } from "../graph/paint";
import { t } from "../i18n";
import { PagedHits, VirtualList } from "./virtual_list";

export function sideName(side: Side): string {
  return side === Side.SIDE_BENCH ? t("bench") : t("npu");
}

/** A titled, virtualised list of nodes fed by pages of a Search or Filter query. */
export class HitList {
  readonly el: HTMLDivElement;
  private readonly countEl: HTMLSpanElement;
  readonly list: VirtualList<NodeHit>;
  private readonly hits: PagedHits;
  private loaded = false;
  private fetcher: ((offset: number, limit: number, signal: AbortSignal) => Promise<NodeList>) | null = null;

  constructor(
    private readonly ctx: AppContext,
    title: string,
    private readonly pick: (hit: NodeHit) => void,
    className: string,
  ) {
    this.countEl = h("span.count");
    this.hits = new PagedHits(
      200,
      () => this.update(),
      (m) => ctx.toast(m, "error"),
    );
    this.list = new VirtualList<NodeHit>({
      rowHeight: 24,
      className: "hits",
      render: (hit, _i, row) => this.renderRow(hit, row),
      need: (from, to) => this.hits.need(from, to),
      pick: (hit) => this.pick(hit),
    });
    const csv = h("button.csv", { type: "button", "data-action": "csv", title: "CSV" }, "CSV");
    csv.addEventListener("click", () => void hitsCsv(ctx, className, this.fetcher));
    this.el = h(
      `div.hitlist`,
      { "data-list": className },
      h("div.hitlist-title", null, title, " ", this.countEl, csv),
      this.list.el,
    );
  }

  setTitle(title: string) {
    (this.el.firstChild as HTMLElement).firstChild!.textContent = title + " ";
  }

  async load(fetch: (offset: number, limit: number, signal: AbortSignal) => Promise<NodeList>): Promise<number> {
    this.list.reset();
    this.loaded = false;
    this.fetcher = fetch;
    this.countEl.textContent = "…";
    const total = await this.hits.start(fetch);
    return total;
  }

  clear() {
    this.fetcher = null;
    this.hits.clear();
    this.loaded = false;
    this.list.reset();
    this.countEl.textContent = "";
  }

  total(): number {
    return this.hits.total;
  }

  private update() {
    this.loaded = true;
    this.countEl.textContent = `(${this.hits.total})`;
    this.list.setData(this.hits.total, (i) => this.hits.get(i));
    this.el.classList.toggle("empty", this.hits.total === 0);
  }

  isLoaded() {
    return this.loaded;
  }

  private renderRow(hit: NodeHit | undefined, row: HTMLElement) {
    if (!hit) {
      row.textContent = t("loading");
      row.title = "";
      delete row.dataset.node;
      return;
    }
    const legend = this.ctx.info()?.meta?.legend ?? [];
    const swatch = h("span.swatch");
    swatch.style.background = bucketColour(hit.bucket, legend);
    row.replaceChildren(swatch, middleEllipsis(hit.name));
    row.dataset.node = hit.name;
    // The service sends the nearest 100 ancestors; "…" stands for the rest.
    row.title = [...(hit.ancestorsOmitted ? ["…"] : []), ...hit.ancestors, hit.name].join("\n› ");
  }
}

/**
 * A name that a narrow list cuts in the middle: the end of msprobe names tells nodes apart (an API's call index and
 * direction, a module's class and direction, parameters_grad), so it stays whole and the head takes the ellipsis.
 */
export function middleEllipsis(name: string): HTMLElement {
  const parts = name.split(".");
  const module = /^(forward|backward)$/.test(parts[parts.length - 2] ?? "");
  const keep = Math.min(parts.length, module ? 4 : 3);
  const tail = parts.slice(parts.length - keep).join(".");
  const head = name.slice(0, name.length - tail.length);
  return h("span.hit-name", { "data-name": name }, h("span.hit-head", null, head), h("span.hit-tail", null, tail));
}
