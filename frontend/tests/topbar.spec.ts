// The top bar keeps to one line (issue 30 points 4 and 7): at 1280x720 and 1600x1000, in English and
// Chinese, on a single file and on a batch run with its step and rank pickers and the divergence walk.
// The view toggles and Fit sit under "View"; the run picker and the divergence status give way.
import { expect, type Frame, test } from "@playwright/test";
import { chooseRun, idle, openPlugin } from "./helpers";

/** The bar's visible items: one row (same line) and none past its right edge. */
async function barLayout(frame: Frame) {
  return frame.evaluate(() => {
    const bar = document.querySelector<HTMLElement>(".topbar")!;
    const b = bar.getBoundingClientRect();
    const items = Array.from(bar.children)
      .map((c) => c as HTMLElement)
      .filter((c) => c.offsetParent !== null && c.getBoundingClientRect().width > 0 && !c.matches(".spacer"))
      .map((c) => ({ name: c.className || c.tagName, r: c.getBoundingClientRect() }));
    const rowHeight = Math.max(...items.map((i) => i.r.height));
    return {
      height: b.height,
      rowHeight,
      lines: new Set(items.map((i) => Math.round(i.r.top + i.r.height / 2))).size,
      past: items.filter((i) => i.r.right > b.right + 0.5).map((i) => i.name),
      scrolls: bar.scrollWidth > bar.clientWidth,
      count: items.length,
    };
  });
}

for (const size of [
  { width: 1280, height: 720 },
  { width: 1600, height: 1000 },
]) {
  test(`the top bar is one line at ${size.width}x${size.height}, English and Chinese, single file and batch run`, async ({
    page,
  }) => {
    await page.setViewportSize(size);
    const frame = await openPlugin(page, "statistics/");
    for (const run of ["statistics/", "batch/"]) {
      await chooseRun(frame, run);
      await idle(frame);
      if (run === "batch/") {
        await expect(frame.locator("select[data-picker=rank]")).toBeVisible();
        await expect(frame.locator("select[data-picker=step]")).toBeVisible();
      }
      for (const lang of ["en", "zh"]) {
        const layout = await barLayout(frame);
        const where = `${run} ${lang}`;
        expect(layout.count, where).toBeGreaterThan(4);
        expect(layout.lines, `${where}: one line`).toBe(1);
        // Padding (6 px each side) and the border: the bar is as tall as its row.
        expect(layout.height, `${where}: one row tall`).toBeLessThanOrEqual(layout.rowHeight + 13);
        expect(layout.past, `${where}: nothing past the right edge`).toEqual([]);
        expect(layout.scrolls, `${where}: no overflow`).toBe(false);
        await frame.locator("button.lang").click();
      }
    }
    // The toggles under "View" still work: Minimap off hides the minimaps, on again shows them.
    await frame.locator("summary[data-action=view-menu]").click();
    await expect(frame.locator("input[data-toggle=minimap]")).toBeVisible();
    await expect(frame.locator("button[data-action=fit]")).toBeVisible();
    await frame.locator("input[data-toggle=minimap]").uncheck();
    await expect(frame.locator(".pane[data-side=npu] canvas.minimap")).toBeHidden();
    await frame.locator("input[data-toggle=minimap]").check();
    // A press outside closes the menu.
    await frame.locator(".pane[data-side=npu] canvas.graph-canvas").click({ position: { x: 5, y: 5 } });
    await expect(frame.locator("button[data-action=fit]")).toBeHidden();
  });
}
