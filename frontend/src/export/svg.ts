// The current view of one or both panes as SVG, from the scene model the
// canvas draws (the loaded LayoutNodes, the pane's transform and the fills
// the legend gives), with the legend below; PNG by rasterising that SVG.
import type { ColorBucket, LayoutNode } from "../api/client";
import { Side } from "../api/client";
import type { GraphPane } from "../graph/pane";
import {
  DIVERGENCE_COLOUR,
  HEADER,
  bucketLabel,
  darken,
  isCollection,
  nodeFill,
  unmatchedColour,
} from "../graph/paint";
import { MIN_LABEL_PX, labelColour, nodeLabel, radius } from "../graph/scene";
import { palette } from "../theme";

export interface PaneShot {
  pane: GraphPane;
  title: string;
}

const GAP = 8;
const TITLE = 22;
const LEGEND = 30;

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function num(v: number): string {
  return String(Math.round(v * 100) / 100);
}

/** One pane's nodes on screen, in pane pixels, as SVG elements. */
function paneBody(shot: PaneShot, legend: readonly ColorBucket[], compare: boolean): string {
  const p = shot.pane;
  const pal = palette();
  const s = p.scale;
  const v = p.viewRect();
  const onScreen = p.nodes.filter(
    (n) => !(n.x > v.x + v.width || n.y > v.y + v.height || n.x + n.width < v.x || n.y + n.height < v.y),
  );
  const box = (n: LayoutNode, full: boolean) =>
    `x="${num(n.x * s + p.tx)}" y="${num(n.y * s + p.ty)}" width="${num(Math.max(1, n.width * s))}" ` +
    `height="${num(Math.max(1, (full && n.expanded ? n.height : HEADER) * s))}"`;
  const out: string[] = [];
  for (const n of onScreen) {
    if (n.expanded && n.parent >= 0) out.push(`<rect ${box(n, true)} fill="${pal.containerFill}"/>`);
  }
  const labelled = HEADER * s >= 8;
  const measure = document.createElement("canvas").getContext("2d");
  const m = Math.max(3, Math.min(7, HEADER * s * 0.32));
  for (const n of onScreen) {
    const fill = nodeFill(n, legend, compare);
    const stroke =
      p.side === Side.SIDE_BENCH ? pal.benchStroke : fill === pal.noColourFill ? pal.stroke : darken(fill, 40);
    const r = num(radius(n) * s);
    const dash = isCollection(n.nodeType) ? ` stroke-dasharray="4 3"` : "";
    const parts = [
      `<title>${esc(n.name)}</title>`,
      `<rect ${box(n, false)} rx="${r}" fill="${fill}"/>`,
      `<rect ${box(n, true)} rx="${r}" fill="none" stroke="${stroke}"${dash}/>`,
    ];
    const x = n.x * s + p.tx;
    const y = n.y * s + p.ty;
    // The label the canvas draws: fitted with its middle ellipsis, clear of the ◆ mark (graph/scene.ts).
    const fitted = labelled && measure && n.width * s >= 12 ? nodeLabel(measure, n) : null;
    if (fitted?.text && fitted.font * s >= MIN_LABEL_PX) {
      parts.push(
        `<text x="${num((n.x + n.width / 2 + fitted.dx) * s + p.tx)}" y="${num(y + (HEADER * s) / 2)}" ` +
          `font-size="${num(fitted.font * s)}" text-anchor="middle" fill="${labelColour(fill)}">${esc(fitted.text)}</text>`,
      );
    }
    // The divergence cue: a red border on the divergent node, its worst descendant's colour on a collapsed
    // ancestor, and the ◆ at the left of the header.
    if (s >= 0.05 && (n.divergent || n.containsDivergence)) {
      if (n.divergent || !n.expanded) {
        const colour = n.divergent ? DIVERGENCE_COLOUR : (legend[n.worstDescendantBucket]?.color ?? DIVERGENCE_COLOUR);
        parts.push(
          `<rect ${box(n, true)} rx="${r}" fill="none" stroke="${colour}" stroke-width="3" data-mark="divergence"/>`,
        );
      }
      const cx = x + m + 3;
      const cy = y + (HEADER * s) / 2;
      parts.push(
        `<path d="M${num(cx)} ${num(cy - m)}L${num(cx + m)} ${num(cy)}L${num(cx)} ${num(cy + m)}L${num(cx - m)} ${num(cy)}Z" ` +
          `fill="${DIVERGENCE_COLOUR}" stroke="#FFFFFF" data-mark="diamond"/>`,
      );
    }
    const ring = n.index === p.selected ? pal.selected : n.index === p.counterpart ? pal.counterpart : "";
    if (ring) parts.push(`<rect ${box(n, true)} rx="${r}" fill="none" stroke="${ring}" stroke-width="2.5"/>`);
    const selected = n.index === p.selected ? ` data-selected="true"` : "";
    out.push(`<g class="node" data-index="${n.index}" data-name="${esc(n.name)}"${selected}>${parts.join("")}</g>`);
  }
  return out.join("\n");
}

/** The legend row: a swatch and a label per bucket, and the grey "unmatched" entry of a compare. */
function legendRow(legend: readonly ColorBucket[], compare: boolean, unmatchedText: string, y: number): string {
  const pal = palette();
  const items = legend.map((b) => ({ colour: b.color, text: bucketLabel(b, unmatchedText) }));
  if (compare && !legend.some((b) => b.unmatched)) items.push({ colour: unmatchedColour(legend), text: unmatchedText });
  let x = GAP;
  const out: string[] = [];
  for (const it of items) {
    out.push(
      `<g class="legend-item"><rect x="${x}" y="${y + 8}" width="14" height="14" rx="2" fill="${it.colour}" ` +
        `stroke="${pal.stroke}"/><text x="${x + 20}" y="${y + 15}" font-size="12" fill="${pal.text}">` +
        `${esc(it.text)}</text></g>`,
    );
    x += 28 + it.text.length * 7;
  }
  return out.join("\n");
}

/** The SVG document of the panes side by side, each under its title, the legend below. */
export function viewSvg(
  shots: PaneShot[],
  legend: readonly ColorBucket[],
  compare: boolean,
  unmatchedText: string,
  caption: string,
): { svg: string; width: number; height: number } {
  const pal = palette();
  const sizes = shots.map((sh) => ({
    w: Math.max(1, sh.pane.el.clientWidth),
    h: Math.max(1, sh.pane.el.clientHeight),
  }));
  const width = Math.max(320, sizes.reduce((a, sz) => a + sz.w, 0) + GAP * (shots.length + 1));
  const paneHeight = Math.max(...sizes.map((sz) => sz.h));
  const height = TITLE + paneHeight + LEGEND + GAP;
  const body: string[] = [];
  let x = GAP;
  shots.forEach((sh, i) => {
    const { w, h } = sizes[i];
    body.push(
      `<text x="${x}" y="15" font-size="13" font-weight="bold" fill="${pal.text}">${esc(sh.title)}</text>`,
      `<svg x="${x}" y="${TITLE}" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" class="pane" ` +
        `data-side="${sh.pane.side === Side.SIDE_BENCH ? "bench" : "npu"}">`,
      `<rect width="${w}" height="${h}" fill="${pal.background}" stroke="${pal.stroke}"/>`,
      paneBody(sh, legend, compare),
      `</svg>`,
    );
    x += w + GAP;
  });
  const svg = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
      `font-family="system-ui, sans-serif" text-anchor="start" dominant-baseline="middle">`,
    `<desc>${esc(caption)}</desc>`,
    `<rect width="${width}" height="${height}" fill="${pal.background}"/>`,
    ...body,
    legendRow(legend, compare, unmatchedText, TITLE + paneHeight),
    `</svg>`,
  ].join("\n");
  return { svg, width, height };
}

/** Rasterises an SVG document into a PNG at `ratio` device pixels per CSS pixel. */
export async function svgToPng(svg: string, width: number, height: number, ratio: number): Promise<Blob> {
  const img = new Image();
  img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
  await img.decode();
  const canvas = document.createElement("canvas");
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  const ctx = canvas.getContext("2d");
  if (!ctx) throw new Error("canvas 2d context unavailable");
  ctx.scale(ratio, ratio);
  ctx.drawImage(img, 0, 0, width, height);
  return await new Promise<Blob>((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("PNG encoding failed"))), "image/png"),
  );
}
