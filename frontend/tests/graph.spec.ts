// The graph: TensorBoard's tab, expansion on both sides, search and jump,
// and the detail panel's values against the sample's dump.json.
import { expect, test } from "@playwright/test";
import {
  canvas,
  chooseRun,
  counterpartName,
  dblclickNode,
  dumpItem,
  expectClose,
  idle,
  node,
  nodes,
  onScreen,
  openPlugin,
  pluginFrame,
  searchAndJump,
  selectedName,
  shot,
  waitGraph,
} from "./helpers";

test("TensorBoard shows the GRAPH_ASCEND tab and the page lists the runs", async ({ page }, info) => {
  await page.goto("/");
  const tab = page.getByRole("tab", { name: /^graph_ascend$/i });
  await expect(tab).toBeVisible();
  await tab.click();
  const frame = await pluginFrame(page);
  await waitGraph(frame, "npu");
  const runs = await frame.locator("select[data-picker=run] option").allTextContents();
  for (const dir of ["statistics/", "overflow/", "batch/", "build/"]) {
    expect(
      runs.some((r) => r.includes(dir)),
      `a run under ${dir} in ${runs.join(", ")}`,
    ).toBe(true);
  }
  await chooseRun(frame, "statistics/");
  const root = (await nodes(frame, "npu")).find((n) => n.parent === -1);
  expect(root?.name).toBe("DefaultModel");
  expect(root?.expanded).toBe(true);
  await expect(frame.locator(".pane[data-side=bench]")).toBeVisible();
  await shot(page, info, "compare-overview");
});

test("double click expands and collapses, in step on both sides when sync is on", async ({ page }, info) => {
  const frame = await openPlugin(page, "statistics/");
  const name = "Module.layer1.Sequential.forward.0";
  const before = await node(frame, "npu", name);
  expect(before?.expanded).toBe(false);
  expect(before?.expandable).toBe(true);

  await dblclickNode(frame, "npu", name);
  const npu = await node(frame, "npu", name);
  expect(npu?.expanded).toBe(true);
  const children = (await nodes(frame, "npu")).filter((n) => n.parent === npu!.index);
  expect(children.length).toBeGreaterThan(0);
  expect(children.map((c) => c.name)).toContain("Module.layer1.0.BasicBlock.forward.0");
  await expect.poll(async () => (await node(frame, "bench", name))?.expanded).toBe(true);
  await shot(page, info, "expanded-both-sides");

  await dblclickNode(frame, "bench", name);
  await expect.poll(async () => (await node(frame, "bench", name))?.expanded).toBe(false);
  await expect.poll(async () => (await node(frame, "npu", name))?.expanded).toBe(false);
  expect((await nodes(frame, "npu")).some((n) => n.name === "Module.layer1.0.BasicBlock.forward.0")).toBe(false);

  await frame.locator("summary[data-action=view-menu]").click(); // the view toggles and Fit
  await frame.locator("input[data-toggle=sync]").uncheck();
  await dblclickNode(frame, "npu", name);
  expect((await node(frame, "npu", name))?.expanded).toBe(true);
  expect((await node(frame, "bench", name))?.expanded).toBe(false);
  await dblclickNode(frame, "npu", name);
  expect((await node(frame, "npu", name))?.expanded).toBe(false);
});

test("wheel zooms, D and the up arrow pan the graph under the pointer", async ({ page }) => {
  const frame = await openPlugin(page, "statistics/");
  const view = () =>
    frame.evaluate(() => {
      const p = (window as any).graphAscend.npu;
      return { tx: p.tx, ty: p.ty, scale: p.scale };
    });
  // A click on an empty corner gives the page the keyboard, as a user's first click does.
  await canvas(frame, "npu").click({ position: { x: 4, y: 4 } });
  const box = (await canvas(frame, "npu").boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const start = await view();
  await page.mouse.wheel(0, -400);
  await expect.poll(async () => (await view()).scale).toBeGreaterThan(start.scale);
  const zoomed = await view();
  // Each key is held until the view has moved: it moves by frame, and a loaded machine may draw none
  // in a fixed quarter second.
  await page.keyboard.down("d");
  await expect.poll(async () => (await view()).tx).toBeLessThan(zoomed.tx);
  await page.keyboard.up("d");
  const panned = await view();
  await page.keyboard.down("ArrowUp");
  await expect.poll(async () => (await view()).ty).toBeGreaterThan(panned.ty);
  await page.keyboard.up("ArrowUp");
  await frame.locator("summary[data-action=view-menu]").click(); // the view toggles and Fit
  await frame.locator("button[data-action=fit]").click();
  await expect
    .poll(async () => {
      const v = await view();
      const size = await frame.evaluate(() => {
        const p = (window as any).graphAscend.npu;
        return { w: p.rootWidth * p.scale, h: p.rootHeight * p.scale, cw: p.size().width, ch: p.size().height };
      });
      return v.tx >= -1 && v.ty >= -1 && size.w <= size.cw + 1 && size.h <= size.ch + 1;
    })
    .toBe(true);
});

test("search with arrows and Enter reveals, centres and selects the node", async ({ page }, info) => {
  const frame = await openPlugin(page, "statistics/");
  const target = "Functional.conv2d.2.forward";
  expect(await node(frame, "npu", target)).toBeUndefined();
  await searchAndJump(frame, "CONV2D.2", target);
  const n = await node(frame, "npu", target);
  expect(n).toBeDefined();
  for (const ancestor of [
    "Module.layer1.Sequential.forward.0",
    "Module.layer1.0.BasicBlock.forward.0",
    "Module.layer1.0.conv2.Conv2d.forward.0",
  ]) {
    expect((await node(frame, "npu", ancestor))?.expanded, `${ancestor} expanded`).toBe(true);
  }
  await expect.poll(() => onScreen(frame, "npu", n!.index)).toBe(true);
  await expect(frame.locator(".node-badge[data-side=npu] .badge-name")).toHaveText(target);
  // The matched Bench node is revealed and highlighted too.
  await expect.poll(() => counterpartName(frame, "bench")).toBe(target);
  await shot(page, info, "search-jump");
});

test("the detail panel shows the dump's statistics of both sides and highlights errors", async ({ page }, info) => {
  const frame = await openPlugin(page, "statistics/");
  const name = "Module.conv1.Conv2d.forward.0";
  await searchAndJump(frame, name, name);
  const npuDump = dumpItem("cnn_statistics/npu/step0/rank0", name);
  const benchDump = dumpItem("cnn_statistics/bench/step0/rank0", name);
  const row = (side: string, key: string) =>
    frame.locator(`.detail-table .dt-row[data-side=${side}][data-key="${key}"]`);
  const out = `${name}.output.0`;
  await expect(row("npu", out)).toBeVisible();
  for (const stat of ["Max", "Min", "Mean", "Norm"]) {
    expectClose((await row("npu", out).locator(`[data-col=${stat}]`).textContent())!, npuDump.output[0][stat]);
    expectClose((await row("bench", out).locator(`[data-col=${stat}]`).textContent())!, benchDump.output[0][stat]);
  }
  const inp = `${name}.input.0`;
  expectClose((await row("npu", inp).locator("[data-col=Max]").textContent())!, npuDump.input_args[0].Max);
  // Every relative error above the threshold is highlighted, and only those.
  const threshold = Number(await frame.locator("input.threshold").inputValue());
  const cells = frame.locator(".detail-table .dt-row[data-side=npu] [data-col$=RelativeErr]");
  const count = await cells.count();
  expect(count).toBeGreaterThan(0);
  for (let i = 0; i < count; i++) {
    const text = (await cells.nth(i).textContent())!.trim();
    const value = text.endsWith("%") ? Number(text.slice(0, -1)) / 100 : Number(text);
    if (Number.isNaN(value)) continue;
    await expect(cells.nth(i)).toHaveClass(value > threshold ? /\bbad\b/ : /^(?!.*\bbad\b)/);
  }
  await frame.locator("button.tab[data-tab=info]").click();
  await expect(frame.locator(".info-text[data-kind=stack]").first()).not.toBeEmpty();
  await frame.locator("button.tab[data-tab=detail]").click();
  await idle(frame);
  await shot(page, info, "detail-panel");
  expect(await selectedName(frame, "npu")).toBe(name);
});
