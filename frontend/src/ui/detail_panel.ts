// The node detail board (reference §8.9, §9 Footer): the inputs, outputs and
// parameters of the selected node and of its matched node, paired by position
// (NPU row, then Bench row), with the compare metrics on the NPU row and the
// cells beyond threshold highlighted; a second tab with the stacks,
// suggestions, communication links and parallel-merge notes.
import {
  type DistributedLink,
  type Item,
  type Metric,
  type NodeDetail,
  type NodeDetailReply,
  type NodeSummary,
  type Value,
  CompareMode,
  ItemState,
  OverflowLevel,
  Side,
} from "../api/client";
import { copyText, formatNumber, h } from "../dom";
import { bucketColour } from "../graph/paint";
import { formatIndex } from "../graph/paint";
import { type MessageKey, onLangChange, t } from "../i18n";
import type { AppContext } from "./context";
import { commLabel, groupLinks, peerButton } from "./peers";
import { VirtualList } from "./virtual_list";

const STATES: [ItemState, MessageKey][] = [
  [ItemState.STATE_INPUT, "inputs"],
  [ItemState.STATE_OUTPUT, "outputs"],
  [ItemState.STATE_PARAMETERS, "parameters"],
  [ItemState.STATE_PARAMETERS_GRAD, "parameterGrads"],
];
const HIDDEN_FIELDS = new Set(["data_name", "full_op_name"]);
const STAT_FIELDS = new Set(["Max", "Min", "Mean", "Norm"]);

interface Row {
  kind: "group" | "npu" | "bench";
  state: ItemState;
  item?: Item;
  partner?: Item;
  paired: boolean;
}

export class DetailPanel {
  readonly el: HTMLDivElement;
  private readonly header: HTMLDivElement;
  private readonly tabDetail: HTMLButtonElement;
  private readonly tabInfo: HTMLButtonElement;
  private readonly tableWrap: HTMLDivElement;
  private readonly infoWrap: HTMLDivElement;
  private readonly thresholdInput: HTMLInputElement;
  private readonly thresholdLabel: HTMLSpanElement;
  private readonly tableHead: HTMLDivElement;
  private readonly table: VirtualList<Row>;
  private reply: NodeDetailReply | null = null;
  private side: Side = Side.SIDE_NPU;
  private columns: string[] = [];
  private abort: AbortController | null = null;
  private showing: "detail" | "info" = "detail";

  constructor(private readonly ctx: AppContext) {
    this.header = h("div.detail-header");
    this.tabDetail = h("button.tab.active", { type: "button", "data-tab": "detail" });
    this.tabInfo = h("button.tab", { type: "button", "data-tab": "info" });
    this.thresholdInput = h("input.threshold", { type: "number", step: "0.05", min: "0" });
    this.thresholdLabel = h("span");
    this.tableHead = h("div.dt-row.dt-head");
    this.table = new VirtualList<Row>({
      rowHeight: 24,
      className: "detail-table",
      header: this.tableHead,
      render: (row, _i, el) => this.renderRow(row, el),
    });
    this.tableWrap = h("div.detail-body", null, this.table.el);
    this.infoWrap = h("div.detail-body.info-body");
    this.infoWrap.hidden = true;
    this.el = h(
      "div.detail",
      null,
      h(
        "div.detail-bar",
        null,
        this.tabDetail,
        this.tabInfo,
        h("span.spacer"),
        h("label.threshold-label", null, this.thresholdLabel, this.thresholdInput),
      ),
      this.header,
      this.tableWrap,
      this.infoWrap,
    );
    this.tabDetail.addEventListener("click", () => this.showTab("detail"));
    this.tabInfo.addEventListener("click", () => this.showTab("info"));
    this.thresholdInput.addEventListener("input", () => this.table.refresh());
    onLangChange(() => this.render());
  }

  private showTab(tab: "detail" | "info") {
    this.showing = tab;
    this.tabDetail.classList.toggle("active", tab === "detail");
    this.tabInfo.classList.toggle("active", tab === "info");
    this.tableWrap.hidden = tab !== "detail";
    this.infoWrap.hidden = tab !== "info";
  }

  fileChanged() {
    this.abort?.abort();
    this.reply = null;
    this.thresholdInput.value = String(defaultThreshold(this.ctx));
    this.render();
  }

  clear() {
    this.abort?.abort();
    this.reply = null;
    this.render();
  }

  /** Loads and shows a node of one side (with its matched node). */
  async show(side: Side, index: number): Promise<void> {
    this.abort?.abort();
    const abort = new AbortController();
    this.abort = abort;
    try {
      const reply = await this.ctx.api.call(
        "getNodeDetail",
        { view: this.ctx.viewKey(side), node: index },
        abort.signal,
      );
      if (abort.signal.aborted) return;
      this.reply = reply;
      this.side = side;
      this.render();
    } catch (e) {
      if (!abort.signal.aborted) this.ctx.toast((e as Error).message, "error");
    }
  }

  /** Reloads the node shown (after a match changed its metrics). */
  async reload() {
    const node = this.reply?.node;
    if (node) await this.show(this.side, node.index);
  }

  shownNode(): { side: Side; index: number } | null {
    return this.reply?.node ? { side: this.side, index: this.reply.node.index } : null;
  }

  private sides(): {
    npu?: NodeSummary;
    bench?: NodeSummary;
    npuDetail?: NodeDetail;
    benchDetail?: NodeDetail;
    npuStack: string[];
    benchStack: string[];
  } {
    const r = this.reply!;
    if (this.side === Side.SIDE_BENCH)
      return {
        npu: r.matched,
        bench: r.node,
        npuDetail: r.matchedDetail,
        benchDetail: r.detail,
        npuStack: r.matchedStack,
        benchStack: r.stack,
      };
    return {
      npu: r.node,
      bench: r.matched,
      npuDetail: r.detail,
      benchDetail: r.matchedDetail,
      npuStack: r.stack,
      benchStack: r.matchedStack,
    };
  }

  private render() {
    const compare = this.ctx.isCompare();
    this.tabDetail.textContent = compare ? t("detail") : t("detailSingle");
    this.tabInfo.textContent = t("stackInfo");
    this.thresholdLabel.textContent = t("threshold");
    const mode = this.ctx.info()?.meta?.mode;
    const graded = mode === CompareMode.MODE_STATISTICS || mode === CompareMode.MODE_TENSOR;
    this.thresholdInput.parentElement!.hidden = !compare || !graded;
    if (!this.reply?.node) {
      this.header.replaceChildren(h("span.muted", null, t("noSelection")));
      this.columns = [];
      this.tableHead.replaceChildren();
      this.table.setData(0, () => undefined);
      this.infoWrap.replaceChildren();
      return;
    }
    const s = this.sides();
    this.header.replaceChildren(
      this.nodeBadge(compare ? t("npuNode") : t("node"), s.npu, s.npuDetail, Side.SIDE_NPU),
      compare ? this.nodeBadge(t("benchNode"), s.bench, s.benchDetail, Side.SIDE_BENCH) : "",
    );
    this.buildRows(s.npuDetail, s.benchDetail);
    this.renderInfo(s);
    this.showTab(this.showing);
  }

  private nodeBadge(
    title: string,
    n: NodeSummary | undefined,
    detail: NodeDetail | undefined,
    side: Side,
  ): HTMLElement {
    const legend = this.ctx.info()?.meta?.legend ?? [];
    const swatch = h("span.swatch");
    swatch.style.background = n ? bucketColour(n.bucket, legend) : "transparent";
    const parts: (string | HTMLElement)[] = [h("span.badge-title", null, `${title}: `)];
    if (!n) parts.push(h("span.muted", null, t("notMatched")));
    else {
      parts.push(swatch, h("span.badge-name", { title: [...n.ancestors, n.name].join("\n› ") }, n.name));
      if (n.hasPrecision)
        parts.push(h("span.badge-meta", null, `${t("precisionIndex")} ${formatIndex(n.precisionIndex)}`));
      if (n.overflow !== OverflowLevel.OVERFLOW_NONE)
        parts.push(h("span.badge-meta.overflow", null, `${t("overflowLevel")} ${overflowText(n.overflow)}`));
      if (detail?.distributed.length) parts.push(this.peerLinks(detail, side, "badge-peers"));
    }
    return h("div.node-badge", { "data-side": side === Side.SIDE_BENCH ? "bench" : "npu" }, ...parts);
  }

  /** The node's communication peers by type, each a button that jumps to the peer's rank. */
  private peerLinks(detail: NodeDetail, side: Side, className: string): HTMLElement {
    const legend = this.ctx.info()?.meta?.legend ?? [];
    const pick = (link: DistributedLink) => void this.ctx.jumpToPeer(side, link);
    return h(
      `span.${className}`,
      null,
      ...groupLinks(detail.distributed).map(([type, links]) =>
        h(
          "span.peer-group",
          { "data-comm": type },
          h("span.peer-type", null, `${commLabel(type)}:`),
          ...links.map((l) => peerButton(l, legend, "peer-link", pick)),
        ),
      ),
    );
  }

  private buildRows(npu: NodeDetail | undefined, bench: NodeDetail | undefined) {
    const rows: Row[] = [];
    const fieldCols: string[] = [];
    const metricCols: string[] = [];
    const seen = new Set<string>();
    const addCols = (item: Item) => {
      for (const f of item.field) {
        if (HIDDEN_FIELDS.has(f.name) || seen.has(f.name)) continue;
        seen.add(f.name);
        fieldCols.push(f.name);
      }
      for (const m of item.metric) {
        const key = `metric:${m.name}`;
        if (seen.has(key)) continue;
        seen.add(key);
        metricCols.push(key);
      }
    };
    const all = (d: NodeDetail | undefined) => (d ? [...d.input, ...d.output] : []);
    const npuItems = all(npu);
    const benchItems = all(bench);
    for (const [state] of STATES) {
      const a = npuItems.filter((i) => i.state === state);
      const b = benchItems.filter((i) => i.state === state);
      if (!a.length && !b.length) continue;
      rows.push({ kind: "group", state, paired: false });
      const n = Math.max(a.length, b.length);
      for (let i = 0; i < n; i++) {
        const paired = !!(a[i] && b[i]);
        if (a[i]) {
          addCols(a[i]);
          rows.push({ kind: "npu", state, item: a[i], partner: b[i], paired });
        }
        if (b[i]) {
          addCols(b[i]);
          rows.push({ kind: "bench", state, item: b[i], partner: a[i], paired });
        }
      }
    }
    this.columns = ["name", ...fieldCols, ...metricCols];
    const widths = this.columns.map((c) => columnWidth(c, rows));
    const template = widths.map((w) => `${w}px`).join(" ");
    this.table.el.style.setProperty("--dt-columns", template);
    this.table.el.style.setProperty("--dt-width", `${widths.reduce((a, b) => a + b, 0) + 16}px`);
    this.tableHead.replaceChildren(
      ...this.columns.map((c) => h("div.dt-cell", { "data-col": colName(c), title: this.tooltipFor(c) }, colLabel(c))),
    );
    this.table.reset();
    this.table.setData(rows.length, (i) => rows[i]);
  }

  private tooltipFor(col: string): string {
    const name = colName(col);
    const tip = this.ctx.info()?.meta?.tooltips.find((x) => x.key === name);
    return tip ? `${name}: ${tip.text}` : name;
  }

  private renderRow(row: Row | undefined, el: HTMLElement) {
    el.className = "vlist-row dt-row";
    if (!row) return el.replaceChildren();
    if (row.kind === "group") {
      el.classList.add("dt-group");
      const key = STATES.find(([s]) => s === row.state)![1];
      el.replaceChildren(h("div.dt-cell.dt-group-title", null, t(key)));
      delete el.dataset.key;
      return;
    }
    const item = row.item!;
    el.classList.add(row.kind === "npu" ? "row-npu" : "row-bench");
    if (row.paired && row.kind === "bench") el.classList.add("pair-end");
    el.dataset.key = item.key;
    el.dataset.side = row.kind;
    const threshold = Number(this.thresholdInput.value);
    const prefix = this.prefixOf(row.kind);
    const cells = this.columns.map((col) => {
      let text: string;
      let bad = false;
      if (col === "name") {
        text = stripPrefix(item.key, prefix);
        const dot = h(`span.dot.${row.paired ? "matched" : "unmatched"}`);
        return h("div.dt-cell", { "data-col": "name", title: item.key }, this.ctx.isCompare() ? dot : "", text);
      }
      if (col.startsWith("metric:")) {
        const m = item.metric.find((x) => `metric:${x.name}` === col);
        text = m ? metricText(m) : "";
        bad = !!m && row.kind === "npu" && metricBad(m, threshold);
      } else {
        const f = item.field.find((x) => x.name === col);
        text = f ? valueText(f.value) : "";
        if (f && STAT_FIELDS.has(col) && isNonFinite(f.value)) bad = true;
        if (f && col === "md5" && row.kind === "npu" && row.partner) {
          const other = row.partner.field.find((x) => x.name === "md5");
          if (other && valueText(other.value) !== text) bad = true;
        }
      }
      if (item.isNull && !text) text = "null";
      return h(
        `div.dt-cell${bad ? ".bad" : ""}`,
        { "data-col": colName(col), title: `${colName(col)}: ${text}` },
        text || "-",
      );
    });
    el.replaceChildren(...cells);
  }

  private prefixOf(kind: "npu" | "bench"): string {
    const s = this.sides();
    const n = kind === "npu" ? s.npu : s.bench;
    return n ? n.name : "";
  }

  private renderInfo(s: ReturnType<DetailPanel["sides"]>) {
    const compare = this.ctx.isCompare();
    const col = (
      title: string,
      side: Side,
      node: NodeSummary | undefined,
      detail: NodeDetail | undefined,
      stack: string[],
    ) => {
      const sections: HTMLElement[] = [];
      sections.push(textBlock(t("stack"), stack.length ? stack.join("\n") : t("none"), "stack"));
      const sugg = detail ? Object.entries(detail.suggestions) : [];
      if (sugg.length)
        sections.push(textBlock(t("suggestions"), sugg.map(([k, v]) => `${k}: ${v}`).join("\n"), "suggestions"));
      if (detail?.distributed.length) sections.push(this.peerTable(detail, side));
      if (detail?.parallelMergeInfo.length)
        sections.push(textBlock(t("parallelMerge"), detail.parallelMergeInfo.join("\n"), "parallel-merge"));
      return h(
        "div.info-col",
        null,
        h("div.info-title", null, `${title}: `, node ? node.name : t("notMatched")),
        ...sections,
      );
    };
    this.infoWrap.replaceChildren(
      col(compare ? t("npuNode") : t("node"), Side.SIDE_NPU, s.npu, s.npuDetail, s.npuStack),
      compare ? col(t("benchNode"), Side.SIDE_BENCH, s.bench, s.benchDetail, s.benchStack) : "",
    );
  }

  /** Every link: type, peer rank (a jump), peer node and the peer's index. */
  private peerTable(detail: NodeDetail, side: Side): HTMLElement {
    const legend = this.ctx.info()?.meta?.legend ?? [];
    const pick = (link: DistributedLink) => void this.ctx.jumpToPeer(side, link);
    const rows: HTMLElement[] = [];
    for (const [type, links] of groupLinks(detail.distributed))
      for (const l of links)
        rows.push(
          h(
            "div.peer-row",
            { "data-comm": type, "data-rank": l.rank },
            h("span.peer-type", null, commLabel(type)),
            peerButton(l, legend, "peer-link", pick),
            h("span.peer-node", { title: l.peerNode }, l.peerNode),
            h("span.peer-index", null, l.peerIndex),
          ),
        );
    return h(
      "div.info-block",
      { "data-kind": "distributed" },
      h("div.info-block-title", null, t("distributed")),
      h("div.peer-rows", null, ...rows),
    );
  }
}

function textBlock(title: string, text: string, kind: string): HTMLElement {
  const pre = h("pre.info-text", { "data-kind": kind }, text);
  const btn = h("button.copy", { type: "button" }, t("copy"));
  btn.addEventListener("click", async () => {
    if (await copyText(text)) {
      btn.textContent = t("copied");
      setTimeout(() => (btn.textContent = t("copy")), 1200);
    }
  });
  return h("div.info-block", null, h("div.info-block-title", null, title, btn), pre);
}

function colName(col: string): string {
  return col.startsWith("metric:") ? col.slice(7) : col;
}

function colLabel(col: string): string {
  return col === "name" ? t("name") : colName(col);
}

function columnWidth(col: string, rows: Row[]): number {
  let chars = colLabel(col).length;
  let n = 0;
  for (const r of rows) {
    if (!r.item || n++ > 400) continue;
    let len = 0;
    if (col === "name") len = r.item.key.length * 0.6 + 2;
    else if (col.startsWith("metric:")) {
      const m = r.item.metric.find((x) => `metric:${x.name}` === col);
      len = m ? metricText(m).length : 0;
    } else {
      const f = r.item.field.find((x) => x.name === col);
      len = f ? valueText(f.value).length : 0;
    }
    chars = Math.max(chars, len);
  }
  return Math.round(Math.min(col === "name" ? 320 : 220, Math.max(56, chars * 7 + 18)));
}

function stripPrefix(key: string, prefix: string): string {
  return prefix && key.startsWith(prefix + ".") ? key.slice(prefix.length + 1) : key;
}

export function valueText(v: Value | undefined): string {
  if (!v) return "";
  if (v.null) return "null";
  if (v.boolean !== undefined) return String(v.boolean);
  if (v.integer !== undefined) return String(v.integer);
  if (v.number !== undefined) return formatNumber(v.number);
  if (v.text !== undefined) return v.text;
  if (v.json !== undefined) return v.json;
  return "";
}

function isNonFinite(v: Value | undefined): boolean {
  if (!v) return false;
  if (v.number !== undefined) return !Number.isFinite(v.number);
  if (v.text !== undefined) return /^[-+]?(nan|inf|infinity)$/i.test(v.text.trim());
  return false;
}

/** A metric as the reference prints it: plain numbers with 6 decimals (builder reference §10.5), other text as is. */
function metricText(m: Metric): string {
  const text = m.text.trim();
  if (!text) return m.hasValue ? formatNumber(m.value) : "";
  if (/^[-+]?\d+\.\d{7,}(e[-+]?\d+)?$/i.test(text)) return formatNumber(Number(text));
  return text;
}

/** A metric's number: "20.0%" is 0.2; otherwise its value. */
function metricNumber(m: Metric): number | null {
  const text = m.text.trim();
  if (text.endsWith("%")) {
    const v = Number(text.slice(0, -1));
    return Number.isNaN(v) ? null : v / 100;
  }
  if (m.hasValue) return m.value;
  const v = Number(text);
  return text && !Number.isNaN(v) ? v : null;
}

/**
 * Cells beyond threshold: relative errors above the threshold (statistics
 * and tensor modes), a cosine below 0.99 or a max absolute error above 0.001
 * (msprobe's accuracy criteria for tensors), a failed md5 result, an
 * inconsistent requires_grad.
 */
function metricBad(m: Metric, threshold: number): boolean {
  const name = m.name;
  if (name === "Result") return m.text !== "" && m.text !== "pass";
  if (name === "Requires_grad Consistent") return m.text.toLowerCase() === "false";
  const v = metricNumber(m);
  if (v === null) return /^nan$/i.test(m.text.trim());
  if (Number.isNaN(v)) return true;
  if (name.endsWith("RelativeErr")) return v > threshold;
  if (name === "Cosine") return v < 0.99;
  if (name === "MaxAbsErr") return v > 0.001;
  return false;
}

function defaultThreshold(ctx: AppContext): number {
  const meta = ctx.info()?.meta;
  const legend = meta?.legend ?? [];
  // msprobe marks a statistics node as an error above the lower bound of the third colour (get_node_error_status).
  if (meta?.mode === CompareMode.MODE_STATISTICS) {
    const graded = legend.filter((b) => !b.unmatched && b.hi > b.lo);
    if (graded.length >= 3) return graded[2].lo;
  }
  return 0.5;
}

function overflowText(level: OverflowLevel): string {
  switch (level) {
    case OverflowLevel.OVERFLOW_MEDIUM:
      return t("overflowMedium");
    case OverflowLevel.OVERFLOW_HIGH:
      return t("overflowHigh");
    case OverflowLevel.OVERFLOW_CRITICAL:
      return t("overflowCritical");
    default:
      return "";
  }
}
