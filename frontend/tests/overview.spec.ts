// The rank overview (docs/OVERVIEW.md) on samples/rank_origin: 4 ranks on gloo by real torch and
// msprobe, rank 2's LayerNorm perturbed. The overview names rank 2 as the origin, marks ranks 0, 1
// and 3 as diverging at the all_gather from rank 2, and a click on a cell lands on that rank's
// first divergence.
import { expect, type Frame, test } from "@playwright/test";
import { chooseRun, idle, openPlugin, selectedName, shot } from "./helpers";

const cell = (frame: Frame, step: string, rank: string) =>
  frame.locator(`.overview .ov-cell[data-step="${step}"][data-rank="${rank}"]`);

async function openOverview(frame: Frame) {
  await chooseRun(frame, "origin/");
  await frame.locator("button[data-action=overview]").click();
  await expect(frame.locator(".overview")).toBeVisible();
  await idle(frame);
}

test("the rank overview names the rank where the divergence started", async ({ page }, info) => {
  const frame = await openPlugin(page);
  await openOverview(frame);
  const origin = frame.locator(".overview-origin");
  await expect(origin).toHaveAttribute("data-origin", "rank2");
  await expect(origin).toContainText("rank2");
  await expect(origin).toContainText("step0");
  await expect(origin).toContainText("Functional.layer_norm.0.forward");
  // The grid: 2 steps as columns, 4 ranks as rows.
  await expect(frame.locator(".overview .ov-head .ov-step")).toHaveText(["step0", "step1"]);
  await expect(frame.locator(".overview .vlist-row[data-rank]")).toHaveCount(4);
  await expect(cell(frame, "step0", "rank2")).toHaveAttribute("data-state", "origin");
  await expect(cell(frame, "step0", "rank2")).toHaveAttribute("data-job-origin", "");
  await expect(cell(frame, "step0", "rank2").locator(".ov-first")).toHaveText("Functional.layer_norm.0.forward");
  for (const rank of ["rank0", "rank1", "rank3"]) {
    const c = cell(frame, "step0", rank);
    await expect(c, rank).toHaveAttribute("data-state", "from-peer");
    await expect(c.locator(".ov-first"), rank).toHaveText("Distributed.all_gather.0.forward");
    await expect(c.locator(".ov-mark"), rank).toContainText("rank2");
  }
  // Each diverging cell is coloured by its worst bucket, from the run's legend.
  const swatch = await cell(frame, "step0", "rank2")
    .locator(".swatch")
    .evaluate((el) => getComputedStyle(el).backgroundColor);
  expect(swatch).not.toBe("rgba(0, 0, 0, 0)");
  await shot(page, info, "rank-overview");
});

test("a click on a cell opens that rank's graph at its first divergence", async ({ page }) => {
  const frame = await openPlugin(page);
  await openOverview(frame);
  await cell(frame, "step0", "rank2").click();
  await expect(frame.locator(".overview")).toBeHidden();
  await expect
    .poll(() => frame.evaluate(() => (window as any).graphAscend.file()?.path ?? ""))
    .toContain("step0_rank2");
  await idle(frame);
  await expect.poll(() => selectedName(frame, "npu")).toBe("Functional.layer_norm.0.forward");
  expect(await frame.evaluate(() => (window as any).graphAscend.divergence.current()?.name)).toBe(
    "Functional.layer_norm.0.forward",
  );

  // Another rank's cell: its own file, at the all_gather that brought rank 2's data.
  await frame.locator("button[data-action=overview]").click();
  await idle(frame);
  await expect(cell(frame, "step0", "rank2")).toHaveAttribute("data-current", "");
  await cell(frame, "step0", "rank3").click();
  await expect
    .poll(() => frame.evaluate(() => (window as any).graphAscend.file()?.path ?? ""))
    .toContain("step0_rank3");
  await idle(frame);
  await expect.poll(() => selectedName(frame, "npu")).toBe("Distributed.all_gather.0.forward");
  await expect(frame.locator("select[data-picker=rank]")).toHaveValue("rank3");

  // The origin button of the summary line goes straight to the origin.
  await frame.locator("button[data-action=overview]").click();
  await idle(frame);
  await frame.locator("button[data-action=overview-origin]").click();
  await expect
    .poll(() => frame.evaluate(() => (window as any).graphAscend.file()?.path ?? ""))
    .toContain("step0_rank2");
  await idle(frame);
  await expect.poll(() => selectedName(frame, "npu")).toBe("Functional.layer_norm.0.forward");
});

test("the overview button shows only for a batch compare", async ({ page }) => {
  const frame = await openPlugin(page, "statistics/");
  await expect(frame.locator("button[data-action=overview]")).toBeHidden();
  await chooseRun(frame, "origin/");
  await expect(frame.locator("button[data-action=overview]")).toBeVisible();
});
