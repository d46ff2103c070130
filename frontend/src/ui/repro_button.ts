// "Repro script" on an API node: the service runs graph-ascend op_generate's
// code on the dump the graph was built from (ReproScript) and the page saves
// the two files it returns, the extracted JSON and the script, through the
// browser's download. The direction (forward or backward) is chosen beside
// the button; it starts at the node's own.
import { type NodeSummary, Side } from "../api/client";
import type { AppContext } from "../app_context";
import { h } from "../dom";
import { download } from "../export/download";
import { NODE_API } from "../graph/paint";
import { t } from "../i18n";

export class ReproButton {
  readonly el: HTMLSpanElement;
  private readonly button: HTMLButtonElement;
  private readonly direction: HTMLSelectElement;
  private node: NodeSummary | null = null;
  private side: Side = Side.SIDE_NPU;

  constructor(private readonly ctx: AppContext) {
    this.button = h("button.repro", { type: "button", "data-action": "repro-script" });
    this.direction = h(
      "select.repro-direction",
      { "data-select": "repro-direction" },
      h("option", { value: "forward" }, "forward"),
      h("option", { value: "backward" }, "backward"),
    );
    this.button.addEventListener("click", () => void this.fetch());
    this.el = h("span.repro-tools", null, this.direction, this.button);
    this.el.hidden = true;
  }

  /** The node shown; the control appears for API nodes only. */
  show(side: Side, node: NodeSummary | undefined) {
    this.button.textContent = t("reproScript");
    this.button.title = t("reproScriptTip");
    const api = !!node && node.nodeType === NODE_API;
    if (api && (node.index !== this.node?.index || side !== this.side))
      this.direction.value = node.name.endsWith(".backward") ? "backward" : "forward";
    this.node = api ? node : null;
    this.side = side;
    this.el.hidden = !api;
  }

  private async fetch() {
    const file = this.ctx.file();
    const node = this.node;
    if (!file || !node) return;
    this.button.disabled = true;
    try {
      const reply = await this.ctx.api.call("reproScript", {
        file: file.path,
        side: this.side,
        node: node.index,
        propagation: this.direction.value,
      });
      download(reply.extractName, new Blob([reply.extractJson], { type: "application/json" }));
      download(reply.scriptName, new Blob([reply.script], { type: "text/x-python" }));
      this.ctx.toast(t("reproSaved", { script: reply.scriptName, extract: reply.extractName }));
    } catch (e) {
      this.ctx.toast((e as Error).message, "error");
    } finally {
      this.button.disabled = false;
    }
  }
}
