// Matching as tb_graph_ascend: a chooser among the match config files
// ("*.vis.config") beside the file, as the service lists them, and the
// button that applies the chosen one. The file's own config (the one Save
// writes, under tb_graph_ascend's name) comes first when it exists.
import type { MatchConfigList, MatchReply } from "../api/client";
import type { AppContext } from "../app_context";
import { h, option } from "../dom";
import { currentLang, onLangChange } from "../i18n";
import { ErrorLine } from "../ui/error_line";

const TEXT = {
  en: {
    label: "Config",
    none: "no .vis.config beside the file",
    own: "(this file's)",
    load: "Load config",
    tip: "Match config files (*.vis.config) in the file's folder, as tb_graph_ascend lists them",
  },
  zh: {
    label: "配置文件",
    none: "文件旁没有 .vis.config",
    own: "（本文件）",
    load: "加载匹配配置",
    tip: "文件所在目录中的匹配配置文件（*.vis.config），与 tb_graph_ascend 相同",
  },
};

export class ConfigChooser {
  readonly el: HTMLDivElement;
  private readonly select: HTMLSelectElement;
  private readonly label = h("span");
  readonly loadBtn: HTMLButtonElement;
  private list: MatchConfigList | null = null;
  private seq = 0;
  /** Why listing or loading failed, under the chooser (the match panel is open while it shows). */
  readonly failure = new ErrorLine();

  constructor(
    private readonly ctx: AppContext,
    private readonly applied: (reply: MatchReply) => Promise<void>,
  ) {
    this.select = h("select.config-chooser", { "data-picker": "match-config" });
    this.loadBtn = h("button", { type: "button", "data-action": "load" });
    this.el = h("div.row.config-row", null, h("label.pick", null, this.label, this.select), this.loadBtn);
    this.loadBtn.addEventListener("click", () => void this.load());
    onLangChange(() => this.render());
  }

  /** Lists the configs beside the current file again (on open, after a save). */
  async refresh(): Promise<void> {
    const file = this.ctx.file();
    const seq = ++this.seq;
    this.list = null;
    this.failure.clear();
    this.render();
    if (!file || !this.ctx.isCompare()) return;
    try {
      const list = await this.ctx.api.call("listMatchConfigs", { file: file.path });
      if (seq === this.seq) this.list = list;
    } catch (e) {
      if (seq === this.seq) this.failure.show((e as Error).message);
    }
    if (seq === this.seq) this.render();
  }

  private render() {
    const text = TEXT[currentLang()];
    this.label.textContent = text.label;
    this.el.title = text.tip;
    this.loadBtn.textContent = text.load;
    const configs = [...(this.list?.configs ?? [])];
    const own = this.list?.own ?? "";
    configs.sort((a, b) => Number(b.path === own) - Number(a.path === own));
    const keep = this.select.value;
    this.select.replaceChildren(
      ...configs.map((c) => option(c.path, c.path === own ? `${c.name} ${text.own}` : c.name, c.path === keep)),
    );
    if (!configs.length) this.select.append(option("", text.none));
    const usable = configs.length > 0 && this.ctx.isCompare();
    this.select.disabled = !usable;
    this.loadBtn.disabled = !usable;
  }

  private async load() {
    const file = this.ctx.file();
    const config = this.select.value;
    if (!file || !config) return;
    this.failure.clear();
    try {
      await this.applied(await this.ctx.api.call("loadMatches", { file: file.path, config }));
    } catch (e) {
      this.failure.show((e as Error).message);
    }
  }
}
