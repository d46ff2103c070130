// Links between nodes that are not on screen together: communication peers
// on other ranks of a batch output (samples/dist_gloo: rank 0 sends rank 1
// its shard, both all_reduce), and sync expand of a node without a match
// (samples/layer_mapping built with -lm, where Megatron's core_attention has
// no counterpart in the transformers model).
import { expect, test, type Frame } from "@playwright/test";
import {
  clickNode,
  dblclickNode,
  idle,
  node,
  nodes,
  onScreen,
  openPlugin,
  rightclickNode,
  searchAndJump,
  selectedName,
  shot,
  shownFile,
} from "./helpers";

const SEND = "Distributed.send.0.forward";
const RECV = "Distributed.recv.0.forward";
const ALL_REDUCE = "Distributed.all_reduce.0.forward";

/** The batch sample's step0/rank0 file, as the run picker opens it first. */
async function openRank0(page: import("@playwright/test").Page): Promise<Frame> {
  const frame = await openPlugin(page, "batch/");
  const shown = await shownFile(frame);
  expect(shown).toMatchObject({ step: "step0", rank: "rank0" });
  expect(shown.path).toContain("step0_rank0");
  return frame;
}

/** The fill of the node selected on the NPU side, as drawn. */
function selectedFill(frame: Frame): Promise<string> {
  return frame.evaluate(() => {
    const p = (window as any).graphAscend.npu;
    return p.fillOf(p.node(p.selected));
  });
}

test("a send jumps to its recv on the peer rank from the detail panel, and back", async ({ page }, info) => {
  const frame = await openRank0(page);
  await searchAndJump(frame, "Distributed.send", SEND);
  const badge = frame.locator(".node-badge[data-side=npu]");
  await expect(badge.locator(".badge-name")).toHaveText(SEND);
  const link = badge.locator('.peer-link[data-comm=send][data-rank="1"]');
  await expect(link).toHaveAttribute("data-peer", RECV);
  await expect(badge.locator(".peer-link")).toHaveCount(1);
  await expect(badge.locator(".peer-group[data-comm=send] .peer-type")).toHaveText("Data send:");
  // The info tab lists the same link with the peer's name and index.
  await frame.locator("button.tab[data-tab=info]").click();
  const row = frame.locator('.info-col .peer-row[data-comm=send][data-rank="1"]').first();
  await expect(row.locator(".peer-node")).toHaveText(RECV);
  await frame.locator("button.tab[data-tab=detail]").click();

  await link.click();
  await expect.poll(async () => (await shownFile(frame)).rank).toBe("rank1");
  await idle(frame);
  const shown = await shownFile(frame);
  expect(shown.step).toBe("step0");
  expect(shown.path).toContain("step0_rank1");
  await expect.poll(() => selectedName(frame, "npu")).toBe(RECV);
  const recv = await node(frame, "npu", RECV);
  expect(await onScreen(frame, "npu", recv!.index)).toBe(true);
  await expect(badge.locator(".badge-name")).toHaveText(RECV);
  await shot(page, info, "peer-jump");

  // The recv names the send as its peer on rank 0; following it comes back.
  const back = badge.locator('.peer-link[data-comm=receive][data-rank="0"]');
  await expect(back).toHaveAttribute("data-peer", SEND);
  await back.click();
  await expect.poll(async () => (await shownFile(frame)).rank).toBe("rank0");
  await idle(frame);
  await expect.poll(() => selectedName(frame, "npu")).toBe(SEND);
  expect((await shownFile(frame)).path).toContain("step0_rank0");
});

test("the context menu lists peers under their communication type, coloured like the peer", async ({ page }, info) => {
  const frame = await openRank0(page);
  await searchAndJump(frame, "Distributed.send", SEND);
  await rightclickNode(frame, "npu", SEND);
  const menu = frame.locator(".context-menu");
  const send = menu.locator(".menu-sub[data-comm=send]");
  await expect(send.locator(".sub-trigger")).toHaveText("Data send");
  await expect(menu.locator(".menu-sub")).toHaveCount(1);
  await send.locator(".sub-trigger").hover();
  const item = send.locator('.submenu [data-action=peer][data-rank="1"]');
  await expect(item).toBeVisible();
  await expect(item).toHaveText("rank1");
  await expect(item).toHaveAttribute("data-peer", RECV);
  const colour = (await item.getAttribute("data-colour"))!;
  expect(colour).toMatch(/^#[0-9a-f]{6}$/i);
  await shot(page, info, "peer-menu");

  await item.click();
  await expect(menu).toBeHidden();
  await expect.poll(async () => (await shownFile(frame)).rank).toBe("rank1");
  await idle(frame);
  await expect.poll(() => selectedName(frame, "npu")).toBe(RECV);
  // The item had the colour the peer is drawn with on its own rank.
  expect(await selectedFill(frame)).toBe(colour);

  // An all_reduce sends and receives; in Chinese the heading is the reference's.
  await frame.locator("button.lang").click();
  await searchAndJump(frame, "all_reduce.0", ALL_REDUCE);
  await rightclickNode(frame, "npu", ALL_REDUCE);
  const both = menu.locator(".menu-sub[data-comm=send_receive]");
  await expect(both.locator(".sub-trigger")).toHaveText("数据发送接收");
  await expect(menu.locator(".menu-sub[data-comm=send]")).toHaveCount(0);
  await both.locator(".sub-trigger").hover();
  const peer = both.locator('.submenu [data-action=peer][data-rank="0"]');
  await expect(peer).toHaveAttribute("data-peer", ALL_REDUCE);
  const peerColour = await peer.getAttribute("data-colour");
  await peer.click();
  await expect.poll(async () => (await shownFile(frame)).rank).toBe("rank0");
  await idle(frame);
  await expect.poll(() => selectedName(frame, "npu")).toBe(ALL_REDUCE);
  expect(await selectedFill(frame)).toBe(peerColour);
  await frame.locator("button.lang").click();
});

test("sync expand of a node without a match expands its nearest matched ancestor's counterpart", async ({
  page,
}, info) => {
  const frame = await openPlugin(page, "layer_mapping/");
  const name = "Module.decoder.layers.0.self_attention.core_attention.DotProductAttention.forward.0";
  const ancestor = "Module.decoder.layers.0.self_attention.SelfAttention.forward.0";
  const counterpart = "Module.model.layers.0.self_attn.LlamaAttention.forward.0";
  await searchAndJump(frame, "core_attention.DotProductAttention.forward", name);
  const before = await node(frame, "npu", name);
  expect(before?.matched).toBe(-1);
  expect(before?.expanded).toBe(false);
  const parent = (await nodes(frame, "npu")).find((n) => n.index === before!.parent);
  expect(parent?.name).toBe(ancestor);
  // Its parent is matched with the transformers attention, which is not open yet.
  expect(await frame.evaluate((i) => (window as any).graphAscend.npu.node(i).matched, parent!.index)).toBeGreaterThan(
    -1,
  );
  expect((await node(frame, "bench", counterpart))?.expanded ?? false).toBe(false);
  await expect(frame.locator("input[data-toggle=sync]")).toBeChecked();

  await dblclickNode(frame, "npu", name);
  expect((await node(frame, "npu", name))?.expanded).toBe(true);
  await expect.poll(async () => (await node(frame, "bench", counterpart))?.expanded).toBe(true);
  const bench = await nodes(frame, "bench");
  const benchParent = bench.find((n) => n.name === counterpart)!;
  expect(bench.filter((n) => n.parent === benchParent.index).map((n) => n.name)).toContain(
    "Module.model.layers.0.self_attn.q_proj.Linear.forward.0",
  );
  await shot(page, info, "sync-unmatched");

  await dblclickNode(frame, "npu", name);
  expect((await node(frame, "npu", name))?.expanded).toBe(false);
  await expect.poll(async () => (await node(frame, "bench", counterpart))?.expanded).toBe(false);

  // The context menu's "expand the corresponding node" selects and reveals that counterpart.
  await clickNode(frame, "bench", "DefaultModel");
  await rightclickNode(frame, "npu", name);
  await frame.locator(".context-menu [data-action=corresponding]").click();
  await expect.poll(() => selectedName(frame, "bench")).toBe(counterpart);
  await idle(frame);
  const shown = await node(frame, "bench", counterpart);
  expect(await onScreen(frame, "bench", shown!.index)).toBe(true);
  await expect(frame.locator(".node-badge[data-side=bench] .badge-name")).toHaveText(counterpart);
});
