// The file session of the page: the run list, the open file and its micro step, the pickers that choose
// them, and the address that follows them (deep links). A later choice of file wins over an earlier one
// still opening (openSeq).
import {
  type DistributedLink,
  type FileInfo,
  type GraphApi,
  type RunFile,
  type ViewKey,
  GraphKind,
  Side,
} from "./api/client";
import { naturalCompare } from "./dom";
import type { ProgressOverlay } from "./chrome/progress";
import { type Place, groupOf, groupRuns, sideKey } from "./chrome/runs";
import { StagePicker } from "./chrome/stage_picker";
import { type DeepLink, readLink, writeLink } from "./chrome/deep_link";
import { openFailedText } from "./chrome/messages";
import type { ToastKind } from "./chrome/toasts";
import type { TopBar } from "./chrome/topbar";
import type { DivergenceNav } from "./divergence/navigator";
import type { GraphPane } from "./graph/pane";
import type { RankOverview } from "./overview/overview";
import { t } from "./i18n";
import type { GradingToggle } from "./ui/grading_toggle";
import { findNode } from "./ui/find_node";

/** What the file session asks of the page. */
export interface SessionHost {
  readonly api: GraphApi;
  /** The service's view session of this page. */
  readonly session: string;
  readonly npu: GraphPane;
  readonly bench: GraphPane;
  readonly bar: TopBar;
  readonly progress: ProgressOverlay;
  readonly grading: GradingToggle;
  readonly divergence: DivergenceNav;
  readonly overview: RankOverview;
  pane(side: Side): GraphPane;
  jumpTo(side: Side, index: number): Promise<void>;
  toast(message: string, kind?: ToastKind): void;
  showEmpty(message: string, retry?: () => void): void;
  setCompareLayout(compare: boolean): void;
  renderLegend(): void;
  /** A new file's info: the side panels start over, before its views open. */
  panelsFileChanged(info: FileInfo): void;
  /** The views (re)open: the detail board empties. */
  clearDetails(): void;
}

export class FileSession {
  private runs: RunFile[] = [];
  private current: RunFile | null = null;
  /** Each stage of a stages layout is a run; this picker moves between the stages of one conversion. */
  private readonly stage = new StagePicker((f) => {
    this.page.bar.runSel.value = this.groupOf(f);
    void this.openFile(f, this.place());
  });
  private fileInfo: FileInfo | null = null;
  private microStep = -1;
  private openSeq = 0;
  private restoring = false; // a deep link is being opened: the URL keeps it until done
  private chosen: GraphPane | null = null; // the pane of the last selection, for the link

  constructor(private readonly page: SessionHost) {}

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
    const grading = this.page.grading.value();
    return { session: this.page.session, file: this.current?.path ?? "", side, microStep: this.microStep, grading };
  }

  /** Matches changed: the file's new counts, its meta kept when the reply has none. */
  matched(info: FileInfo) {
    this.fileInfo = this.page.grading.apply({ ...info, meta: info.meta ?? this.fileInfo?.meta });
  }

  /** The grading switched: the same file's info, graded by the other measure. */
  regraded() {
    this.fileInfo = this.page.grading.current();
  }

  /** A node was selected (or the selection cleared) on this pane: the address follows it. */
  chose(p: GraphPane) {
    this.chosen = p;
    this.updateLink();
  }

  async jumpToPeer(side: Side, link: DistributedLink): Promise<void> {
    const cur = this.current;
    if (!cur) return;
    const rank = `rank${link.rank}`;
    const target =
      cur.rank === rank
        ? cur
        : (this.groups().get(this.groupOf(cur)) ?? []).find((f) => f.step === cur.step && f.rank === rank);
    if (!target) {
      this.page.toast(t("noRankFile", { rank: link.rank }), "error");
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
      this.page.toast(t("peerNotFound", { node: link.peerNode, rank: link.rank }), "error");
      return;
    }
    await this.page.jumpTo(side, index);
  }

  // ------------------------------------------------------------ start-up

  async start(): Promise<void> {
    try {
      const reply = await this.page.api.call("listRuns", {});
      this.runs = reply.files.slice().sort((a, b) => naturalCompare(a.path, b.path));
    } catch (e) {
      this.page.showEmpty((e as Error).message);
      return;
    }
    if (!this.runs.length) {
      this.page.showEmpty(t("noRuns"));
      return;
    }
    this.page.bar.fillRuns(this.groups());
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
      this.page.toast(t("linkMissing", { file: link.file }), "error");
      return false;
    }
    this.restoring = true;
    try {
      this.page.bar.runSel.value = this.groupOf(target);
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
      if (index < 0) this.page.toast(t("linkNodeMissing", { node: link.node }), "error");
      else await this.page.jumpTo(side, index);
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
    const p = this.chosen ?? this.page.npu;
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
    this.runs = (await this.page.api.call("listRuns", {})).files.slice().sort((a, b) => naturalCompare(a.path, b.path));
    this.page.bar.fillRuns(this.groups());
    const f = this.runs.find((r) => r.path === path);
    if (f) this.page.bar.runSel.value = this.groupOf(f);
    if (f) await this.openFile(f, null);
  }

  private groupOf(f: RunFile): string {
    return groupOf(f);
  }

  private groups(): Map<string, RunFile[]> {
    return groupRuns(this.runs);
  }

  bindPickers() {
    const bar = this.page.bar;
    bar.runSel.parentElement!.after(this.stage.el);
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
    this.page.bar.runSel.value = group;
    await this.openFile(files[0], place);
  }

  private fillStepRank() {
    const f = this.current!;
    this.page.bar.fillStepRank(f, this.groups().get(this.groupOf(f)) ?? [f]);
    this.stage.fill(f, this.runs);
  }

  fillMicroSteps() {
    this.page.bar.fillMicroSteps(this.fileInfo?.meta?.microSteps ?? 1, this.microStep);
  }

  /** What to keep when switching to another file of the same run (rank, step) or micro step. */
  place(): Place | null {
    if (!this.current) return null;
    const name = (p: GraphPane) => (p.selected >= 0 ? (p.node(p.selected)?.name ?? null) : null);
    const view = (p: GraphPane) => ({ tx: p.tx, ty: p.ty, scale: p.scale });
    const { npu, bench } = this.page;
    return {
      group: this.groupOf(this.current),
      names: { npu: name(npu), bench: this.isCompare() ? name(bench) : null },
      views: { npu: view(npu), bench: this.isCompare() ? view(bench) : null },
    };
  }

  /** Opens a file of the run list; false when it failed or another file was chosen meanwhile. */
  async openFile(f: RunFile, place: Place | null): Promise<boolean> {
    const seq = ++this.openSeq;
    const sameRun = !!place && !!this.current && place.group === this.groupOf(f);
    const page = this.page;
    this.current = f;
    this.fillStepRank();
    page.progress.show(t("opening", { file: f.path }), 0, "");
    let info: FileInfo;
    try {
      info = await this.page.api.openFile({ file: f.path }, (p) => {
        if (seq === this.openSeq) page.progress.show(t("opening", { file: f.path }), p.fraction, p.stage);
      });
    } catch (e) {
      if (seq !== this.openSeq) return false;
      page.progress.hide();
      const message = openFailedText(f.path, e);
      // Nothing of the previous file stays on screen (its legend, grading and lists).
      this.fileInfo = null;
      page.renderLegend();
      page.grading.apply(null);
      page.toast(message, "error");
      page.showEmpty(message, () => void this.openFile(f, place));
      return false;
    }
    if (seq !== this.openSeq) return false;
    this.fileInfo = page.grading.apply(info);
    if (!sameRun) this.microStep = -1;
    if (this.microStep >= (info.meta?.microSteps ?? 1)) this.microStep = -1;
    this.fillMicroSteps();
    page.setCompareLayout(this.isCompare());
    page.renderLegend();
    page.panelsFileChanged(info);
    const shown = await this.openViews(sameRun ? place : null, seq);
    if (seq !== this.openSeq) return false;
    page.progress.hide();
    this.updateLink();
    await page.divergence.fileChanged();
    page.overview.fileChanged();
    return shown;
  }

  /** Opens a file of the run list at its first divergence (a cell of the rank overview). */
  async openAtFirstDivergence(path: string) {
    const f = this.runs.find((r) => r.path === path);
    if (f && (await this.openFile(f, null))) await this.page.divergence.first();
  }

  /** (Re)opens the views of the current file and micro step, keeping the place if possible; false on failure. */
  async openViews(place: Place | null, seq = this.openSeq): Promise<boolean> {
    const compare = this.isCompare();
    const legend = this.fileInfo?.meta?.legend ?? [];
    const { npu, bench } = this.page;
    this.page.clearDetails();
    try {
      await Promise.all([
        npu.open(this.viewKey(Side.SIDE_NPU), legend, compare),
        compare ? bench.open(this.viewKey(Side.SIDE_BENCH), legend, compare) : Promise.resolve(),
      ]);
    } catch {
      return false;
    }
    if (seq !== this.openSeq) return false;
    if (!place) return true;
    for (const side of compare ? [Side.SIDE_NPU, Side.SIDE_BENCH] : [Side.SIDE_NPU]) {
      const v = place.views[sideKey(side)];
      const p = this.page.pane(side);
      if (v) p.setView(v);
    }
    // The selected node again, found by name in the new file.
    for (const side of compare ? [Side.SIDE_NPU, Side.SIDE_BENCH] : [Side.SIDE_NPU]) {
      const name = place.names[sideKey(side)];
      if (!name) continue;
      const index = await this.findByName(side, name);
      if (seq !== this.openSeq) return false;
      if (index >= 0) {
        await this.page.jumpTo(side, index);
        break;
      }
    }
    return true;
  }

  /** Opens the run list's file at `path` (another run of a runs output); false when not listed or failed. */
  async openPath(path: string): Promise<boolean> {
    const f = this.runs.find((r) => r.path === path);
    if (!f) return false;
    this.page.bar.runSel.value = this.groupOf(f);
    return this.openFile(f, null);
  }

  /** Selects the node named `name` on `side` of the open file; false when it has none. */
  async jumpToName(side: Side, name: string): Promise<boolean> {
    const seq = this.openSeq;
    const index = await this.findByName(side, name);
    if (seq !== this.openSeq || index < 0) return false;
    await this.page.jumpTo(side, index);
    return true;
  }

  private findByName(side: Side, name: string): Promise<number> {
    return findNode(this.page.api, this.viewKey(side), name);
  }
}
