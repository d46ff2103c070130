// Short messages at the top of the graphs: at most four, info ones leave
// sooner than errors.
import "./toasts.css";
import { h } from "../dom";

export type ToastKind = "info" | "error";

export class Toasts {
  readonly el = h("div.toasts");

  show(message: string, kind: ToastKind = "info") {
    const el = h(`div.toast.${kind}`, { role: kind === "error" ? "alert" : "status" }, message);
    this.el.append(el);
    while (this.el.children.length > 4) this.el.firstElementChild!.remove();
    setTimeout(() => el.remove(), kind === "error" ? 8000 : 3500);
  }
}
