// The side panel: tabs for search, filters and matching.
import { h } from "../dom";
import { t } from "../i18n";

export type Tab = "search" | "filter" | "match";

export class Sidebar {
  readonly el: HTMLElement;
  private readonly tabs: Record<Tab, HTMLButtonElement>;

  constructor(private readonly panels: Record<Tab, HTMLElement>) {
    this.tabs = {
      search: h("button.side-tab.active", { type: "button", "data-tab": "search" }),
      filter: h("button.side-tab", { type: "button", "data-tab": "filter" }),
      match: h("button.side-tab", { type: "button", "data-tab": "match" }),
    };
    for (const name of Object.keys(this.tabs) as Tab[]) {
      this.tabs[name].addEventListener("click", () => this.show(name));
    }
    this.panels.filter.hidden = true;
    this.panels.match.hidden = true;
    this.el = h(
      "aside.sidebar",
      null,
      h("div.side-tabs", null, this.tabs.search, this.tabs.filter, this.tabs.match),
      h("div.side-body", null, this.panels.search, this.panels.filter, this.panels.match),
    );
  }

  show(name: Tab) {
    for (const [n, b] of Object.entries(this.tabs)) b.classList.toggle("active", n === name);
    for (const [n, p] of Object.entries(this.panels)) p.hidden = n !== name;
  }

  /** The match tab exists for compare files only. */
  setCompare(compare: boolean) {
    this.tabs.match.hidden = !compare;
    if (!compare && this.tabs.match.classList.contains("active")) this.show("search");
  }

  relabel() {
    this.tabs.search.textContent = t("search");
    this.tabs.filter.textContent = t("filter");
    this.tabs.match.textContent = t("match");
  }
}
