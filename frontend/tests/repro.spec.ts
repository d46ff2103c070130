// "Repro script" in the node details (ReproScript): on an API node of a graph
// whose dump lies in the log directory (repro/, built by scripts/test-browser.sh
// from the log directory's copy of samples/gpt_statistics), the page saves the
// extracted dump entries and graph-ascend op_generate's script for that node;
// a graph built from a dump outside the log directory says why it cannot.
import { type Download, type Frame, type Page, expect, test } from "@playwright/test";
import { readFileSync } from "node:fs";
import { dumpItem, openPlugin, searchAndJump } from "./helpers";

const API = "Functional.linear.0";

async function saved(download: Download): Promise<string> {
  return readFileSync((await download.path())!, "utf-8");
}

/** Clicks "Repro script" and returns the two downloads by file name. */
async function repro(page: Page, frame: Frame): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const both = new Promise<void>((resolve) => {
    page.on("download", async (d) => {
      files.set(d.suggestedFilename(), await saved(d));
      if (files.size === 2) resolve();
    });
  });
  await frame.locator("button[data-action=repro-script]").click();
  await both;
  return files;
}

test("Repro script saves the extracted entries and the forward and backward scripts of an API node", async ({
  page,
}) => {
  const frame = await openPlugin(page, "repro/");
  await searchAndJump(frame, `${API}.forward`, `${API}.forward`);
  const direction = frame.locator("select[data-select=repro-direction]");
  await expect(direction).toHaveValue("forward");

  let files = await repro(page, frame);
  expect([...files.keys()].sort()).toEqual([`${API}.forward.py`, `${API}.json`]);
  const extract = JSON.parse(files.get(`${API}.json`)!);
  expect(Object.keys(extract).sort()).toEqual([`${API}.backward`, `${API}.forward`]);
  // The entries are the dump's own (data_name paths aside: there are none in a statistics dump).
  expect(extract[`${API}.forward`]).toEqual(dumpItem("gpt_statistics/npu/step0/rank0", `${API}.forward`));
  expect(extract[`${API}.backward`]).toEqual(dumpItem("gpt_statistics/npu/step0/rank0", `${API}.backward`));
  const forward = files.get(`${API}.forward.py`)!;
  expect(forward).toContain(`# Reproduces ${API} (forward) from dump.json, written by graph-ascend op_generate.`);
  expect(forward).toContain('"api": "torch.nn.functional.linear"');
  expect(forward).toContain('"propagation": "forward"');
  expect(forward).toContain('"data_mode": "random_data"');
  await expect(frame.locator(".toast").last()).toContainText(`${API}.forward.py`);

  await direction.selectOption("backward");
  files = await repro(page, frame);
  expect([...files.keys()].sort()).toEqual([`${API}.backward.py`, `${API}.json`]);
  expect(files.get(`${API}.backward.py`)!).toContain('"propagation": "backward"');
});

test("Repro script on a graph whose dump is outside the log directory says so", async ({ page }) => {
  const frame = await openPlugin(page, "build/");
  await searchAndJump(frame, "Functional.conv2d.0.forward", "Functional.conv2d.0.forward");
  await frame.locator("button[data-action=repro-script]").click();
  await expect(frame.locator(".toast.error").last()).toContainText("is not reachable inside the log directory");
});

test("Repro script is offered on API nodes only", async ({ page }) => {
  const frame = await openPlugin(page, "repro/");
  await searchAndJump(frame, "Module.model.layers.0.mlp", "Module.model.layers.0.mlp.LlamaMLP.forward.0");
  await expect(frame.locator("button[data-action=repro-script]")).toBeHidden();
});
