// The side panel: tabs for search, filters and matching. A grip beside it
// resizes it (drag) and hides or shows it (its button).
import "./sidebar.css";
import { h } from "../dom";
import { t } from "../i18n";

export type Tab = "search" | "filter" | "match";

export class Sidebar {
  readonly el: HTMLElement;
  /** The splitter between the panel and the graphs. */
  readonly grip: HTMLElement;
  private readonly toggleBtn = h("button.side-toggle", { type: "button", "data-action": "sidebar" });
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
    this.grip = h("div.side-splitter", { role: "separator", "aria-orientation": "vertical" }, this.toggleBtn);
    this.toggleBtn.addEventListener("click", () => this.setCollapsed(!this.collapsed()));
    this.toggleBtn.addEventListener("pointerdown", (e) => e.stopPropagation());
    this.grip.addEventListener("pointerdown", (e) => {
      if (this.collapsed()) return;
      this.grip.setPointerCapture(e.pointerId);
      const left = this.el.getBoundingClientRect().left;
      const move = (ev: PointerEvent) => {
        const max = Math.max(240, window.innerWidth * 0.6);
        this.el.style.width = `${Math.round(Math.min(max, Math.max(200, ev.clientX - left)))}px`;
      };
      const up = () => {
        this.grip.removeEventListener("pointermove", move);
        this.grip.removeEventListener("pointerup", up);
      };
      this.grip.addEventListener("pointermove", move);
      this.grip.addEventListener("pointerup", up);
    });
  }

  collapsed(): boolean {
    return this.el.hidden;
  }

  setCollapsed(on: boolean) {
    this.el.hidden = on;
    this.grip.classList.toggle("collapsed", on);
    this.relabel();
  }

  show(name: Tab) {
    if (this.collapsed()) this.setCollapsed(false);
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
    this.toggleBtn.textContent = this.collapsed() ? "›" : "‹";
    this.toggleBtn.title = this.collapsed() ? t("sidebarExpand") : t("sidebarCollapse");
  }
}
