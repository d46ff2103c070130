// The run list: files grouped into runs (the steps and ranks of one
// compare), and what is kept when switching between files of a run.
import { type RunFile, Side } from "../api/client";

/** What to keep when switching to another file of the same run (rank, step) or micro step. */
export interface Place {
  group: string;
  names: Record<"npu" | "bench", string | null>;
  views: Record<"npu" | "bench", { tx: number; ty: number; scale: number } | null>;
}

export function sideKey(side: Side): "npu" | "bench" {
  return side === Side.SIDE_BENCH ? "bench" : "npu";
}

export function groupOf(f: RunFile): string {
  return f.group || f.path;
}

/** The files of each run, in list order. */
export function groupRuns(runs: RunFile[]): Map<string, RunFile[]> {
  const m = new Map<string, RunFile[]>();
  for (const f of runs) {
    const g = groupOf(f);
    let list = m.get(g);
    if (!list) m.set(g, (list = []));
    list.push(f);
  }
  return m;
}
