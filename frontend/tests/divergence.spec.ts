// The first-divergence walk (docs/DIVERGENCE.md) on real dumps: one action
// lands on the culprit of gpt_statistics, next/previous walk the ranking, a
// collapsed layer holding the culprit carries the cue, the detail table
// highlights the dtype change, API collections are coloured, and the rank
// picker of a batch says which ranks diverge.
import { expect, type Frame, test } from "@playwright/test";
import { chooseRun, counterpartName, idle, node, nodes, onScreen, openPlugin, selectedName, shot } from "./helpers";

const CULPRIT = "Functional.linear.11.forward";
const LAYER1 = "Module.model.layers.1.LlamaDecoderLayer.forward.0";

async function firstDivergence(frame: Frame) {
  await frame.locator("button[data-action=first-divergence]").click();
  await idle(frame);
}

/**
 * The canvas colours (#rrggbb) of a 5×5 device-pixel window at a point of a
 * node's header: `at` "marker" (the divergence marker's centre) or "top"
 * (the middle of its top border).
 */
async function pixelsOf(frame: Frame, name: string, at: "marker" | "top"): Promise<string[]> {
  return frame.evaluate(
    ([name, at]) => {
      const p = (window as any).graphAscend.npu;
      const n = p.nodes.find((x: any) => x.name === name);
      const c = document.querySelector(".pane[data-side=npu] canvas.graph-canvas") as HTMLCanvasElement;
      const dpr = c.width / c.getBoundingClientRect().width;
      const s = p.scale;
      const m = Math.max(3, Math.min(7, 15 * s * 0.32));
      const x = at === "marker" ? n.x * s + p.tx + m + 3 : (n.x + n.width / 2) * s + p.tx;
      const y = at === "marker" ? (n.y + 7.5) * s + p.ty : n.y * s + p.ty + 0.5;
      const d = c.getContext("2d")!.getImageData(Math.round(x * dpr) - 2, Math.round(y * dpr) - 2, 5, 5).data;
      const out: string[] = [];
      for (let i = 0; i < d.length; i += 4)
        out.push("#" + [d[i], d[i + 1], d[i + 2]].map((v) => v.toString(16).padStart(2, "0")).join(""));
      return out;
    },
    [name, at] as const,
  );
}

/** Whether one of the colours is `want` (within 8 per channel). */
function has(colours: string[], want: string): boolean {
  const rgb = (c: string) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
  const w = rgb(want.toLowerCase());
  return colours.some((c) => rgb(c).every((v, i) => Math.abs(v - w[i]) <= 8));
}

test("first divergence lands on the culprit in one action, on both sides, with the dtype change highlighted", async ({
  page,
}, info) => {
  const frame = await openPlugin(page, "gpt/");
  expect(await node(frame, "npu", CULPRIT), "the culprit starts hidden in a collapsed layer").toBeUndefined();
  await firstDivergence(frame);
  expect(await selectedName(frame, "npu")).toBe(CULPRIT);
  const n = await node(frame, "npu", CULPRIT);
  await expect.poll(() => onScreen(frame, "npu", n!.index)).toBe(true);
  await expect.poll(() => counterpartName(frame, "bench")).toBe(CULPRIT);
  await expect(frame.locator(".node-badge[data-side=npu] .badge-name")).toHaveText(CULPRIT);
  // The detail table shows the output dtype change as a highlighted cell on both rows.
  const out = frame.locator(`.detail-table .dt-row[data-side=npu][data-key="${CULPRIT}.output.0"]`);
  await expect(out.locator("[data-col=dtype]")).toHaveText("torch.bfloat16");
  await expect(out.locator("[data-col=dtype]")).toHaveClass(/\bchanged\b/);
  const benchOut = frame.locator(`.detail-table .dt-row[data-side=bench][data-key="${CULPRIT}.output.0"]`);
  await expect(benchOut.locator("[data-col=dtype]")).toHaveText("torch.float32");
  await expect(benchOut.locator("[data-col=dtype]")).toHaveClass(/\bchanged\b/);
  const inp = frame.locator(`.detail-table .dt-row[data-side=npu][data-key="${CULPRIT}.input.0"]`);
  await expect(inp.locator("[data-col=dtype]")).not.toHaveClass(/\bchanged\b/);
  // Percentages are rounded like the other numbers.
  for (const text of await frame.locator(".detail-table [data-col$=RelativeErr]").allTextContents()) {
    expect(text, "no long percentage").not.toMatch(/\d\.\d{7,}%/);
  }
  // The divergent node itself carries the red marker.
  expect(has(await pixelsOf(frame, CULPRIT, "marker"), "#e32020")).toBe(true);
  await shot(page, info, "first-divergence");
});

test("next and previous walk the ranking, with the keys too", async ({ page }) => {
  const frame = await openPlugin(page, "gpt/");
  await firstDivergence(frame);
  const count = Number(await frame.locator(".divergence-nav").getAttribute("data-count"));
  expect(count).toBeGreaterThan(1);
  await expect(frame.locator("button[data-action=prev-divergence]")).toBeDisabled();
  await frame.locator("button[data-action=next-divergence]").click();
  await idle(frame);
  const second = await frame.evaluate(() => (window as any).graphAscend.divergence.current().name);
  expect(second).not.toBe(CULPRIT);
  expect(await selectedName(frame, "npu")).toBe(second);
  await frame.locator("button[data-action=prev-divergence]").click();
  await idle(frame);
  expect(await selectedName(frame, "npu")).toBe(CULPRIT);
  await frame.locator("canvas.graph-canvas").first().hover();
  await page.keyboard.press("n");
  await idle(frame);
  expect(await selectedName(frame, "npu")).toBe(second);
  await page.keyboard.press("p");
  await idle(frame);
  expect(await selectedName(frame, "npu")).toBe(CULPRIT);
  await page.keyboard.press("n");
  await idle(frame);
  await page.keyboard.press("g");
  await idle(frame);
  expect(await selectedName(frame, "npu")).toBe(CULPRIT);
});

test("a collapsed layer holding the culprit carries the marker and its worst descendant's colour", async ({
  page,
}, info) => {
  const frame = await openPlugin(page, "gpt/");
  await firstDivergence(frame);
  const layer = await node(frame, "npu", LAYER1);
  expect(layer).toBeDefined();
  await frame.evaluate((i) => (window as any).graphAscend.npu.collapse(i), layer!.index);
  await idle(frame);
  const state = await frame.evaluate((name) => {
    const p = (window as any).graphAscend.npu;
    const n = p.nodes.find((x: any) => x.name === name);
    return { ...n, legend: (window as any).graphAscend.info().meta.legend };
  }, LAYER1);
  expect(state.expanded).toBe(false);
  expect(state.containsDivergence).toBe(true);
  expect(state.divergent).toBe(false);
  expect(state.worstDescendantBucket).toBeGreaterThanOrEqual(0);
  await frame.evaluate((i) => (window as any).graphAscend.npu.centerOn(i, false), layer!.index);
  await idle(frame);
  expect(has(await pixelsOf(frame, LAYER1, "top"), state.legend[state.worstDescendantBucket].color)).toBe(true);
  expect(has(await pixelsOf(frame, LAYER1, "marker"), "#e32020")).toBe(true);
  // Layers without a divergence inside carry no cue.
  const others = (await frame.evaluate(() => (window as any).graphAscend.npu.nodes)).filter((n: any) =>
    /layers\.[02]\.LlamaDecoderLayer\.forward/.test(n.name),
  );
  for (const o of others) expect(o.containsDivergence, o.name).toBe(false);
  await shot(page, info, "divergence-cue");
});

test("API collections are coloured by their bucket", async ({ page }) => {
  const frame = await openPlugin(page, "gpt/");
  const all = await frame.evaluate(() =>
    (window as any).graphAscend.npu.nodes.map((n: any) => ({
      name: n.name,
      nodeType: n.nodeType,
      bucket: n.bucket,
      fill: (window as any).graphAscend.npu.fillOf(n),
    })),
  );
  const legend = await frame.evaluate(() => (window as any).graphAscend.info().meta.legend);
  const collections = all.filter((n: any) => n.nodeType === 9);
  expect(collections.length, "Apis_Between_Modules collections at the top level").toBeGreaterThan(0);
  for (const c of collections) {
    expect(c.bucket, c.name).toBeGreaterThanOrEqual(0);
    expect(c.fill.toLowerCase(), c.name).toBe(legend[c.bucket].color.toLowerCase());
  }
});

test("the rank picker of a batch marks the ranks that diverge, and where from", async ({ page }) => {
  const frame = await openPlugin(page);
  await chooseRun(frame, "batch/");
  const option = (rank: string) => frame.locator(`select[data-picker=rank] option[value="${rank}"]`);
  await expect(option("rank1")).toHaveAttribute("data-diverges", "self");
  await expect(option("rank0")).toHaveAttribute("data-diverges", "from-peer");
  await expect(option("rank0")).toContainText("rank1");
  expect(await nodes(frame, "npu")).not.toHaveLength(0);
});
