// The conversion form: the dump folders and mapping files of the log
// directory (ConvertInputs) and every builder option, read into a
// ConvertRequest (proto/graph_service.proto).
import type { ConvertDumpDir, ConvertInputsReply, ConvertRequest } from "../api/client";
import { h, option } from "../dom";
import { ct } from "./strings";

const PARALLEL = ["rankSize", "tp", "pp", "vpp", "order"] as const;
type ParallelKey = (typeof PARALLEL)[number];
const PARALLEL_FLAG: Record<ParallelKey, string> = {
  rankSize: "--rank_size",
  tp: "--tp",
  pp: "--pp",
  vpp: "--vpp",
  order: "--order",
};

function describe(d: ConvertDumpDir): string {
  const shape =
    d.layout === "stages"
      ? `${d.stages} stage`
      : d.layout === "steps"
        ? `${d.steps} step × ${d.ranks} rank`
        : d.layout === "ranks"
          ? `${d.ranks} rank`
          : "dump files";
  return `${d.path}  (${shape}${d.task ? `, ${d.task}` : ""})`;
}

export class ConvertForm {
  readonly el = h("div.convert-form");
  readonly npu = h("select", { "data-convert": "npu" });
  readonly bench = h("select", { "data-convert": "bench" });
  readonly output = h("input", { type: "text", "data-convert": "output", spellcheck: "false" });
  readonly command = h("select", { "data-convert": "command" });
  readonly overflow = h("input", { type: "checkbox", "data-convert": "oc" });
  readonly fuzzy = h("input", { type: "checkbox", "data-convert": "fm" });
  readonly layerMapping = h("input", { type: "checkbox", "data-convert": "lm" });
  readonly mapping = h("select", { "data-convert": "mapping" });
  readonly completeStack = h("input", { type: "checkbox", "data-convert": "cs" });
  readonly tensorLog = h("input", { type: "checkbox", "data-convert": "tensor-log" });
  private readonly parallel: Record<"npu" | "bench", Record<ParallelKey, HTMLInputElement>>;
  private readonly labels: { el: HTMLElement; key: Parameters<typeof ct>[0] }[] = [];
  private outputEdited = false;

  constructor(onChange: () => void) {
    const input = (side: string, key: ParallelKey) =>
      h("input", {
        type: "text",
        inputmode: key === "order" ? "text" : "numeric",
        placeholder: PARALLEL_FLAG[key],
        "data-convert": `${side}-${key}`,
      });
    this.parallel = {
      npu: Object.fromEntries(PARALLEL.map((k) => [k, input("npu", k)])) as Record<ParallelKey, HTMLInputElement>,
      bench: Object.fromEntries(PARALLEL.map((k) => [k, input("bench", k)])) as Record<ParallelKey, HTMLInputElement>,
    };
    const label = (key: Parameters<typeof ct>[0], ...children: Node[]) => {
      const text = h("span");
      this.labels.push({ el: text, key });
      return h("label", null, ...children, text);
    };
    const row = (key: Parameters<typeof ct>[0], field: HTMLElement) => {
      const text = h("span");
      this.labels.push({ el: text, key });
      return [text, field];
    };
    const parallelTitle = h("div");
    this.labels.push({ el: parallelTitle, key: "parallel" });
    this.el.append(
      h(
        "div.convert-grid",
        null,
        ...row("npu", this.npu),
        ...row("bench", this.bench),
        ...row("output", this.output),
        ...row("command", this.command),
      ),
      h(
        "div.convert-flags",
        null,
        label("overflow", this.overflow),
        label("fuzzy", this.fuzzy),
        label("layerMapping", this.layerMapping),
        this.mapping,
        label("completeStack", this.completeStack),
        label("tensorLog", this.tensorLog),
      ),
      parallelTitle,
      h(
        "div.convert-parallel",
        null,
        h("span"),
        ...PARALLEL.map((k) => h("span", null, PARALLEL_FLAG[k])),
        h("span", null, "NPU"),
        ...PARALLEL.map((k) => this.parallel.npu[k]),
        h("span", null, "Bench"),
        ...PARALLEL.map((k) => this.parallel.bench[k]),
      ),
    );
    for (const el of this.el.querySelectorAll("select, input")) {
      el.addEventListener("change", () => {
        this.update();
        onChange();
      });
      if (el instanceof HTMLInputElement && el.type === "text") el.addEventListener("input", onChange);
    }
    this.output.addEventListener("input", () => (this.outputEdited = true));
    this.npu.addEventListener("change", () => this.suggestOutput());
    this.relabel();
  }

  relabel() {
    for (const { el, key } of this.labels) el.textContent = ct(key);
    const keep = this.command.value || "graph_visualize";
    this.command.replaceChildren(
      option("graph_visualize", ct("visualize"), keep === "graph_visualize"),
      option("graph", ct("graph"), keep === "graph"),
    );
    if (this.bench.options.length) this.bench.options[0].textContent = ct("noBench");
    if (this.mapping.options.length) this.mapping.options[0].textContent = ct("defaultMapping");
  }

  /** Fills the pickers from the log directory's inputs, keeping what was chosen. */
  fill(inputs: ConvertInputsReply) {
    const keep = { npu: this.npu.value, bench: this.bench.value, mapping: this.mapping.value };
    const dumps = inputs.dumps.map((d) => option(d.path, describe(d)));
    this.npu.replaceChildren(...dumps);
    this.bench.replaceChildren(option("", ct("noBench")), ...dumps.map((o) => o.cloneNode(true) as HTMLOptionElement));
    this.mapping.replaceChildren(option("", ct("defaultMapping")), ...inputs.mappingFiles.map((y) => option(y, y)));
    if (keep.npu && inputs.dumps.some((d) => d.path === keep.npu)) this.npu.value = keep.npu;
    this.bench.value = inputs.dumps.some((d) => d.path === keep.bench) ? keep.bench : "";
    if (inputs.mappingFiles.includes(keep.mapping)) this.mapping.value = keep.mapping;
    this.suggestOutput();
    this.update();
  }

  /** The request the form describes. */
  request(session: string): ConvertRequest {
    const visualize = this.command.value !== "graph";
    const numbers = (key: ParallelKey) =>
      [this.parallel.npu[key].value, this.parallel.bench[key].value]
        .map((v) => v.trim())
        .filter((v, i) => v !== "" && (i === 0 || this.bench.value !== ""));
    const ints = (key: ParallelKey) => numbers(key).map((v) => (/^-?\d+$/.test(v) ? Number(v) : NaN));
    return {
      session,
      npu: this.npu.value,
      bench: this.bench.value,
      outputDir: this.output.value.trim(),
      command: this.command.value,
      overflowCheck: this.overflow.checked,
      fuzzyMatch: this.fuzzy.checked,
      layerMapping: this.layerMapping.checked,
      layerMappingFile: this.layerMapping.checked ? this.mapping.value : "",
      completeStack: !visualize && this.completeStack.checked,
      tensorLog: visualize && this.tensorLog.checked,
      rankSize: ints("rankSize"),
      tp: ints("tp"),
      pp: ints("pp"),
      vpp: ints("vpp"),
      order: numbers("order"),
    };
  }

  /** Options that do not apply are disabled (as the builder would refuse them). */
  private update() {
    const visualize = this.command.value !== "graph";
    const compare = this.bench.value !== "";
    this.completeStack.disabled = visualize;
    if (visualize) this.completeStack.checked = true;
    this.tensorLog.disabled = !visualize || !compare;
    this.fuzzy.disabled = !compare || this.layerMapping.checked;
    this.layerMapping.disabled = !compare || this.fuzzy.checked;
    this.mapping.disabled = this.layerMapping.disabled || !this.layerMapping.checked;
    for (const k of PARALLEL) this.parallel.bench[k].disabled = !compare;
  }

  private suggestOutput() {
    if (this.outputEdited) return;
    const npu = this.npu.value;
    const last = npu.split("/").filter((p) => p && p !== ".");
    this.output.value = `converted/${last.slice(-2).join("_") || "run"}`;
  }
}
