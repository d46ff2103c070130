// The stage picker: a conversion of a stages layout (verl's step_<N>/<stage>,
// docs/FORMAT.md "Stages") writes one run per stage; the picker switches
// between the stages of one conversion, keeping the step and rank.
import type { RunFile } from "../api/client";
import { h, naturalCompare, option } from "../dom";
import { currentLang, onLangChange } from "../i18n";
import { groupOf } from "./runs";

const label = { en: "Stage", zh: "阶段" };
const tip = {
  en: "The stage of the training step (a folder of the dump, such as verl's step_1/actor_update)",
  zh: "训练步的阶段（dump 的文件夹，如 verl 的 step_1/actor_update）",
};

/** The conversion a file belongs to: its run without the stage ("dir/compare_<ts>"). */
export function batchOf(f: RunFile): string {
  const g = groupOf(f);
  return f.stage && g.endsWith(`_${f.stage}`) ? g.slice(0, g.length - f.stage.length - 1) : g;
}

export class StagePicker {
  readonly sel = h("select.picker", { "data-picker": "stage" });
  private readonly text = h("span");
  readonly el = h("label.pick", null, this.text, this.sel);

  /** `open` opens a file of another stage. */
  constructor(open: (f: RunFile) => void) {
    this.el.hidden = true;
    this.relabel();
    onLangChange(() => this.relabel());
    this.sel.addEventListener("change", () => {
      const f = this.choose(this.sel.value);
      if (f) open(f);
    });
  }

  private runs: RunFile[] = [];
  private current: RunFile | null = null;

  /** The stages of the file's conversion; hidden for a file without a stage. */
  fill(f: RunFile, runs: RunFile[]) {
    this.current = f;
    const batch = batchOf(f);
    this.runs = f.stage ? runs.filter((x) => x.stage && batchOf(x) === batch) : [];
    const stages = [...new Set(this.runs.map((x) => x.stage))].sort(naturalCompare);
    this.sel.replaceChildren(...stages.map((s) => option(s, s, s === f.stage)));
    this.el.hidden = !f.stage;
    this.sel.disabled = stages.length <= 1;
  }

  /** The file of `stage` at the current step and rank, else its first. */
  private choose(stage: string): RunFile | undefined {
    const files = this.runs.filter((x) => x.stage === stage);
    files.sort((a, b) => naturalCompare(a.step, b.step) || naturalCompare(a.rank, b.rank));
    const cur = this.current;
    return files.find((x) => x.step === cur?.step && x.rank === cur?.rank) ?? files[0];
  }

  relabel() {
    const lang = currentLang();
    this.text.textContent = label[lang];
    this.el.title = tip[lang];
  }
}
