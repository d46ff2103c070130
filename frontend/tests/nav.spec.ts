// Navigation as users know it (issue 30 point 5): a tap of W/S/A/D is one step and a hold moves on, a
// search jump zooms to a scale where the node's label reads, and a double-click expand keeps the node
// under the pointer, so that a second double-click collapses it again.
import { expect, type Frame, test } from "@playwright/test";
import { canvas, expandAll, idle, openPlugin, searchAndJump } from "./helpers";

function view(frame: Frame) {
  return frame.evaluate(() => {
    const p = (window as any).graphAscend.npu;
    return { tx: p.tx as number, ty: p.ty as number, scale: p.scale as number };
  });
}

/** Resolves after the page drew two more frames (a key loop would have moved by then). */
function frames(frame: Frame) {
  return frame.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
}

test("a tap of W/S/A/D is one step, a hold moves on", async ({ page }) => {
  const frame = await openPlugin(page, "gpt/");
  await canvas(frame, "npu").click({ position: { x: 4, y: 4 } });
  const box = (await canvas(frame, "npu").boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await idle(frame);

  const v0 = await view(frame);
  await page.keyboard.press("d");
  await frames(frame);
  const v1 = await view(frame);
  expect(v1.tx).toBeCloseTo(v0.tx - 80, 3);
  expect(v1.scale).toBe(v0.scale);
  await page.keyboard.press("a");
  await frames(frame);
  expect((await view(frame)).tx).toBeCloseTo(v0.tx, 3);
  await page.keyboard.press("w");
  await frames(frame);
  expect((await view(frame)).scale).toBeCloseTo(v0.scale * 1.25, 6);
  await page.keyboard.press("s");
  await frames(frame);
  expect((await view(frame)).scale).toBeCloseTo(v0.scale, 6);

  // Held, the key moves the view on past its first step until it is let go.
  const v2 = await view(frame);
  await page.keyboard.down("d");
  try {
    await expect.poll(async () => (await view(frame)).tx).toBeLessThan(v2.tx - 200);
  } finally {
    await page.keyboard.up("d");
  }
  await frames(frame);
  const v3 = await view(frame);
  await frames(frame);
  expect((await view(frame)).tx).toBe(v3.tx);
});

test("a search jump from the fitted graph zooms until the node's label reads", async ({ page }) => {
  const frame = await openPlugin(page, "gpt/");
  // Everything expanded, then fitted: a graph many times taller than the pane, at a tiny scale.
  await expandAll(frame);
  await frame.locator("summary[data-action=view-menu]").click(); // the view toggles and Fit
  await frame.locator("button[data-action=fit]").click();
  await idle(frame);
  const fitted = (await view(frame)).scale;
  const name = "Functional.linear.11.forward";
  await searchAndJump(frame, "linear.11", name);
  const state = await frame.evaluate((n) => {
    const p = (window as any).graphAscend.npu;
    return { scale: p.scale, label: p.labelBox(n).text, tagged: p.tagged };
  }, name);
  expect(fitted).toBeLessThan(0.5);
  expect(state.scale).toBeGreaterThan(fitted);
  expect(state.label, "the label is drawn at a readable size").not.toBe("");
});

test("a double-click expand keeps the node under the pointer; a second one collapses it", async ({ page }) => {
  const frame = await openPlugin(page, "gpt/");
  const name: string = await frame.evaluate(
    () => (window as any).graphAscend.npu.nodes.find((n: any) => n.expandable && !n.expanded && n.parent >= 0).name,
  );
  // Near the bottom right, where the expanded box would not fit and the view used to scroll it in.
  const at = await frame.evaluate((n) => {
    const p = (window as any).graphAscend.npu;
    const node = p.nodes.find((x: any) => x.name === n);
    const { width, height } = p.size();
    p.setView({
      scale: 1.2,
      tx: width * 0.75 - (node.x + node.width / 2) * 1.2,
      ty: height * 0.8 - (node.y + 7.5) * 1.2,
    });
    return p.locate(n);
  }, name);
  await idle(frame);
  await canvas(frame, "npu").dblclick({ position: at });
  await idle(frame);
  const expanded = await frame.evaluate((n) => {
    const p = (window as any).graphAscend.npu;
    const node = p.nodes.find((x: any) => x.name === n);
    return { expanded: node.expanded, under: p.nodeAt(p.locate(n).x, p.locate(n).y)?.name, pos: p.locate(n) };
  }, name);
  expect(expanded.expanded).toBe(true);
  expect(Math.abs(expanded.pos.y - at.y)).toBeLessThanOrEqual(1);
  const hit = await frame.evaluate(([x, y]) => (window as any).graphAscend.npu.nodeAt(x, y)?.name, [at.x, at.y]);
  expect(hit, "the node stays under the pointer").toBe(name);
  await canvas(frame, "npu").dblclick({ position: at });
  await idle(frame);
  const collapsed = await frame.evaluate(
    (n) => (window as any).graphAscend.npu.nodes.find((x: any) => x.name === n)?.expanded,
    name,
  );
  expect(collapsed).toBe(false);
});
