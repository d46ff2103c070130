// The rank overview (docs/OVERVIEW.md): a step × rank grid of a batch run,
// one row per rank (virtualised: a 1000-rank job draws only the rows in
// view), one column per step. Each cell shows where that rank first
// diverges and why, its worst colour bucket and overflow counts, and whether
// its divergence came through a communication from another rank (◇ from
// rankN) or started there (◆ origin); the line on top names the rank where
// the job's divergence started. A click opens that rank's graph at its first
// divergence. Everything comes from one GetOverview call.
import "./overview.css";
import {
  type ColorBucket,
  type GraphApi,
  Grading,
  type OverviewCell,
  type OverviewReply,
  type RunFile,
} from "../api/client";
import { h } from "../dom";
import { bucketColour } from "../graph/paint";
import { ErrorLine } from "../ui/error_line";
import { VirtualList } from "../ui/virtual_list";
import { ot } from "./strings";

/** What the overview needs from the page. */
export interface OverviewHost {
  readonly api: GraphApi;
  file(): RunFile | null;
  isCompare(): boolean;
  toast(message: string, kind?: "info" | "error"): void;
}

const ROW_HEIGHT = 44;

export type CellState = "origin" | "from-peer" | "agrees" | "not-ranked" | "error";

export function cellState(cell: OverviewCell, rank: string): CellState {
  if (cell.error) return "error";
  if (!cell.ranked) return "not-ranked";
  if (!cell.first) return "agrees";
  return cell.causedBy || cell.origin !== rank ? "from-peer" : "origin";
}

export class RankOverview {
  readonly button = h("button.overview-button", { type: "button", "data-action": "overview" });
  readonly el = h("div.overview", { role: "dialog", "data-overview": "" });
  private readonly titleEl = h("span.overview-title");
  private readonly closeBtn = h("button", { type: "button", "data-action": "overview-close" });
  private readonly onlyCb = h("input", { type: "checkbox", "data-toggle": "overview-diverging" });
  private readonly onlyLabel = h("span");
  private readonly originEl = h("div.overview-origin");
  private readonly countsEl = h("span.overview-counts");
  private readonly failure = new ErrorLine();
  private readonly head = h("div.ov-row.ov-head");
  private readonly list: VirtualList<number>;
  private reply: OverviewReply | null = null;
  private cells = new Map<string, OverviewCell>();
  private rows: number[] = [];
  private group = "";
  private seq = 0;

  constructor(
    private readonly host: OverviewHost,
    /** Opens a file of the run at its first divergence. */
    private readonly open: (path: string) => Promise<void>,
  ) {
    this.list = new VirtualList<number>({
      rowHeight: ROW_HEIGHT,
      className: "overview-grid",
      header: this.head,
      render: (rank, _i, row) => this.renderRow(rank, row),
    });
    this.el.hidden = true;
    this.button.hidden = true;
    this.el.append(
      h(
        "div.overview-bar",
        null,
        this.titleEl,
        this.countsEl,
        h("span.spacer"),
        h("label.check", null, this.onlyCb, this.onlyLabel),
        this.closeBtn,
      ),
      this.failure.el,
      this.originEl,
      this.list.el,
    );
    this.button.addEventListener("click", () => void (this.el.hidden ? this.show() : this.hide()));
    this.closeBtn.addEventListener("click", () => this.hide());
    this.onlyCb.addEventListener("change", () => this.fillRows());
    this.el.addEventListener("keydown", (e) => {
      if (e.key === "Escape") this.hide();
      e.stopPropagation(); // the graph's keys (G, N, P, arrows) stay with the graph
    });
    this.list.el.addEventListener("click", (e) => {
      const cell = (e.target as HTMLElement).closest<HTMLElement>(".ov-cell[data-file]");
      if (cell) void this.pick(cell.dataset.file!);
    });
    this.originEl.addEventListener("click", (e) => {
      const btn = (e.target as HTMLElement).closest<HTMLElement>("[data-file]");
      if (btn) void this.pick(btn.dataset.file!);
    });
    this.relabel();
  }

  relabel() {
    this.button.textContent = ot("button");
    this.button.title = ot("buttonTip");
    this.titleEl.textContent = ot("title");
    this.closeBtn.textContent = ot("close");
    this.onlyLabel.textContent = ot("onlyDiverging");
    this.render();
  }

  /** The page opened another file: the button shows for compares of a batch run. */
  fileChanged() {
    const f = this.host.file();
    const batch = !!f && this.host.isCompare() && !!f.group && (!!f.rank || !!f.step);
    this.button.hidden = !batch;
    if (!batch) {
      this.hide();
      return;
    }
    if (!this.el.hidden && f!.group !== this.group) void this.load();
    else this.list.refresh();
  }

  /** The reply shown (the page tests read it). */
  current(): OverviewReply | null {
    return this.reply;
  }

  async show(): Promise<void> {
    this.el.hidden = false;
    this.button.classList.add("active");
    await this.load();
    this.list.el.focus();
  }

  hide() {
    this.el.hidden = true;
    this.button.classList.remove("active");
  }

  private async load() {
    const f = this.host.file();
    if (!f) return;
    const seq = ++this.seq;
    this.group = f.group;
    this.failure.clear();
    this.originEl.hidden = false;
    this.originEl.textContent = ot("loading");
    try {
      const reply = await this.host.api.call("getOverview", { file: f.path });
      if (seq !== this.seq) return;
      this.reply = reply;
      this.cells = new Map(reply.cells.map((c) => [`${c.step}:${c.rank}`, c]));
    } catch (e) {
      if (seq !== this.seq) return;
      this.reply = null;
      this.cells.clear();
      // In the dialog, in place of "Reading the run's files…" (a toast would hide behind it).
      this.failure.show(ot("failed", { error: (e as Error).message }));
    }
    this.render();
  }

  private async pick(path: string) {
    this.hide();
    await this.open(path);
  }

  private render() {
    const r = this.reply;
    if (!r) {
      this.countsEl.textContent = "";
      if (this.failure.message) this.originEl.hidden = true;
      this.head.replaceChildren();
      this.list.setData(0, () => undefined);
      return;
    }
    const diverging = r.cells.filter((c) => c.first).length;
    this.countsEl.textContent = ot("counts", { ranks: r.ranks.length, steps: r.steps.length, diverging });
    this.renderOrigin(r);
    this.head.replaceChildren(
      h("span.ov-rank", null, ot("rank")),
      ...r.steps.map((s) => h("span.ov-step", { "data-step": s }, s || "-")),
    );
    this.fillRows();
  }

  private renderOrigin(r: OverviewReply) {
    if (!r.originRanks.length) {
      // Files without a ranking say nothing about agreement.
      const ranked = r.cells.some((c) => c.ranked);
      this.originEl.replaceChildren(h("span", null, ot(ranked ? "noOrigin" : "noRanking")));
      this.originEl.dataset.origin = "";
      return;
    }
    const step = r.steps.indexOf(r.originStep);
    const first = this.cells.get(`${step}:${r.ranks.indexOf(r.originRanks[0])}`);
    this.originEl.dataset.origin = r.originRanks.join(",");
    const parts: HTMLElement[] = [
      h("span.ov-origin-text", null, ot("origin", { ranks: r.originRanks.join(", "), step: r.originStep || "-" })),
    ];
    if (first?.first)
      parts.push(h("span.ov-origin-at", null, ot("originAt", { node: first.first, reason: first.reasonText })));
    if (first) {
      parts.push(
        h("button", { type: "button", "data-action": "overview-origin", "data-file": first.file }, ot("goOrigin")),
      );
    }
    this.originEl.replaceChildren(...parts);
  }

  private fillRows() {
    const r = this.reply;
    if (!r) return;
    const rows: number[] = [];
    for (let rank = 0; rank < r.ranks.length; rank++) {
      if (!this.onlyCb.checked || r.steps.some((_, s) => this.cells.get(`${s}:${rank}`)?.first)) rows.push(rank);
    }
    this.rows = rows;
    this.list.setData(rows.length, (i) => this.rows[i]);
  }

  private legend(): { legend: readonly ColorBucket[]; grade: boolean } {
    const grade = this.reply?.grading === Grading.GRADING_26 && !!this.reply.gradeLegend.length;
    return { legend: (grade ? this.reply?.gradeLegend : this.reply?.legend) ?? [], grade };
  }

  private renderRow(rank: number | undefined, row: HTMLElement) {
    const r = this.reply;
    if (!r || rank === undefined) {
      row.replaceChildren();
      return;
    }
    const name = r.ranks[rank];
    row.dataset.rank = name;
    row.replaceChildren(
      h("span.ov-rank", null, name || "-"),
      ...r.steps.map((_, s) => this.renderCell(this.cells.get(`${s}:${rank}`), r.steps[s], name)),
    );
  }

  private renderCell(cell: OverviewCell | undefined, step: string, rank: string): HTMLElement {
    if (!cell) return h("span.ov-cell.ov-empty", { "data-step": step, "data-rank": rank }, ot("noFile"));
    const state = cellState(cell, rank);
    const { legend, grade } = this.legend();
    const worst = grade ? cell.worstGradeBucket : cell.worstBucket;
    const current = this.host.file()?.path === cell.file;
    const jobOrigin = this.reply!.originStep === step && this.reply!.originRanks.includes(rank);
    const mark =
      state === "origin"
        ? jobOrigin
          ? ot("here")
          : ot("own") // diverges by itself in this step, after the run's origin
        : state === "from-peer"
          ? ot("fromRank", { rank: cell.causedBy || cell.origin })
          : state === "agrees"
            ? ot("agrees")
            : state === "not-ranked"
              ? ot("notRanked")
              : ot("unreadable");
    const over = cell.overflowCritical + cell.overflowHigh + cell.overflowMedium;
    const detail = [cell.reasonText, over ? `⚠ ${over}` : ""].filter(Boolean).join(" · ");
    const title = [
      cell.file,
      cell.error,
      cell.first && `${cell.first} — ${cell.reasonText}`,
      cell.causedBy && `← ${cell.causedBy}`,
      worst >= 0 && legend[worst] ? ot("worst", { bucket: legend[worst].name || legend[worst].color }) : "",
      cell.counted
        ? ot("overflow", { critical: cell.overflowCritical, high: cell.overflowHigh, medium: cell.overflowMedium })
        : "",
    ]
      .filter(Boolean)
      .join("\n");
    return h(
      "span.ov-cell",
      {
        "data-step": step,
        "data-rank": rank,
        "data-state": state,
        "data-file": cell.error ? undefined : cell.file,
        "data-current": current,
        "data-job-origin": jobOrigin,
        title,
      },
      h("span.swatch", { style: `background:${worst >= 0 ? bucketColour(worst, legend) : "transparent"}` }),
      h(
        "span.ov-lines",
        null,
        h("span.ov-line", null, h("span.ov-mark", null, mark), " ", h("span.ov-first", null, cell.first)),
        h("span.ov-line.ov-detail", null, cell.error || detail),
      ),
    );
  }
}
