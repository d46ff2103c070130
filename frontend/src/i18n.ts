// English and Chinese strings. The language comes from localStorage, then
// from the browser; the toggle in the top bar switches it at run time.
const en = {
  title: "GRAPH_ASCEND",
  run: "Run",
  step: "Step",
  rank: "Rank",
  microStep: "Micro step",
  all: "All",
  noRuns: "No .vis file under the log directory. Build one with: graph-ascend graph -i compare.json -o <logdir>",
  fit: "Fit to screen",
  syncExpand: "Sync expand",
  syncExpandTip: "Expand and collapse the matched node on the other side too",
  minimap: "Minimap",
  language: "中文",
  languageTip: "切换到中文",
  npu: "NPU",
  bench: "Bench",
  single: "Graph",
  opening: "Opening {file}",
  loadFailed: "Could not open {file}: {message}",
  search: "Search",
  filter: "Filter",
  match: "Match",
  searchPlaceholder: "Node name (↑/↓, Enter to jump)",
  regex: "Regex",
  caseInsensitive: "Ignore case",
  results: "{n} results",
  side: "Side",
  precision: "Precision",
  precisionTip: "Nodes of the NPU graph whose precision index falls in the ticked buckets",
  unmatched: "Unmatched",
  unmatchedNodes: "Unmatched nodes",
  overflow: "Overflow",
  overflowMedium: "Medium",
  overflowHigh: "High",
  overflowCritical: "Critical",
  leavesOnly: "Leaf nodes only",
  noOverflowCheck: "This file was not built with overflow check (-oc)",
  pickBuckets: "Tick one or more buckets",
  pickLevels: "Tick one or more levels",
  legend: "Legend",
  legendNoColour: "No precision data",
  module: "Module",
  api: "API",
  collection: "API collection",
  detail: "Comparison details",
  detailSingle: "Node details",
  stackInfo: "Stack & info",
  noSelection: "Click a node to see its inputs, outputs and parameters.",
  npuNode: "NPU node",
  benchNode: "Bench node",
  node: "Node",
  notMatched: "not matched",
  precisionIndex: "Precision index",
  overflowLevel: "Overflow level",
  threshold: "Highlight relative error above",
  inputs: "Inputs",
  outputs: "Outputs",
  parameters: "Parameters",
  parameterGrads: "Parameter gradients",
  name: "Name",
  stack: "Stack",
  suggestions: "Suggestions",
  distributed: "Communication",
  parallelMerge: "Parallel merge",
  copy: "Copy",
  copied: "Copied",
  none: "(none)",
  matchPanelHint: "Select an NPU node and a Bench node (in the graphs or in the lists), then match or unmatch them.",
  pickedNpu: "NPU",
  pickedBench: "Bench",
  notPicked: "(not picked)",
  withChildren: "Also descendants",
  doMatch: "Match",
  doUnmatch: "Unmatch",
  saveConfig: "Save config",
  loadConfig: "Load config",
  manualMatches: "{n} manual matches",
  saved: "Saved {n} matches to {path}",
  loadedConfig: "Applied the config: {ok} matched, {failed} failed",
  matchDone: "{ok} pairs done, {failed} failed",
  buildOnly: "Matching needs a compare file.",
  nodes: "nodes",
  matched: "matched",
  visible: "{n} visible",
  topOfList: "Top of the list",
  bottomOfList: "Bottom of the list",
  help: "Drag or W/A/S/D: pan · wheel: zoom · double-click: expand/collapse · F: fit · /: search",
  loading: "Loading…",
  error: "Error",
  mode: "Mode",
  emptyList: "Nothing found",
  retry: "Retry",
  expandCorresponding: "Expand the corresponding node on the other side",
  noCorresponding: "Neither this node nor any of its ancestors has a matched node on the other side",
  commSend: "Data send",
  commReceive: "Data receive",
  commSendReceive: "Data send & receive",
  peerRank: "rank{rank}",
  goToPeer: "Go to the peer",
  goToPeerTip: "Open rank {rank} of this step and select {node}",
  peerIndex: "peer index {index}",
  noRankFile: "This run has no file of rank {rank} for this step",
  peerNotFound: "{node} is not in the file of rank {rank}",
  expand: "Expand",
  collapse: "Collapse",
  copyName: "Copy name",
};

export type MessageKey = keyof typeof en;

const zh: Record<MessageKey, string> = {
  title: "GRAPH_ASCEND",
  run: "运行",
  step: "Step",
  rank: "Rank",
  microStep: "Micro step",
  all: "全部",
  noRuns: "日志目录下没有 .vis 文件。请先生成：graph-ascend graph -i compare.json -o <logdir>",
  fit: "适应屏幕",
  syncExpand: "同步展开",
  syncExpandTip: "展开/折叠时同步操作另一侧的匹配节点",
  minimap: "小地图",
  language: "EN",
  languageTip: "Switch to English",
  npu: "NPU",
  bench: "标杆",
  single: "图",
  opening: "正在打开 {file}",
  loadFailed: "无法打开 {file}：{message}",
  search: "搜索",
  filter: "筛选",
  match: "匹配",
  searchPlaceholder: "节点名称（↑/↓ 选择，回车跳转）",
  regex: "正则",
  caseInsensitive: "忽略大小写",
  results: "{n} 个结果",
  side: "侧",
  precision: "精度误差",
  precisionTip: "精度指标落在所选区间内的 NPU 侧节点",
  unmatched: "无匹配节点",
  unmatchedNodes: "未匹配节点",
  overflow: "溢出",
  overflowMedium: "中",
  overflowHigh: "高",
  overflowCritical: "严重",
  leavesOnly: "仅叶子节点",
  noOverflowCheck: "该文件未以溢出检测模式（-oc）生成",
  pickBuckets: "请勾选一个或多个区间",
  pickLevels: "请勾选一个或多个级别",
  legend: "图例",
  legendNoColour: "无精度数据",
  module: "模块",
  api: "API",
  collection: "API 集合",
  detail: "比对详情",
  detailSingle: "节点详情",
  stackInfo: "堆栈与信息",
  noSelection: "单击节点查看其输入、输出和参数。",
  npuNode: "NPU 节点",
  benchNode: "标杆节点",
  node: "节点",
  notMatched: "未匹配",
  precisionIndex: "精度指标",
  overflowLevel: "溢出级别",
  threshold: "相对误差高亮阈值",
  inputs: "输入",
  outputs: "输出",
  parameters: "参数",
  parameterGrads: "参数梯度",
  name: "名称",
  stack: "堆栈",
  suggestions: "建议",
  distributed: "通信",
  parallelMerge: "并行合并",
  copy: "复制",
  copied: "已复制",
  none: "（无）",
  matchPanelHint: "在图中或列表中选择一个 NPU 节点和一个标杆节点，然后建立或取消匹配。",
  pickedNpu: "NPU",
  pickedBench: "标杆",
  notPicked: "（未选择）",
  withChildren: "同时操作子节点",
  doMatch: "建立匹配",
  doUnmatch: "取消匹配",
  saveConfig: "生成匹配配置文件",
  loadConfig: "加载匹配配置",
  manualMatches: "{n} 个手动匹配",
  saved: "已将 {n} 个匹配保存到 {path}",
  loadedConfig: "已应用配置：成功 {ok}，失败 {failed}",
  matchDone: "成功 {ok} 对，失败 {failed} 对",
  buildOnly: "匹配需要比对文件。",
  nodes: "节点",
  matched: "已匹配",
  visible: "{n} 个可见",
  topOfList: "已到列表顶部",
  bottomOfList: "已到列表底部",
  help: "拖动或 W/A/S/D：平移 · 滚轮：缩放 · 双击：展开/折叠 · F：适应屏幕 · /：搜索",
  loading: "加载中…",
  error: "错误",
  mode: "模式",
  emptyList: "没有结果",
  retry: "重试",
  expandCorresponding: "展开对应侧节点",
  noCorresponding: "该节点及其祖先节点在另一侧都没有匹配节点",
  commSend: "数据发送",
  commReceive: "数据接收",
  commSendReceive: "数据发送接收",
  peerRank: "rank{rank}",
  goToPeer: "跳转到对端节点",
  goToPeerTip: "打开本 step 的 rank {rank} 并选中 {node}",
  peerIndex: "对端指标 {index}",
  noRankFile: "本次运行在该 step 下没有 rank {rank} 的文件",
  peerNotFound: "rank {rank} 的文件中没有 {node}",
  expand: "展开",
  collapse: "折叠",
  copyName: "复制名称",
};

export type Lang = "en" | "zh";
const tables: Record<Lang, Record<MessageKey, string>> = { en, zh };
const listeners = new Set<() => void>();

function initialLang(): Lang {
  try {
    const saved = localStorage.getItem("graph_ascend.lang");
    if (saved === "en" || saved === "zh") return saved;
  } catch {
    // Storage can be unavailable in a sandboxed iframe.
  }
  return navigator.language.toLowerCase().startsWith("zh") ? "zh" : "en";
}

let lang: Lang = initialLang();

export function currentLang(): Lang {
  return lang;
}

export function setLang(next: Lang) {
  if (next === lang) return;
  lang = next;
  try {
    localStorage.setItem("graph_ascend.lang", next);
  } catch {
    // Not persisted; the choice still holds for this page.
  }
  document.documentElement.lang = next === "zh" ? "zh-CN" : "en";
  for (const l of listeners) l();
}

/** Calls fn now and whenever the language changes. */
export function onLangChange(fn: () => void) {
  listeners.add(fn);
  fn();
}

export function t(key: MessageKey, params?: Record<string, string | number>): string {
  let s = tables[lang][key];
  if (params) for (const [k, v] of Object.entries(params)) s = s.replaceAll(`{${k}}`, String(v));
  return s;
}
