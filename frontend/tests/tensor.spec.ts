// The tensor view (TensorView): on a task "tensor" compare built by scripts/test-browser.sh from the
// log directory's copy of samples/gpt_tensor (tensor/), the detail board's item row opens the
// element-level comparison of its two .pt files. The numbers are torch's: the embedding table's
// gradient (64 tokens x 16) is non-zero only on the 3 input tokens' rows, its worst element is
// [2, 12] (npu -0.041107, bench -0.07923, |diff| 0.038123).
import { expect, test } from "@playwright/test";
import { openPlugin, searchAndJump, shot } from "./helpers";

const NODE = "Functional.embedding.0.backward";

test("Tensor view shows the worst elements, histograms, heatmap and masks padded rows", async ({ page }, info) => {
  const frame = await openPlugin(page, "tensor/");
  await searchAndJump(frame, NODE, NODE);
  const row = frame.locator(`.detail-table .dt-row[data-key="${NODE}.output.0"][data-side=npu]`);
  await row.locator("button[data-action=tensor-view]").click();
  const view = frame.locator("[data-dialog=tensor-view]");
  await expect(view).toBeVisible();
  await expect(view.locator("[data-tensor=max-abs]")).toHaveText("0.038123");
  await expect(view.locator("[data-tensor=files]")).toContainText("dumps/gpt_tensor/npu/step0/rank0/dump_tensor_data/");
  await expect(view.locator("[data-tensor=files]")).toContainText("shape [64, 16] · f4");
  const worst = view.locator("[data-tensor=worst] tbody tr");
  await expect(worst).toHaveCount(20);
  await expect(worst.first()).toHaveAttribute("data-index", "2,12");
  await expect(worst.first()).toContainText("-0.041107");
  await expect(view.locator("[data-tensor=non-finite]")).toContainText("NaN 0");
  // 976 of the 1024 errors are exactly 0: the first bar.
  await expect(view.locator("[data-tensor=abs-hist] .tensor-bar").first()).toHaveAttribute("data-count", "976");
  // 16 columns of 24 px, 64 rows of 6 px.
  await expect(view.locator("canvas[data-tensor=heatmap]")).toHaveAttribute("width", "384");
  await expect(view.locator("canvas[data-tensor=heatmap]")).toHaveAttribute("height", "384");
  await shot(page, info, "tensor-view");

  // Rows that are 0 on both sides (tokens not in the input) masked: 61 of 64.
  await view.locator("select[data-select=mask-kind]").selectOption("value");
  await view.locator("button[data-action=tensor-apply]").click();
  await expect(view.locator("[data-tensor=masked-rows]")).toHaveText("61 of 64 rows masked");
  await expect(view.locator("[data-tensor=abs-hist] .tensor-bar").first()).toHaveAttribute("data-count", "0");
  await expect(view.locator("[data-tensor=max-abs]")).toHaveText("0.038123");

  await view.locator("button[data-action=tensor-close]").click();
  await expect(view).toBeHidden();
});
