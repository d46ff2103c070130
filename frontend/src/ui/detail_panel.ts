// The node detail board (reference §8.9, §9 Footer): the inputs, outputs and
// parameters of the selected node and of its matched node, paired by position
// (NPU row, then Bench row), with the compare metrics on the NPU row and the
// cells beyond threshold highlighted; a second tab with the stacks,
// suggestions, communication links and parallel-merge notes.
import "./detail_panel.css";
import {
  type DistributedLink,
  type Item,
  type NodeDetail,
  type NodeDetailReply,
  type NodeSummary,
  CompareMode,
  ItemState,
  OverflowLevel,
  Side,
} from "../api/client";
import type { AppContext } from "../app_context";
import { weightsBlock } from "../ckpt/weights";
import { copyText, h } from "../dom";
import { tableCsv } from "../export/csv";
import { bucketColour } from "../graph/paint";
import { formatIndex } from "../graph/paint";
import { type MessageKey, onLangChange, t } from "../i18n";
import {
  type Row,
  colLabel,
  colName,
  columnWidth,
  differingFirst,
  META_FIELDS,
  STAT_FIELDS,
  fieldChanged,
  isNonFinite,
  metricBad,
  metricText,
  stripPrefix,
  valueText,
} from "./detail_cells";
import { commLabel, groupLinks, peerButton } from "./peers";
import { ReproButton } from "./repro_button";
import { tensorViewButton } from "../tensor/button";
import { VirtualList } from "./virtual_list";

const STATES: [ItemState, MessageKey][] = [
  [ItemState.STATE_INPUT, "inputs"],
  [ItemState.STATE_OUTPUT, "outputs"],
  [ItemState.STATE_PARAMETERS, "parameters"],
  [ItemState.STATE_PARAMETERS_GRAD, "parameterGrads"],
];
const HIDDEN_FIELDS = new Set(["data_name", "full_op_name"]);

/** A metric ("metric:<name>") or field cell's text, "null" for a null argument; `exact`: metrics unrounded. */
function cellText(item: Item, col: string, exact = false): string {
  let text: string;
  if (col.startsWith("metric:")) {
    const m = item.metric.find((x) => `metric:${x.name}` === col);
    text = m ? (exact ? m.text.trim() : metricText(m)) : "";
  } else {
    const f = item.field.find((x) => x.name === col);
    text = f ? valueText(f.value) : "";
  }
  return item.isNull && !text ? "null" : text;
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
  private readonly thresholdUnit: HTMLSpanElement;
  private readonly tableHead: HTMLDivElement;
  private readonly table: VirtualList<Row>;
  private reply: NodeDetailReply | null = null;
  private side: Side = Side.SIDE_NPU;
  private columns: string[] = [];
  private abort: AbortController | null = null;
  private showing: "detail" | "info" = "detail";
  private readonly diffFirst: HTMLInputElement;
  private readonly diffFirstLabel: HTMLSpanElement;
  private readonly csvBtn: HTMLButtonElement;
  private readonly repro: ReproButton;
  private shownRows: Row[] = [];

  constructor(private readonly ctx: AppContext) {
    this.header = h("div.detail-header");
    this.tabDetail = h("button.tab.active", { type: "button", "data-tab": "detail" });
    this.tabInfo = h("button.tab", { type: "button", "data-tab": "info" });
    this.thresholdInput = h("input.threshold", { type: "number", step: "0.05", min: "0" });
    this.thresholdLabel = h("span");
    this.thresholdUnit = h("span.threshold-unit");
    this.diffFirst = h("input", { type: "checkbox", "data-toggle": "differences-first" });
    this.diffFirstLabel = h("span");
    this.csvBtn = h("button.csv", { type: "button", "data-action": "detail-csv", title: "CSV" }, "CSV");
    this.csvBtn.addEventListener("click", () => tableCsv(this.ctx, this.reply?.node?.name ?? "", this.tableRows()));
    this.repro = new ReproButton(ctx);
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
        h("label.check.diff-first", null, this.diffFirst, this.diffFirstLabel),
        h("label.threshold-label", null, this.thresholdLabel, this.thresholdInput, this.thresholdUnit),
        this.repro.el,
        this.csvBtn,
      ),
      this.header,
      this.tableWrap,
      this.infoWrap,
    );
    this.tabDetail.addEventListener("click", () => this.showTab("detail"));
    this.tabInfo.addEventListener("click", () => this.showTab("info"));
    this.thresholdInput.addEventListener("input", () => {
      this.showThresholdUnit();
      // The differing rows depend on the threshold when they come first.
      if (this.diffFirst.checked && this.reply?.node) this.render();
      else this.table.refresh();
    });
    this.diffFirst.addEventListener("change", () => this.render());
    onLangChange(() => this.render());
  }

  /** The threshold is a fraction while the table prints some relative errors in %: say what it is in %. */
  private showThresholdUnit() {
    const v = Number(this.thresholdInput.value);
    this.thresholdUnit.textContent =
      this.thresholdInput.value.trim() && Number.isFinite(v) ? `= ${formatPercent(v)}` : "";
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
      const other = this.reply?.node?.index !== index || this.side !== side;
      this.reply = reply;
      this.side = side;
      this.render();
      if (other) {
        // Another node: its table starts at the top left.
        this.table.el.scrollTop = 0;
        this.table.el.scrollLeft = 0;
      }
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
    this.thresholdInput.title = t("thresholdTip");
    this.showThresholdUnit();
    this.diffFirstLabel.textContent = t("differencesFirst");
    this.diffFirst.parentElement!.hidden = !compare;
    const mode = this.ctx.info()?.meta?.mode;
    const graded = mode === CompareMode.MODE_STATISTICS || mode === CompareMode.MODE_TENSOR;
    this.thresholdInput.parentElement!.hidden = !compare || !graded;
    this.repro.show(this.side, this.reply?.node);
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
    const items = (d: NodeDetail | undefined) => (d ? d.input.length + d.output.length : 0);
    if (!items(s.npuDetail) && !items(s.benchDetail))
      this.header.append(h("div.no-data", { "data-kind": "no-data" }, t("noDumpedData")));
    this.header.append(weightsBlock(this.ctx, s.npu?.index));
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
      const path = [...(n.ancestorsOmitted ? ["…"] : []), ...n.ancestors, n.name];
      parts.push(swatch, h("span.badge-name", { title: path.join("\n› ") }, n.name));
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
    // Differences first: the rows that differ on top, and the columns that say how (dtype, shape, then the
    // compare metrics) right after the name, so that both are in view without scrolling.
    const meta = fieldCols.filter((c) => META_FIELDS.has(c));
    const diffFirst = this.diffFirst.checked && this.ctx.isCompare();
    this.columns = diffFirst
      ? ["name", ...meta, ...metricCols, ...fieldCols.filter((c) => !meta.includes(c))]
      : ["name", ...fieldCols, ...metricCols];
    if (diffFirst) differingFirst(rows, Number(this.thresholdInput.value));
    const widths = this.columns.map((c) => columnWidth(c, rows));
    const template = widths.map((w) => `${w}px`).join(" ");
    this.table.el.style.setProperty("--dt-columns", template);
    this.table.el.style.setProperty("--dt-width", `${widths.reduce((a, b) => a + b, 0) + 16}px`);
    this.tableHead.replaceChildren(
      ...this.columns.map((c) => h("div.dt-cell", { "data-col": colName(c), title: this.tooltipFor(c) }, colLabel(c))),
    );
    this.table.reset();
    this.shownRows = rows;
    this.table.setData(rows.length, (i) => rows[i]);
  }

  /** The table as CSV rows: side, state and the shown columns, the full item key as the name. */
  tableRows(): string[][] {
    const state = (s: ItemState) => t(STATES.find(([x]) => x === s)![1]);
    const out = [["side", "state", ...this.columns.map(colName)]];
    for (const row of this.shownRows) {
      if (row.kind === "group" || !row.item) continue;
      const item = row.item;
      out.push([
        row.kind,
        state(row.state),
        ...this.columns.map((c) => (c === "name" ? item.key : cellText(item, c, true))),
      ]);
    }
    return out;
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
      let changed = false;
      if (col === "name") {
        text = stripPrefix(item.key, prefix);
        const dot = h(`span.dot.${row.paired ? "matched" : "unmatched"}`);
        const tag = h(`span.side-tag.${row.kind}`, null, row.kind === "npu" ? t("npu") : t("bench"));
        const npu = this.sides().npu;
        return h(
          "div.dt-cell",
          { "data-col": "name", title: item.key },
          this.ctx.isCompare() ? dot : "",
          this.ctx.isCompare() ? tag : "",
          row.kind === "npu" && npu ? tensorViewButton(this.ctx, npu.index, item, row.partner) : "",
          text,
        );
      }
      text = cellText(item, col);
      if (col.startsWith("metric:")) {
        const m = item.metric.find((x) => `metric:${x.name}` === col);
        bad = !!m && row.kind === "npu" && metricBad(m, threshold);
      } else {
        const f = item.field.find((x) => x.name === col);
        if (f && STAT_FIELDS.has(col) && isNonFinite(f.value)) bad = true;
        if (fieldChanged(row, col)) changed = true;
        if (f && col === "md5" && row.kind === "npu" && row.partner) {
          const other = row.partner.field.find((x) => x.name === "md5");
          if (other && valueText(other.value) !== text) bad = true;
        }
      }
      return h(
        `div.dt-cell${bad ? ".bad" : ""}${changed ? ".changed" : ""}`,
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
            h("span.peer-index", { title: l.peerIndex }, peerIndexText(l.peerIndex)),
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

/** A peer's index as the other numbers: "0.0005439318636507684" is 0.000544; words stay. */
function peerIndexText(text: string): string {
  const v = Number(text);
  return text.trim() && Number.isFinite(v) ? formatIndex(v) : text;
}

/** 0.5 -> "50%", 0.005 -> "0.5%". */
function formatPercent(fraction: number): string {
  return `${Number((fraction * 100).toPrecision(6))}%`;
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
