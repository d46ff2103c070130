// Words (issue 30 point 7): the in-page guide is written for a wheel user, Chinese covers the grading
// switch, the divergence count says what it counts, the rank overview says "◆ origin" on the run's
// origin only, the Convert dialog drops an old error once the form changes, and the top bar of a batch
// run stays on one line at 1600 px.
import { expect, type Frame, test } from "@playwright/test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { chooseRun, idle, openPlugin } from "./helpers";

const LOGDIR = process.env.GA_LOGDIR ?? "";
const OUT = "zz_words";

test.afterAll(() => {
  if (LOGDIR) rmSync(join(LOGDIR, OUT), { recursive: true, force: true });
});

async function guideText(frame: Frame): Promise<string> {
  await frame.locator("button[data-action=guide]").click();
  const guide = frame.locator(".help-overlay .guide");
  await expect(guide).toBeVisible();
  const text = (await guide.textContent()) ?? "";
  await frame.locator(".help-overlay button[data-action=close-help]").click();
  return text;
}

test("the guide reads for a wheel user, in English and Chinese", async ({ page }) => {
  const frame = await openPlugin(page);
  for (const lang of ["en", "zh"]) {
    const text = await guideText(frame);
    expect(text.length, `${lang} guide`).toBeGreaterThan(500);
    expect(text, `${lang}: no doc-test comments`).not.toContain("<!--");
    expect(text, `${lang}: no developer install`).not.toMatch(/install-plugin\.sh|\.venv|plugin\/python/);
    expect(text, `${lang}: how to start`).toContain("tensorboard --logdir");
    if (lang === "en") await frame.locator("button.lang").click();
  }
  await frame.locator("button.lang").click();
});

test("Chinese names the grading switch and its options", async ({ page }) => {
  const frame = await openPlugin(page, "graded/");
  const toggle = frame.locator(".grading-toggle");
  await expect(toggle).toBeVisible();
  await frame.locator("button.lang").click();
  try {
    await expect(toggle.locator("label > span")).toHaveText("精度评级");
    const options = await toggle.locator("option").allTextContents();
    for (const o of options) expect(o, "a Chinese option").toMatch(/[\u4e00-\u9fff]/);
  } finally {
    await frame.locator("button.lang").click();
  }
  await expect(toggle.locator("label > span")).toHaveText("Grading");
});

test("the divergence count beside ‹ › says what it counts", async ({ page }) => {
  const frame = await openPlugin(page, "gpt/");
  const status = frame.locator(".divergence-nav .divergence-status");
  const n = Number(await frame.locator(".divergence-nav").getAttribute("data-count"));
  expect(n).toBeGreaterThan(1);
  await expect(status).toHaveText(`${n} divergences`);
});

test("the overview says ◆ origin on the run's origin only", async ({ page }) => {
  const frame = await openPlugin(page, "origin/");
  await frame.locator("button[data-action=overview]").click();
  await expect(frame.locator(".overview-origin")).toHaveAttribute("data-origin", /rank/);
  const cells = frame.locator(".ov-cell[data-state=origin]");
  await expect(cells.first()).toBeVisible();
  const marks = await cells.evaluateAll((els) =>
    els.map((e) => ({
      job: e.getAttribute("data-job-origin") !== null,
      mark: e.querySelector(".ov-mark")!.textContent,
    })),
  );
  expect(marks.some((m) => m.job)).toBe(true);
  for (const m of marks) expect(m.mark).toBe(m.job ? "◆ origin" : "◆ diverges");
});

test("the Convert dialog drops an old error once the form changes", async ({ page }) => {
  test.skip(!LOGDIR, "GA_LOGDIR is set by scripts/test-browser.sh");
  const frame = await openPlugin(page);
  await frame.locator("button[data-action=convert]").click();
  await frame.locator("select[data-convert=npu]").selectOption("dumps/bad");
  await frame.locator("select[data-convert=bench]").selectOption("");
  await frame.locator("input[data-convert=output]").fill(`${OUT}/bad`);
  await expect(frame.locator("[data-convert=plan]")).toHaveAttribute("data-kind", "build");
  await frame.locator("button[data-action=convert-start]").click();
  const error = frame.locator("[data-convert=error]");
  await expect(error).toContainText("dumps/bad/dump.json", { timeout: 60_000 });
  await frame.locator("input[data-convert=output]").fill(`${OUT}/other`);
  await expect(error).toHaveText("");
});

test("the top bar of a batch run stays on one line at 1600 px", async ({ page }) => {
  await page.setViewportSize({ width: 1600, height: 1000 });
  const frame = await openPlugin(page);
  await chooseRun(frame, "batch/");
  await idle(frame);
  const centres = await frame.locator("header.topbar > *:not([hidden])").evaluateAll((els) =>
    els
      .filter((e) => (e as HTMLElement).offsetParent !== null && e.getBoundingClientRect().width > 0)
      .map((e) => {
        const r = e.getBoundingClientRect();
        return (r.top + r.bottom) / 2;
      }),
  );
  expect(centres.length).toBeGreaterThan(8);
  expect(Math.max(...centres) - Math.min(...centres), "the top bar's items on one row").toBeLessThanOrEqual(6);
});
