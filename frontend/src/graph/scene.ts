// Drawing one frame of a pane: container backgrounds, headers batched by
// fill colour, outlines, overflow marks, labels, selection rings. Only the
// nodes that intersect the screen are drawn.
import { type ColorBucket, type LayoutNode, type Rect, OverflowLevel, Side } from "../api/client";
import { palette } from "../theme";
import { DIVERGENCE_COLOUR, HEADER, NODE_API, OVERFLOW_COLOURS, darken, isCollection, overflowRank } from "./paint";

export interface Label {
  text: string;
  font: number; // layout units
  width: number; // of the text, layout units
  dx: number; // the text's centre right of the header's, layout units (room left for the ◆ or overflow mark)
}

/** What a frame reads of a pane; labels is a cache the frame fills. */
export interface Scene {
  ctx: CanvasRenderingContext2D;
  side: Side;
  legend: readonly ColorBucket[];
  nodes: LayoutNode[];
  fills: string[];
  labels: (Label | undefined)[];
  scale: number;
  tx: number;
  ty: number;
  cssWidth: number;
  cssHeight: number;
  dpr: number;
  view: Rect;
  hover: number;
  selected: number;
  counterpart: number;
  node(index: number): LayoutNode | undefined;
  /** Filled with the indices of the nodes that got a name tag (tests read it). */
  tagged: number[];
}

/** Labels smaller than this are not drawn: they cannot be read (the tags name the nodes that matter). */
export const MIN_LABEL_PX = 8;

/** The text colour with the higher contrast (WCAG) on a fill: the theme's text or its text-on-fill. */
export function labelColour(fill: string): string {
  const pal = palette();
  const bg = relativeLuminance(fill);
  const ratio = (c: string) => {
    const l = relativeLuminance(c);
    return (Math.max(l, bg) + 0.05) / (Math.min(l, bg) + 0.05);
  };
  return ratio(pal.textOnFill) >= ratio(pal.text) ? pal.textOnFill : pal.text;
}

/** WCAG relative luminance of "#RRGGBB" (sRGB linearised); other colours count as white. */
export function relativeLuminance(colour: string): number {
  const m = /^#([0-9a-f]{6})$/i.exec(colour);
  if (!m) return 1;
  const v = parseInt(m[1], 16);
  const lin = (c: number) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  return 0.2126 * lin(((v >> 16) & 255) / 255) + 0.7152 * lin(((v >> 8) & 255) / 255) + 0.0722 * lin((v & 255) / 255);
}

/** The screen x where a node's drawn label ends. */
export function labelRight(n: LayoutNode, l: Label, s: number, tx: number): number {
  return (n.x + n.width / 2 + l.dx + l.width / 2) * s + tx;
}

/** Layout units a header keeps free of its label: left of it the ◆ divergence mark, right the overflow corner. */
export function labelRoom(n: LayoutNode): { left: number; right: number } {
  const left = n.divergent || n.containsDivergence ? 16 : 0;
  const right =
    n.overflow !== OverflowLevel.OVERFLOW_NONE && n.overflow !== undefined ? 8 + overflowRank(n.overflow) * 3 : 0;
  return { left, right };
}

export function drawScene(sc: Scene): number {
  const ctx = sc.ctx;
  const pal = palette();
  ctx.setTransform(sc.dpr, 0, 0, sc.dpr, 0, 0);
  ctx.fillStyle = pal.background;
  ctx.fillRect(0, 0, sc.cssWidth, sc.cssHeight);
  const s = sc.scale;
  const tx = sc.tx;
  const ty = sc.ty;
  const v = sc.view;
  const vx2 = v.x + v.width;
  const vy2 = v.y + v.height;
  const nodes = sc.nodes;

  const visible: number[] = [];
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    if (n.x > vx2 || n.y > vy2 || n.x + n.width < v.x || n.y + n.height < v.y) continue;
    visible.push(i);
  }
  const drawn = visible.length;

  // Expanded containers: a faint background, nested ones a little darker.
  ctx.fillStyle = pal.containerFill;
  for (const i of visible) {
    const n = nodes[i];
    if (!n.expanded || n.parent < 0) continue;
    ctx.fillRect(n.x * s + tx, n.y * s + ty, n.width * s, n.height * s);
  }

  // Headers, batched by fill colour.
  const byFill = new Map<string, number[]>();
  for (const i of visible) {
    const f = sc.fills[i];
    let list = byFill.get(f);
    if (!list) byFill.set(f, (list = []));
    list.push(i);
  }
  const round = s >= 0.35;
  for (const [fill, list] of byFill) {
    ctx.beginPath();
    for (const i of list) {
      const n = nodes[i];
      const x = n.x * s + tx;
      const y = n.y * s + ty;
      const w = Math.max(1, n.width * s);
      const hh = Math.max(1, HEADER * s);
      if (round) ctx.roundRect(x, y, w, hh, radius(n) * s);
      else ctx.rect(x, y, w, hh);
    }
    ctx.fillStyle = fill;
    ctx.fill();
  }

  // Outlines: per fill for NPU (darkened fill, §8.3), one colour for Bench, dashed for collections.
  if (s >= 0.08) {
    ctx.lineWidth = 1;
    for (const [fill, list] of byFill) {
      ctx.beginPath();
      let dashed = false;
      for (const i of list) {
        const n = nodes[i];
        if (isCollection(n.nodeType)) {
          dashed = true;
          continue;
        }
        outline(sc, n, round);
      }
      ctx.strokeStyle =
        sc.side === Side.SIDE_BENCH ? pal.benchStroke : fill === pal.noColourFill ? pal.stroke : darken(fill, 40);
      ctx.stroke();
      if (dashed) {
        ctx.beginPath();
        for (const i of list) if (isCollection(nodes[i].nodeType)) outline(sc, nodes[i], round);
        ctx.setLineDash([4, 3]);
        ctx.strokeStyle = pal.stroke;
        ctx.stroke();
        ctx.setLineDash([]);
      }
    }
  }

  // Overflow marks: a corner triangle per level, in the level's colour, with
  // a white edge so that it shows on a red fill; larger for higher levels;
  // critical ones say NaN/Inf when there is room.
  if (s >= 0.15) {
    for (const level of [OverflowLevel.OVERFLOW_MEDIUM, OverflowLevel.OVERFLOW_HIGH, OverflowLevel.OVERFLOW_CRITICAL]) {
      ctx.beginPath();
      let any = false;
      const size = (8 + overflowRank(level) * 3) * Math.min(1.5, s);
      for (const i of visible) {
        const n = nodes[i];
        if (n.overflow !== level) continue;
        any = true;
        const x2 = (n.x + n.width) * s + tx;
        const y = n.y * s + ty;
        ctx.moveTo(x2 - size, y);
        ctx.lineTo(x2, y);
        ctx.lineTo(x2, y + size);
        ctx.closePath();
      }
      if (any) {
        ctx.fillStyle = OVERFLOW_COLOURS[level];
        ctx.fill();
        ctx.lineWidth = 1.5;
        ctx.strokeStyle = "#FFFFFF";
        ctx.stroke();
        ctx.lineWidth = 1;
      }
    }
  }

  // Divergence cue: the node that diverges by itself gets a red border, a
  // collapsed ancestor of one a border in its worst descendant's colour, and
  // both a marker at the left of the header (expanded ancestors the marker).
  if (s >= 0.05) {
    const m = Math.max(3, Math.min(7, HEADER * s * 0.32));
    for (const i of visible) {
      const n = nodes[i];
      if (!n.divergent && !n.containsDivergence) continue;
      if (n.divergent || !n.expanded) {
        const b = n.worstDescendantBucket;
        const colour = n.divergent ? DIVERGENCE_COLOUR : (sc.legend[b]?.color ?? DIVERGENCE_COLOUR);
        ctx.beginPath();
        outline(sc, n, round);
        ctx.lineWidth = 3;
        ctx.strokeStyle = colour;
        ctx.stroke();
      }
      const cx = n.x * s + tx + m + 3;
      const cy = (n.y + HEADER / 2) * s + ty;
      ctx.beginPath();
      ctx.moveTo(cx, cy - m);
      ctx.lineTo(cx + m, cy);
      ctx.lineTo(cx, cy + m);
      ctx.lineTo(cx - m, cy);
      ctx.closePath();
      ctx.fillStyle = DIVERGENCE_COLOUR;
      ctx.fill();
      ctx.lineWidth = 1;
      ctx.strokeStyle = "#FFFFFF";
      ctx.stroke();
    }
    ctx.lineWidth = 1;
  }

  // Labels, once the header is tall enough to read.
  const shown = new Set<number>();
  if (HEADER * s >= 8) {
    for (const i of visible) label(sc, i); // measuring changes ctx.font
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    let font = -1;
    let colour = "";
    for (const i of visible) {
      const n = nodes[i];
      const w = n.width * s;
      if (w < 12) continue;
      const fitted = label(sc, i);
      if (!fitted.text) continue;
      const px = fitted.font * s;
      if (px < MIN_LABEL_PX) continue;
      if (px !== font) {
        font = px;
        ctx.font = `${px}px system-ui, sans-serif`;
      }
      const c = labelColour(sc.fills[i]);
      if (c !== colour) {
        colour = c;
        ctx.fillStyle = c;
      }
      ctx.fillText(fitted.text, (n.x + n.width / 2 + fitted.dx) * s + tx, (n.y + HEADER / 2) * s + ty + 0.5);
      shown.add(i);
    }
  }

  // The NaN/Inf word beside the critical overflow mark, where the label leaves room for it.
  if (s >= 0.15 && HEADER * s >= 10) {
    ctx.font = `bold ${Math.round(7 * Math.min(1.5, s))}px system-ui, sans-serif`;
    ctx.textAlign = "right";
    ctx.textBaseline = "top";
    const word = ctx.measureText("NaN/Inf").width;
    for (const i of visible) {
      const n = nodes[i];
      if (n.overflow !== OverflowLevel.OVERFLOW_CRITICAL || n.width * s < 90) continue;
      const size = 17 * Math.min(1.5, s);
      const x = (n.x + n.width) * s + tx - size - 2;
      const y = n.y * s + ty + 1;
      const l = sc.labels[i];
      if (l?.text && shown.has(i) && labelRight(n, l, s, tx) > x - word - 4) continue;
      ctx.fillStyle = "#FFFFFF";
      ctx.fillRect(x - word - 2, y, word + 4, 9 * Math.min(1.5, s));
      ctx.fillStyle = OVERFLOW_COLOURS[OverflowLevel.OVERFLOW_CRITICAL];
      ctx.fillText("NaN/Inf", x, y + 0.5);
    }
  }

  // Selection, the matched node of the other side's selection, hover.
  ring(sc, sc.hover, pal.hover, 1.5);
  ring(sc, sc.counterpart, pal.counterpart, 2.5);
  ring(sc, sc.selected, pal.selected, 2.5);
  drawTags(sc, visible, (i) => shown.has(i));
  return drawn;
}

function outline(sc: Scene, n: LayoutNode, round: boolean) {
  const s = sc.scale;
  const x = n.x * s + sc.tx + 0.5;
  const y = n.y * s + sc.ty + 0.5;
  const w = Math.max(1, n.width * s - 1);
  const hh = Math.max(1, (n.expanded ? n.height : HEADER) * s - 1);
  if (round) sc.ctx.roundRect(x, y, w, hh, radius(n) * s);
  else sc.ctx.rect(x, y, w, hh);
}

function ring(sc: Scene, index: number, colour: string, width: number) {
  if (index < 0) return;
  const n = sc.node(index);
  if (!n) return;
  const ctx = sc.ctx;
  ctx.beginPath();
  outline(sc, n, sc.scale >= 0.35);
  ctx.lineWidth = width;
  ctx.strokeStyle = colour;
  ctx.stroke();
  ctx.lineWidth = 1;
}

/** The label fitted to the node width, measured once in layout units. */
function label(sc: Scene, i: number): Label {
  let l = sc.labels[i];
  if (!l) l = sc.labels[i] = nodeLabel(sc.ctx, sc.nodes[i]);
  return l;
}

/** A node's label fitted to its header (changes ctx.font). */
export function nodeLabel(ctx: CanvasRenderingContext2D, n: LayoutNode): Label {
  const font = n.nodeType === NODE_API && !n.expandable ? 6 : 8;
  const room = labelRoom(n);
  const measure = (x: string, px: number) => {
    ctx.font = `${px}px system-ui, sans-serif`;
    return ctx.measureText(x).width;
  };
  const l = fitLabel(n.label || n.name, n.width - 4 - room.left - room.right, font, measure);
  l.width = l.text ? measure(l.text, l.font) : 0;
  l.dx = (room.left - room.right) / 2;
  return l;
}

/**
 * A name fitted to `avail` layout units. msprobe names end in what tells
 * nodes apart (an API's name, call index and direction; a module's last path
 * part, class, direction and call index), so the end is kept: the leading
 * dotted parts give way first ("…linear.11.forward"), then the font shrinks a
 * little for that core, and only then is the middle of the name cut.
 */
export function fitLabel(text: string, avail: number, font: number, width: (s: string, px: number) => number): Label {
  const fitted = (text: string, font: number): Label => ({ text, font, width: 0, dx: 0 });
  if (width(text, font) <= avail) return fitted(text, font);
  if (avail < font) return fitted("", font);
  const parts = text.split(".");
  const module = /^(forward|backward)$/.test(parts[parts.length - 2] ?? "");
  const core = Math.min(parts.length, module ? 4 : 3);
  let tail = text;
  for (let k = 1; k <= parts.length - core; k++) {
    tail = "…" + parts.slice(k).join(".");
    if (width(tail, font) <= avail) return fitted(tail, font);
  }
  const small = font * 0.7;
  for (let px = font - 0.5; px >= small; px -= 0.5) {
    if (width(tail, px) <= avail) return fitted(tail, px);
  }
  for (let keep = tail.length - 1; keep > 1; keep--) {
    const head = Math.ceil(keep / 3);
    const cut = tail.slice(0, head) + "…" + tail.slice(tail.length - (keep - head));
    if (width(cut, small) <= avail) return fitted(cut, small);
  }
  return fitted("", font);
}

/**
 * Nodes that keep a name when labels are too small to read (at fit zoom):
 * the selection and its counterpart, nodes in the worst bucket, divergent
 * and overflowing nodes. Their name goes in a tag above the header.
 */
function drawTags(sc: Scene, visible: number[], drawnLabel: (i: number) => boolean) {
  const ctx = sc.ctx;
  const pal = palette();
  let worst = -1;
  sc.legend.forEach((b, i) => {
    if (!b.unmatched) worst = i;
  });
  const keep = (n: LayoutNode) =>
    n.index === sc.selected ||
    n.index === sc.counterpart ||
    n.divergent ||
    (worst >= 0 && n.bucket === worst && !n.expanded) ||
    (n.overflow !== OverflowLevel.OVERFLOW_NONE && n.overflow !== undefined && !n.expanded);
  ctx.font = "10px system-ui, sans-serif";
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  let count = 0;
  const order = visible.filter((i) => keep(sc.nodes[i]) && !drawnLabel(i));
  // The selection and its counterpart first: a tag that would overlap one already placed is left out.
  const rank = (i: number) => (sc.nodes[i].index === sc.selected ? 0 : sc.nodes[i].index === sc.counterpart ? 1 : 2);
  order.sort((a, b) => rank(a) - rank(b));
  const placed: { x: number; y: number; w: number }[] = [];
  for (const i of order) {
    if (count++ > 300) break;
    const n = sc.nodes[i];
    const text = fitLabel(n.label || n.name, 200, 10, (x) => ctx.measureText(x).width).text;
    if (!text) continue;
    const w = ctx.measureText(text).width + 6;
    const x = Math.max(2, Math.min(sc.cssWidth - w - 2, n.x * sc.scale + sc.tx));
    const y = Math.max(8, n.y * sc.scale + sc.ty - 8);
    if (placed.some((p) => x < p.x + p.w + 2 && p.x < x + w + 2 && Math.abs(p.y - y) < 15)) continue;
    placed.push({ x, y, w });
    sc.tagged.push(n.index);
    ctx.fillStyle = pal.background;
    ctx.globalAlpha = 0.85;
    ctx.fillRect(x, y - 7, w, 14);
    ctx.globalAlpha = 1;
    ctx.strokeStyle = n.index === sc.selected ? pal.selected : pal.stroke;
    ctx.lineWidth = 1;
    ctx.strokeRect(x + 0.5, y - 6.5, w - 1, 13);
    ctx.fillStyle = pal.text;
    ctx.fillText(text, x + 3, y + 0.5);
  }
}

export function radius(n: LayoutNode): number {
  if (isCollection(n.nodeType)) return 2;
  return n.nodeType === NODE_API && !n.expandable ? 7 : 3;
}
