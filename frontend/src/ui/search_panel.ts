// Node search (reference §8.6, §9): incremental results while typing, a
// virtualised list, ↑/↓ to move and Enter to jump to the node.
import "./side_panels.css";
import { Side } from "../api/client";
import type { AppContext } from "../app_context";
import { debounce, h } from "../dom";
import { onLangChange, t } from "../i18n";
import { HitList, sideName } from "./hit_list";

export class SearchPanel {
  readonly el: HTMLDivElement;
  private readonly input: HTMLInputElement;
  private readonly regex: HTMLInputElement;
  private readonly caseless: HTMLInputElement;
  private readonly sideNpu: HTMLInputElement;
  private readonly sideBench: HTMLInputElement;
  private readonly results: HitList;
  private readonly message: HTMLDivElement;

  constructor(private readonly ctx: AppContext) {
    this.input = h("input.search-input", { type: "search", maxlength: 400, autocomplete: "off", spellcheck: "false" });
    this.regex = h("input", { type: "checkbox" });
    this.caseless = h("input", { type: "checkbox", checked: true });
    this.sideNpu = h("input", { type: "radio", name: "search-side", value: "npu", checked: true });
    this.sideBench = h("input", { type: "radio", name: "search-side", value: "bench" });
    this.message = h("div.panel-message");
    this.results = new HitList(ctx, t("search"), (hit) => void this.ctx.jumpTo(this.side(), hit.index), "search");
    const labels = {
      npu: h("span"),
      bench: h("span"),
      regex: h("span"),
      caseless: h("span"),
    };
    this.el = h(
      "div.panel.search-panel",
      null,
      h(
        "div.row",
        null,
        h("label.radio", null, this.sideNpu, labels.npu),
        h("label.radio", null, this.sideBench, labels.bench),
      ),
      this.input,
      h(
        "div.row",
        null,
        h("label.check", null, this.caseless, labels.caseless),
        h("label.check", null, this.regex, labels.regex),
      ),
      this.message,
      this.results.el,
    );
    const run = debounce(() => void this.run(), 150);
    this.input.addEventListener("input", run);
    for (const c of [this.regex, this.caseless, this.sideNpu, this.sideBench]) c.addEventListener("change", run);
    this.input.addEventListener("keydown", (e) => {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        const down = e.key === "ArrowDown";
        if (!this.results.list.move(down ? 1 : -1) && this.results.total() > 0)
          this.ctx.toast(down ? t("bottomOfList") : t("topOfList"));
      } else if (e.key === "Enter") {
        e.preventDefault();
        run.cancel();
        void this.run().then(() => this.results.list.pickActive());
      }
    });
    onLangChange(() => {
      labels.npu.textContent = sideName(Side.SIDE_NPU);
      labels.bench.textContent = sideName(Side.SIDE_BENCH);
      labels.regex.textContent = t("regex");
      labels.caseless.textContent = t("caseInsensitive");
      this.input.placeholder = t("searchPlaceholder");
      this.results.setTitle(t("search"));
    });
  }

  private side(): Side {
    return this.sideBench.checked && this.ctx.isCompare() ? Side.SIDE_BENCH : Side.SIDE_NPU;
  }

  private lastQuery = "";

  private async run(): Promise<void> {
    const query = this.input.value;
    const key = `${query}\u0000${this.regex.checked}\u0000${this.caseless.checked}\u0000${this.side()}`;
    if (key === this.lastQuery && this.results.isLoaded()) return;
    this.lastQuery = key;
    this.message.textContent = "";
    if (!query.trim() || !this.ctx.file()) {
      this.results.clear();
      return;
    }
    const side = this.side();
    const view = this.ctx.viewKey(side);
    try {
      await this.results.load((offset, limit, signal) =>
        this.ctx.api.call(
          "search",
          { view, query, regex: this.regex.checked, caseInsensitive: this.caseless.checked, offset, limit },
          signal,
        ),
      );
    } catch (e) {
      this.message.textContent = (e as Error).message;
    }
  }

  /** A new file: the Bench side is offered only for a compare. */
  fileChanged() {
    const compare = this.ctx.isCompare();
    this.sideBench.disabled = !compare;
    if (!compare) this.sideNpu.checked = true;
    this.lastQuery = "";
    if (this.input.value.trim()) void this.run();
    else this.results.clear();
  }

  focus() {
    this.input.focus();
    this.input.select();
  }
}
