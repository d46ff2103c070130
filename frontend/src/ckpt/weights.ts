// Checkpoint similarity on the page (GetCkpt): each NPU module's parameters
// compared between the two runs' checkpoints. One reply per file and
// tolerances, shared by the filter section (the modules that differ) and the
// detail board's weights block of the selected module.
import "./ckpt.css";
import type { CkptModule, CkptParam, CkptReply } from "../api/client";
import { Side } from "../api/client";
import type { AppContext } from "../app_context";
import { h } from "../dom";
import { onLangChange } from "../i18n";
import { ct } from "./strings";

interface Shown {
  key: string;
  reply: Promise<CkptReply | null>;
}

/** The current file's similarity: requested once per (file, JSON, tolerances). */
class CkptStore {
  json = "";
  cosTolerance = 1e-6;
  l2Tolerance = 0;
  private shown: Shown | null = null;
  private readonly byNode = new Map<number, number>();
  private byNodeOf: CkptReply | null = null;
  readonly listeners: (() => void)[] = [];

  get(ctx: AppContext): Promise<CkptReply | null> {
    const file = ctx.file()?.path ?? "";
    const key = JSON.stringify([file, this.json, this.cosTolerance, this.l2Tolerance]);
    if (!file) return Promise.resolve(null);
    if (this.shown?.key !== key) {
      const reply = ctx.api
        .call("getCkpt", { file, json: this.json, cosTolerance: this.cosTolerance, l2Tolerance: this.l2Tolerance })
        .catch((e: Error) => {
          ctx.toast(e.message, "error");
          return null;
        });
      this.shown = { key, reply };
    }
    return this.shown.reply;
  }

  /** Another file, JSON or tolerance: everything showing it asks again. */
  changed() {
    this.shown = null;
    for (const fn of this.listeners) fn();
  }

  /** The module whose calls include NPU node `node`, -1 for none. */
  moduleOf(reply: CkptReply, node: number): number {
    if (this.byNodeOf !== reply) {
      this.byNode.clear();
      reply.similarity?.module.forEach((m, i) => {
        for (const n of m.node) this.byNode.set(n, i);
      });
      this.byNodeOf = reply;
    }
    return this.byNode.get(node) ?? -1;
  }
}

export const ckptStore = new CkptStore();

function cosText(m: { hasCos: boolean; cos?: number; worstCos?: number }): string {
  const v = m.worstCos ?? m.cos ?? 0;
  return m.hasCos ? v.toPrecision(10) : "–";
}

function l2Text(m: { hasL2: boolean; l2?: number; maxL2?: number }): string {
  const v = m.maxL2 ?? m.l2 ?? 0;
  return m.hasL2 ? v.toPrecision(6) : "–";
}

function paramDiffers(p: CkptParam, cosTol: number, l2Tol: number): boolean {
  if (!p.hasL2 || !(p.l2 <= l2Tol)) return true;
  return p.hasCos && !(p.cos >= 1 - cosTol);
}

/** The detail board's block for NPU node `node`: its module's parameters, or nothing. */
export function weightsBlock(ctx: AppContext, node: number | undefined): HTMLElement {
  const el = h("div.ckpt-weights", { "data-kind": "ckpt-weights" });
  el.hidden = true;
  if (node === undefined) return el;
  void ckptStore.get(ctx).then((reply) => {
    if (!reply?.available || !reply.similarity) return;
    const i = ckptStore.moduleOf(reply, node);
    if (i < 0) return;
    const m: CkptModule = reply.similarity.module[i];
    const differs = reply.differs[i];
    const rows = m.param.map((pi) => {
      const p = reply.similarity!.param[pi];
      const bad = paramDiffers(p, reply.cosTolerance, reply.l2Tolerance);
      return h(
        "tr",
        { class: bad ? "bad" : "", "data-param": p.name },
        h("td", null, p.name),
        h("td.num", null, cosText(p)),
        h("td.num", null, l2Text(p)),
        h("td", null, p.shape),
      );
    });
    el.replaceChildren(
      h(
        "div.ckpt-summary",
        null,
        h("b", null, `${ct("weights")} `),
        h("span.ckpt-path", null, m.path),
        ` · ${ct("worstCos")} `,
        h("span", { "data-value": "worst-cos" }, cosText(m)),
        ` · ${ct("maxL2")} `,
        h("span", { "data-value": "max-l2" }, l2Text(m)),
        " · ",
        h(
          `span.ckpt-verdict.${differs ? "differs" : "equal"}`,
          { "data-verdict": differs ? "differs" : "equal" },
          m.incomparable ? ct("shapesDiffer") : differs ? ct("differs") : ct("equal"),
        ),
      ),
      h(
        "table.ckpt-params",
        null,
        h(
          "tr",
          null,
          h("th", null, ct("parameter")),
          h("th", null, "cos"),
          h("th", null, "l2"),
          h("th", null, ct("shape")),
        ),
        ...rows,
      ),
    );
    el.hidden = false;
  });
  return el;
}

/** The filter section: the tolerances, a JSON to load, and the modules that differ, worst first. */
export class CkptFilter {
  readonly el: HTMLElement;
  private readonly title = h("span");
  private readonly cosInput = h("input.ckpt-cos", { type: "text", size: "8", value: "1e-6" });
  private readonly l2Input = h("input.ckpt-l2", { type: "text", size: "8", value: "0" });
  private readonly jsonInput = h("input.ckpt-json", { type: "text", placeholder: "ckpt_similarity.json" });
  private readonly loadBtn = h("button", { type: "button", "data-action": "ckpt-load" });
  private readonly labels = { cos: h("span"), l2: h("span") };
  private readonly message = h("div.panel-message", { "data-kind": "ckpt-message" });
  private readonly list = h("div.ckpt-list", { "data-list": "ckpt" });

  constructor(private readonly ctx: AppContext) {
    this.el = h(
      "section.filter-section",
      { "data-section": "weights" },
      h("h3", null, this.title),
      h(
        "div.ckpt-tolerances",
        null,
        h("label", null, this.labels.cos, " ", this.cosInput),
        h("label", null, this.labels.l2, " ", this.l2Input),
      ),
      h("div.ckpt-load", null, this.jsonInput, this.loadBtn),
      this.message,
      this.list,
    );
    const apply = () => {
      const cos = Number(this.cosInput.value);
      const l2 = Number(this.l2Input.value);
      if (!Number.isFinite(cos) || cos < 0 || !Number.isFinite(l2) || l2 < 0) {
        ctx.toast(`${ct("cosTolerance")} / ${ct("l2Tolerance")}: a number >= 0`, "error");
        return;
      }
      ckptStore.cosTolerance = cos;
      ckptStore.l2Tolerance = l2;
      ckptStore.json = this.jsonInput.value.trim();
      ckptStore.changed();
    };
    this.cosInput.addEventListener("change", apply);
    this.l2Input.addEventListener("change", apply);
    this.loadBtn.addEventListener("click", apply);
    ckptStore.listeners.push(() => void this.render());
    onLangChange(() => {
      this.relabel();
      void this.render();
    });
    this.relabel();
  }

  private relabel() {
    this.title.textContent = ct("title");
    this.title.title = ct("titleTip");
    this.labels.cos.textContent = ct("cosTolerance");
    this.labels.l2.textContent = ct("l2Tolerance");
    this.loadBtn.textContent = ct("load");
    this.jsonInput.title = ct("jsonTip");
  }

  /** A file was opened: its own similarity (or the JSON beside it). */
  fileChanged() {
    ckptStore.json = "";
    this.jsonInput.value = "";
    ckptStore.changed();
  }

  private async render() {
    const reply = await ckptStore.get(this.ctx);
    if (!reply?.available || !reply.similarity) {
      this.message.textContent = ct("none");
      this.list.replaceChildren();
      return;
    }
    const s = reply.similarity;
    const source =
      reply.source === "file"
        ? ct("fromFile", { source: s.json || `${s.checkpointA} vs ${s.checkpointB}` })
        : ct("fromJson", { path: reply.sourcePath });
    this.message.textContent = `${ct("summary", {
      differ: reply.differing.length,
      modules: s.module.length,
      params: s.param.length,
      unmapped: reply.unmapped,
    })} · ${source}`;
    if (!reply.differing.length) {
      this.list.replaceChildren(h("div.muted", null, ct("allEqual")));
      return;
    }
    // Models have thousands of modules at most; the first 2000 worst are listed.
    const rows = reply.differing.slice(0, 2000).map((i) => {
      const m = s.module[i];
      const row = h(
        "div.ckpt-row",
        { "data-module": m.path, title: m.path },
        h("span.ckpt-path", null, m.path),
        h("span.num", null, m.incomparable ? ct("shapesDiffer") : `cos ${cosText(m)} · l2 ${l2Text(m)}`),
      );
      row.addEventListener("click", () => {
        if (m.node.length) void this.ctx.jumpTo(Side.SIDE_NPU, m.node[0]);
      });
      return row;
    });
    this.list.replaceChildren(...rows);
  }
}
