// More than two runs (issue 33 point 4): samples/repeat_runs built by scripts/test-browser.sh
// (`graph -i runs.json -o repeat`) writes repeat/run1/ and repeat/run2/ (each run against run 0) and
// repeat/runs.json. Run 1's file says which run it shows against which reference, the runs' summary of
// its step and rank, jumps to where they first disagree, and the picker switches to run 2.
import { expect, test } from "@playwright/test";
import { openPlugin, selectedName, shot, waitGraph } from "./helpers";

const FIRST = "Module.pool.Pool.forward.0";

test("a run of a runs output shows its reference, the runs' summary and a run picker", async ({ page }, info) => {
  const frame = await openPlugin(page, "repeat/run1/");
  const strip = frame.locator("[data-role=repeat-runs]");
  await expect(strip).toBeVisible();
  await expect(strip.locator(".repeat-runs-label")).toHaveText(/^Run 1 \(NPU\) against run 0, the reference \(Bench\)/);
  await expect(strip.locator(".repeat-runs-summary")).toHaveText(
    new RegExp(
      `^step0 rank0: first disagreement at ${FIRST.replaceAll(".", "\\.")} \\(entry 5\\), output\\.0 Max: spread`,
    ),
  );
  await expect(frame.locator(".pane[data-side=npu] .pane-title")).toHaveText("NPU · run 1");
  await expect(frame.locator(".pane[data-side=bench] .pane-title")).toHaveText("Bench · run 0 (reference)");
  const picker = strip.locator("select.repeat-runs-picker");
  await expect(picker).toHaveValue("1");
  await expect(picker.locator("option[value='0']")).toBeDisabled();

  await strip.locator("button.repeat-runs-jump").click();
  await expect.poll(() => selectedName(frame, "npu")).toBe(FIRST);
  await shot(page, info, "repeat-runs");

  await picker.selectOption("2");
  await expect
    .poll(() => frame.evaluate(() => (window as any).graphAscend.file()?.path ?? ""))
    .toMatch(/^repeat\/run2\/compare_step0_rank0_\d+\.vis$/);
  await waitGraph(frame, "npu");
  await expect(picker).toHaveValue("2");
  await expect(strip.locator(".repeat-runs-label")).toHaveText(/^Run 2 \(NPU\) against run 0/);
  await expect(frame.locator(".pane[data-side=npu] .pane-title")).toHaveText("NPU · run 2");
  await expect(strip.locator(".repeat-runs-summary")).toContainText(`first disagreement at ${FIRST}`);
});

test("an ordinary compare has no runs strip", async ({ page }) => {
  const frame = await openPlugin(page, "statistics/");
  await expect(frame.locator("[data-role=repeat-runs]")).toBeHidden();
  await expect(frame.locator(".pane[data-side=npu] .pane-title")).toHaveText("NPU");
});
