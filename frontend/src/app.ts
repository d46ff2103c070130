// The GRAPH_ASCEND page: pickers for the file, step, rank and micro step; one
// graph, or the NPU and Bench graphs side by side; side panels for search,
// filters and matching; the node detail board below. Which file is open, and
// the address that follows it, is the file session's (session.ts).
import {
  type DistributedLink,
  type FileInfo,
  type GraphApi,
  type LayoutNode,
  type RunFile,
  type ViewKey,
  Side,
} from "./api/client";
import { debounce, h } from "./dom";
import { legendItems } from "./chrome/legend";
import { ProgressOverlay } from "./chrome/progress";
import { HelpOverlay } from "./chrome/help";
import { bindShortcuts } from "./chrome/shortcuts";
import { Sidebar } from "./chrome/sidebar";
import { bindColumnSplitter, bindRowSplitter } from "./chrome/splitters";
import { type ToastKind, Toasts } from "./chrome/toasts";
import { TopBar } from "./chrome/topbar";
import { ConvertDialog } from "./convert/dialog";
import { DivergenceNav } from "./divergence/navigator";
import { LayerProfile } from "./profile/profile";
import { ExportMenu } from "./export/menu";
import { markRanks } from "./divergence/ranks";
import { GraphPane } from "./graph/pane";
import { RankOverview } from "./overview/overview";
import { RepeatRuns } from "./runs/repeat_runs";
import { type Link, correspondingIndex, syncExpand } from "./graph/sync_expand";
import { currentLang, onLangChange, setLang, t } from "./i18n";
import { FileSession, type SessionHost } from "./session";
import { onThemeChange } from "./theme";
import { LegendEditor } from "./thresholds/legend_editor";
import { GradingToggle } from "./ui/grading_toggle";
import { DetailPanel } from "./ui/detail_panel";
import { FilterPanel } from "./ui/filter_panel";
import { MatchPanel } from "./ui/match_panel";
import { type MenuHost, NodeMenu } from "./ui/node_menu";
import { SearchPanel } from "./ui/search_panel";

function randomId(): string {
  if (crypto.randomUUID) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

export class App implements MenuHost, SessionHost {
  readonly session = randomId(); // the service's view session of this page (ViewKey.session)
  readonly grading = new GradingToggle(() => void this.gradingChanged());
  private readonly files = new FileSession(this);

  private readonly root: HTMLElement;
  readonly bar: TopBar;
  private readonly sidebar: Sidebar;
  private readonly legendEl = h("div.legend");
  private readonly graphsEl = h("div.graphs");
  private readonly splitter = h("div.splitter", { title: "" });
  readonly progress = new ProgressOverlay();
  private readonly toasts = new Toasts();
  private readonly tooltip = h("div.tooltip");
  private readonly menu = new NodeMenu(this);
  private readonly emptyEl = h("div.empty-state");
  private readonly helpBtn = h("button.help-button", { type: "button", "data-action": "help" }, "?");
  private readonly help = new HelpOverlay();
  // Thresholds and metric, and export (issue 11 §5, §7): their own folders.
  readonly thresholds = new LegendEditor(this);
  readonly exporter = new ExportMenu(this);
  // The layer profile beside the graph and "Download report" (issue 32).
  readonly profile = new LayerProfile(this);
  // More than two runs (issue 33 point 4): which run against which reference, a run picker, the summary.
  private readonly repeatRuns: RepeatRuns;

  readonly npu: GraphPane;
  readonly bench: GraphPane;
  private active: GraphPane;
  private readonly searchPanel: SearchPanel;
  private readonly filterPanel: FilterPanel;
  private readonly matchPanel: MatchPanel;
  private readonly detailPanel: DetailPanel;
  readonly divergence: DivergenceNav;
  readonly overview: RankOverview;
  private readonly convert = new ConvertDialog(this);

  constructor(
    readonly api: GraphApi,
    mount: HTMLElement,
  ) {
    this.tooltip.hidden = true;
    this.menu.hide();
    const events = {
      select: (p: GraphPane, n: LayoutNode | null) => void this.nodeClicked(p, n),
      toggle: (p: GraphPane, n: LayoutNode, inPlace: boolean) => void this.toggle(p, n, inPlace),
      contextMenu: (p: GraphPane, n: LayoutNode, x: number, y: number) => this.menu.show(p, n, x, y),
      error: (m: string) => this.toast(m, "error"),
    };
    this.npu = new GraphPane(api, Side.SIDE_NPU, events, this.tooltip);
    this.bench = new GraphPane(api, Side.SIDE_BENCH, events, this.tooltip);
    this.active = this.npu;
    this.searchPanel = new SearchPanel(this);
    this.filterPanel = new FilterPanel(this);
    this.matchPanel = new MatchPanel(this);
    this.detailPanel = new DetailPanel(this);
    this.divergence = new DivergenceNav(this, (ranks) => markRanks(this.bar.rankSel, ranks));
    this.overview = new RankOverview(this, (path) => this.files.openAtFirstDivergence(path));
    this.repeatRuns = new RepeatRuns({
      npu: this.npu,
      bench: this.bench,
      openPath: (path) => this.files.openPath(path),
      jumpToName: (side, name) => this.files.jumpToName(side, name),
      toast: (m, kind) => this.toast(m, kind),
    });
    this.bar = new TopBar(this.divergence.el, this.overview.button, this.convert.button);
    this.sidebar = new Sidebar({ search: this.searchPanel.el, filter: this.filterPanel.el, match: this.matchPanel.el });
    // Toasts sit in the graphs area, so they never cover the legend bar.
    this.graphsEl.append(this.npu.el, this.splitter, this.bench.el, this.emptyEl, this.profile.el, this.toasts.el);
    const vsplit = h("div.hsplitter");
    const center = h(
      "div.center",
      null,
      h(
        "div.legend-bar",
        null,
        this.legendEl,
        this.grading.el,
        this.thresholds.el,
        this.exporter.el,
        this.profile.button,
        this.helpBtn,
      ),
      this.repeatRuns.el,
      this.graphsEl,
      vsplit,
      this.detailPanel.el,
    );
    this.root = h(
      "div.app",
      null,
      this.bar.el,
      h("div.main", null, this.sidebar.el, this.sidebar.grip, center),
      this.progress.el,
      this.tooltip,
      this.menu.el,
      this.help.el,
      this.convert.el,
      this.overview.el,
    );
    mount.append(this.root);
    this.thresholds.mount(this.root);

    this.files.bindPickers();
    bindColumnSplitter(this.splitter, this.graphsEl, this.npu.el);
    bindRowSplitter(vsplit, this.detailPanel.el);
    this.bindKeys();
    const bar = this.bar;
    bar.bindViewMenu();
    bar.minimapCb.addEventListener("change", () => {
      this.npu.setMinimapVisible(bar.minimapCb.checked);
      this.bench.setMinimapVisible(bar.minimapCb.checked);
    });
    bar.fitBtn.addEventListener("click", () => {
      this.npu.fit();
      if (this.isCompare()) this.bench.fit();
    });
    bar.guideBtn.addEventListener("click", () => this.help.show(true));
    this.helpBtn.addEventListener("click", () => this.help.toggle());
    bar.langBtn.addEventListener("click", () => setLang(currentLang() === "zh" ? "en" : "zh"));
    document.addEventListener("pointerdown", (e) => {
      if (!this.menu.el.contains(e.target as Node)) this.menu.hide();
    });
    onThemeChange(() => {
      this.npu.themeChanged();
      this.bench.themeChanged();
    });
    onLangChange(() => this.relabel());
    this.relabel();
    this.setCompareLayout(false);
  }

  // ------------------------------------------------------------ AppContext

  file(): RunFile | null {
    return this.files.file();
  }

  info(): FileInfo | null {
    return this.files.info();
  }

  isCompare(): boolean {
    return this.files.isCompare();
  }

  viewKey(side: Side): ViewKey {
    return this.files.viewKey(side);
  }

  pane(side: Side): GraphPane {
    return side === Side.SIDE_BENCH ? this.bench : this.npu;
  }

  other(p: GraphPane): GraphPane | null {
    if (!this.isCompare()) return null;
    return p === this.npu ? this.bench : this.npu;
  }

  async jumpTo(side: Side, index: number): Promise<void> {
    const p = this.pane(side);
    try {
      const n = await p.reveal(index);
      if (n) await this.selectNode(p, n);
    } catch {
      // reported by the pane
    }
  }

  async jumpToPeer(side: Side, link: DistributedLink): Promise<void> {
    this.menu.hide();
    await this.files.jumpToPeer(side, link);
  }

  toast(message: string, kind: ToastKind = "info") {
    this.toasts.show(message, kind);
  }

  async matchesChanged(info: FileInfo | undefined): Promise<void> {
    if (info) this.files.matched(info);
    this.renderLegend();
    // The views' divergence marks and the ranking follow the re-ranking (docs/DIVERGENCE.md).
    await Promise.all([this.npu.refresh(), this.bench.refresh(), this.divergence.matchesChanged()]);
    this.filterPanel.reload();
    await this.detailPanel.reload();
    const shown = this.detailPanel.shownNode();
    if (shown) {
      const p = this.pane(shown.side);
      const n = p.node(shown.index);
      this.other(p)?.setCounterpart(n?.matched ?? -1);
    }
  }

  // ------------------------------------------------------------ start-up

  start(): Promise<void> {
    return this.files.start();
  }

  /** After a conversion from the page: the run list read again and the new file opened. */
  openConverted(path: string): Promise<void> {
    return this.files.openConverted(path);
  }

  showEmpty(message: string, retry?: () => void) {
    this.emptyEl.replaceChildren(h("div", null, message));
    if (retry) {
      const btn = h("button", { type: "button", "data-action": "retry" }, t("retry"));
      btn.addEventListener("click", retry);
      this.emptyEl.append(btn);
    }
    this.emptyEl.hidden = false;
    this.npu.el.hidden = true;
    this.bench.el.hidden = true;
    this.splitter.hidden = true;
  }

  panelsFileChanged(info: FileInfo) {
    this.searchPanel.fileChanged();
    this.filterPanel.fileChanged();
    this.matchPanel.fileChanged();
    this.detailPanel.fileChanged();
    this.profile.fileChanged();
    this.matchPanel.renderSummary(info);
    this.repeatRuns.fileChanged(info);
  }

  clearDetails() {
    this.detailPanel.clear();
  }

  setCompareLayout(compare: boolean) {
    this.emptyEl.hidden = true;
    this.npu.el.hidden = false;
    this.bench.el.hidden = !compare;
    this.splitter.hidden = !compare;
    this.graphsEl.classList.toggle("compare", compare);
    this.npu.setTitle(compare ? t("npu") : "");
    this.bench.setTitle(t("bench"));
    this.npu.setLabel(compare ? t("npu") : t("single"));
    this.bench.setLabel(t("bench"));
    this.bar.setCompare(compare);
    this.sidebar.setCompare(compare);
  }

  // ------------------------------------------------------------ selection and expansion

  private async nodeClicked(p: GraphPane, n: LayoutNode | null) {
    this.menu.hide();
    if (!n) {
      p.setSelected(-1);
      this.other(p)?.setCounterpart(-1);
      this.files.chose(p);
      return;
    }
    await this.selectNode(p, n);
  }

  /** Selects a node, highlights its matched node on the other side and shows the details. */
  private async selectNode(p: GraphPane, n: LayoutNode) {
    p.setSelected(n.index);
    p.setCounterpart(-1);
    this.active = p;
    const other = this.other(p);
    if (other) {
      other.setSelected(-1);
      other.setCounterpart(n.matched);
    }
    this.matchPanel.nodeSelected(p.side, n.index, n.name);
    this.files.chose(p);
    const detail = this.detailPanel.show(p.side, n.index);
    if (other && n.matched >= 0) {
      if (other.node(n.matched)) {
        if (!other.isOnScreen(n.matched)) other.centerOn(n.matched);
      } else {
        await other.reveal(n.matched, false).catch(() => null);
        other.setCounterpart(n.matched);
      }
    }
    await detail;
  }

  async toggle(p: GraphPane, n: LayoutNode, inPlace = false): Promise<void> {
    const expand = !n.expanded;
    const other = this.other(p);
    const sync = other && this.bar.syncCb.checked;
    // The ancestors are read before the change replaces the loaded nodes.
    const target = sync ? this.correspondingIndex(p, n) : Promise.resolve(-1);
    const work: Promise<unknown>[] = [expand ? p.expand(n.index, inPlace) : p.collapse(n.index, inPlace)];
    if (other && sync) work.push(target.then((index) => syncExpand(other, index, expand)));
    await Promise.allSettled(work);
  }

  correspondingIndex(p: GraphPane, n: LayoutNode): Promise<number> {
    return correspondingIndex(p, n, (index) => this.summary(p.side, index));
  }

  private async summary(side: Side, index: number): Promise<Link | undefined> {
    try {
      const reply = await this.api.call("getNodeDetail", { view: this.viewKey(side), node: index });
      return reply.node;
    } catch (e) {
      this.toast((e as Error).message, "error");
      return undefined;
    }
  }

  /** The grading switched: the same file, recoloured by the other measure. */
  private async gradingChanged() {
    this.files.regraded();
    this.renderLegend();
    this.filterPanel.fileChanged();
    const info = this.info();
    if (info) this.matchPanel.renderSummary(info);
    await this.files.openViews(this.files.place());
  }

  // ------------------------------------------------------------ chrome

  renderLegend() {
    this.legendEl.replaceChildren(...legendItems(this.info(), this.isCompare()));
  }

  private relabel() {
    this.bar.relabel();
    this.sidebar.relabel();
    this.helpBtn.title = `${t("helpTip")}\n${t("help")}`;
    this.helpBtn.setAttribute("aria-label", t("helpTip"));
    this.divergence.relabel();
    this.overview.relabel();
    this.npu.setTitle(this.isCompare() ? t("npu") : "");
    this.bench.setTitle(t("bench"));
    this.repeatRuns.render();
    if (this.file()) this.files.fillMicroSteps();
    this.renderLegend();
  }

  /** Whether a file is being opened (the overlay may not show yet). */
  opening(): boolean {
    return this.progress.opening();
  }

  private bindKeys() {
    bindShortcuts({
      npu: this.npu,
      bench: this.bench,
      activePane: () => this.active,
      setActivePane: (p) => (this.active = p),
      dismiss: () => {
        this.menu.hide();
        this.help.hide();
      },
      toggleHelp: () => this.help.toggle(),
      focusSearch: () => {
        this.sidebar.show("search");
        this.searchPanel.focus();
      },
      keyDown: (key) => this.divergence.keyDown(key),
    });
    window.addEventListener(
      "resize",
      debounce(() => this.menu.hide(), 50),
    );
  }
}
