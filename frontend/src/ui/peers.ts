// Cross-rank communication peers (builder reference §8; plugin reference
// §8.4): the links of a node grouped by communication type, and the items
// that jump to a peer, coloured by the peer's index.
import type { ColorBucket, DistributedLink } from "../api/client";
import { h } from "../dom";
import { peerColour } from "../graph/paint";
import { t } from "../i18n";

const ORDER = ["send", "receive", "send_receive"];

/** "Data send", "Data receive", "Data send & receive"; another type as it is. */
export function commLabel(type: string): string {
  switch (type) {
    case "send":
      return t("commSend");
    case "receive":
      return t("commReceive");
    case "send_receive":
      return t("commSendReceive");
    default:
      return type;
  }
}

/** The links grouped by type: send, receive, send_receive, then any other, each in rank order. */
export function groupLinks(links: readonly DistributedLink[]): [string, DistributedLink[]][] {
  const groups = new Map<string, DistributedLink[]>();
  for (const l of links) {
    let list = groups.get(l.communicationsType);
    if (!list) groups.set(l.communicationsType, (list = []));
    list.push(l);
  }
  const rank = (type: string) => {
    const i = ORDER.indexOf(type);
    return i < 0 ? ORDER.length : i;
  };
  return [...groups.entries()]
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([type, list]) => [type, list.slice().sort((a, b) => a.rank - b.rank)]);
}

/**
 * A button "rank<N>" that jumps to the peer; its swatch (and its left border)
 * take the peer's colour, none when the peer has no index.
 */
export function peerButton(
  link: DistributedLink,
  legend: readonly ColorBucket[],
  className: string,
  pick: (link: DistributedLink) => void,
): HTMLButtonElement {
  const colour = peerColour(link.peerIndex, legend);
  const swatch = h("span.swatch");
  if (colour) swatch.style.background = colour;
  else swatch.classList.add("none");
  const btn = h(
    `button.${className}`,
    {
      type: "button",
      "data-action": "peer",
      "data-comm": link.communicationsType,
      "data-rank": link.rank,
      "data-peer": link.peerNode,
      "data-colour": colour ?? "",
      title: `${t("goToPeerTip", { rank: link.rank, node: link.peerNode })}\n${t("peerIndex", { index: link.peerIndex })}`,
    },
    swatch,
    h("span.peer-rank", null, t("peerRank", { rank: link.rank })),
  );
  if (colour) btn.style.borderLeftColor = colour;
  btn.addEventListener("click", () => pick(link));
  return btn;
}
