// The checkpoint similarity's English and Chinese strings (the language follows the page's toggle).
import { currentLang } from "../i18n";

const en = {
  title: "Weights that differ",
  titleTip:
    "Modules whose parameters differ between the two runs' checkpoints (graph --ckpt, or a ckpt_compare JSON): " +
    "a parameter differs when cos < 1 − tolerance, or l2 > tolerance, or the shapes differ",
  cosTolerance: "cos tolerance",
  l2Tolerance: "l2 tolerance",
  json: "ckpt_compare JSON",
  jsonTip: "A ckpt_compare JSON under the log directory, mapped onto this file's NPU modules",
  load: "Load",
  none: "No checkpoint similarity: build with graph --ckpt A B, put a ckpt_similarity.json beside the file, or load one",
  summary: "{differ} of {modules} modules differ · {params} parameters, {unmapped} on no module node",
  fromFile: "from the file ({source})",
  fromJson: "from {path}",
  allEqual: "Every module's parameters are equal within the tolerances",
  weights: "Weights",
  worstCos: "worst cos",
  maxL2: "largest l2",
  differs: "differs",
  equal: "equal",
  shapesDiffer: "shapes differ",
  parameter: "parameter",
  shape: "shape",
};

type Key = keyof typeof en;

const zh: Record<Key, string> = {
  title: "权重不同的模块",
  titleTip:
    "两次运行的 checkpoint 中参数不同的模块（graph --ckpt，或 ckpt_compare 的 JSON）：" +
    "cos < 1 − 容差、l2 > 容差或 shape 不同即为不同",
  cosTolerance: "cos 容差",
  l2Tolerance: "l2 容差",
  json: "ckpt_compare JSON",
  jsonTip: "日志目录下的 ckpt_compare JSON，映射到本文件的 NPU 模块",
  load: "加载",
  none: "没有 checkpoint 相似度：用 graph --ckpt A B 构建，或在文件旁放 ckpt_similarity.json，或加载一个",
  summary: "{modules} 个模块中 {differ} 个不同 · {params} 个参数，{unmapped} 个不在任何模块节点上",
  fromFile: "来自文件（{source}）",
  fromJson: "来自 {path}",
  allEqual: "在容差内，所有模块的参数都相同",
  weights: "权重",
  worstCos: "最差 cos",
  maxL2: "最大 l2",
  differs: "不同",
  equal: "相同",
  shapesDiffer: "shape 不同",
  parameter: "参数",
  shape: "shape",
};

export function ct(key: Key, params?: Record<string, string | number>): string {
  let s = (currentLang() === "zh" ? zh : en)[key];
  if (params) for (const [k, v] of Object.entries(params)) s = s.replaceAll(`{${k}}`, String(v));
  return s;
}
