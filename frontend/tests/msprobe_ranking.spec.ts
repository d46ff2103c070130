// msprobe's own files (issue 29 points 1 and 6): a .vis.db of msprobe 26.2.0 and a JSON .vis of msprobe
// 8.1.2, converted by the service, have a divergence ranking: "First divergence" lands on its first entry
// and next walks it. A compare that cannot be ranked (its match links taken out) says why, in full,
// wrapped. A single compare given by its dump roots (one rank folder) shows as one graph: no step or
// rank picker, no rank overview.
import { expect, type Frame, type Route, test } from "@playwright/test";

import { idle, openPlugin, selectedName, shot } from "./helpers";

/** The divergence walk's state once the ranking has come (the service waits for the node details). */
async function rankedCount(frame: Frame): Promise<number> {
  const nav = frame.locator(".divergence-nav");
  await expect
    .poll(async () => Number((await nav.getAttribute("data-count")) ?? "0"), { timeout: 30_000 })
    .toBeGreaterThan(0);
  return Number(await nav.getAttribute("data-count"));
}

async function current(frame: Frame): Promise<string | null> {
  return frame.evaluate(() => (window as any).graphAscend.divergence.current()?.name ?? null);
}

for (const run of ["msprobe26/", "msprobe81/"]) {
  test(`${run}: first divergence and next walk the ranking computed when msprobe's file was converted`, async ({
    page,
  }, info) => {
    const frame = await openPlugin(page, run);
    const count = await rankedCount(frame);
    await expect(frame.locator(".divergence-status")).not.toHaveClass(/\bunranked\b/);
    const first = frame.locator("button[data-action=first-divergence]");
    await expect(first).toBeEnabled();
    await first.click();
    await idle(frame);
    const name = await current(frame);
    expect(name).toBeTruthy();
    expect(await selectedName(frame, "npu")).toBe(name);
    await expect(frame.locator(".divergence-status")).toContainText(`1/${count}`);
    if (count > 1) {
      await frame.locator("button[data-action=next-divergence]").click();
      await idle(frame);
      const second = await current(frame);
      expect(second).not.toBe(name);
      expect(await selectedName(frame, "npu")).toBe(second);
      await frame.locator("button[data-action=prev-divergence]").click();
      await idle(frame);
      expect(await selectedName(frame, "npu")).toBe(name);
    }
    await shot(page, info, `msprobe-first-divergence-${run.replace("/", "")}`);
  });
}

test("while a converted file's ranking comes, the walk says so instead of saying there is none", async ({ page }) => {
  const frame = await openPlugin(page, "statistics/");
  // Hold the ranking, as a big .vis.db's waits on the service's whole read of it.
  const held: Route[] = [];
  await page.route(/\/data\/plugin\/graph_ascend\/api\/GetDivergence$/, (route) => {
    held.push(route);
  });
  const picker = frame.locator("select[data-picker=run]");
  const label = (await picker.locator("option").allTextContents()).find((t) => t.includes("msprobe26/"));
  expect(label, "a run containing msprobe26/").toBeTruthy();
  await picker.selectOption({ label: label! });
  await expect.poll(() => held.length).toBe(1);
  const status = frame.locator(".divergence-status");
  await expect(status).toHaveText("Ranking divergences…");
  await expect(status).toHaveClass(/\branking\b/);
  await expect(status).not.toHaveClass(/\bunranked\b/);
  await expect(frame.locator("button[data-action=first-divergence]")).toBeDisabled();
  await held[0].continue();
  const count = await rankedCount(frame);
  await expect(status).not.toHaveClass(/\branking\b/);
  await expect(status).toHaveText(count === 1 ? "1 divergence" : `${count} divergences`);
});

test("a converted compare that cannot be ranked says why, in full", async ({ page }, info) => {
  const frame = await openPlugin(page, "msprobe_unmatched/");
  const status = frame.locator(".divergence-status");
  await expect(status).toHaveClass(/\bunranked\b/, { timeout: 30_000 });
  await expect(status).toHaveText(
    "No divergence ranking: no node of the two runs is matched, so no pair's metrics say where they part",
  );
  await expect(frame.locator("button[data-action=first-divergence]")).toBeDisabled();
  // Not cut off: the whole text is inside the box (it wraps instead).
  const fits = await status.evaluate(
    (el) => el.scrollWidth <= el.clientWidth + 1 && getComputedStyle(el).whiteSpace !== "nowrap",
  );
  expect(fits).toBe(true);
  await shot(page, info, "msprobe-unranked-reason");
});

test("a single compare of one rank folder shows as one graph: no step or rank picker, no overview", async ({
  page,
}) => {
  const frame = await openPlugin(page, "single/");
  const path = await frame.evaluate(() => (window as any).graphAscend.file()?.path as string);
  expect(path).toMatch(/^single\/compare_rank0_\d+\.vis$/);
  await expect(frame.locator("select[data-picker=step]")).toBeHidden();
  await expect(frame.locator("select[data-picker=rank]")).toBeHidden();
  await expect(frame.locator("button[data-action=overview]")).toBeHidden();
  // It is a compare all the same: the divergence walk is there.
  await rankedCount(frame);
});
