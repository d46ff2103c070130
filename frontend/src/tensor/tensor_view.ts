// The tensor view (issue 32 point 5): one item of a matched pair in a task
// "tensor" compare, compared element by element by the service (TensorView)
// from both runs' tensor files: the error histograms, the worst elements with
// their indices and both values, a heatmap of the difference on a 2-D slice
// (axes chosen, the others held at an index), NaN/Inf counts, and padded rows
// masked by a length or a value. Opened from the detail board's item rows.
import "./tensor.css";
import { type ErrorHistogram, type GraphApi, type TensorSlice, type TensorViewReply, Side } from "../api/client";
import { formatNumber, h, option } from "../dom";
import { onLangChange } from "../i18n";
import { tt } from "./strings";

export interface TensorViewHost {
  readonly api: GraphApi;
  /** The open file's path, relative to the log directory. */
  filePath(): string | null;
}

/** What to show: a node of one side and the key of one of its items. */
export interface TensorItem {
  side: Side;
  node: number;
  item: string;
}

/** The heatmap's size in pixels at most; a cell is 4 to 24 pixels a side. */
const HEAT_PX = 384;

export class TensorView {
  readonly el = h("div.overlay.tensor-overlay", { "data-dialog": "tensor-view" });
  private readonly titleEl = h("span.tensor-title");
  private readonly closeBtn = h("button", { type: "button", "data-action": "tensor-close" });
  private readonly controls = h("div.tensor-controls");
  private readonly body = h("div.tensor-body");
  private readonly topK = h("input", { type: "number", min: "1", max: "1000", value: "20", "data-input": "top-k" });
  private readonly rowAxis = h("select", { "data-select": "row-axis" });
  private readonly colAxis = h("select", { "data-select": "col-axis" });
  private readonly fixed = h("span.tensor-fixed");
  private readonly maskKind = h("select", { "data-select": "mask-kind" });
  private readonly maskAxis = h("input", { type: "number", min: "0", value: "0", "data-input": "mask-axis" });
  private readonly maskArg = h("input", { type: "number", value: "0", "data-input": "mask-arg" });
  private readonly applyBtn = h("button", { type: "button", "data-action": "tensor-apply" });
  private item: TensorItem | null = null;
  private shape: number[] = [];
  private seq = 0;

  constructor(private readonly host: TensorViewHost) {
    this.el.hidden = true;
    this.el.append(
      h(
        "div.tensor-box",
        { role: "dialog", "aria-modal": "true" },
        h("div.tensor-head", null, this.titleEl, this.closeBtn),
        this.controls,
        this.body,
      ),
    );
    this.closeBtn.addEventListener("click", () => this.close());
    this.applyBtn.addEventListener("click", () => void this.load());
    this.el.addEventListener("keydown", (e) => {
      if (e.key === "Escape") this.close();
      if (e.key === "Enter") void this.load();
      e.stopPropagation(); // the graph's keys do not apply while the view is open
    });
    this.el.addEventListener("click", (e) => {
      if (e.target === this.el) this.close();
    });
    onLangChange(() => this.relabel());
    this.relabel();
  }

  /** Opens the view on an item; the slice and mask start from their defaults. */
  async open(item: TensorItem) {
    this.item = item;
    this.shape = [];
    this.rowAxis.replaceChildren();
    this.colAxis.replaceChildren();
    this.fixed.replaceChildren();
    this.maskKind.value = "";
    this.el.hidden = false;
    this.closeBtn.focus();
    this.titleEl.textContent = `${tt("title")}: ${item.item}`;
    await this.load();
  }

  close() {
    this.el.hidden = true;
    this.seq++;
  }

  private relabel() {
    this.closeBtn.textContent = tt("close");
    this.applyBtn.textContent = tt("apply");
    const kind = this.maskKind.value;
    this.maskKind.replaceChildren(
      option("", tt("maskNone")),
      option("length", tt("maskLength")),
      option("value", tt("maskValue")),
    );
    this.maskKind.value = kind;
    this.controls.replaceChildren(
      h("label", null, `${tt("topK")} `, this.topK),
      h("span.tensor-group", null, `${tt("slice")}: `, h("label", null, `${tt("rows")} `, this.rowAxis)),
      h("label", null, `${tt("cols")} `, this.colAxis),
      this.fixed,
      h(
        "span.tensor-group",
        null,
        h("label", null, `${tt("mask")} `, this.maskKind),
        h("label", null, ` ${tt("maskAxis")} `, this.maskAxis),
        h("label", null, ` ${tt("maskLengthValue")} / ${tt("maskValueValue")} `, this.maskArg),
      ),
      this.applyBtn,
    );
  }

  private async load() {
    const item = this.item;
    const file = this.host.filePath();
    if (!item || !file) return;
    const seq = ++this.seq;
    this.body.replaceChildren(h("div.muted", { "data-tensor": "loading" }, tt("loading")));
    const axis = (s: HTMLSelectElement) => (s.value === "" ? undefined : Number(s.value));
    const kind = this.maskKind.value;
    const arg = Number(this.maskArg.value);
    try {
      const reply = await this.host.api.call("tensorView", {
        file,
        side: item.side,
        node: item.node,
        item: item.item,
        topK: Math.max(1, Math.min(1000, Number(this.topK.value) || 20)),
        rowAxis: axis(this.rowAxis),
        colAxis: axis(this.colAxis),
        fixed: [...this.fixed.querySelectorAll("input")].map((i) => Number(i.value) || 0),
        mask: {
          kind,
          axis: Number(this.maskAxis.value) || 0,
          length: kind === "length" ? Math.max(0, Math.trunc(arg)) : 0,
          value: kind === "value" ? arg : 0,
        },
      });
      if (seq !== this.seq) return;
      this.showAxes(reply);
      this.render(reply);
    } catch (e) {
      if (seq !== this.seq) return;
      this.body.replaceChildren(h("div.tensor-error", { role: "alert", "data-tensor": "error" }, (e as Error).message));
    }
  }

  /** The slice's axis pickers and fixed indices, built once per item from the NPU shape. */
  private showAxes(reply: TensorViewReply) {
    const shape = reply.npu?.shape ?? [];
    const slice = reply.slice;
    if (this.shape.join(",") === shape.join(",") && this.rowAxis.options.length) return;
    this.shape = shape;
    const axes = (selected: number) => [
      option("-1", "—", selected < 0),
      ...shape.map((n, k) => option(String(k), `${k} (${n})`, k === selected)),
    ];
    this.rowAxis.replaceChildren(...axes(slice?.rowAxis ?? -1));
    this.colAxis.replaceChildren(...axes(slice?.colAxis ?? -1));
    this.fixed.replaceChildren(
      ...shape.map((n, k) => {
        const input = h("input", { type: "number", min: "0", max: String(n - 1), value: "0", "data-fixed": k });
        return h("label.tensor-fixed-axis", { "data-axis": k }, `${tt("fixedAt", { axis: k })} `, input);
      }),
    );
    this.syncFixed();
    this.rowAxis.onchange = this.colAxis.onchange = () => this.syncFixed();
  }

  /** Only the axes off the slice take a fixed index. */
  private syncFixed() {
    const own = new Set([Number(this.rowAxis.value), Number(this.colAxis.value)]);
    for (const label of this.fixed.querySelectorAll<HTMLElement>("label"))
      label.hidden = own.has(Number(label.dataset.axis));
  }

  private render(r: TensorViewReply) {
    const npu = r.npu!;
    const bench = r.bench!;
    const files = h(
      "div.tensor-files",
      { "data-tensor": "files" },
      h("div", null, tt("files", { side: tt("npu"), path: npu.path, shape: npu.shape.join(", "), dtype: npu.dtype })),
      h(
        "div",
        null,
        tt("files", { side: tt("bench"), path: bench.path, shape: bench.shape.join(", "), dtype: bench.dtype }),
      ),
    );
    const summary = h(
      "div.tensor-summary",
      { "data-tensor": "summary" },
      h("div", null, tt("summary", { compared: r.compared, elements: r.elements, masked: r.masked })),
      r.rows
        ? h("div", { "data-tensor": "masked-rows" }, tt("maskedRows", { masked: r.maskedRows, rows: r.rows }))
        : "",
      h("div", null, `${tt("maxAbs")}: `, h("b", { "data-tensor": "max-abs" }, formatNumber(r.maxAbs))),
      h("div", null, `${tt("maxRel")}: `, h("b", null, formatNumber(r.maxRel))),
      h("div", null, `${tt("meanAbs")}: `, h("b", null, formatNumber(r.meanAbs))),
    );
    const special = h(
      "div.tensor-special",
      { "data-tensor": "non-finite" },
      h("div.tensor-section-title", null, tt("nonFinite")),
      h("div", null, tt("nanInf", { side: tt("npu"), nan: npu.nan, pos: npu.posInf, neg: npu.negInf })),
      h("div", null, tt("nanInf", { side: tt("bench"), nan: bench.nan, pos: bench.posInf, neg: bench.negInf })),
      h(
        `div${r.specialMismatch ? ".bad" : ""}`,
        null,
        r.specialMismatch
          ? tt("mismatch", { count: r.specialMismatch, index: r.firstSpecialMismatch.join(", ") })
          : tt("noMismatch"),
      ),
    );
    this.body.replaceChildren(
      files,
      h("div.tensor-row", null, summary, special),
      h(
        "div.tensor-row",
        null,
        histogram(tt("absHist"), r.absHist!, "abs-hist"),
        histogram(tt("relHist"), r.relHist!, "rel-hist"),
      ),
      h("div.tensor-row", null, worstTable(r), heatmap(r.slice!)),
    );
  }
}

/** Bars of the log10 bins, with the zero, below and above counts at the ends. */
function histogram(title: string, hist: ErrorHistogram, kind: string): HTMLElement {
  const exp = (i: number) => hist.lowExponent + i / hist.perDecade;
  const bins: [string, number][] = [
    [tt("zero"), hist.zero],
    [tt("below", { exp: hist.lowExponent }), hist.below],
    ...hist.counts.map((c, i): [string, number] => [`[1e${exp(i)}, 1e${exp(i + 1)})`, c]),
    [tt("above", { exp: exp(hist.counts.length) }), hist.above],
  ];
  const most = Math.max(1, ...bins.map(([, c]) => c));
  // A tick at 0 and at every fourth decade, under the bar that starts there.
  const axis = h("div.tensor-axis");
  const tick = (at: number, text: string) => {
    const span = h("span", null, text);
    span.style.left = `${(100 * at) / bins.length}%`;
    axis.append(span);
  };
  tick(0, "0");
  for (let i = 0; i <= hist.counts.length; i += 4 * hist.perDecade) tick(2 + i, `1e${exp(i)}`);
  const bars = bins.map(([label, count]) => {
    const bar = h("div.tensor-bar", { title: `${label}: ${count}`, "data-count": count });
    bar.style.height = `${count ? Math.max(2, (100 * count) / most) : 0}%`;
    return bar;
  });
  return h(
    "div.tensor-hist",
    { "data-tensor": kind },
    h("div.tensor-section-title", null, title),
    h("div.tensor-bars", null, ...bars),
    axis,
  );
}

function worstTable(r: TensorViewReply): HTMLElement {
  const head = h(
    "tr",
    null,
    ...["#", tt("index"), tt("npu"), tt("bench"), tt("absErr"), tt("relErr")].map((c) => h("th", null, c)),
  );
  const rows = r.worst.map((w, i) =>
    h(
      "tr",
      { "data-index": w.index.join(",") },
      h("td", null, String(i + 1)),
      h("td", null, `[${w.index.join(", ")}]`),
      h("td", null, formatNumber(w.npu)),
      h("td", null, formatNumber(w.bench)),
      h("td", null, formatNumber(w.absErr)),
      h("td", null, formatNumber(w.relErr)),
    ),
  );
  return h(
    "div.tensor-worst",
    { "data-tensor": "worst" },
    h("div.tensor-section-title", null, tt("worst")),
    r.worst.length ? h("table", null, h("thead", null, head), h("tbody", null, ...rows)) : h("div", null, tt("none")),
  );
}

/** The slice's cells on a canvas: red where npu > bench, blue where below, magenta NaN/Inf, grey masked. */
function heatmap(slice: TensorSlice): HTMLElement {
  const rows = slice.cellRows;
  const cols = slice.cellCols;
  const cw = Math.max(4, Math.min(24, Math.floor(HEAT_PX / cols)));
  const ch = Math.max(4, Math.min(24, Math.floor(HEAT_PX / rows)));
  const canvas = h("canvas.tensor-heat", { width: cols * cw, height: rows * ch, "data-tensor": "heatmap" });
  const most = Math.max(0, ...slice.diff.filter((d) => Number.isFinite(d)).map((d) => Math.abs(d)));
  const g = canvas.getContext("2d");
  for (let r = 0; r < rows && g; r++)
    for (let c = 0; c < cols; c++) {
      const i = r * cols + c;
      const d = slice.diff[i];
      if (slice.masked[i]) g.fillStyle = "#9e9e9e";
      else if (!Number.isFinite(d)) g.fillStyle = "#d81b9a";
      else {
        const a = most > 0 ? Math.abs(d) / most : 0;
        const v = Math.round(255 * (1 - a));
        g.fillStyle = d >= 0 ? `rgb(255, ${v}, ${v})` : `rgb(${v}, ${v}, 255)`;
      }
      g.fillRect(c * cw, r * ch, cw, ch);
    }
  const caption = h("div.tensor-cell", { "data-tensor": "cell" }, " ");
  canvas.addEventListener("mousemove", (e) => {
    const rect = canvas.getBoundingClientRect();
    const c = Math.floor(((e.clientX - rect.left) / rect.width) * cols);
    const r = Math.floor(((e.clientY - rect.top) / rect.height) * rows);
    if (r < 0 || c < 0 || r >= rows || c >= cols) return;
    const i = r * cols + c;
    // The first element of the cell: cells pool rows / cellRows elements each way.
    const index = slice.fixed.map((f, k) =>
      k === slice.rowAxis
        ? Math.floor((r * slice.rows) / rows)
        : k === slice.colAxis
          ? Math.floor((c * slice.cols) / cols)
          : f,
    );
    caption.textContent = tt("cell", {
      index: index.join(", "),
      value: slice.masked[i] ? tt("masked") : formatNumber(slice.diff[i]),
    });
  });
  const pooled = rows !== slice.rows || cols !== slice.cols;
  return h(
    "div.tensor-heatmap",
    null,
    h("div.tensor-section-title", null, tt("heatmap")),
    pooled
      ? h(
          "div.muted",
          null,
          tt("heatmapPooled", { rows: slice.rows, cols: slice.cols, cellRows: rows, cellCols: cols }),
        )
      : "",
    canvas,
    h("div.muted", { "data-tensor": "heat-legend" }, tt("heatLegend", { max: formatNumber(most) })),
    caption,
  );
}
