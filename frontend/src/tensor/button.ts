// The detail board's way into the tensor view: a button on the NPU row of an
// item pair whose two items name a tensor file (task: tensor dumps). One view
// serves the page, added to it on first use.
import { type Item, Side } from "../api/client";
import type { AppContext } from "../app_context";
import { h } from "../dom";
import { tt } from "./strings";
import { TensorView } from "./tensor_view";

let view: TensorView | null = null;

function hasTensorFile(item: Item | undefined): boolean {
  const f = item?.field.find((x) => x.name === "data_name");
  const name = f?.value?.text ?? "";
  return name !== "" && name !== "-1";
}

/** The button for an NPU item and its Bench partner, or null when either has no tensor file. */
export function tensorViewButton(
  ctx: AppContext,
  npuNode: number,
  item: Item,
  partner: Item | undefined,
): HTMLElement | null {
  if (!ctx.isCompare() || !hasTensorFile(item) || !hasTensorFile(partner)) return null;
  const button = h("button.tensor-open", { type: "button", "data-action": "tensor-view", title: tt("openTip") }, "⊞");
  button.setAttribute("aria-label", tt("open"));
  button.addEventListener("click", (e) => {
    e.stopPropagation();
    if (!view) {
      view = new TensorView({ api: ctx.api, filePath: () => ctx.file()?.path ?? null });
      document.body.append(view.el);
    }
    void view.open({ side: Side.SIDE_NPU, node: npuNode, item: item.key });
  });
  return button;
}
