// The layer profile beside the graph and "Download report" (issue 32): the chart of samples/gpt_statistics'
// compare has one column per decoder layer, layer 1 (the bf16 MLP) marked as the first divergence; a click
// on a column opens that layer in the NPU graph; the report downloaded is the self-contained HTML file.
import { expect, test } from "@playwright/test";
import { readFileSync } from "node:fs";
import { idle, onScreen, openPlugin, selectedName, shot } from "./helpers";

test("a click on a layer's column opens that layer in the graph", async ({ page }, info) => {
  const frame = await openPlugin(page, "gpt/");
  await frame.locator("button[data-action=profile]").click();
  const panel = frame.locator("[data-profile]");
  await expect(panel).toBeVisible();
  const columns = panel.locator("rect.ga-profile-hit");
  await expect(columns).toHaveCount(3);
  await expect(panel.locator(".profile-note")).toContainText("model.layers.N");
  // Layer 1 holds the first divergence: its column is shaded and its label red.
  await expect(panel.locator("svg text", { hasText: "model.layers.1" })).toHaveAttribute("fill", "#b00");
  for (const layer of [2, 0]) {
    await columns.nth(layer).click();
    await idle(frame);
    const name = `Module.model.layers.${layer}.LlamaDecoderLayer.forward.0`;
    expect(await selectedName(frame, "npu")).toBe(name);
    const index = Number(await columns.nth(layer).getAttribute("data-node"));
    expect(await onScreen(frame, "npu", index)).toBe(true);
  }
  await shot(page, info, "profile");
  // Modules at a depth: LlamaModel's children, embeddings and norm besides the layers.
  await panel.locator("select[data-picker=profile-depth]").selectOption("2");
  await expect(columns).toHaveCount(6);
  await columns.nth(0).click();
  await idle(frame);
  expect(await selectedName(frame, "npu")).toBe("Module.model.embed_tokens.Embedding.forward.0");
  await panel.locator("button[data-action=profile-close]").click();
  await expect(panel).toBeHidden();
});

test("Download report saves the self-contained HTML report", async ({ page }) => {
  const frame = await openPlugin(page, "gpt/");
  await frame.locator("button[data-action=profile]").click();
  await expect(frame.locator("[data-profile] rect.ga-profile-hit")).toHaveCount(3);
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    frame.locator("button[data-action=download-report]").click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/^compare_\d+\.report\.html$/);
  const html = readFileSync((await download.path())!, "utf8");
  expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
  expect(html).toContain('First divergence: <span class="name">Functional.linear.11.forward</span>');
  expect(html).toContain('<svg class="ga-profile-chart"');
  expect(html).not.toContain("http");
  expect(html).not.toContain("src=");
  expect(html).not.toContain("<script");
});

test("a build has no layer profile", async ({ page }) => {
  const frame = await openPlugin(page, "build/");
  await frame.locator("button[data-action=profile]").click();
  await expect(frame.locator("[data-profile] .profile-note")).toContainText("needs a compare");
  await expect(frame.locator("button[data-action=download-report]")).toBeDisabled();
});
