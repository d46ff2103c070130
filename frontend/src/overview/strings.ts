// The rank overview's English and Chinese strings (the language follows the page's toggle).
import { currentLang } from "../i18n";

const en = {
  button: "▦ Rank overview",
  buttonTip: "Every step and rank of this run: where each first diverges, and the rank where it started",
  title: "Rank overview",
  close: "Close",
  rank: "Rank",
  onlyDiverging: "Only ranks that diverge",
  loading: "Reading the run's files…",
  origin: "The divergence starts on {ranks} in {step}",
  originAt: "at {node} ({reason})",
  noOrigin: "No rank diverges: the runs agree within the noise floor",
  goOrigin: "Open the origin",
  fromRank: "◇ from {rank}",
  here: "◆ origin",
  own: "◆ diverges",
  agrees: "agrees",
  notRanked: "no ranking",
  noFile: "no file",
  overflow: "overflow {critical} critical, {high} high, {medium} medium",
  worst: "worst bucket: {bucket}",
  counts: "{ranks} ranks × {steps} steps, {diverging} cells diverge",
  unreadable: "unreadable",
  failed: "The overview could not be read: {error}",
  noRanking: "These files have no divergence ranking: no origin to trace",
};

type Key = keyof typeof en;

const zh: Record<Key, string> = {
  button: "▦ Rank 总览",
  buttonTip: "本次运行的每个 step 和 rank：各自最先分叉的位置，以及分叉起源的 rank",
  title: "Rank 总览",
  close: "关闭",
  rank: "Rank",
  onlyDiverging: "只看有分叉的 rank",
  loading: "正在读取本次运行的文件…",
  origin: "分叉起源于 {step} 的 {ranks}",
  originAt: "位于 {node}（{reason}）",
  noOrigin: "没有 rank 分叉：两次运行在噪声范围内一致",
  goOrigin: "打开起源",
  fromRank: "◇ 来自 {rank}",
  here: "◆ 起源",
  own: "◆ 自身分歧",
  agrees: "一致",
  notRanked: "无排序",
  noFile: "无文件",
  overflow: "溢出 critical {critical}，high {high}，medium {medium}",
  worst: "最差区间：{bucket}",
  counts: "{ranks} 个 rank × {steps} 个 step，{diverging} 个格子分叉",
  unreadable: "无法读取",
  failed: "无法读取总览：{error}",
  noRanking: "这些文件没有分叉排序：无法追溯起源",
};

export function ot(key: Key, params?: Record<string, string | number>): string {
  let s = (currentLang() === "zh" ? zh : en)[key];
  if (params) for (const [k, v] of Object.entries(params)) s = s.replaceAll(`{${k}}`, String(v));
  return s;
}
