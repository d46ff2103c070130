// Filters (reference §8.7, §9 PrecisionSider): nodes of the ticked precision
// buckets (NPU side of a compare), unmatched nodes of each side, and nodes of
// the ticked overflow levels. Each list is virtualised and a click jumps to
// the node.
import "./side_panels.css";
import { type FilterRequest, OverflowLevel, Side } from "../api/client";
import type { AppContext } from "../app_context";
import { CkptFilter } from "../ckpt/weights";
import { h } from "../dom";
import { OVERFLOW_COLOURS, bucketLabel } from "../graph/paint";
import { onLangChange, t } from "../i18n";
import { HitList, sideName } from "./hit_list";

const LEVELS: [OverflowLevel, "overflowMedium" | "overflowHigh" | "overflowCritical"][] = [
  [OverflowLevel.OVERFLOW_MEDIUM, "overflowMedium"],
  [OverflowLevel.OVERFLOW_HIGH, "overflowHigh"],
  [OverflowLevel.OVERFLOW_CRITICAL, "overflowCritical"],
];

export class FilterPanel {
  readonly el: HTMLDivElement;
  private readonly leavesOnly: HTMLInputElement;
  private readonly precisionBox: HTMLElement;
  private readonly bucketsEl: HTMLDivElement;
  private readonly precisionList: HitList;
  private readonly unmatchedBox: HTMLElement;
  private readonly unmatchedNpu: HitList;
  private readonly unmatchedBench: HitList;
  private readonly overflowBox: HTMLElement;
  private readonly levelsEl: HTMLDivElement;
  private readonly overflowSide: HTMLSelectElement;
  private readonly overflowList: HitList;
  private readonly overflowNote: HTMLDivElement;
  private readonly titles: Record<string, HTMLElement> = {};
  private readonly weights: CkptFilter;

  constructor(private readonly ctx: AppContext) {
    this.leavesOnly = h("input", { type: "checkbox" });
    this.bucketsEl = h("div.buckets");
    this.precisionList = new HitList(ctx, "", (hit) => void ctx.jumpTo(Side.SIDE_NPU, hit.index), "precision");
    this.unmatchedNpu = new HitList(ctx, "", (hit) => void ctx.jumpTo(Side.SIDE_NPU, hit.index), "unmatched-npu");
    this.unmatchedBench = new HitList(ctx, "", (hit) => void ctx.jumpTo(Side.SIDE_BENCH, hit.index), "unmatched-bench");
    this.levelsEl = h("div.buckets");
    this.overflowSide = h("select.overflow-side");
    this.overflowList = new HitList(ctx, "", (hit) => void ctx.jumpTo(this.overflowSideValue(), hit.index), "overflow");
    this.overflowNote = h("div.panel-message");
    for (const k of ["precision", "unmatched", "overflow", "leaves"]) this.titles[k] = h("span");
    this.precisionBox = h(
      "section.filter-section",
      { "data-section": "precision" },
      h("h3", null, this.titles.precision),
      this.bucketsEl,
      this.precisionList.el,
    );
    this.unmatchedBox = h(
      "section.filter-section",
      { "data-section": "unmatched" },
      h("h3", null, this.titles.unmatched),
      h("div.two-lists", null, this.unmatchedNpu.el, this.unmatchedBench.el),
    );
    this.overflowBox = h(
      "section.filter-section",
      { "data-section": "overflow" },
      h("h3", null, this.titles.overflow, " ", this.overflowSide),
      this.overflowNote,
      this.levelsEl,
      this.overflowList.el,
    );
    this.weights = new CkptFilter(ctx);
    this.el = h(
      "div.panel.filter-panel",
      null,
      h("label.check", null, this.leavesOnly, this.titles.leaves),
      this.precisionBox,
      this.unmatchedBox,
      this.overflowBox,
      this.weights.el,
    );
    this.leavesOnly.addEventListener("change", () => this.reload());
    this.overflowSide.addEventListener("change", () => void this.runOverflow());
    onLangChange(() => this.relabel());
  }

  private relabel() {
    this.titles.precision.textContent = t("precision");
    this.titles.precision.title = t("precisionTip");
    this.titles.unmatched.textContent = t("unmatchedNodes");
    this.titles.overflow.textContent = t("overflow");
    this.titles.leaves.textContent = t("leavesOnly");
    this.precisionList.setTitle(t("nodes"));
    this.unmatchedNpu.setTitle(sideName(Side.SIDE_NPU));
    this.unmatchedBench.setTitle(sideName(Side.SIDE_BENCH));
    this.overflowList.setTitle(t("nodes"));
    const side = this.overflowSide.value;
    this.overflowSide.replaceChildren(
      h("option", { value: "npu" }, sideName(Side.SIDE_NPU)),
      h("option", { value: "bench" }, sideName(Side.SIDE_BENCH)),
    );
    this.overflowSide.value = side || "npu";
    this.overflowSide.disabled = !this.ctx.isCompare();
    this.renderBuckets();
    for (const [level, key] of LEVELS) {
      const label = this.levelsEl.querySelector(`[data-level="${level}"] .text`);
      if (label) label.textContent = t(key);
    }
    this.overflowNote.textContent = this.ctx.info()?.meta?.overflowChecked ? "" : t("noOverflowCheck");
  }

  private overflowSideValue(): Side {
    return this.overflowSide.value === "bench" && this.ctx.isCompare() ? Side.SIDE_BENCH : Side.SIDE_NPU;
  }

  /** A new file or a changed legend: new checkboxes, empty lists. */
  fileChanged() {
    this.weights.fileChanged();
    const compare = this.ctx.isCompare();
    const info = this.ctx.info();
    this.precisionBox.hidden = !compare;
    this.unmatchedBox.hidden = !compare;
    const overflowUseful =
      !!info?.meta?.overflowChecked ||
      !!(info?.npu && info.npu.overflowMedium + info.npu.overflowHigh + info.npu.overflowCritical > 0);
    this.overflowBox.hidden = !overflowUseful;
    this.precisionList.clear();
    this.overflowList.clear();
    this.bucketsEl.replaceChildren();
    this.renderLevels();
    this.relabel();
    if (compare) void this.runUnmatched();
    else {
      this.unmatchedNpu.clear();
      this.unmatchedBench.clear();
    }
  }

  /** Re-runs every list (after matches changed). */
  reload() {
    this.renderBuckets(); // counts and labels follow matches and legend edits
    if (this.ctx.isCompare()) {
      void this.runPrecision();
      void this.runUnmatched();
    }
    void this.runOverflow();
  }

  private renderBuckets() {
    const legend = this.ctx.info()?.meta?.legend ?? [];
    const ticked = new Set(this.tickedBuckets());
    const counts = new Map((this.ctx.info()?.npu?.buckets ?? []).map((b) => [b.bucket, b.count]));
    this.bucketsEl.replaceChildren(
      ...legend.map((b, i) => {
        const cb = h("input", { type: "checkbox", "data-bucket": i, checked: ticked.has(i) });
        cb.addEventListener("change", () => void this.runPrecision());
        const swatch = h("span.swatch");
        swatch.style.background = b.color;
        const count = counts.get(i);
        return h(
          "label.check.bucket",
          { title: b.description || "", "data-bucket": i },
          cb,
          swatch,
          h("span.text", null, bucketLabel(b, t("unmatched"))),
          count !== undefined ? h("span.count", null, `(${count})`) : null,
        );
      }),
    );
  }

  private renderLevels() {
    const info = this.ctx.info();
    const counts: Record<string, number | undefined> = {
      [OverflowLevel.OVERFLOW_MEDIUM]: info?.npu?.overflowMedium,
      [OverflowLevel.OVERFLOW_HIGH]: info?.npu?.overflowHigh,
      [OverflowLevel.OVERFLOW_CRITICAL]: info?.npu?.overflowCritical,
    };
    this.levelsEl.replaceChildren(
      ...LEVELS.map(([level, key]) => {
        const cb = h("input", { type: "checkbox", "data-level": level });
        cb.addEventListener("change", () => void this.runOverflow());
        const mark = h("span.overflow-mark");
        mark.style.borderTopColor = OVERFLOW_COLOURS[level];
        return h(
          "label.check.bucket",
          { "data-level": level },
          cb,
          mark,
          h("span.text", null, t(key)),
          counts[level] !== undefined ? h("span.count", null, `(${counts[level]})`) : null,
        );
      }),
    );
  }

  private tickedBuckets(): number[] {
    return [...this.bucketsEl.querySelectorAll<HTMLInputElement>("input[data-bucket]")]
      .filter((c) => c.checked)
      .map((c) => Number(c.dataset.bucket));
  }

  private base(side: Side): FilterRequest {
    return {
      view: this.ctx.viewKey(side),
      buckets: [],
      unmatched: false,
      overflow: [],
      leavesOnly: this.leavesOnly.checked,
      offset: 0,
      limit: 0,
    };
  }

  private async runPrecision() {
    const ticked = this.tickedBuckets();
    if (!ticked.length) {
      this.precisionList.clear();
      return;
    }
    // A node is in a bucket when it has its colour; the grey entry selects the unmatched nodes.
    const req = this.base(Side.SIDE_NPU);
    req.buckets = ticked;
    await this.load(this.precisionList, req);
  }

  private async runUnmatched() {
    for (const [list, side] of [
      [this.unmatchedNpu, Side.SIDE_NPU],
      [this.unmatchedBench, Side.SIDE_BENCH],
    ] as const) {
      const req = this.base(side);
      req.unmatched = true;
      void this.load(list, req);
    }
  }

  private async runOverflow() {
    const levels = [...this.levelsEl.querySelectorAll<HTMLInputElement>("input[data-level]")]
      .filter((c) => c.checked)
      .map((c) => c.dataset.level as OverflowLevel);
    if (!levels.length) {
      this.overflowList.clear();
      return;
    }
    const req = this.base(this.overflowSideValue());
    req.overflow = levels;
    await this.load(this.overflowList, req);
  }

  private async load(list: HitList, req: FilterRequest) {
    try {
      await list.load((offset, limit, signal) => this.ctx.api.call("filter", { ...req, offset, limit }, signal));
    } catch (e) {
      this.ctx.toast((e as Error).message, "error");
    }
  }
}
