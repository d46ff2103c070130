// The runs strip's English and Chinese strings (the language follows the page's toggle).
import { currentLang } from "../i18n";

const en = {
  shown: "Run {run} (NPU) against run {reference}, the reference (Bench) · run:",
  pickTip: "Another run's compare of the same step and rank",
  option: "run {run}: {dir}",
  referenceOption: "run {run} (reference): {dir}",
  noLine: "runs.json has no line for this step and rank",
  jump: "Go to first disagreement",
  npuTitle: "NPU · run {run}",
  benchTitle: "Bench · run {run} (reference)",
  missing: "{path}: not in the log directory's run list",
  noNode: "{node}: not in this graph",
  unreadable: "runs.json beside this run's folder cannot be read: {error}",
};
type Key = keyof typeof en;

const zh: Record<Key, string> = {
  shown: "运行 {run}（NPU）对比参考运行 {reference}（Bench）· 运行：",
  pickTip: "同一 step 与 rank 下另一次运行的比对",
  option: "运行 {run}：{dir}",
  referenceOption: "运行 {run}（参考）：{dir}",
  noLine: "runs.json 中没有此 step 与 rank 的记录",
  jump: "跳到首个不一致处",
  npuTitle: "NPU · 运行 {run}",
  benchTitle: "Bench · 运行 {run}（参考）",
  missing: "{path}：不在日志目录的运行列表中",
  noNode: "{node}：不在此图中",
  unreadable: "无法读取此运行目录旁的 runs.json：{error}",
};

export function rt(key: Key, params?: Record<string, string | number>): string {
  let s = (currentLang() === "zh" ? zh : en)[key];
  if (params) for (const [k, v] of Object.entries(params)) s = s.replaceAll(`{${k}}`, String(v));
  return s;
}
