// More than two runs (issue 33 point 4): a file of OUT/run<i>/ of a runs output compares run i (NPU) with
// the reference (Bench). This strip says so beside the pane labels, picks another run's file of the same step
// and rank, and shows where the runs first disagree there, with a button to that node.
import { type FileInfo, type RunsInfo, Side } from "../api/client";
import { h } from "../dom";
import type { GraphPane } from "../graph/pane";
import { onLangChange } from "../i18n";
import { rt } from "./strings";
import "./repeat_runs.css";

/** What the strip asks of the page. */
export interface RepeatRunsHost {
  readonly npu: GraphPane;
  readonly bench: GraphPane;
  /** Opens the run list's file at `path`; false when it is not listed or failed. */
  openPath(path: string): Promise<boolean>;
  /** Selects the named node on the side; false when the open file has none. */
  jumpToName(side: Side, name: string): Promise<boolean>;
  toast(message: string, kind?: "error"): void;
}

export class RepeatRuns {
  readonly el = h("div.repeat-runs", { "data-role": "repeat-runs" });
  private readonly label = h("span.repeat-runs-label");
  private readonly picker = h("select.repeat-runs-picker", { "aria-label": "run" });
  private readonly summary = h("span.repeat-runs-summary");
  private readonly jump = h("button.repeat-runs-jump", { type: "button" });
  private info: RunsInfo | null = null;

  constructor(private readonly host: RepeatRunsHost) {
    this.el.hidden = true;
    this.el.append(this.label, this.picker, this.summary, this.jump);
    this.picker.addEventListener("change", () => void this.pick());
    this.jump.addEventListener("click", () => void this.toFirst());
    onLangChange(() => this.render());
  }

  /** A new file opened: shown when it is one run's compare of a runs output. */
  fileChanged(info: FileInfo) {
    const runs = info.runs;
    this.info = runs && (runs.runs.length > 0 || runs.error) ? runs : null;
    this.render();
  }

  /** The pane titles again (the page relabels them on a language switch). */
  render() {
    const r = this.info;
    this.el.hidden = !r;
    if (!r) return;
    if (r.error) {
      this.label.textContent = rt("unreadable", { error: r.error });
      this.picker.hidden = this.summary.hidden = this.jump.hidden = true;
      return;
    }
    this.picker.hidden = this.summary.hidden = false;
    this.label.textContent = rt("shown", { run: r.run, reference: r.reference });
    this.picker.title = rt("pickTip");
    this.picker.replaceChildren(
      ...r.runs.map((dir, i) => {
        const o = h("option", { value: String(i), title: dir }, rt("option", { run: i, dir }));
        o.disabled = !r.files[i];
        if (i === r.reference) o.textContent = rt("referenceOption", { run: i, dir });
        return o;
      }),
    );
    this.picker.value = String(r.run);
    this.summary.textContent = r.summary || rt("noLine");
    this.summary.title = r.summary;
    this.jump.hidden = !r.first;
    this.jump.textContent = rt("jump");
    this.jump.title = r.first;
    this.host.npu.setTitle(rt("npuTitle", { run: r.run }));
    this.host.bench.setTitle(rt("benchTitle", { run: r.reference }));
  }

  private async pick() {
    const r = this.info;
    if (!r) return;
    const path = r.files[Number(this.picker.value)];
    if (!path || !(await this.host.openPath(path))) {
      this.picker.value = String(r.run);
      if (!path) return;
      this.host.toast(rt("missing", { path }), "error");
    }
  }

  private async toFirst() {
    const name = this.info?.first;
    if (!name) return;
    if (!(await this.host.jumpToName(Side.SIDE_NPU, name))) this.host.toast(rt("noNode", { node: name }), "error");
  }
}
