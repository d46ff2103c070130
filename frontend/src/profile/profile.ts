// The layer profile beside the graph (issue 32; builder/profile): per decoder
// layer (or per module at a chosen depth) the largest output error of the
// forward calls, the backward calls and the parameter gradients against the
// noise floor, drawn by the service as the report draws it (GetProfile's
// svg). A click on a layer's column opens that layer in the NPU graph.
// "Download report" saves the compare's HTML report (GetReport), the file
// `graph-ascend report` writes.
import "./profile.css";
import type { AppContext } from "../app_context";
import { type ProfileReply, Side } from "../api/client";
import { h } from "../dom";
import { download } from "../export/download";
import { currentLang, onLangChange } from "../i18n";

const TEXT = {
  en: {
    button: "Layer profile",
    buttonTip: "The compare's error along the model's depth, against the noise floor",
    title: "Layer profile",
    layers: "Repeated layers",
    depth: "Depth {n}",
    close: "Close",
    report: "Download report",
    reportTip: "The verdict, its path, its table, the ranking, this chart and the runs as one HTML file",
    loading: "Reading the layers…",
    none: "No layer profile: {why}",
    notCompare: "A layer profile needs a compare of two runs",
    by: "By {grouping}: click a column to open that module",
    saved: "Report saved as {name}",
  },
  zh: {
    button: "逐层误差",
    buttonTip: "比对误差沿模型深度的分布，与噪声底线对照",
    title: "逐层误差",
    layers: "重复的层",
    depth: "深度 {n}",
    close: "关闭",
    report: "下载报告",
    reportTip: "结论、路径、比对表、排序、本图与两次运行信息，存为一个 HTML 文件",
    loading: "正在读取各层…",
    none: "无逐层误差：{why}",
    notCompare: "逐层误差需要两次运行的比对文件",
    by: "按 {grouping}：点击一列打开该模块",
    saved: "报告已保存为 {name}",
  },
};

type Key = keyof typeof TEXT.en;

function pt(key: Key, values: Record<string, string | number> = {}): string {
  let s = TEXT[currentLang()][key];
  for (const [k, v] of Object.entries(values)) s = s.replaceAll(`{${k}}`, String(v));
  return s;
}

const DEPTHS = [1, 2, 3, 4, 5, 6];

export class LayerProfile {
  readonly button = h("button.profile-button", { type: "button", "data-action": "profile" });
  readonly el = h("div.profile-panel", { role: "dialog", "data-profile": "" });
  private readonly titleEl = h("span.profile-title");
  private readonly depthSel = h("select.profile-depth", { "data-picker": "profile-depth" });
  private readonly reportBtn = h("button", { type: "button", "data-action": "download-report" });
  private readonly closeBtn = h("button", { type: "button", "data-action": "profile-close" }, "×");
  private readonly noteEl = h("div.profile-note");
  private readonly chartEl = h("div.profile-chart");
  private reply: ProfileReply | null = null;
  private seq = 0;

  constructor(private readonly ctx: AppContext) {
    this.el.hidden = true;
    this.el.append(
      h("div.profile-bar", null, this.titleEl, this.depthSel, this.reportBtn, this.closeBtn),
      this.noteEl,
      this.chartEl,
    );
    this.button.addEventListener("click", () => (this.el.hidden ? void this.open() : this.close()));
    this.closeBtn.addEventListener("click", () => this.close());
    this.depthSel.addEventListener("change", () => void this.load());
    this.reportBtn.addEventListener("click", () => void this.downloadReport());
    this.chartEl.addEventListener("click", (e) => {
      const hit = (e.target as Element).closest?.("rect.ga-profile-hit");
      const node = Number(hit?.getAttribute("data-node") ?? -1);
      if (hit && node >= 0) void this.ctx.jumpTo(Side.SIDE_NPU, node);
    });
    onLangChange(() => this.relabel());
    this.relabel();
  }

  async open(): Promise<void> {
    this.el.hidden = false;
    this.button.classList.add("active");
    await this.load();
  }

  close() {
    this.el.hidden = true;
    this.button.classList.remove("active");
  }

  /** A new file: an open panel shows its profile. */
  fileChanged() {
    this.reply = null;
    if (!this.el.hidden) void this.load();
  }

  relabel() {
    this.button.textContent = `↗ ${pt("button")}`;
    this.button.title = pt("buttonTip");
    this.titleEl.textContent = pt("title");
    this.reportBtn.textContent = `⤓ ${pt("report")}`;
    this.reportBtn.title = pt("reportTip");
    this.closeBtn.title = pt("close");
    const keep = this.depthSel.value || "0";
    this.depthSel.replaceChildren(
      h("option", { value: "0" }, pt("layers")),
      ...DEPTHS.map((n) => h("option", { value: String(n) }, pt("depth", { n }))),
    );
    this.depthSel.value = keep;
    this.render();
  }

  private depth(): number {
    return Number(this.depthSel.value) || 0;
  }

  private async load() {
    const file = this.ctx.file();
    const seq = ++this.seq;
    this.reply = null;
    this.chartEl.replaceChildren();
    if (!file || !this.ctx.isCompare()) {
      this.noteEl.textContent = pt("notCompare");
      this.reportBtn.disabled = true;
      return;
    }
    this.reportBtn.disabled = false;
    this.noteEl.textContent = pt("loading");
    try {
      const reply = await this.ctx.api.call("getProfile", { file: file.path, depth: this.depth() });
      if (seq !== this.seq) return;
      this.reply = reply;
      this.render();
    } catch (e) {
      if (seq !== this.seq) return;
      this.noteEl.textContent = (e as Error).message;
    }
  }

  private render() {
    const r = this.reply;
    if (!r) return;
    if (!r.available) {
      this.noteEl.textContent = pt("none", { why: r.message });
      this.chartEl.replaceChildren();
      return;
    }
    this.noteEl.textContent = pt("by", { grouping: r.grouping });
    // The service's chart: names escaped, no script; parsed as HTML so the <svg> lands in its namespace.
    const doc = new DOMParser().parseFromString(r.svg, "text/html");
    const svg = doc.body.querySelector("svg");
    this.chartEl.replaceChildren(...(svg ? [document.importNode(svg, true)] : []));
  }

  private async downloadReport() {
    const file = this.ctx.file();
    if (!file) return;
    try {
      const reply = await this.ctx.api.call("getReport", { file: file.path, depth: this.depth() });
      download(reply.fileName, new Blob([reply.html], { type: "text/html;charset=utf-8" }));
      this.ctx.toast(pt("saved", { name: reply.fileName }));
    } catch (e) {
      this.ctx.toast((e as Error).message, "error");
    }
  }
}
