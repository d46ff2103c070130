// Shared steps of the browser tests: open TensorBoard's GRAPH_ASCEND tab,
// reach the plugin's iframe, pick a file, find and click nodes on the canvas.
// Everything runs against the real tensorboard started by
// scripts/test-browser.sh (GA_TB_URL) over .vis files built from samples/.
import { expect, type Frame, type Page, type TestInfo } from "@playwright/test";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export type SideName = "npu" | "bench";

export const SAMPLES = join(dirname(fileURLToPath(import.meta.url)), "../../samples");

/** The plugin's page inside TensorBoard's iframe, once it shows a graph. */
export async function openPlugin(page: Page, run?: string): Promise<Frame> {
  await page.goto("/#graph_ascend");
  const frame = await pluginFrame(page);
  await waitGraph(frame, "npu");
  if (run) await chooseRun(frame, run);
  return frame;
}

export async function pluginFrame(page: Page): Promise<Frame> {
  const find = () => page.frames().find((f) => f.url().includes("/data/plugin/graph_ascend/index.html"));
  await expect.poll(() => !!find(), { message: "the GRAPH_ASCEND iframe loads index.html" }).toBe(true);
  return find()!;
}

/** Waits until a side shows its root and no request is in flight. */
export async function waitGraph(frame: Frame, side: SideName) {
  await expect
    .poll(() => frame.evaluate((s) => (window as any).graphAscend?.[s]?.nodes?.length ?? 0, side), {
      message: `the ${side} graph is drawn`,
    })
    .toBeGreaterThan(0);
  await idle(frame);
}

/** Waits for every request of the page to finish. */
export async function idle(frame: Frame) {
  await expect.poll(() => frame.evaluate(() => (window as any).graphAscend.api.inFlight)).toBe(0);
  await frame.evaluate(() =>
    Promise.all([(window as any).graphAscend.npu.idle(), (window as any).graphAscend.bench.idle()]),
  );
  await expect.poll(() => frame.evaluate(() => (window as any).graphAscend.opening())).toBe(false);
  await expect
    .poll(() =>
      frame.evaluate(
        () => (window as any).graphAscend.npu.isAnimating() || (window as any).graphAscend.bench.isAnimating(),
      ),
    )
    .toBe(false);
}

/**
 * Converts the dump folders `npu` and `bench` (under the log directory) into `out` through the page's
 * Convert dialog with `graph`'s flags, and waits until the result is open and drawn.
 */
export async function convertAndOpen(frame: Frame, npu: string, bench: string, out: string) {
  await frame.locator("button[data-action=convert]").click();
  const npuSel = frame.locator("select[data-convert=npu]");
  await expect(npuSel.locator(`option[value="${npu}"]`)).toHaveCount(1);
  await npuSel.selectOption(npu);
  await frame.locator("select[data-convert=bench]").selectOption(bench);
  await frame.locator("input[data-convert=output]").fill(out);
  await frame.locator("select[data-convert=command]").selectOption("graph");
  await frame.locator("button[data-action=convert-start]").click();
  await expect
    .poll(() => frame.evaluate(() => (window as any).graphAscend.file()?.path ?? ""), { timeout: 60_000 })
    .toMatch(new RegExp(`^${out}/.*\\.vis$`));
  await waitGraph(frame, "npu");
  await idle(frame);
}

/** Expands every node of the NPU pane (a graph many times taller than wide). */
export async function expandAll(frame: Frame) {
  await frame.evaluate(async () => {
    const p = (window as any).graphAscend.npu;
    for (let round = 0; round < 4; round++) {
      const closed = p.nodes.filter((n: any) => n.expandable && !n.expanded);
      if (!closed.length) break;
      for (const n of closed) await p.expand(n.index);
    }
  });
  await idle(frame);
}

/** Chooses the run whose picker label contains `text`. */
export async function chooseRun(frame: Frame, text: string) {
  const picker = frame.locator("select[data-picker=run]");
  const label = (await picker.locator("option").allTextContents()).find((t) => t.includes(text));
  expect(label, `a run containing ${text}`).toBeTruthy();
  await picker.selectOption({ label: label! });
  await expect
    .poll(() => frame.evaluate(() => (window as any).graphAscend.file()?.path ?? ""))
    .toContain(text.split(" ")[0]);
  await waitGraph(frame, "npu");
}

export interface NodeState {
  index: number;
  name: string;
  expanded: boolean;
  expandable: boolean;
  matched: number;
  bucket: number;
  parent: number;
}

export async function nodes(frame: Frame, side: SideName): Promise<NodeState[]> {
  return frame.evaluate(
    (s) =>
      (window as any).graphAscend[s].nodes.map((n: any) => ({
        index: n.index,
        name: n.name,
        expanded: n.expanded,
        expandable: n.expandable,
        matched: n.matched,
        bucket: n.bucket,
        parent: n.parent,
      })),
    side,
  );
}

export async function node(frame: Frame, side: SideName, name: string): Promise<NodeState | undefined> {
  return (await nodes(frame, side)).find((n) => n.name === name);
}

export async function selectedName(frame: Frame, side: SideName): Promise<string | null> {
  return frame.evaluate((s) => {
    const p = (window as any).graphAscend[s];
    return p.selected >= 0 ? (p.node(p.selected)?.name ?? null) : null;
  }, side);
}

export async function counterpartName(frame: Frame, side: SideName): Promise<string | null> {
  return frame.evaluate((s) => {
    const p = (window as any).graphAscend[s];
    return p.counterpart >= 0 ? (p.node(p.counterpart)?.name ?? null) : null;
  }, side);
}

export async function onScreen(frame: Frame, side: SideName, index: number): Promise<boolean> {
  return frame.evaluate(([s, i]) => (window as any).graphAscend[s as string].isOnScreen(i), [side, index] as const);
}

/** Canvas position of a node's header, centring it first if it is off screen. */
async function position(frame: Frame, side: SideName, name: string) {
  await idle(frame); // no animation moving the view under the pointer
  const pos = await frame.evaluate(
    ([s, n]) => {
      const p = (window as any).graphAscend[s as string];
      const found = p.nodes.find((x: any) => x.name === n);
      if (!found) return null;
      if (!p.isOnScreen(found.index)) p.centerOn(found.index, false);
      return p.locate(n);
    },
    [side, name] as const,
  );
  expect(pos, `${name} is drawn on the ${side} side`).not.toBeNull();
  return pos!;
}

export function canvas(frame: Frame, side: SideName) {
  return frame.locator(`.pane[data-side=${side}] canvas.graph-canvas`);
}

export async function clickNode(frame: Frame, side: SideName, name: string) {
  await canvas(frame, side).click({ position: await position(frame, side, name) });
  await idle(frame);
}

export async function dblclickNode(frame: Frame, side: SideName, name: string) {
  await canvas(frame, side).dblclick({ position: await position(frame, side, name) });
  await idle(frame);
}

/** Opens the node's context menu and waits for it. */
export async function rightclickNode(frame: Frame, side: SideName, name: string) {
  await canvas(frame, side).click({ button: "right", position: await position(frame, side, name) });
  await expect(frame.locator(".context-menu .menu-title")).toHaveText(name);
}

/** The file shown and the step and rank pickers. */
export async function shownFile(frame: Frame) {
  return {
    path: (await frame.evaluate(() => (window as any).graphAscend.file()?.path)) as string,
    step: await frame.locator("select[data-picker=step]").inputValue(),
    rank: await frame.locator("select[data-picker=rank]").inputValue(),
  };
}

/** Types into the search box and jumps to the hit named `name` with ↓ and Enter. */
export async function searchAndJump(frame: Frame, query: string, name: string) {
  await frame.locator(".side-tab[data-tab=search]").click();
  const input = frame.locator(".search-input");
  await input.fill(query);
  const rows = frame.locator(".search-panel .vlist-row[data-node]");
  await expect(rows.first()).toBeVisible();
  const names = await rows.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.node));
  const at = names.indexOf(name);
  expect(at, `${name} is among the hits of "${query}"`).toBeGreaterThanOrEqual(0);
  await input.focus();
  for (let i = 0; i <= at; i++) await input.press("ArrowDown");
  await input.press("Enter");
  await expect.poll(() => selectedName(frame, "npu")).toBe(name);
  await idle(frame);
}

/** Keeps a screenshot in the test's output directory (frontend/test-results/artifacts/<test>/). */
export async function shot(page: Page, info: TestInfo, name: string) {
  await page.screenshot({ path: info.outputPath(`${name}.png`) });
}

/** An item of a sample's dump.json: the real values msprobe wrote. */
export function dumpItem(sampleDir: string, apiOrModule: string): any {
  const dump = JSON.parse(readFileSync(join(SAMPLES, sampleDir, "dump.json"), "utf8"));
  const item = dump.data[apiOrModule];
  expect(item, `${apiOrModule} in ${sampleDir}/dump.json`).toBeTruthy();
  return item;
}

/** Compares a number printed by the page (6 decimals) with the dump's value. */
export function expectClose(text: string, expected: number) {
  const got = Number(text);
  expect(Number.isFinite(got), `"${text}" is a number`).toBe(true);
  expect(Math.abs(got - expected)).toBeLessThanOrEqual(1e-6 + 1e-6 * Math.abs(expected));
}
