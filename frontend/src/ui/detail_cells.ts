// Cells of the detail table: how fields and metrics are printed, which
// cells are highlighted, which rows differ (Differences first), and how
// wide each column is.
import type { Item, ItemState, Metric, Value } from "../api/client";
import { formatNumber } from "../dom";
import { t } from "../i18n";

/** One row of the table: a group title, or an item of one side beside its partner on the other. */
export interface Row {
  kind: "group" | "npu" | "bench";
  state: ItemState;
  item?: Item;
  partner?: Item;
  paired: boolean;
}

/** The statistics a NaN or Inf of is highlighted. */
export const STAT_FIELDS = new Set(["Max", "Min", "Mean", "Norm"]);

/** Fields whose change between the sides is a difference in itself. */
export const META_FIELDS = new Set(["dtype", "shape", "requires_grad"]);

/** Whether field `col` of the row's item differs from its partner's (dtype, shape, requires_grad). */
export function fieldChanged(row: Row, col: string): boolean {
  if (!META_FIELDS.has(col) || !row.item || !row.partner) return false;
  const a = row.item.field.find((x) => x.name === col);
  const b = row.partner.field.find((x) => x.name === col);
  if (!a && !b) return false;
  return valueText(a?.value) !== valueText(b?.value);
}

export function colName(col: string): string {
  return col.startsWith("metric:") ? col.slice(7) : col;
}

export function colLabel(col: string): string {
  return col === "name" ? t("name") : colName(col);
}

export function columnWidth(col: string, rows: Row[]): number {
  let chars = colLabel(col).length;
  let n = 0;
  for (const r of rows) {
    if (!r.item || n++ > 400) continue;
    let len = 0;
    if (col === "name") len = r.item.key.length * 0.6 + 2;
    else if (col.startsWith("metric:")) {
      const m = r.item.metric.find((x) => `metric:${x.name}` === col);
      len = m ? metricText(m).length : 0;
    } else {
      const f = r.item.field.find((x) => x.name === col);
      len = f ? valueText(f.value).length : 0;
    }
    chars = Math.max(chars, len);
  }
  return Math.round(Math.min(col === "name" ? 320 : 220, Math.max(56, chars * 7 + 18)));
}

export function stripPrefix(key: string, prefix: string): string {
  return prefix && key.startsWith(prefix + ".") ? key.slice(prefix.length + 1) : key;
}

export function valueText(v: Value | undefined): string {
  if (!v) return "";
  if (v.null) return "null";
  if (v.boolean !== undefined) return String(v.boolean);
  if (v.integer !== undefined) return String(v.integer);
  if (v.number !== undefined) return formatNumber(v.number);
  if (v.text !== undefined) return v.text;
  if (v.json !== undefined) return v.json;
  return "";
}

export function isNonFinite(v: Value | undefined): boolean {
  if (!v) return false;
  if (v.number !== undefined) return !Number.isFinite(v.number);
  if (v.text !== undefined) return /^[-+]?(nan|inf|infinity)$/i.test(v.text.trim());
  return false;
}

/** A metric as the reference prints it: plain numbers with 6 decimals (builder reference §10.5), other text as is. */
export function metricText(m: Metric): string {
  const text = m.text.trim();
  if (!text) return m.hasValue ? formatNumber(m.value) : "";
  if (/^[-+]?\d+\.\d{7,}(e[-+]?\d+)?$/i.test(text)) return formatNumber(Number(text));
  // "0.06445649766615259%": rounded like the other numbers.
  const pct = /^([-+]?\d+\.\d{7,}(e[-+]?\d+)?)%$/i.exec(text);
  if (pct) return `${formatNumber(Number(pct[1]))}%`;
  return text;
}

/** A metric's number: "20.0%" is 0.2; otherwise its value. */
function metricNumber(m: Metric): number | null {
  const text = m.text.trim();
  if (text.endsWith("%")) {
    const v = Number(text.slice(0, -1));
    return Number.isNaN(v) ? null : v / 100;
  }
  if (m.hasValue) return m.value;
  const v = Number(text);
  return text && !Number.isNaN(v) ? v : null;
}

/**
 * Cells beyond threshold: relative errors above the threshold (statistics
 * and tensor modes), a cosine below 0.99 or a max absolute error above 0.001
 * (msprobe's accuracy criteria for tensors), a failed md5 result, an
 * inconsistent requires_grad.
 */
export function metricBad(m: Metric, threshold: number): boolean {
  const name = m.name;
  if (name === "Result") return m.text !== "" && m.text !== "pass";
  if (name === "Requires_grad Consistent") return m.text.toLowerCase() === "false";
  const v = metricNumber(m);
  if (v === null) return /^nan$/i.test(m.text.trim());
  if (Number.isNaN(v)) return true;
  if (name.endsWith("RelativeErr")) return v > threshold;
  if (name === "Cosine") return v < 0.99;
  if (name === "MaxAbsErr") return v > 0.001;
  return false;
}

/** Whether an NPU row (or a row without partner) differs from its partner: a metric beyond threshold, another
 * dtype/shape, a NaN/Inf statistic, another md5. */
export function rowDiffers(row: Row, threshold: number): boolean {
  if (!row.item) return false;
  if (!row.paired) return true;
  const item = row.item;
  if (row.kind === "npu" && item.metric.some((m) => metricBad(m, threshold))) return true;
  for (const f of item.field) {
    if (fieldChanged(row, f.name)) return true;
    if (STAT_FIELDS.has(f.name) && isNonFinite(f.value)) return true;
    if (f.name === "md5" && row.partner) {
      const other = row.partner.field.find((x) => x.name === "md5");
      if (other && valueText(other.value) !== valueText(f.value)) return true;
    }
  }
  return false;
}

/** Reorders `rows` in place: groups with a differing pair first, and within a group the differing pairs first
 * (each pair's NPU and Bench rows stay together; the order is otherwise kept). */
export function differingFirst(rows: Row[], threshold: number) {
  type Pair = { rows: Row[]; differs: boolean };
  type Group = { title: Row; pairs: Pair[]; differs: boolean };
  const groups: Group[] = [];
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (row.kind === "group") {
      groups.push({ title: row, pairs: [], differs: false });
      continue;
    }
    const g = groups[groups.length - 1];
    const pair: Pair = { rows: [row], differs: rowDiffers(row, threshold) };
    if (row.kind === "npu" && row.paired && rows[i + 1]?.kind === "bench") {
      pair.rows.push(rows[++i]);
      pair.differs ||= rowDiffers(rows[i], threshold);
    }
    g.pairs.push(pair);
    g.differs ||= pair.differs;
  }
  const first = <T extends { differs: boolean }>(xs: T[]) => [
    ...xs.filter((x) => x.differs),
    ...xs.filter((x) => !x.differs),
  ];
  rows.length = 0;
  for (const g of first(groups)) {
    rows.push(g.title);
    for (const p of first(g.pairs)) rows.push(...p.rows);
  }
}
