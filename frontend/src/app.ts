// The GRAPH_ASCEND page: pickers for the file, step, rank and micro step; one
// graph, or the NPU and Bench graphs side by side; side panels for search,
// filters and matching; the node detail board below.
import {
  type DistributedLink,
  type FileInfo,
  type GraphApi,
  type LayoutNode,
  type RunFile,
  type ViewKey,
  GraphKind,
  Side,
} from "./api/client";
import { debounce, h, naturalCompare } from "./dom";
import { legendItems } from "./chrome/legend";
import { ProgressOverlay } from "./chrome/progress";
import { type Place, groupOf, groupRuns, sideKey } from "./chrome/runs";
import { type DeepLink, readLink, writeLink } from "./chrome/deep_link";
import { HelpOverlay } from "./chrome/help";
import { openFailedText } from "./chrome/messages";
import { bindShortcuts } from "./chrome/shortcuts";
import { Sidebar } from "./chrome/sidebar";
import { bindColumnSplitter, bindRowSplitter } from "./chrome/splitters";
import { type ToastKind, Toasts } from "./chrome/toasts";
import { TopBar } from "./chrome/topbar";
import { ConvertDialog } from "./convert/dialog";
import { DivergenceNav } from "./divergence/navigator";
import { ExportMenu } from "./export/menu";
import { markRanks } from "./divergence/ranks";
import { GraphPane } from "./graph/pane";
import { RankOverview } from "./overview/overview";
import { type Link, correspondingIndex, syncExpand } from "./graph/sync_expand";
import { currentLang, onLangChange, setLang, t } from "./i18n";
import { onThemeChange } from "./theme";
import { LegendEditor } from "./thresholds/legend_editor";
import { GradingToggle } from "./ui/grading_toggle";
import { DetailPanel } from "./ui/detail_panel";
import { findNode } from "./ui/find_node";
import { FilterPanel } from "./ui/filter_panel";
import { MatchPanel } from "./ui/match_panel";
import { type MenuHost, NodeMenu } from "./ui/node_menu";
import { SearchPanel } from "./ui/search_panel";

function randomId(): string {
  if (crypto.randomUUID) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

export class App implements MenuHost {
  readonly session = randomId();
  private runs: RunFile[] = [];
  private current: RunFile | null = null;
  private fileInfo: FileInfo | null = null;
  private readonly grading = new GradingToggle(() => void this.gradingChanged());
  private microStep = -1;
  private openSeq = 0;
  private restoring = false; // a deep link is being opened: the URL keeps it until done
  private chosen: GraphPane | null = null; // the pane of the last selection, for the link

  private readonly root: HTMLElement;
  private readonly bar: TopBar;
  private readonly sidebar: Sidebar;
  private readonly legendEl = h("div.legend");
  private readonly graphsEl = h("div.graphs");
  private readonly splitter = h("div.splitter", { title: "" });
  private readonly progress = new ProgressOverlay();
  private readonly toasts = new Toasts();
  private readonly tooltip = h("div.tooltip");
  private readonly menu = new NodeMenu(this);
  private readonly emptyEl = h("div.empty-state");
  private readonly helpBtn = h("button.help-button", { type: "button", "data-action": "help" }, "?");
  private readonly help = new HelpOverlay();
  // Thresholds and metric, and export (issue 11 §5, §7): their own folders.
  readonly thresholds = new LegendEditor(this);
  readonly exporter = new ExportMenu(this);

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
      toggle: (p: GraphPane, n: LayoutNode) => void this.toggle(p, n),
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
    this.overview = new RankOverview(this, (path) => this.openAtFirstDivergence(path));
    this.bar = new TopBar(this.divergence.el, this.overview.button, this.convert.button);
    this.sidebar = new Sidebar({ search: this.searchPanel.el, filter: this.filterPanel.el, match: this.matchPanel.el });
    // Toasts sit in the graphs area, so they never cover the legend bar.
    this.graphsEl.append(this.npu.el, this.splitter, this.bench.el, this.emptyEl, this.toasts.el);
    const vsplit = h("div.hsplitter");
    const center = h(
      "div.center",
      null,
      h("div.legend-bar", null, this.legendEl, this.grading.el, this.thresholds.el, this.exporter.el, this.helpBtn),
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

    this.bindPickers();
    bindColumnSplitter(this.splitter, this.graphsEl, this.npu.el);
    bindRowSplitter(vsplit, this.detailPanel.el);
    this.bindKeys();
    const bar = this.bar;
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
    return this.current;
  }

  info(): FileInfo | null {
    return this.fileInfo;
  }

  isCompare(): boolean {
    return this.fileInfo?.meta?.kind === GraphKind.GRAPH_COMPARE;
  }

  viewKey(side: Side): ViewKey {
    const grading = this.grading.value();
    return { session: this.session, file: this.current?.path ?? "", side, microStep: this.microStep, grading };
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
    const cur = this.current;
    if (!cur) return;
    const rank = `rank${link.rank}`;
    const target =
      cur.rank === rank
        ? cur
        : (this.groups().get(this.groupOf(cur)) ?? []).find((f) => f.step === cur.step && f.rank === rank);
    if (!target) {
      this.toast(t("noRankFile", { rank: link.rank }), "error");
      return;
    }
    if (target !== cur) {
      const keep: Place = {
        group: this.groupOf(target),
        names: { npu: null, bench: null },
        views: { npu: null, bench: null },
      };
      if (!(await this.openFile(target, keep))) return;
    }
    if (side === Side.SIDE_BENCH && !this.isCompare()) side = Side.SIDE_NPU;
    const seq = this.openSeq;
    let index = await this.findByName(side, link.peerNode);
    if (index < 0 && this.microStep !== -1 && seq === this.openSeq) {
      // The peer may belong to another micro step: look in all of them.
      this.microStep = -1;
      this.fillMicroSteps();
      await this.openViews(null, seq);
      index = await this.findByName(side, link.peerNode);
    }
    if (seq !== this.openSeq) return;
    if (index < 0) {
      this.toast(t("peerNotFound", { node: link.peerNode, rank: link.rank }), "error");
      return;
    }
    await this.jumpTo(side, index);
  }

  toast(message: string, kind: ToastKind = "info") {
    this.toasts.show(message, kind);
  }

  async matchesChanged(info: FileInfo | undefined): Promise<void> {
    if (info) this.fileInfo = this.grading.apply({ ...info, meta: info.meta ?? this.fileInfo?.meta });
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

  async start(): Promise<void> {
    try {
      const reply = await this.api.call("listRuns", {});
      this.runs = reply.files.slice().sort((a, b) => naturalCompare(a.path, b.path));
    } catch (e) {
      this.showEmpty((e as Error).message);
      return;
    }
    if (!this.runs.length) {
      this.showEmpty(t("noRuns"));
      return;
    }
    this.bar.fillRuns(this.groups());
    const link = readLink();
    if (link && (await this.openLink(link))) return;
    // Compares first: finding where two runs part is what the page is for.
    const groups = [...this.groups().entries()];
    const first = groups.find(([, files]) => files[0].kind === "compare") ?? groups[0];
    await this.openGroup(first[0], null);
  }

  /** Opens the view a deep link names; false when its file is not in the log directory. */
  private async openLink(link: DeepLink): Promise<boolean> {
    const target =
      this.runs.find((f) => f.path === link.file) ??
      this.runs.find((f) => f.group === link.file && f.step === link.step && f.rank === link.rank);
    if (!target) {
      this.toast(t("linkMissing", { file: link.file }), "error");
      return false;
    }
    this.restoring = true;
    try {
      this.bar.runSel.value = this.groupOf(target);
      const seq = this.openSeq + 1;
      if (!(await this.openFile(target, null))) return true;
      if (link.micro >= 0 && link.micro < (this.fileInfo?.meta?.microSteps ?? 1)) {
        this.microStep = link.micro;
        this.fillMicroSteps();
        if (!(await this.openViews(null, seq))) return true;
      }
      if (!link.node || seq !== this.openSeq) return true;
      const side = link.side === "bench" && this.isCompare() ? Side.SIDE_BENCH : Side.SIDE_NPU;
      const index = await this.findByName(side, link.node);
      if (seq !== this.openSeq) return true;
      if (index < 0) this.toast(t("linkNodeMissing", { node: link.node }), "error");
      else await this.jumpTo(side, index);
    } finally {
      this.restoring = false;
      this.updateLink();
    }
    return true;
  }

  /** The address follows the file, micro step and selection. */
  private updateLink() {
    const f = this.current;
    if (!f || this.restoring) return;
    const p = this.chosen ?? this.npu;
    const n = p.selected >= 0 ? p.node(p.selected) : undefined;
    writeLink({
      file: f.path,
      step: f.step,
      rank: f.rank,
      micro: this.microStep,
      side: sideKey(p.side),
      node: n?.name ?? "",
    });
  }

  /** After a conversion from the page: the run list read again and the new file opened. */
  async openConverted(path: string): Promise<void> {
    this.runs = (await this.api.call("listRuns", {})).files.slice().sort((a, b) => naturalCompare(a.path, b.path));
    this.bar.fillRuns(this.groups());
    const f = this.runs.find((r) => r.path === path);
    if (f) this.bar.runSel.value = this.groupOf(f);
    if (f) await this.openFile(f, null);
  }

  private showEmpty(message: string, retry?: () => void) {
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

  private groupOf(f: RunFile): string {
    return groupOf(f);
  }

  private groups(): Map<string, RunFile[]> {
    return groupRuns(this.runs);
  }

  private bindPickers() {
    const bar = this.bar;
    bar.runSel.addEventListener("change", () => void this.openGroup(bar.runSel.value, null));
    const switchFile = () => {
      const files = this.groups().get(bar.runSel.value) ?? [];
      const step = bar.stepSel.value;
      const rank = bar.rankSel.value;
      const f = files.find((x) => x.step === step && x.rank === rank) ?? files.find((x) => x.step === step) ?? files[0];
      if (f) void this.openFile(f, this.place());
    };
    bar.stepSel.addEventListener("change", switchFile);
    bar.rankSel.addEventListener("change", switchFile);
    bar.microSel.addEventListener("change", () => {
      this.microStep = Number(bar.microSel.value);
      void this.openViews(this.place()).then(() => this.updateLink());
    });
  }

  private async openGroup(group: string, place: Place | null) {
    const files = (this.groups().get(group) ?? []).slice();
    files.sort((a, b) => naturalCompare(a.step, b.step) || naturalCompare(a.rank, b.rank));
    if (!files.length) return;
    this.bar.runSel.value = group;
    await this.openFile(files[0], place);
  }

  private fillStepRank() {
    const f = this.current!;
    this.bar.fillStepRank(f, this.groups().get(this.groupOf(f)) ?? [f]);
  }

  private fillMicroSteps() {
    this.bar.fillMicroSteps(this.fileInfo?.meta?.microSteps ?? 1, this.microStep);
  }

  /** What to keep when switching to another file of the same run (rank, step) or micro step. */
  private place(): Place | null {
    if (!this.current) return null;
    const name = (p: GraphPane) => (p.selected >= 0 ? (p.node(p.selected)?.name ?? null) : null);
    const view = (p: GraphPane) => ({ tx: p.tx, ty: p.ty, scale: p.scale });
    return {
      group: this.groupOf(this.current),
      names: { npu: name(this.npu), bench: this.isCompare() ? name(this.bench) : null },
      views: { npu: view(this.npu), bench: this.isCompare() ? view(this.bench) : null },
    };
  }

  /** Opens a file of the run list; false when it failed or another file was chosen meanwhile. */
  async openFile(f: RunFile, place: Place | null): Promise<boolean> {
    const seq = ++this.openSeq;
    const sameRun = !!place && !!this.current && place.group === this.groupOf(f);
    this.current = f;
    this.fillStepRank();
    this.progress.show(t("opening", { file: f.path }), 0, "");
    let info: FileInfo;
    try {
      info = await this.api.openFile({ file: f.path }, (p) => {
        if (seq === this.openSeq) this.progress.show(t("opening", { file: f.path }), p.fraction, p.stage);
      });
    } catch (e) {
      if (seq !== this.openSeq) return false;
      this.progress.hide();
      const message = openFailedText(f.path, e);
      // Nothing of the previous file stays on screen (its legend, grading and lists).
      this.fileInfo = null;
      this.renderLegend();
      this.grading.apply(null);
      this.toast(message, "error");
      this.showEmpty(message, () => void this.openFile(f, place));
      return false;
    }
    if (seq !== this.openSeq) return false;
    this.fileInfo = this.grading.apply(info);
    if (!sameRun) this.microStep = -1;
    if (this.microStep >= (info.meta?.microSteps ?? 1)) this.microStep = -1;
    this.fillMicroSteps();
    this.setCompareLayout(this.isCompare());
    this.renderLegend();
    this.searchPanel.fileChanged();
    this.filterPanel.fileChanged();
    this.matchPanel.fileChanged();
    this.detailPanel.fileChanged();
    this.matchPanel.renderSummary(info);
    const shown = await this.openViews(sameRun ? place : null, seq);
    if (seq !== this.openSeq) return false;
    this.progress.hide();
    this.updateLink();
    await this.divergence.fileChanged();
    this.overview.fileChanged();
    return shown;
  }

  /** Opens a file of the run list at its first divergence (a cell of the rank overview). */
  private async openAtFirstDivergence(path: string) {
    const f = this.runs.find((r) => r.path === path);
    if (f && (await this.openFile(f, null))) await this.divergence.first();
  }

  /** (Re)opens the views of the current file and micro step, keeping the place if possible; false on failure. */
  private async openViews(place: Place | null, seq = this.openSeq): Promise<boolean> {
    const compare = this.isCompare();
    const legend = this.fileInfo?.meta?.legend ?? [];
    this.detailPanel.clear();
    try {
      await Promise.all([
        this.npu.open(this.viewKey(Side.SIDE_NPU), legend, compare),
        compare ? this.bench.open(this.viewKey(Side.SIDE_BENCH), legend, compare) : Promise.resolve(),
      ]);
    } catch {
      return false;
    }
    if (seq !== this.openSeq) return false;
    if (!place) return true;
    for (const side of compare ? [Side.SIDE_NPU, Side.SIDE_BENCH] : [Side.SIDE_NPU]) {
      const v = place.views[sideKey(side)];
      const p = this.pane(side);
      if (v) p.setView(v);
    }
    // The selected node again, found by name in the new file.
    for (const side of compare ? [Side.SIDE_NPU, Side.SIDE_BENCH] : [Side.SIDE_NPU]) {
      const name = place.names[sideKey(side)];
      if (!name) continue;
      const index = await this.findByName(side, name);
      if (seq !== this.openSeq) return false;
      if (index >= 0) {
        await this.jumpTo(side, index);
        break;
      }
    }
    return true;
  }

  private findByName(side: Side, name: string): Promise<number> {
    return findNode(this.api, this.viewKey(side), name);
  }

  private setCompareLayout(compare: boolean) {
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
      this.chosen = p;
      this.updateLink();
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
    this.chosen = p;
    this.updateLink();
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

  async toggle(p: GraphPane, n: LayoutNode): Promise<void> {
    const expand = !n.expanded;
    const other = this.other(p);
    const sync = other && this.bar.syncCb.checked;
    // The ancestors are read before the change replaces the loaded nodes.
    const target = sync ? this.correspondingIndex(p, n) : Promise.resolve(-1);
    const work: Promise<unknown>[] = [expand ? p.expand(n.index) : p.collapse(n.index)];
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
    this.fileInfo = this.grading.current();
    this.renderLegend();
    this.filterPanel.fileChanged();
    if (this.fileInfo) this.matchPanel.renderSummary(this.fileInfo);
    await this.openViews(this.place());
  }

  // ------------------------------------------------------------ chrome

  private renderLegend() {
    this.legendEl.replaceChildren(...legendItems(this.fileInfo, this.isCompare()));
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
    if (this.current) this.fillMicroSteps();
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
