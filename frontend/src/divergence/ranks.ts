// The rank picker of a batch step shows which ranks diverge: a marker on a
// rank that diverges by itself, and "from rankN" on a rank whose first
// divergence is a receive or collective from a rank that diverged by itself.
import type { DivergenceRank } from "../api/client";
import { t } from "../i18n";

export function markRanks(picker: HTMLSelectElement, ranks: DivergenceRank[]) {
  const byRank = new Map(ranks.map((r) => [r.rank, r]));
  for (const opt of Array.from(picker.options)) {
    const r = byRank.get(opt.value);
    const base = opt.value || "-";
    delete opt.dataset.diverges;
    opt.title = "";
    if (!r || !r.first) {
      opt.textContent = base;
      continue;
    }
    opt.dataset.diverges = r.causedBy ? "from-peer" : "self";
    opt.textContent = r.causedBy
      ? `${base} ◇ ${t("divergesFrom", { rank: r.causedBy })}`
      : `${base} ◆ ${t("divergesHere")}`;
    opt.title = `${r.first}${r.causedBy ? ` ← ${r.causedBy}` : ""}`;
  }
}
