// The detail board at a laptop's 1280x720 (issue 30 point 2): "Differences first" brings the rows that
// differ to the top with name, dtype and shape in view, the board has room for several rows, and the
// threshold says it is a fraction while the table prints relative errors in %.
import { expect, type Frame, type Locator, test } from "@playwright/test";
import { idle, openPlugin, selectedName, shot } from "./helpers";

const CULPRIT = "Functional.linear.11.forward";

/** Whether `el` lies wholly inside the table's scrolled viewport (not under the sticky header). */
async function inView(frame: Frame, el: Locator): Promise<boolean> {
  const table = (await frame.locator(".detail-table").boundingBox())!;
  const box = await el.boundingBox();
  if (!box) return false;
  return (
    box.x >= table.x - 0.5 &&
    box.x + box.width <= table.x + table.width + 0.5 &&
    box.y >= table.y + 23 &&
    box.y + box.height <= table.y + table.height + 0.5
  );
}

test("differences first puts the culprit's differing output row on top, with dtype and shape in view, at 1280x720", async ({
  page,
}, info) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  const frame = await openPlugin(page, "gpt/");
  await frame.locator("button[data-action=first-divergence]").click();
  await idle(frame);
  expect(await selectedName(frame, "npu")).toBe(CULPRIT);
  // Room for the table: at least six rows of 24 px below its header.
  const tableBox = (await frame.locator(".detail-table").boundingBox())!;
  expect(tableBox.height - 24).toBeGreaterThanOrEqual(6 * 24);

  await frame.locator("input[data-toggle=differences-first]").check();
  const rows = frame.locator(".detail-table .dt-row.vlist-row[data-key]");
  await expect(rows.first()).toHaveAttribute("data-key", `${CULPRIT}.output.0`);
  await expect(rows.first()).toHaveAttribute("data-side", "npu");
  const first = rows.first();
  for (const col of ["name", "dtype", "shape"]) {
    await expect
      .poll(() => inView(frame, first.locator(`[data-col=${col}]`)), `${col} of the first row in view`)
      .toBe(true);
  }
  await expect(first.locator("[data-col=dtype]")).toHaveClass(/\bchanged\b/);
  // Its Bench partner follows it.
  await expect(rows.nth(1)).toHaveAttribute("data-key", `${CULPRIT}.output.0`);
  await expect(rows.nth(1)).toHaveAttribute("data-side", "bench");
  // Rows that do not differ come after every row that does: no highlighted cell below the first plain pair.
  const flags = await rows.evaluateAll((els) =>
    els.map((e) => e.querySelector(".dt-cell.bad, .dt-cell.changed") !== null || !e.querySelector(".dot.matched")),
  );
  const firstPlain = flags.findIndex((f, i) => !f && !flags[i ^ 1]);
  if (firstPlain >= 0) expect(flags.slice(firstPlain + 2).some((f) => f)).toBe(false);
  await shot(page, info, "detail-1280");

  // Unchecked, the rows keep the dump's order: inputs first.
  await frame.locator("input[data-toggle=differences-first]").uncheck();
  await expect(rows.first()).toHaveAttribute("data-key", `${CULPRIT}.input.0`);
});

test("the highlight threshold states its unit in %", async ({ page }) => {
  const frame = await openPlugin(page, "gpt/");
  await frame.locator("button[data-action=first-divergence]").click();
  await idle(frame);
  const input = frame.locator("input.threshold");
  const unit = frame.locator(".threshold-label .threshold-unit");
  const value = Number(await input.inputValue());
  await expect(unit).toHaveText(`= ${Number((value * 100).toPrecision(6))}%`);
  await input.fill("0.05");
  await expect(unit).toHaveText("= 5%");
  await expect(input).toHaveAttribute("title", /50%/);
});
