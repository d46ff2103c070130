// The divergence walk (docs/DIVERGENCE.md): a toolbar group that jumps to
// the first divergence of a compare and walks the ranking with next and
// previous, with keys G, N and P. The ranking and each rank's first
// divergence come from the service (GetDivergence).
import { type DivergenceItem, type DivergenceRank, Side } from "../api/client";
import { h } from "../dom";
import { t } from "../i18n";
import type { AppContext } from "../ui/context";

export class DivergenceNav {
  readonly el: HTMLElement;
  private readonly firstBtn = h("button.divergence-first", { type: "button", "data-action": "first-divergence" });
  private readonly prevBtn = h("button", { type: "button", "data-action": "prev-divergence" }, "‹");
  private readonly nextBtn = h("button", { type: "button", "data-action": "next-divergence" }, "›");
  private readonly status = h("span.divergence-status");
  private items: DivergenceItem[] = [];
  private ranked = false;
  private at = -1;
  private seq = 0;
  /** The ranks of the file's step and where each first diverges (batch files). */
  ranks: DivergenceRank[] = [];

  constructor(
    private readonly ctx: AppContext,
    private readonly ranksChanged: (ranks: DivergenceRank[]) => void,
  ) {
    this.el = h("span.divergence-nav", null, this.firstBtn, this.prevBtn, this.nextBtn, this.status);
    this.firstBtn.addEventListener("click", () => void this.go(0));
    this.prevBtn.addEventListener("click", () => void this.go(this.at - 1));
    this.nextBtn.addEventListener("click", () => void this.go(this.at + 1));
    this.relabel();
    this.update();
  }

  relabel() {
    this.firstBtn.textContent = `◆ ${t("firstDivergence")}`;
    this.firstBtn.title = t("firstDivergenceTip");
    this.prevBtn.title = t("prevDivergence");
    this.nextBtn.title = t("nextDivergence");
    this.update();
  }

  /** Loads the ranking of the file just opened. */
  async fileChanged(): Promise<void> {
    const seq = ++this.seq;
    this.items = [];
    this.ranks = [];
    this.ranked = false;
    this.at = -1;
    this.update();
    const file = this.ctx.file();
    if (!file || !this.ctx.isCompare()) {
      this.ranksChanged([]);
      return;
    }
    try {
      const reply = await this.ctx.api.call("getDivergence", { file: file.path });
      if (seq !== this.seq) return;
      this.items = reply.items;
      this.ranks = reply.ranks;
      this.ranked = reply.ranked;
    } catch (e) {
      if (seq === this.seq) this.ctx.toast((e as Error).message, "error");
    }
    this.update();
    this.ranksChanged(this.ranks);
  }

  /** G, N and P; true when the key was one of them. */
  keyDown(key: string): boolean {
    if (!this.items.length) return false;
    if (key === "g" || key === "G") void this.go(0);
    else if (key === "n" || key === "N") void this.go(this.at + 1);
    else if (key === "p" || key === "P") void this.go(this.at - 1);
    else return false;
    return true;
  }

  /** Jumps to the first divergence (entry 0). */
  first(): Promise<void> {
    return this.go(0);
  }

  /** The entry shown, if any (the page tests read it). */
  current(): DivergenceItem | null {
    return this.at >= 0 ? this.items[this.at] : null;
  }

  private async go(i: number) {
    if (!this.items.length) return;
    this.at = Math.max(0, Math.min(this.items.length - 1, i));
    this.update();
    await this.ctx.jumpTo(Side.SIDE_NPU, this.items[this.at].npuNode);
  }

  private update() {
    const compare = this.ctx.isCompare();
    this.el.hidden = !compare;
    const n = this.items.length;
    this.firstBtn.disabled = n === 0;
    this.prevBtn.disabled = n === 0 || this.at <= 0;
    this.nextBtn.disabled = n === 0 || this.at >= n - 1;
    const item = this.current();
    if (!compare) this.status.textContent = "";
    else if (!this.ranked) this.status.textContent = this.seq ? t("notRanked") : "";
    else if (!n) this.status.textContent = t("noDivergence");
    else this.status.textContent = item ? `${this.at + 1}/${n} · ${item.reasonText}` : `${n}`;
    this.status.title = item ? [item.name, item.reasonText, item.note].filter(Boolean).join("\n") : "";
    this.el.dataset.count = String(n);
  }
}
