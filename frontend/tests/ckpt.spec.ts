// Checkpoint similarity on the graph: the filter section lists the modules
// whose weights differ and the detail board shows a module's parameters.
// Files of scripts/test-browser.sh: samples/layer_mapping's Megatron-style dump
// (layers 0 and 1) built with --ckpt over samples/ckpt's TP 2 x PP 2
// checkpoints (written by real torch.save, four layers), and the same build
// with msprobe 26.2.0's ckpt_compare JSON of those checkpoints beside it. The
// values on the page are checked against msprobe's numbers.
import { expect, test } from "@playwright/test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SAMPLES, idle, openPlugin, selectedName, shot } from "./helpers";

type Measure = { l2: number | null; cos: number | null };
const msprobe: Record<string, Measure> = JSON.parse(readFileSync(join(SAMPLES, "ckpt/msprobe/tp2pp2.json"), "utf8"));
const moduleOf = (param: string) => param.slice(0, param.lastIndexOf("."));
// The dump has no node for the checkpoints' layers 2 and 3.
const mapped = Object.keys(msprobe).filter((n) => !/^decoder\.layers\.[23]\./.test(n));

/** Modules with a parameter beyond the tolerances, by msprobe's numbers. */
function differing(cosTol: number, l2Tol: number): Set<string> {
  return new Set(mapped.filter((n) => msprobe[n].cos! < 1 - cosTol || msprobe[n].l2! > l2Tol).map((n) => moduleOf(n)));
}

test("the weights filter lists the modules whose parameters differ and a click shows them", async ({ page }, info) => {
  const frame = await openPlugin(page, "weights/");
  await frame.locator(".side-tab[data-tab=filter]").click();
  const rows = frame.locator(".ckpt-list .ckpt-row");
  await expect(rows).toHaveCount(differing(1e-6, 0).size);
  // Worst first: the lowest cos of msprobe's numbers.
  const worst = mapped.reduce((a, b) => (msprobe[a].cos! <= msprobe[b].cos! ? a : b));
  await expect(rows.first()).toHaveAttribute("data-module", moduleOf(worst));
  await rows.first().click();
  await expect
    .poll(() => selectedName(frame, "npu"))
    .toMatch(new RegExp(`^Module\\.${moduleOf(worst)}\\.\\w+\\.forward\\.0$`));
  await idle(frame);
  const block = frame.locator("[data-kind=ckpt-weights]");
  await expect(block).toBeVisible();
  await expect(block.locator("[data-verdict]")).toHaveAttribute("data-verdict", "differs");
  const cos = Number(await block.locator("[data-value=worst-cos]").textContent());
  const l2 = Number(await block.locator("[data-value=max-l2]").textContent());
  expect(cos).toBeCloseTo(msprobe[worst].cos!, 6);
  expect(l2).toBeCloseTo(msprobe[worst].l2!, 5);
  await expect(block.locator(`tr[data-param="${worst}"]`)).toHaveCount(1);
  await shot(page, info, "weights-filter");

  // Looser tolerances: fewer modules, exactly those beyond them.
  const cosInput = frame.locator("input.ckpt-cos");
  await cosInput.fill("0.01");
  await cosInput.dispatchEvent("change");
  const l2Input = frame.locator("input.ckpt-l2");
  await l2Input.fill("0.05");
  await l2Input.dispatchEvent("change");
  const loose = differing(0.01, 0.05);
  expect(loose.size).toBeGreaterThan(0);
  expect(loose.size).toBeLessThan(differing(1e-6, 0).size);
  await expect(rows).toHaveCount(loose.size);
  const listed = await rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-module")));
  expect(new Set(listed)).toEqual(loose);
});

test("msprobe's ckpt_compare JSON beside a file is mapped onto its modules; a missing one is said", async ({
  page,
}) => {
  const frame = await openPlugin(page, "weights_beside/");
  await frame.locator(".side-tab[data-tab=filter]").click();
  const message = frame.locator("[data-kind=ckpt-message]");
  await expect(message).toContainText("weights_beside/ckpt_similarity.json");
  await expect(frame.locator(".ckpt-list .ckpt-row")).toHaveCount(differing(1e-6, 0).size);
  // A JSON that is not there: the service's error, and nothing listed.
  await frame.locator("input.ckpt-json").fill("weights_beside/none.json");
  await frame.locator("[data-action=ckpt-load]").click();
  await expect(frame.locator(".toast").filter({ hasText: "none.json" })).toHaveCount(1);
  await expect(frame.locator(".ckpt-list .ckpt-row")).toHaveCount(0);
});
