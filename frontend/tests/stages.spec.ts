// A stages layout (verl's step_<N>/<stage>, docs/FORMAT.md "Stages"): each stage is a run of its own, and the
// stage picker moves between the stages of one conversion. The log directory's stages/ is
// `graph -i samples/rl_stages/batch.json` (scripts/test-browser.sh).
import { expect, test } from "@playwright/test";
import { chooseRun, openPlugin } from "./helpers";

const STAGES = [
  "step_1.actor_compute_log_prob",
  "step_1.actor_update",
  "step_1.ref_compute_log_prob",
  "step_2.actor_compute_log_prob",
  "step_2.actor_update",
  "step_2.ref_compute_log_prob",
];

const file = (frame: import("@playwright/test").Frame) =>
  frame.evaluate(() => ((window as any).graphAscend.file()?.path ?? "") as string);

test("the stage picker lists the stages of the conversion and opens the one chosen", async ({ page }) => {
  const frame = await openPlugin(page);
  const picker = frame.locator("select[data-picker=stage]");
  await chooseRun(frame, "_step_1.ref_compute_log_prob.vis");
  await expect(picker).toBeVisible();
  expect(await picker.locator("option").allTextContents()).toEqual(STAGES);
  await expect(picker).toHaveValue("step_1.ref_compute_log_prob");

  await picker.selectOption("step_2.actor_update");
  await expect.poll(() => file(frame)).toMatch(/^stages\/compare_step0_rank0_\d+_step_2\.actor_update\.vis$/);
  await expect(picker).toHaveValue("step_2.actor_update");
  // The run picker follows: the stage is a run of its own.
  const run = await frame.locator("select[data-picker=run]").inputValue();
  expect(run).toMatch(/^stages\/compare_\d+_step_2\.actor_update$/);
  // Each stage holds one graph (step0 of rank0): a single graph, so no step or rank to pick.
  await expect(frame.locator("select[data-picker=step]")).toBeHidden();

  // A file without a stage shows no stage picker.
  await chooseRun(frame, "statistics/");
  await expect(picker).toBeHidden();
});
