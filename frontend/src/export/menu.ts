// The export controls of the legend bar: the current view of one or both
// sides as SVG or PNG, with the legend. Everything is made in the page.
import type { AppContext } from "../app_context";
import { h } from "../dom";
import type { GraphPane } from "../graph/pane";
import { currentLang, onLangChange, t } from "../i18n";
import { download, fileStem } from "./download";
import { type PaneShot, svgToPng, viewSvg } from "./svg";

/** What the export needs of the page besides the panel context. */
export interface ExportHost extends AppContext {
  readonly npu: GraphPane;
  readonly bench: GraphPane;
}

const TEXT = {
  en: {
    export: "Export",
    both: "Both sides",
    npu: "NPU side",
    bench: "Bench side",
    tip: "Download the current view with the legend",
  },
  zh: { export: "导出", both: "两侧", npu: "NPU 侧", bench: "标杆侧", tip: "下载当前视图（含图例）" },
};

export class ExportMenu {
  readonly el: HTMLDivElement;
  private readonly which: HTMLSelectElement;
  private readonly svgBtn = h("button", { type: "button", "data-action": "export-svg" }, "SVG");
  private readonly pngBtn = h("button", { type: "button", "data-action": "export-png" }, "PNG");
  private readonly label = h("span");

  constructor(private readonly host: ExportHost) {
    this.which = h("select.export-side", { "data-picker": "export-side" });
    this.el = h("div.export-menu", null, this.label, this.which, this.svgBtn, this.pngBtn);
    this.svgBtn.addEventListener("click", () => void this.save("svg"));
    this.pngBtn.addEventListener("click", () => void this.save("png"));
    onLangChange(() => this.relabel());
  }

  private relabel() {
    const s = TEXT[currentLang()];
    this.label.textContent = s.export;
    this.el.title = s.tip;
    const keep = this.which.value || "both";
    this.which.replaceChildren(
      h("option", { value: "both" }, s.both),
      h("option", { value: "npu" }, s.npu),
      h("option", { value: "bench" }, s.bench),
    );
    this.which.value = keep;
  }

  /** The panes to export: a build has one; a compare the chosen side or both. */
  private shots(): PaneShot[] {
    if (!this.host.isCompare()) return [{ pane: this.host.npu, title: t("single") }];
    const npu = { pane: this.host.npu, title: t("npu") };
    const bench = { pane: this.host.bench, title: t("bench") };
    if (this.which.value === "npu") return [npu];
    if (this.which.value === "bench") return [bench];
    return [npu, bench];
  }

  /** The SVG of the current view (also what the PNG rasterises). */
  document(): { svg: string; width: number; height: number } {
    const file = this.host.file()?.path ?? "";
    return viewSvg(
      this.shots(),
      this.host.info()?.meta?.legend ?? [],
      this.host.isCompare(),
      t("unmatched"),
      `GRAPH_ASCEND ${file}`,
    );
  }

  private async save(kind: "svg" | "png") {
    const file = this.host.file();
    if (!file) return;
    const side = this.host.isCompare() ? `_${this.which.value}` : "";
    const name = `${fileStem(file.path)}${side}.${kind}`;
    try {
      const doc = this.document();
      if (kind === "svg") download(name, new Blob([doc.svg], { type: "image/svg+xml" }));
      else download(name, await svgToPng(doc.svg, doc.width, doc.height, Math.max(2, window.devicePixelRatio || 1)));
    } catch (e) {
      this.host.toast((e as Error).message, "error");
    }
  }
}
