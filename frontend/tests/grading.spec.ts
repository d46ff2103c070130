// The grading switch on a graph_visualize file (samples/gpt_statistics):
// msprobe 26's pass / warning / error first, msprobe 8.x's index on demand;
// a known node changes colour, and the legend and filters follow.
import { expect, test } from "@playwright/test";
import { idle, node, openPlugin, shot } from "./helpers";

// The LM head's forward: its output's statistics differ a little (index
// 0.0002, the lightest index bucket) while msprobe 26 grades it a warning
// (the output's relative error is over ten times the input's, which is 0).
const NODE = "Module.lm_head.Linear.forward.0";

async function colourOf(frame: import("@playwright/test").Frame, name: string): Promise<string> {
  const n = await node(frame, "npu", name);
  expect(n, `${name} is drawn`).toBeTruthy();
  return frame.evaluate((b) => (window as any).graphAscend.info().meta.legend[b]?.color ?? "", n!.bucket);
}

test("the grading switch recolours a node, and the legend and filters follow", async ({ page }, info) => {
  const frame = await openPlugin(page, "graded/");
  const toggle = frame.locator("select.grading");
  await expect(toggle).toBeVisible();
  await expect(toggle).toHaveValue("GRADING_26");
  const names = () => frame.evaluate(() => (window as any).graphAscend.info().meta.legend.map((b: any) => b.name));
  expect(await names()).toEqual(["pass", "warning", "error", "unmatched"]);
  expect(await colourOf(frame, NODE)).toBe("#FFDC7F");
  await expect(frame.locator('.legend-item[data-bucket="warning"]')).toBeVisible();

  await toggle.selectOption("GRADING_INDEX");
  await idle(frame);
  expect(await names()).toContain("0-0.2");
  expect(await colourOf(frame, NODE)).toBe("#FFFCF3");
  await expect(frame.locator('.legend-item[data-bucket="0-0.2"]')).toBeVisible();
  await shot(page, info, "grading-index");

  // Back to msprobe 26's grading: the error filter lists nodes graded error.
  await toggle.selectOption("GRADING_26");
  await idle(frame);
  expect(await colourOf(frame, NODE)).toBe("#FFDC7F");
  await frame.locator(".side-tab[data-tab=filter]").click();
  const errors: number = await frame.evaluate(
    () => (window as any).graphAscend.info().npu.buckets.find((x: any) => x.bucket === 2)?.count ?? 0,
  );
  expect(errors).toBeGreaterThan(0);
  await frame.locator('.filter-panel input[data-bucket="2"]').check();
  await expect(frame.locator(".hitlist[data-list=precision] .count")).toHaveText(`(${errors})`);
  await shot(page, info, "grading-26");
});
