// Thresholds and metric (tb_graph_ascend 8.3's colour settings and its
// precision-error metric): edit the legend's intervals and colours, pick the
// relative errors whose worst colours a statistics node, apply them (the
// service recolours and refilters for everyone), save them beside the file,
// or go back to the file's own legend and index.
import { type ColorBucket, type FileInfo, CompareMode, Grading, Side } from "../api/client";
import type { AppContext } from "../app_context";
import { h } from "../dom";
import type { GraphPane } from "../graph/pane";
import { currentLang, onLangChange } from "../i18n";
import { ErrorLine } from "../ui/error_line";
import "./tools.css";

export interface ThresholdsHost extends AppContext {
  readonly npu: GraphPane;
  readonly bench: GraphPane;
}

export const METRICS = ["MaxRelativeErr", "MinRelativeErr", "MeanRelativeErr", "NormRelativeErr"] as const;

const TEXT = {
  en: {
    open: "Colours…",
    openTip: "Edit the legend's thresholds and the metric that colours statistics nodes",
    title: "Thresholds and metric",
    from: "from",
    to: "to",
    unmatched: "not matched",
    metric: "Metric (worst over the outputs)",
    metricNone: "Statistics compares only: this file has no relative errors",
    own: "Unticking all: the file's precision index",
    apply: "Apply",
    save: "Apply and save",
    reset: "Reset",
    close: "Close",
    applied: "Colours applied",
    saved: "Saved beside the file: {path}",
    resetDone: "Back to the file's own legend and index",
    savedNote: "Saved choice: {path}",
    grading: "Switch the grading to the precision index to edit its thresholds",
    order: "Row {row}: 'from' must be below 'to' (an empty interval colours nothing)",
    gap: "Rows {a} and {b} leave {lo} to {hi} uncovered: nodes there would get no colour",
    overlap: "Rows {a} and {b} overlap from {lo} to {hi}: a node there would have two colours",
    span: "The intervals must reach from {lo} to {hi}, as the file's do",
  },
  zh: {
    open: "颜色设置…",
    openTip: "编辑图例阈值与统计量节点的着色指标",
    title: "阈值与指标",
    from: "自",
    to: "至",
    unmatched: "未匹配",
    metric: "误差指标（取输出中最大者）",
    metricNone: "仅统计量比对可选：本文件没有相对误差",
    own: "全不勾选：使用文件的精度指标",
    apply: "应用",
    save: "应用并保存",
    reset: "重置",
    close: "关闭",
    applied: "已应用颜色设置",
    saved: "已保存在文件旁：{path}",
    resetDone: "已恢复文件自带的图例与精度指标",
    savedNote: "已保存的设置：{path}",
    grading: "切换到精度指标分级后才能编辑其阈值",
    order: "第 {row} 行：起点须小于终点（空区间不着色）",
    gap: "第 {a} 行与第 {b} 行之间 {lo} 至 {hi} 未被覆盖：其中的节点将没有颜色",
    overlap: "第 {a} 行与第 {b} 行在 {lo} 至 {hi} 重叠：其中的节点将有两种颜色",
    span: "各区间须覆盖 {lo} 至 {hi}，与文件自带的图例一致",
  },
};
type Key = keyof typeof TEXT.en;
function s(key: Key, params?: Record<string, string | number>): string {
  let out = TEXT[currentLang()][key];
  for (const [k, v] of Object.entries(params ?? {})) out = out.replaceAll(`{${k}}`, String(v));
  return out;
}

function numberText(v: number): string {
  return String(Number(v.toFixed(6)));
}

export class LegendEditor {
  readonly el: HTMLButtonElement;
  private readonly dialog: HTMLDivElement;
  private readonly rows: HTMLDivElement;
  private readonly metricBox: HTMLDivElement;
  private readonly note: HTMLDivElement;
  private readonly failure = new ErrorLine();
  private legend: ColorBucket[] = [];
  private span: { lo: number; hi: number } | null = null; // what the file's intervals cover

  constructor(private readonly host: ThresholdsHost) {
    this.el = h("button.tools-open", { type: "button", "data-action": "thresholds" });
    this.rows = h("div.th-rows");
    this.metricBox = h("div.th-metrics");
    this.note = h("div.th-note");
    this.dialog = h("div.tools-dialog", { role: "dialog", "data-dialog": "thresholds", hidden: true });
    this.el.addEventListener("click", () => (this.dialog.hidden ? this.open() : this.close()));
    this.dialog.addEventListener("keydown", (e) => {
      if (e.key === "Escape") this.close();
    });
    onLangChange(() => {
      this.el.textContent = s("open");
      this.el.title = s("openTip");
      if (!this.dialog.hidden) this.render();
    });
  }

  /** The dialog lives at the page's top level (it is positioned over the graphs). */
  mount(parent: HTMLElement) {
    parent.append(this.dialog);
  }

  open() {
    const info = this.host.info();
    if (!info) return;
    this.legend = (info.meta?.legend ?? []).map((b) => ({ ...b }));
    this.span = spanOf(this.legend);
    this.failure.clear();
    this.render();
    this.dialog.hidden = false;
  }

  close() {
    this.dialog.hidden = true;
  }

  private statistics(info: FileInfo | null): boolean {
    return this.host.isCompare() && info?.meta?.mode === CompareMode.MODE_STATISTICS;
  }

  private render() {
    const info = this.host.info();
    const editable = this.host.viewKey(Side.SIDE_NPU).grading !== Grading.GRADING_26;
    this.rows.replaceChildren(
      ...this.legend.map((b, i) => {
        const colour = h("input", { type: "color", value: b.color.toLowerCase(), "data-field": "color" });
        colour.addEventListener("input", () => (b.color = colour.value.toUpperCase()));
        if (b.unmatched) return h("div.th-row", { "data-row": i }, colour, h("span", null, s("unmatched")));
        const lo = h("input", { type: "number", step: "0.01", value: numberText(b.lo), "data-field": "lo" });
        const hi = h("input", { type: "number", step: "0.01", value: numberText(b.hi), "data-field": "hi" });
        lo.addEventListener("input", () => {
          b.lo = lo.value.trim() === "" ? NaN : Number(lo.value);
          this.check();
        });
        hi.addEventListener("input", () => {
          b.hi = hi.value.trim() === "" ? NaN : Number(hi.value);
          this.check();
        });
        return h("div.th-row", { "data-row": i }, colour, h("span", null, s("from")), lo, h("span", null, s("to")), hi);
      }),
    );
    const chosen = new Set(info?.metrics ?? []);
    if (this.statistics(info)) {
      this.metricBox.replaceChildren(
        h("div.th-title", null, s("metric")),
        ...METRICS.map((m) => {
          const cb = h("input", { type: "checkbox", "data-metric": m, checked: chosen.has(m) });
          return h("label.check", null, cb, m);
        }),
        h("div.th-hint", null, s("own")),
      );
    } else {
      this.metricBox.replaceChildren(h("div.th-hint", null, s("metricNone")));
    }
    this.fileNote = !editable
      ? s("grading")
      : info?.legendError || (info?.legendSaved ? s("savedNote", { path: info.legendFile }) : "");
    this.fileNoteError = !editable || !!info?.legendError;
    const button = (key: Key, action: string, run: () => void) => {
      const b = h(
        "button",
        { type: "button", "data-action": action, disabled: !editable && action !== "close" },
        s(key),
      );
      b.addEventListener("click", run);
      return b;
    };
    this.dialog.replaceChildren(
      h("div.th-head", null, s("title")),
      this.rows,
      this.metricBox,
      this.note,
      this.failure.el,
      h(
        "div.row.buttons",
        null,
        button("apply", "apply", () => void this.apply(false)),
        button("save", "save", () => void this.apply(true)),
        button("reset", "reset", () => void this.reset()),
        button("close", "close", () => this.close()),
      ),
    );
    this.check();
  }

  private fileNote = "";
  private fileNoteError = false;

  /** Shows what is wrong with the intervals (or the file's note) and allows Apply only when nothing is. */
  private check(): string | null {
    const problem = intervalProblem(this.legend, this.span);
    this.note.textContent = problem ?? this.fileNote;
    this.note.classList.toggle("error", !!problem || this.fileNoteError);
    const editable = this.host.viewKey(Side.SIDE_NPU).grading !== Grading.GRADING_26;
    for (const b of this.dialog.querySelectorAll<HTMLButtonElement>(
      "button[data-action=apply], button[data-action=save]",
    ))
      b.disabled = !editable || !!problem;
    return problem;
  }

  private metrics(): string[] {
    return [...this.metricBox.querySelectorAll<HTMLInputElement>("input[data-metric]")]
      .filter((cb) => cb.checked)
      .map((cb) => cb.dataset.metric!);
  }

  private async apply(save: boolean) {
    const file = this.host.file();
    if (!file) return;
    const shown = this.host.info()?.meta?.legend ?? [];
    const problem = this.check();
    if (problem) return this.host.toast(problem, "error");
    for (let i = 0; i < this.legend.length; i++) {
      const b = this.legend[i];
      // An edited interval gets a name of its own (the legend and filters show it); md5's keep theirs.
      const was = shown[i];
      if (!b.unmatched && (!was || was.lo !== b.lo || was.hi !== b.hi))
        b.name = `${numberText(b.lo)}-${numberText(b.hi)}`;
    }
    this.failure.clear();
    try {
      const info = await this.host.api.call("setLegend", {
        file: file.path,
        legend: this.legend,
        metrics: this.metrics(),
        save,
      });
      await this.changed(info);
      this.host.toast(save ? s("saved", { path: info.legendFile }) : s("applied"));
    } catch (e) {
      this.failure.show((e as Error).message);
    }
  }

  private async reset() {
    const file = this.host.file();
    if (!file) return;
    this.failure.clear();
    try {
      const info = await this.host.api.call("resetLegend", { file: file.path });
      // The fields show the file's own legend again (changed() renders them from this.legend).
      this.legend = (info.meta?.legend ?? []).map((b) => ({ ...b }));
      this.span = spanOf(this.legend);
      await this.changed(info);
      this.host.toast(s("resetDone"));
    } catch (e) {
      this.failure.show((e as Error).message);
    }
  }

  /** The page takes the new colours: legend, panes, lists and details; the fields show what applies now. */
  private async changed(info: FileInfo) {
    await this.host.matchesChanged(info);
    const legend = this.host.info()?.meta?.legend ?? [];
    this.host.npu.setLegend(legend);
    this.host.bench.setLegend(legend);
    this.legend = legend.map((b) => ({ ...b }));
    if (!this.dialog.hidden) this.render();
  }
}

function spanOf(legend: ColorBucket[]): { lo: number; hi: number } | null {
  const graded = legend.filter((b) => !b.unmatched);
  if (!graded.length) return null;
  return { lo: Math.min(...graded.map((b) => b.lo)), hi: Math.max(...graded.map((b) => b.hi)) };
}

/**
 * What makes the intervals unusable, or null: an empty or reversed one, a gap or an overlap between
 * neighbours (in the order of their lower ends), or less than the file's span covered. Each would leave
 * nodes without a colour or with two (issue 30: 248 nodes once fell out of every bucket).
 */
export function intervalProblem(legend: ColorBucket[], span: { lo: number; hi: number } | null): string | null {
  const rows = legend.map((b, i) => ({ b, row: i + 1 })).filter((r) => !r.b.unmatched);
  for (const { b, row } of rows) if (!(b.lo < b.hi)) return s("order", { row });
  const sorted = [...rows].sort((x, y) => x.b.lo - y.b.lo);
  const eps = 1e-9;
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1];
    const c = sorted[i];
    if (c.b.lo > a.b.hi + eps) return s("gap", { a: a.row, b: c.row, lo: numberText(a.b.hi), hi: numberText(c.b.lo) });
    if (c.b.lo < a.b.hi - eps)
      return s("overlap", { a: a.row, b: c.row, lo: numberText(c.b.lo), hi: numberText(Math.min(a.b.hi, c.b.hi)) });
  }
  if (span && sorted.length && (sorted[0].b.lo > span.lo + eps || sorted[sorted.length - 1].b.hi < span.hi - eps))
    return s("span", { lo: numberText(span.lo), hi: numberText(span.hi) });
  return null;
}
