// A virtualised list: fixed-height rows, only the rows in view (plus a few)
// exist in the DOM, whatever the length. Rows can be loaded lazily by pages.
import "./virtual_list.css";
import { type NodeHit, type NodeList, isAbort } from "../api/client";

export interface ListOptions<T> {
  rowHeight: number;
  render(item: T | undefined, index: number, row: HTMLElement): void;
  /** Called when rows [from, to) come into view, to load missing ones. */
  need?(from: number, to: number): void;
  pick?(item: T, index: number): void;
  className?: string;
  /** A sticky header row above the rows (tables). */
  header?: HTMLElement;
}

export class VirtualList<T> {
  readonly el: HTMLDivElement;
  private readonly spacer: HTMLDivElement;
  private readonly rows: HTMLDivElement;
  private total = 0;
  private getItem: (i: number) => T | undefined = () => undefined;
  active = -1;
  private frame = 0;

  constructor(private readonly opts: ListOptions<T>) {
    this.el = document.createElement("div");
    this.el.className = "vlist" + (opts.className ? ` ${opts.className}` : "");
    this.el.tabIndex = 0;
    this.el.setAttribute("role", "listbox");
    this.spacer = document.createElement("div");
    this.spacer.className = "vlist-spacer";
    this.rows = document.createElement("div");
    this.rows.className = "vlist-rows";
    this.spacer.append(this.rows);
    if (opts.header) {
      opts.header.classList.add("vlist-header");
      this.el.append(opts.header);
    }
    this.el.append(this.spacer);
    this.el.addEventListener("scroll", () => this.schedule());
    new ResizeObserver(() => this.schedule()).observe(this.el);
    this.el.addEventListener("click", (e) => {
      const row = (e.target as HTMLElement).closest<HTMLElement>(".vlist-row");
      if (!row) return;
      const i = Number(row.dataset.index);
      this.setActive(i, false);
      const item = this.getItem(i);
      if (item !== undefined) this.opts.pick?.(item, i);
    });
    this.el.addEventListener("keydown", (e) => {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        this.move(e.key === "ArrowDown" ? 1 : -1);
      } else if (e.key === "Enter") {
        e.preventDefault();
        this.pickActive();
      }
    });
  }

  /** Replaces the content: total rows and a lookup that may return undefined for rows not loaded yet. */
  setData(total: number, getItem: (i: number) => T | undefined) {
    this.total = total;
    this.getItem = getItem;
    if (this.active >= total) this.active = total - 1;
    this.spacer.style.height = `${total * this.opts.rowHeight}px`;
    this.schedule();
  }

  reset() {
    this.active = -1;
    this.el.scrollTop = 0;
    this.setData(0, () => undefined);
  }

  refresh() {
    this.schedule();
  }

  /** Moves the active row; returns false at either end. */
  move(delta: number): boolean {
    if (!this.total) return false;
    const next = this.active < 0 ? (delta > 0 ? 0 : this.total - 1) : this.active + delta;
    if (next < 0 || next >= this.total) return false;
    this.setActive(next, true);
    return true;
  }

  setActive(i: number, scroll: boolean) {
    this.active = i;
    if (scroll) {
      const rh = this.opts.rowHeight;
      const top = i * rh;
      const head = this.opts.header?.offsetHeight ?? 0;
      if (top < this.el.scrollTop) this.el.scrollTop = top;
      else if (top + rh + head > this.el.scrollTop + this.el.clientHeight)
        this.el.scrollTop = top + rh + head - this.el.clientHeight;
    }
    this.schedule();
  }

  pickActive() {
    const i = this.active < 0 ? 0 : this.active;
    const item = this.getItem(i);
    if (item !== undefined) {
      this.setActive(i, true);
      this.opts.pick?.(item, i);
    }
  }

  private schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  private render() {
    const rh = this.opts.rowHeight;
    const height = this.el.clientHeight || rh * 10;
    const top = Math.max(0, this.el.scrollTop - (this.opts.header?.offsetHeight ?? 0));
    const from = Math.max(0, Math.floor(top / rh) - 4);
    const to = Math.min(this.total, Math.ceil((top + height) / rh) + 4);
    this.rows.style.transform = `translateY(${from * rh}px)`;
    const count = Math.max(0, to - from);
    while (this.rows.children.length > count) this.rows.lastElementChild!.remove();
    while (this.rows.children.length < count) {
      const row = document.createElement("div");
      row.className = "vlist-row";
      row.setAttribute("role", "option");
      row.style.height = `${rh}px`;
      this.rows.append(row);
    }
    for (let k = 0; k < count; k++) {
      const i = from + k;
      const row = this.rows.children[k] as HTMLElement;
      row.dataset.index = String(i);
      row.classList.toggle("active", i === this.active);
      row.setAttribute("aria-selected", String(i === this.active));
      this.opts.render(this.getItem(i), i, row);
    }
    if (count && this.opts.need) this.opts.need(from, to);
  }
}

/** Pages of a NodeList query (Search or Filter), fetched as rows come into view. */
export class PagedHits {
  private pages = new Map<number, NodeHit[]>();
  private loading = new Set<number>();
  private abort = new AbortController();
  total = 0;
  private generation = 0;

  constructor(
    private readonly pageSize: number,
    private readonly onChange: () => void,
    private readonly onError: (message: string) => void,
  ) {}

  /** Starts a new query; resolves with the first page's total. */
  async start(fetchPage: (offset: number, limit: number, signal: AbortSignal) => Promise<NodeList>): Promise<number> {
    this.abort.abort();
    this.abort = new AbortController();
    this.pages.clear();
    this.loading.clear();
    this.total = 0;
    const gen = ++this.generation;
    this.fetchPage = fetchPage;
    await this.load(0, gen);
    return this.total;
  }

  clear() {
    this.abort.abort();
    this.generation++;
    this.pages.clear();
    this.loading.clear();
    this.total = 0;
  }

  get(i: number): NodeHit | undefined {
    return this.pages.get(Math.floor(i / this.pageSize))?.[i % this.pageSize];
  }

  need(from: number, to: number) {
    for (let p = Math.floor(from / this.pageSize); p * this.pageSize < to; p++) {
      if (!this.pages.has(p) && !this.loading.has(p)) void this.load(p, this.generation);
    }
  }

  private fetchPage: (offset: number, limit: number, signal: AbortSignal) => Promise<NodeList> = async () => ({
    total: 0,
    hits: [],
  });

  private async load(page: number, gen: number) {
    this.loading.add(page);
    try {
      const reply = await this.fetchPage(page * this.pageSize, this.pageSize, this.abort.signal);
      if (gen !== this.generation) return;
      this.pages.set(page, reply.hits);
      this.total = reply.total;
      this.onChange();
    } catch (e) {
      if (!isAbort(e) && gen === this.generation) this.onError((e as Error).message);
    } finally {
      if (gen === this.generation) this.loading.delete(page);
    }
  }
}
