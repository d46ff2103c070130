// The context menu of a node (reference §8.4): jump to the corresponding
// node, expand or collapse, copy the name, and one submenu per kind of
// communication listing the peers by rank.
import "./node_menu.css";
import type { DistributedLink, LayoutNode } from "../api/client";
import type { AppContext } from "../app_context";
import { copyText, h } from "../dom";
import type { GraphPane } from "../graph/pane";
import { t } from "../i18n";
import { commLabel, groupLinks, peerButton } from "./peers";

/** What the menu asks of the page beyond the AppContext. */
export interface MenuHost extends AppContext {
  other(p: GraphPane): GraphPane | null;
  correspondingIndex(p: GraphPane, n: LayoutNode): Promise<number>;
  toggle(p: GraphPane, n: LayoutNode): Promise<void>;
}

export class NodeMenu {
  readonly el = h("div.context-menu");
  private seq = 0;

  constructor(private readonly host: MenuHost) {
    this.el.hidden = true;
  }

  hide() {
    this.el.hidden = true;
  }

  show(p: GraphPane, n: LayoutNode, x: number, y: number) {
    const host = this.host;
    const seq = ++this.seq;
    const other = host.other(p);
    const item = (action: string, text: string, run: () => void) => {
      const b = h("button.menu-item", { type: "button", "data-action": action }, text);
      b.addEventListener("click", () => {
        this.el.hidden = true;
        run();
      });
      return b;
    };
    const items: HTMLElement[] = [];
    if (other)
      items.push(
        item("corresponding", t("expandCorresponding"), () => {
          void host.correspondingIndex(p, n).then((index) => {
            if (index < 0) host.toast(t("noCorresponding"), "error");
            else return host.jumpTo(other.side, index);
          });
        }),
      );
    const expand = item("toggle", n.expanded ? t("collapse") : t("expand"), () => void host.toggle(p, n));
    expand.disabled = !n.expandable || n.parent < 0;
    items.push(expand);
    items.push(item("copy", t("copyName"), () => void copyText(n.name)));
    const peers = h("div.menu-peers");
    if (n.distributed) {
      peers.append(h("div.menu-note", null, t("loading")));
      void this.fillPeers(p, n.index, peers, seq);
    }
    this.el.replaceChildren(h("div.menu-title", null, n.name), ...items, peers);
    this.el.hidden = false;
    const left = Math.min(x, window.innerWidth - 240);
    // Submenus open to the left when there is no room on the right.
    this.el.classList.toggle("flip", left > window.innerWidth - 480);
    this.el.style.transform = `translate(${left}px, ${Math.min(y, window.innerHeight - 160)}px)`;
  }

  /** The communication submenus: one per type, listing rank<N> per peer. */
  private async fillPeers(p: GraphPane, index: number, into: HTMLElement, seq: number) {
    const host = this.host;
    let links: DistributedLink[] = [];
    try {
      const reply = await host.api.call("getNodeDetail", { view: host.viewKey(p.side), node: index });
      links = reply.detail?.distributed ?? [];
    } catch (e) {
      if (seq === this.seq) host.toast((e as Error).message, "error");
    }
    if (seq !== this.seq) return;
    const legend = host.info()?.meta?.legend ?? [];
    const pick = (link: DistributedLink) => void host.jumpToPeer(p.side, link);
    into.replaceChildren(
      ...groupLinks(links).map(([type, list]) =>
        h(
          "div.menu-sub",
          { "data-comm": type },
          h("button.menu-item.sub-trigger", { type: "button", "aria-haspopup": "menu" }, commLabel(type)),
          h("div.submenu", { role: "menu" }, ...list.map((l) => peerButton(l, legend, "menu-item", pick))),
        ),
      ),
    );
  }
}
