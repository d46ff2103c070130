// The rank overview on msprobe's own batch .vis.db (real msprobe 26.2.0, samples/dist_gloo/batch.json:
// 2 steps x 2 ranks in one file; issue 29 point 2: it stayed on "Reading the run's files…" while the
// service answered 404 for "…vis.db#step0_rank0"), and dialogs that show the error they receive.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

import { expect, type Frame, test } from "@playwright/test";
import { idle, openPlugin, shot, SAMPLES } from "./helpers";

const LOGDIR = process.env.GA_LOGDIR ?? "";
const DB = join(SAMPLES, "../tests/data/msprobe_outputs/dist_gloo_batch_26.2.0.vis.db");

const cell = (frame: Frame, step: string, rank: string) =>
  frame.locator(`.overview .ov-cell[data-step="${step}"][data-rank="${rank}"]`);

test("the rank overview of a .vis.db of msprobe 26.2.0 shows its four graphs and opens one", async ({ page }, info) => {
  const frame = await openPlugin(page, "msprobe26/");
  await frame.locator("button[data-action=overview]").click();
  await expect(frame.locator(".overview")).toBeVisible();
  await expect(frame.locator(".overview .ov-head .ov-step")).toHaveText(["step0", "step1"]);
  await expect(frame.locator(".overview .vlist-row[data-rank]")).toHaveCount(2);
  for (const step of ["step0", "step1"]) {
    for (const rank of ["rank0", "rank1"]) {
      await expect(cell(frame, step, rank), `${step} ${rank}`).toHaveAttribute("data-file", /#step\d_rank\d$/);
      await expect(cell(frame, step, rank), `${step} ${rank}`).not.toHaveAttribute("data-state", "error");
    }
  }
  await expect(frame.locator(".overview [data-dialog-error]")).toBeHidden();
  await expect(frame.locator(".overview-origin")).not.toContainText("Reading");
  await shot(page, info, "rank-overview-vis-db");
  await cell(frame, "step1", "rank1").click();
  await expect(frame.locator(".overview")).toBeHidden();
  await expect
    .poll(() => frame.evaluate(() => (window as any).graphAscend.file()?.path ?? ""))
    .toBe("msprobe26/compare_dist_gloo.vis.db#step1_rank1");
  await idle(frame);
});

test("the overview shows the error the service answers, in the dialog", async ({ page }) => {
  test.skip(!LOGDIR, "GA_LOGDIR is set by scripts/test-browser.sh");
  const dir = join(LOGDIR, "gone");
  mkdirSync(dir, { recursive: true });
  copyFileSync(DB, join(dir, "compare_gone.vis.db"));
  try {
    const frame = await openPlugin(page, "gone/");
    await idle(frame);
    // The file leaves the log directory while its graph is on screen: every request naming it now fails.
    rmSync(join(dir, "compare_gone.vis.db"));
    await frame.locator("button[data-action=overview]").click();
    const overviewError = frame.locator(".overview [data-dialog-error]");
    await expect(overviewError).toBeVisible();
    await expect(overviewError).toContainText("gone/compare_gone.vis.db");
    await expect(overviewError).toContainText("no such file");
    await expect(frame.locator(".overview-origin")).toBeHidden();
    await frame.locator("button[data-action=overview-close]").click();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the colours dialog shows the error the service answers, in the dialog", async ({ page }) => {
  test.skip(!LOGDIR, "GA_LOGDIR is set by scripts/test-browser.sh");
  // A compare graded by the precision index (msprobe 26's grades cannot be edited): a copy of cnn_statistics'.
  const built = readdirSync(join(LOGDIR, "statistics")).find((f) => f.endsWith(".vis"));
  expect(built, "the statistics compare built by test-browser.sh").toBeTruthy();
  const dir = join(LOGDIR, "gone_vis");
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(LOGDIR, "statistics", built!), join(dir, "gone.vis"));
  try {
    const frame = await openPlugin(page, "gone_vis/");
    await idle(frame);
    rmSync(join(dir, "gone.vis"));
    await frame.locator("button[data-action=thresholds]").click();
    const dialog = frame.locator("[data-dialog=thresholds]");
    await expect(dialog).toBeVisible();
    await dialog.locator("button[data-action=apply]").click();
    await expect(dialog.locator("[data-dialog-error]")).toContainText("no such file");
    await expect(dialog).toBeVisible();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
