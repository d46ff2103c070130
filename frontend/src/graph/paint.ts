// Node colours (reference §7.7, §8.3): the service gives each node a legend
// bucket; the fill is that bucket's colour, grey for an unmatched node of a
// compare, and the "no colour" fill otherwise. API collections take the
// colour of their bucket when the service gives one (the worst index of their
// APIs, as tb_graph_ascend colours them). Overflow levels get a corner mark
// of their own colour.
import { type ColorBucket, OverflowLevel } from "../api/client";
import { palette } from "../theme";

export const UNMATCHED_GREY = "#C7C7C7";

/** Header row height in layout units (reference §6.1). */
export const HEADER = 15;

export const NODE_MODULE = 0;
export const NODE_API = 1;
export const NODE_MULTI_COLLECTION = 8;
export const NODE_API_COLLECTION = 9;

export const OVERFLOW_COLOURS: Record<string, string> = {
  [OverflowLevel.OVERFLOW_MEDIUM]: "#B6C7FC",
  [OverflowLevel.OVERFLOW_HIGH]: "#7E96F0",
  [OverflowLevel.OVERFLOW_CRITICAL]: "#4668B8",
};

/** The border and marker of a node that diverges by itself (docs/DIVERGENCE.md). */
export const DIVERGENCE_COLOUR = "#E32020";

export function overflowRank(level: OverflowLevel): number {
  switch (level) {
    case OverflowLevel.OVERFLOW_MEDIUM:
      return 1;
    case OverflowLevel.OVERFLOW_HIGH:
      return 2;
    case OverflowLevel.OVERFLOW_CRITICAL:
      return 3;
    default:
      return 0;
  }
}

export function isCollection(nodeType: number): boolean {
  return nodeType === NODE_API_COLLECTION || nodeType === NODE_MULTI_COLLECTION;
}

export interface FillInput {
  bucket: number;
  matched: number;
  nodeType: number;
}

/** The fill of a node; compare says whether the file is a compare (so unmatched means grey). */
export function nodeFill(n: FillInput, legend: readonly ColorBucket[], compare: boolean): string {
  if (isCollection(n.nodeType) && !(n.bucket >= 0 && n.bucket < legend.length)) return palette().noColourFill;
  if (n.bucket >= 0 && n.bucket < legend.length) return legend[n.bucket].color || palette().noColourFill;
  if (compare && n.matched < 0) return unmatchedColour(legend);
  return palette().noColourFill;
}

export function unmatchedColour(legend: readonly ColorBucket[]): string {
  return legend.find((b) => b.unmatched)?.color || UNMATCHED_GREY;
}

/** The bucket colour for a legend index, or the no-colour fill. */
export function bucketColour(bucket: number, legend: readonly ColorBucket[]): string {
  return bucket >= 0 && bucket < legend.length ? legend[bucket].color : palette().noColourFill;
}

/** Relative luminance of "#RRGGBB" in [0, 1]; 1 for anything else. */
export function luminance(colour: string): number {
  const m = /^#([0-9a-f]{6})$/i.exec(colour);
  if (!m) return 1;
  const v = parseInt(m[1], 16);
  const r = (v >> 16) & 255;
  const g = (v >> 8) & 255;
  const b = v & 255;
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}

/** Each channel minus amount (reference: darkenColor(fill, 40) for strokes). */
export function darken(colour: string, amount: number): string {
  const m = /^#([0-9a-f]{6})$/i.exec(colour);
  if (!m) return palette().stroke;
  const v = parseInt(m[1], 16);
  const c = (s: number) => Math.max(0, ((v >> s) & 255) - amount);
  return `rgb(${c(16)}, ${c(8)}, ${c(0)})`;
}

/** A legend entry's short text (its description goes in the tooltip). */
export function bucketLabel(b: ColorBucket, unmatchedText: string): string {
  if (b.unmatched) return unmatchedText;
  if (b.name) return b.name;
  if (b.lo === b.hi) return String(b.lo);
  return `${b.lo}–${b.hi}`;
}

/**
 * The legend entry holding a precision index (docs/API.md, "Colours"):
 * lo ≤ p < hi, the last numeric entry also holds p == hi, an entry with
 * lo == hi holds exactly that value; the first that holds p wins. -1: none.
 */
export function bucketOf(p: number, legend: readonly ColorBucket[]): number {
  if (!Number.isFinite(p)) return -1;
  let last = -1;
  for (let i = 0; i < legend.length; i++) if (!legend[i].unmatched) last = i;
  for (let i = 0; i < legend.length; i++) {
    const b = legend[i];
    if (b.unmatched) continue;
    if (b.lo === b.hi ? p === b.lo : (p >= b.lo && p < b.hi) || (i === last && p === b.hi)) return i;
  }
  return -1;
}

const OVERFLOW_NAMES: Record<string, OverflowLevel> = {
  medium: OverflowLevel.OVERFLOW_MEDIUM,
  high: OverflowLevel.OVERFLOW_HIGH,
  critical: OverflowLevel.OVERFLOW_CRITICAL,
};

/**
 * The colour of a communication peer from the index the builder stored with
 * the link (reference §8.3 idx(x)): its overflow level ("medium", "high",
 * "critical") or its precision index; null when it has neither ("Nan").
 */
export function peerColour(peerIndex: string, legend: readonly ColorBucket[]): string | null {
  const level = OVERFLOW_NAMES[peerIndex.trim().toLowerCase()];
  if (level) return OVERFLOW_COLOURS[level];
  const text = peerIndex.trim();
  const p = text === "" ? NaN : Number(text);
  const b = bucketOf(p, legend);
  return b >= 0 ? legend[b].color || null : null;
}

export function formatIndex(v: number): string {
  return Number.isFinite(v) ? String(Number(v.toFixed(4))) : String(v);
}
