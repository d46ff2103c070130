// msprobe's own .vis.db (made by real msprobe 26.2.0 from samples/dist_gloo/batch.json): listed with
// its steps and ranks as the pickers, opened, searched, and the jump reveals the node on both sides.
import { expect, test } from "@playwright/test";

import { counterpartName, openPlugin, searchAndJump, shot, shownFile } from "./helpers";

test("a .vis.db of msprobe 26.2.0 opens with its steps and ranks and search jumps to a node", async ({
  page,
}, info) => {
  const frame = await openPlugin(page, "msprobe26/");
  const shown = await shownFile(frame);
  expect(shown.path).toContain("msprobe26/compare_dist_gloo.vis.db#");
  const ranks = await frame.locator("select[data-picker=rank] option").allTextContents();
  expect(ranks.join(" ")).toContain("rank1");
  const steps = await frame.locator("select[data-picker=step] option").allTextContents();
  expect(steps.join(" ")).toContain("step1");
  const target = "Distributed.all_reduce.0.forward";
  await searchAndJump(frame, "all_reduce.0", target);
  await expect.poll(() => counterpartName(frame, "bench")).toBe(target);
  await shot(page, info, "vis-db-search-jump");
});
