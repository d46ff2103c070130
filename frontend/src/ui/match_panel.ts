// Manual matching (reference §8.8, §9 MatchSider): pick an NPU node and a
// Bench node (by clicking them in the graphs or in the unmatched lists),
// match or unmatch them, optionally with their descendants, save the
// matches as a config file beside the .vis and load one of the configs
// there (matching/config_chooser.ts).
import "./side_panels.css";
import { type FileInfo, type MatchReply, type NodeHit, Side } from "../api/client";
import type { AppContext } from "../app_context";
import { h } from "../dom";
import { onLangChange, t } from "../i18n";
import { ConfigChooser } from "../matching/config_chooser";
import { HitList, sideName } from "./hit_list";

interface Picked {
  index: number;
  name: string;
}

export class MatchPanel {
  readonly el: HTMLDivElement;
  private readonly hint: HTMLDivElement;
  private readonly npuField: HTMLDivElement;
  private readonly benchField: HTMLDivElement;
  private readonly withChildren: HTMLInputElement;
  private readonly matchBtn: HTMLButtonElement;
  private readonly unmatchBtn: HTMLButtonElement;
  private readonly saveBtn: HTMLButtonElement;
  private readonly configs: ConfigChooser;
  private readonly summary: HTMLDivElement;
  private readonly removed = h("div.match-removed");
  private readonly results: HTMLDivElement;
  private readonly npuList: HitList;
  private readonly benchList: HitList;
  private readonly labels: Record<string, HTMLElement> = {};
  private picked: Record<"npu" | "bench", Picked | null> = { npu: null, bench: null };
  private busy = false;

  constructor(private readonly ctx: AppContext) {
    this.hint = h("div.panel-message");
    this.npuField = h("div.picked", { "data-side": "npu" });
    this.benchField = h("div.picked", { "data-side": "bench" });
    this.withChildren = h("input", { type: "checkbox" });
    this.matchBtn = h("button.primary", { type: "button", "data-action": "match" });
    this.unmatchBtn = h("button", { type: "button", "data-action": "unmatch" });
    this.saveBtn = h("button", { type: "button", "data-action": "save" });
    this.configs = new ConfigChooser(ctx, (reply) => this.configApplied(reply));
    this.summary = h("div.match-summary");
    this.results = h("div.match-results");
    this.npuList = new HitList(ctx, "", (hit) => this.pickFromList(Side.SIDE_NPU, hit), "match-npu");
    this.benchList = new HitList(ctx, "", (hit) => this.pickFromList(Side.SIDE_BENCH, hit), "match-bench");
    for (const k of ["npu", "bench", "children", "lists"]) this.labels[k] = h("span");
    this.el = h(
      "div.panel.match-panel",
      null,
      this.hint,
      h("div.picked-row", null, h("span.picked-label", null, this.labels.npu), this.npuField),
      h("div.picked-row", null, h("span.picked-label", null, this.labels.bench), this.benchField),
      h("label.check", null, this.withChildren, this.labels.children),
      h("div.row.buttons", null, this.matchBtn, this.unmatchBtn),
      this.results,
      h("div.row.buttons", null, this.saveBtn),
      this.configs.el,
      this.configs.failure.el,
      this.summary,
      this.removed,
      h("h3", null, this.labels.lists),
      h("div.two-lists", null, this.npuList.el, this.benchList.el),
    );
    this.matchBtn.addEventListener("click", () => void this.run("match"));
    this.unmatchBtn.addEventListener("click", () => void this.run("unmatch"));
    this.saveBtn.addEventListener("click", () => void this.save());
    this.removed.hidden = true;
    onLangChange(() => this.relabel());
  }

  private relabel() {
    this.hint.textContent = this.ctx.isCompare() ? t("matchPanelHint") : t("buildOnly");
    this.labels.npu.textContent = t("pickedNpu");
    this.labels.bench.textContent = t("pickedBench");
    this.labels.children.textContent = t("withChildren");
    this.labels.lists.textContent = t("unmatchedNodes");
    this.matchBtn.textContent = t("doMatch");
    this.unmatchBtn.textContent = t("doUnmatch");
    this.saveBtn.textContent = t("saveConfig");
    this.npuList.setTitle(sideName(Side.SIDE_NPU));
    this.benchList.setTitle(sideName(Side.SIDE_BENCH));
    this.renderPicked();
    this.renderSummary(this.ctx.info());
  }

  fileChanged() {
    this.picked = { npu: null, bench: null };
    this.results.replaceChildren();
    const compare = this.ctx.isCompare();
    for (const b of [this.matchBtn, this.unmatchBtn, this.saveBtn, this.withChildren]) b.disabled = !compare;
    void this.configs.refresh();
    this.relabel();
    if (compare) this.reloadLists();
    else {
      this.npuList.clear();
      this.benchList.clear();
    }
  }

  /** A node clicked in a graph becomes the pick of its side. */
  nodeSelected(side: Side, index: number, name: string) {
    if (!this.ctx.isCompare()) return;
    this.picked[side === Side.SIDE_BENCH ? "bench" : "npu"] = { index, name };
    this.renderPicked();
  }

  reloadLists() {
    for (const [list, side] of [
      [this.npuList, Side.SIDE_NPU],
      [this.benchList, Side.SIDE_BENCH],
    ] as const) {
      const view = this.ctx.viewKey(side);
      void list
        .load((offset, limit, signal) =>
          this.ctx.api.call(
            "filter",
            { view, buckets: [], unmatched: true, overflow: [], leavesOnly: false, offset, limit },
            signal,
          ),
        )
        .catch((e: Error) => this.ctx.toast(e.message, "error"));
    }
  }

  renderSummary(info: FileInfo | null | undefined) {
    this.summary.textContent = info
      ? t(info.manualMatches === 1 ? "manualMatchesOne" : "manualMatches", { n: info.manualMatches })
      : "";
    // The builder's matches undone: Save config refuses (the service says why) until they are matched again.
    const removed = info?.removedAutomatic ?? 0;
    this.removed.textContent = removed
      ? t(removed === 1 ? "removedAutomaticOne" : "removedAutomatic", { n: removed })
      : "";
    this.removed.hidden = !removed;
  }

  private pickFromList(side: Side, hit: NodeHit) {
    this.picked[side === Side.SIDE_BENCH ? "bench" : "npu"] = { index: hit.index, name: hit.name };
    this.renderPicked();
    void this.ctx.jumpTo(side, hit.index);
  }

  private renderPicked() {
    for (const [field, p] of [
      [this.npuField, this.picked.npu],
      [this.benchField, this.picked.bench],
    ] as const) {
      field.textContent = p ? p.name : t("notPicked");
      field.title = p ? p.name : "";
      field.classList.toggle("empty", !p);
      if (p) field.dataset.node = p.name;
      else delete field.dataset.node;
    }
    const ready = !!(this.picked.npu && this.picked.bench) && !this.busy && this.ctx.isCompare();
    this.matchBtn.disabled = !ready;
    this.unmatchBtn.disabled = !ready;
  }

  private async run(kind: "match" | "unmatch") {
    const file = this.ctx.file();
    const { npu, bench } = this.picked;
    if (!file || !npu || !bench) return;
    this.busy = true;
    this.renderPicked();
    try {
      const reply: MatchReply = await this.ctx.api.call(kind, {
        file: file.path,
        npuNode: npu.index,
        benchNode: bench.index,
        withChildren: this.withChildren.checked,
      });
      this.showResults(kind, reply);
      await this.ctx.matchesChanged(reply.info);
      this.renderSummary(reply.info ?? this.ctx.info());
      this.reloadLists();
    } catch (e) {
      this.ctx.toast((e as Error).message, "error");
    } finally {
      this.busy = false;
      this.renderPicked();
    }
  }

  private showResults(kind: "match" | "unmatch", reply: MatchReply) {
    const ok = reply.results.filter((r) => r.ok).length;
    const failed = reply.results.length - ok;
    const key =
      kind === "match" ? (ok === 1 ? "matchDoneOne" : "matchDone") : ok === 1 ? "unmatchDoneOne" : "unmatchDone";
    const done = t(key, { ok, failed });
    this.results.replaceChildren(
      h("div.match-count", null, done),
      ...reply.results.map((r) =>
        h(
          `div.match-result.${r.ok ? "ok" : "failed"}`,
          { title: `${r.npu}\n${r.bench}` },
          `${r.ok ? "✓" : "✗"} ${r.npu} ↔ ${r.bench}`,
          r.error ? h("div.match-error", null, r.error) : null,
        ),
      ),
    );
    this.ctx.toast(done, failed && !ok ? "error" : "info");
  }

  private async save() {
    const file = this.ctx.file();
    if (!file) return;
    try {
      const reply = await this.ctx.api.call("saveMatches", { file: file.path });
      this.ctx.toast(t(reply.matches === 1 ? "savedOne" : "saved", { n: reply.matches, path: reply.path }));
      this.summary.dataset.saved = reply.path;
      void this.configs.refresh();
    } catch (e) {
      this.ctx.toast((e as Error).message, "error");
    }
  }

  private async configApplied(reply: MatchReply) {
    const ok = reply.results.filter((r) => r.ok).length;
    this.ctx.toast(t("loadedConfig", { ok, failed: reply.results.length - ok }));
    await this.ctx.matchesChanged(reply.info);
    this.renderSummary(reply.info ?? this.ctx.info());
    this.reloadLists();
  }
}
