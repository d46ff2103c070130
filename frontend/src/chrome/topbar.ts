// The top bar: the run, step, rank and micro step pickers, the view
// toggles and fit (under a "View" menu, so that the bar keeps to one line at
// 1280 px), the guide and the language switch.
import "./topbar.css";
import type { RunFile } from "../api/client";
import { h, naturalCompare, option } from "../dom";
import { t } from "../i18n";

export class TopBar {
  readonly el: HTMLElement;
  readonly runSel = h("select.picker", { "data-picker": "run" });
  readonly stepSel = h("select.picker", { "data-picker": "step" });
  readonly rankSel = h("select.picker", { "data-picker": "rank" });
  readonly microSel = h("select.picker", { "data-picker": "micro" });
  readonly syncCb = h("input", { type: "checkbox", checked: true, "data-toggle": "sync" });
  readonly minimapCb = h("input", { type: "checkbox", checked: true, "data-toggle": "minimap" });
  readonly fitBtn = h("button", { type: "button", "data-action": "fit" });
  readonly langBtn = h("button.lang", { type: "button" });
  readonly guideBtn = h("button.guide-link", { type: "button", "data-action": "guide" });
  readonly viewMenu = h("details.view-menu");
  private readonly viewSummary = h("summary", { "data-action": "view-menu" });
  private readonly labels: Record<string, HTMLElement> = {};

  /** `extra` goes between the pickers and the toggles (the divergence navigator), `tools` after it (convert). */
  constructor(extra: HTMLElement, ...tools: HTMLElement[]) {
    for (const k of ["run", "step", "rank", "micro", "sync", "minimap"]) this.labels[k] = h("span");
    this.viewMenu.append(
      this.viewSummary,
      h(
        "div.view-menu-box",
        null,
        h("label.check", null, this.syncCb, this.labels.sync),
        h("label.check", null, this.minimapCb, this.labels.minimap),
        this.fitBtn,
      ),
    );
    this.el = h(
      "header.topbar",
      null,
      window.parent === window ? h("span.brand", null, "GRAPH_ASCEND") : null,
      h("label.pick.run-pick", null, this.labels.run, this.runSel),
      h("label.pick", null, this.labels.step, this.stepSel),
      h("label.pick", null, this.labels.rank, this.rankSel),
      h("label.pick", null, this.labels.micro, this.microSel),
      extra,
      h("span.spacer"),
      ...tools,
      this.viewMenu,
      this.guideBtn,
      this.langBtn,
    );
  }

  /** Closes the View menu on a press outside it, on Escape and after Fit. */
  bindViewMenu() {
    const close = () => this.viewMenu.removeAttribute("open");
    document.addEventListener("pointerdown", (e) => {
      if (!this.viewMenu.contains(e.target as Node)) close();
    });
    this.viewMenu.addEventListener("keydown", (e) => {
      if (e.key === "Escape") close();
    });
    this.fitBtn.addEventListener("click", close);
  }

  /** The runs, each with its number of files. */
  fillRuns(groups: Map<string, RunFile[]>) {
    this.runSel.replaceChildren(
      ...[...groups.entries()].map(([g, files]) => {
        const label = files.length > 1 ? `${g} (${files.length})` : files[0].path;
        return option(g, label);
      }),
    );
  }

  /** The steps of the run and the ranks of the file's step; hidden when there is one. */
  fillStepRank(f: RunFile, files: RunFile[]) {
    const steps = [...new Set(files.map((x) => x.step))].sort(naturalCompare);
    const ranks = [...new Set(files.filter((x) => x.step === f.step).map((x) => x.rank))].sort(naturalCompare);
    this.stepSel.replaceChildren(...steps.map((s) => option(s, s || "-", s === f.step)));
    this.rankSel.replaceChildren(...ranks.map((r) => option(r, r || "-", r === f.rank)));
    this.stepSel.parentElement!.hidden = steps.length <= 1 && !f.step;
    this.rankSel.parentElement!.hidden = ranks.length <= 1 && !f.rank;
    this.stepSel.disabled = steps.length <= 1;
    this.rankSel.disabled = ranks.length <= 1;
  }

  fillMicroSteps(count: number, current: number) {
    const opts = [option("-1", t("all"), current === -1)];
    for (let i = 0; i < count; i++) opts.push(option(String(i), String(i), current === i));
    this.microSel.replaceChildren(...opts);
    this.microSel.parentElement!.hidden = count <= 1;
  }

  setCompare(compare: boolean) {
    this.syncCb.parentElement!.hidden = !compare;
  }

  relabel() {
    this.labels.run.textContent = t("run");
    this.labels.step.textContent = t("step");
    this.labels.rank.textContent = t("rank");
    this.labels.micro.textContent = t("microStep");
    this.labels.sync.textContent = t("syncExpand");
    this.syncCb.parentElement!.title = t("syncExpandTip");
    this.labels.minimap.textContent = t("minimap");
    this.viewSummary.textContent = t("view");
    this.viewSummary.title = t("viewTip");
    this.fitBtn.textContent = t("fit");
    this.fitBtn.title = t("fitTip");
    this.langBtn.textContent = t("language");
    this.langBtn.title = t("languageTip");
    this.guideBtn.textContent = t("guide");
    this.guideBtn.title = t("guideTip");
  }
}
