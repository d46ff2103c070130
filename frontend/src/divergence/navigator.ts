// The divergence walk (docs/DIVERGENCE.md): a toolbar group that jumps to
// the first divergence of a compare and walks the ranking with next and
// previous, with keys G, N and P. The ranking and each rank's first
// divergence come from the service (GetDivergence), loaded again after a
// manual match or unmatch, which re-ranks it. Under the noise rule
// each entry says how many times the noise of its kind it changed by, and a
// run without an entry says "no divergence beyond noise" with the largest
// margin seen; a file of the former rule has no margins and says neither.
import "./divergence.css";
import { type DivergenceItem, type DivergenceRank, DivergenceReply, Side } from "../api/client";
import type { AppContext } from "../app_context";
import { h } from "../dom";
import { t } from "../i18n";

export class DivergenceNav {
  readonly el: HTMLElement;
  private readonly firstBtn = h("button.divergence-first", { type: "button", "data-action": "first-divergence" });
  private readonly prevBtn = h("button", { type: "button", "data-action": "prev-divergence" }, "‹");
  private readonly nextBtn = h("button", { type: "button", "data-action": "next-divergence" }, "›");
  private readonly status = h("span.divergence-status");
  private items: DivergenceItem[] = [];
  private reply: DivergenceReply = DivergenceReply.fromPartial({});
  private ranked = false;
  /** The file's ranking is asked for and has not come (a .vis.db's comes once its conversion ends). */
  private loading = false;
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
    // Under the "none" verdict the status names the op nearest to diverging: a click shows it.
    this.status.addEventListener("click", () => {
      const r = this.reply;
      if (r.noneBeyondNoise && r.hasLargest && r.largestMarginNode >= 0)
        void this.ctx.jumpTo(Side.SIDE_NPU, r.largestMarginNode);
    });
    this.relabel();
    this.update();
  }

  relabel() {
    this.firstBtn.textContent = `◆ ${t("firstDivergence")}`;
    this.prevBtn.title = t("prevDivergence");
    this.nextBtn.title = t("nextDivergence");
    this.update();
  }

  /** Loads the ranking of the file just opened. */
  async fileChanged(): Promise<void> {
    const seq = ++this.seq;
    this.items = [];
    this.reply = DivergenceReply.fromPartial({});
    this.ranks = [];
    this.ranked = false;
    this.at = -1;
    this.loading = !!this.ctx.file() && this.ctx.isCompare();
    this.update();
    if (!this.loading) {
      this.ranksChanged([]);
      return;
    }
    await this.load(seq, null);
  }

  /**
   * Loads the ranking again after manual matches: the service re-ranks over them
   * (docs/DIVERGENCE.md, "Limits"). The entry shown stays shown while it is ranked.
   */
  async matchesChanged(): Promise<void> {
    if (!this.ctx.file() || !this.ctx.isCompare()) return;
    const shown = this.current();
    await this.load(++this.seq, shown ? shown.npuNode : null);
  }

  private async load(seq: number, keep: number | null) {
    const file = this.ctx.file();
    if (!file) return;
    try {
      const reply = await this.ctx.api.call("getDivergence", { file: file.path });
      if (seq !== this.seq) return;
      this.items = reply.items;
      this.reply = reply;
      this.ranks = reply.ranks;
      this.ranked = reply.ranked;
      this.at = keep === null ? -1 : this.items.findIndex((i) => i.npuNode === keep);
    } catch (e) {
      if (seq === this.seq) this.ctx.toast((e as Error).message, "error");
    }
    if (seq === this.seq) this.loading = false;
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

  /** The verdict of the noise rule: no entry, "no divergence beyond noise". */
  noneBeyondNoise(): boolean {
    return this.ranked && this.reply.noneBeyondNoise;
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

  /** "No divergence beyond noise (largest: 3.2x the noise at NODE)". */
  private verdict(): string {
    const r = this.reply;
    return r.hasLargest
      ? t("noneBeyondNoise", { m: formatMargin(r.largestMargin), node: r.largestMarginName })
      : t("noneBeyondNoiseBare");
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
    // Not "no ranking" while it comes: a big .vis.db is ranked once the service has read it whole.
    else if (this.loading) this.status.textContent = t("ranking");
    // Why there is no ranking, in the service's words (a converted file says what it lacks), wrapped in full.
    else if (!this.ranked) this.status.textContent = this.seq ? this.reply.unrankedReason || t("notRanked") : "";
    else if (!n && this.reply.noneBeyondNoise) this.status.textContent = this.verdict();
    else if (!n) this.status.textContent = t("noDivergence");
    else
      this.status.textContent = item
        ? [`${this.at + 1}/${n}`, item.reasonText, marginText(item)].filter(Boolean).join(" · ")
        : t(n === 1 ? "divergenceCountOne" : "divergenceCount", { n });
    if (item) this.status.title = [item.name, item.reasonText, marginText(item), item.note].filter(Boolean).join("\n");
    else if (compare && this.ranked && !n && this.reply.noneBeyondNoise)
      this.status.title = `${this.verdict()}\n${t("noneBeyondNoiseTip", { t: formatMargin(this.reply.threshold) })}`;
    else this.status.title = this.status.textContent ?? ""; // the status may be cut at 1280 px
    this.status.classList.toggle("jumps", !n && this.reply.noneBeyondNoise && this.reply.hasLargest);
    this.status.classList.toggle("unranked", compare && !this.ranked && !!this.seq && !this.loading);
    this.status.classList.toggle("ranking", compare && this.loading);
    // The first button's tooltip says where entry 0 is and by how much.
    const first = this.items[0];
    this.firstBtn.title = first
      ? `${t("firstDivergenceTip")}\n${[first.name, marginText(first)].filter(Boolean).join(" · ")}`
      : t("firstDivergenceTip");
    this.el.dataset.count = String(n);
    this.el.dataset.verdict = compare && this.ranked && !n && this.reply.noneBeyondNoise ? "none-beyond-noise" : "";
  }
}

/** "12.3x the noise" for an entry of the noise rule, "" for the former rule. */
function marginText(item: DivergenceItem): string {
  return item.hasMargin ? t("marginOfNoise", { m: formatMargin(item.margin) }) : "";
}

/**
 * Three significant digits, as `graph-ascend info` prints them. A kind whose other instances are bit
 * for bit the same has no noise (the rule divides by 1e-300): such margins read "> 10⁶".
 */
export function formatMargin(m: number): string {
  if (!Number.isFinite(m) || m >= 1e6) return "> 10⁶";
  return String(Number(m.toPrecision(3)));
}
