#include "formats/msprobe_json/msprobe_json.h"

#include <cmath>
#include <ctime>

#include "base/mapped_file.h"
#include "formats/model/foreign_item.h"
#include "json/json_reader.h"
#include "vis/vis_file.h"

namespace graph_ascend::formats {
namespace {

using json::JsonType;

Result<std::string> ReadText(json::JsonReader& r) {
  auto t = r.Peek();
  if (!t.ok()) return t.error();
  if (*t == JsonType::kString) {
    auto s = r.ReadString();
    if (!s.ok()) return s.error();
    return std::string(*s);
  }
  if (*t == JsonType::kNull) {
    GA_RETURN_IF_ERROR(r.ReadNull());
    return std::string();
  }
  std::string text;
  GA_RETURN_IF_ERROR(r.ReadCompact(&text));
  return text;
}

// An int written as a number or as a string ("3": the plugin's own fixtures).
Result<int64_t> ReadInt(json::JsonReader& r) {
  auto t = r.Peek();
  if (!t.ok()) return t.error();
  if (*t == JsonType::kString) {
    auto s = r.ReadString();
    if (!s.ok()) return s.error();
    return static_cast<int64_t>(atoll(std::string(*s).c_str()));
  }
  auto n = r.ReadNumber();
  if (!n.ok()) return n.error();
  return n->is_integer ? n->integer : static_cast<int64_t>(n->number);
}

class JsonVisReader {
 public:
  JsonVisReader(std::string_view text, const std::string& path) : r_(text, path), path_(path) {}
  Result<GraphFile> Run();

 private:
  Status ReadGraph(SideBuilder* b, vis::GraphMeta* meta);
  Status ReadNodes(SideBuilder* b);
  Status ReadNode(ForeignNode* node, SideBuilder* b);
  Status ReadData(ForeignNode* node);
  Status ReadPrecision(ForeignNode* node);
  Status ReadColors(vis::FileMeta* meta);
  Status ReadToolTip(vis::FileMeta* meta);
  Status ReadMatchMap(std::vector<std::pair<std::string, std::string>>* out);

  json::JsonReader r_;
  std::string path_;
};

Status JsonVisReader::ReadPrecision(ForeignNode* node) {
  auto t = r_.Peek();
  if (!t.ok()) return t.error();
  if (*t == JsonType::kNull) return r_.ReadNull();
  if (*t == JsonType::kString) {
    auto s = r_.ReadString();
    if (!s.ok()) return s.error();
    std::string text(*s);
    char* end = nullptr;
    double v = strtod(text.c_str(), &end);
    if (end != text.c_str() && *end == '\0') {
      node->precision = v;
      node->precision_float = text.find_first_of(".eE") != std::string::npos;
    }
    return Status::Ok();
  }
  auto n = r_.ReadNumber();
  if (!n.ok()) return n.error();
  node->precision = n->number;
  node->precision_float = !n->is_integer;
  return Status::Ok();
}

Status JsonVisReader::ReadData(ForeignNode* node) {
  GA_RETURN_IF_ERROR(r_.EnterObject());
  std::string_view key;
  for (;;) {
    auto more = r_.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) break;
    if (key == "precision_index") {
      GA_RETURN_IF_ERROR(ReadPrecision(node));
    } else if (key == "Result") {
      auto s = ReadText(r_);
      if (!s.ok()) return s.error();
      node->detail.set_md5_result(*s);
    } else if (key == "overflow_level") {
      auto s = ReadText(r_);
      if (!s.ok()) return s.error();
      node->overflow = OverflowFromName(*s);
    } else {
      GA_RETURN_IF_ERROR(r_.Skip());
    }
  }
  return Status::Ok();
}

Status JsonVisReader::ReadNode(ForeignNode* node, SideBuilder* b) {
  auto t = r_.Peek();
  if (!t.ok()) return t.error();
  if (*t != JsonType::kObject) return r_.ErrorHere("node '" + node->name + "' is not an object");
  GA_RETURN_IF_ERROR(r_.EnterObject());
  std::string_view key;
  for (;;) {
    auto more = r_.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) break;
    if (key == "node_type") {
      auto v = ReadInt(r_);
      if (!v.ok()) return v.error();
      node->node_type = static_cast<uint32_t>(*v);
    } else if (key == "input_data" || key == "output_data") {
      bool output = key == "output_data";
      GA_RETURN_IF_ERROR(ReadItems(r_, output, output ? node->detail.mutable_output() : node->detail.mutable_input()));
    } else if (key == "upnode") {
      auto s = ReadText(r_);
      if (!s.ok()) return s.error();
      node->parent = *s == "None" ? "" : *s;
    } else if (key == "subnodes") {
      auto l = ReadStringList(r_);
      if (!l.ok()) return l.error();
      node->children = std::move(*l);
    } else if (key == "matched_node_link") {
      auto l = ReadStringList(r_);
      if (!l.ok()) return l.error();
      node->matched = l->empty() ? "" : l->back();
    } else if (key == "suggestions") {
      GA_RETURN_IF_ERROR(r_.EnterObject());
      for (;;) {
        auto m = r_.NextMember(&key);
        if (!m.ok()) return m.error();
        if (!*m) break;
        std::string k(key);
        auto s = ReadText(r_);
        if (!s.ok()) return s.error();
        (*node->detail.mutable_suggestions())[k] = *s;
      }
    } else if (key == "stack_info") {
      auto l = ReadStringList(r_);
      if (!l.ok()) return l.error();
      node->detail.set_stack_id(b->Stack(std::move(*l)));
    } else if (key == "micro_step_id") {
      auto v = ReadInt(r_);
      if (!v.ok()) return v.error();
      node->micro_step = static_cast<int32_t>(*v);
    } else if (key == "data") {
      GA_RETURN_IF_ERROR(ReadData(node));
    } else if (key == "precision_index") {
      GA_RETURN_IF_ERROR(ReadPrecision(node));
    } else if (key == "overflow_level") {
      auto s = ReadText(r_);
      if (!s.ok()) return s.error();
      node->overflow = OverflowFromName(*s);
    } else if (key == "matched_distributed") {
      GA_RETURN_IF_ERROR(ReadDistributed(r_, &node->detail));
    } else if (key == "parallel_merge_info") {
      auto l = ReadStringList(r_);
      if (!l.ok()) return l.error();
      for (std::string& s : *l) node->detail.add_parallel_merge_info(std::move(s));
    } else {
      GA_RETURN_IF_ERROR(r_.Skip());
    }
  }
  node->has_data = node->detail.input_size() + node->detail.output_size() > 0;
  return Status::Ok();
}

Status JsonVisReader::ReadNodes(SideBuilder* b) {
  GA_RETURN_IF_ERROR(r_.EnterObject());
  std::string_view key;
  for (;;) {
    auto more = r_.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) break;
    ForeignNode& node = b->Add(std::string(key));
    node.detail.set_stack_id(-1);
    GA_RETURN_IF_ERROR(ReadNode(&node, b));
  }
  return Status::Ok();
}

Status JsonVisReader::ReadGraph(SideBuilder* b, vis::GraphMeta* meta) {
  GA_RETURN_IF_ERROR(r_.EnterObject());
  std::string_view key;
  for (;;) {
    auto more = r_.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) break;
    if (key == "root") {
      auto s = ReadText(r_);
      if (!s.ok()) return s.error();
      meta->set_root(*s);
    } else if (key == "dump_data_dir") {
      auto t = r_.Peek();
      if (!t.ok()) return t.error();
      auto s = ReadText(r_);
      if (!s.ok()) return s.error();
      meta->set_dump_data_dir(*s);
      meta->set_has_dump_data_dir(*t != JsonType::kNull);
    } else if (key == "node") {
      GA_RETURN_IF_ERROR(ReadNodes(b));
    } else {
      GA_RETURN_IF_ERROR(r_.Skip());
    }
  }
  return Status::Ok();
}

Status JsonVisReader::ReadColors(vis::FileMeta* meta) { return ReadLegend(r_, meta); }

// ToolTip is a string holding a JSON object (or, in hand-edited files, the object).
Status ReadToolTipText(std::string_view text, const std::string& path, vis::FileMeta* meta) {
  json::JsonReader r(text, path + " (ToolTip)");
  return ReadTooltips(r, meta);
}

Status JsonVisReader::ReadToolTip(vis::FileMeta* meta) {
  auto t = r_.Peek();
  if (!t.ok()) return t.error();
  std::string text;
  if (*t == JsonType::kString) {
    auto s = r_.ReadString();
    if (!s.ok()) return s.error();
    text = std::string(*s);
  } else {
    GA_RETURN_IF_ERROR(r_.ReadCompact(&text));
  }
  if (text.empty()) return Status::Ok();
  return ReadToolTipText(text, path_, meta);
}

Status JsonVisReader::ReadMatchMap(std::vector<std::pair<std::string, std::string>>* out) {
  GA_RETURN_IF_ERROR(r_.EnterObject());
  std::string_view key;
  for (;;) {
    auto more = r_.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) break;
    std::string k(key);
    auto s = ReadText(r_);
    if (!s.ok()) return s.error();
    out->emplace_back(std::move(k), std::move(*s));
  }
  return Status::Ok();
}

vis::CompareMode ModeOfTask(const std::string& task) {
  if (task == "md5") return vis::MODE_MD5;
  if (task == "all") return vis::MODE_TENSOR;
  if (task == "structure") return vis::MODE_STRUCTURE;
  return vis::MODE_STATISTICS;
}

Result<GraphFile> JsonVisReader::Run() {
  GraphFile g;
  vis::FileMeta& meta = g.meta;
  SideBuilder npu, bench;
  bool compare = false;
  std::string task;
  std::vector<std::pair<std::string, std::string>> npu_map, bench_map;
  auto t = r_.Peek();
  if (!t.ok()) return t.error();
  if (*t != JsonType::kObject) return r_.ErrorHere("a JSON .vis is an object");
  GA_RETURN_IF_ERROR(r_.EnterObject());
  std::string_view key;
  for (;;) {
    auto more = r_.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) break;
    if (key == "NPU" || key == "Bench") {
      bool is_npu = key == "NPU";
      compare = true;
      GA_RETURN_IF_ERROR(ReadGraph(is_npu ? &npu : &bench, is_npu ? meta.mutable_npu() : meta.mutable_bench()));
    } else if (key == "root") {
      auto s = ReadText(r_);
      if (!s.ok()) return s.error();
      meta.mutable_npu()->set_root(*s);
    } else if (key == "dump_data_dir") {
      auto p = r_.Peek();
      if (!p.ok()) return p.error();
      auto s = ReadText(r_);
      if (!s.ok()) return s.error();
      meta.mutable_npu()->set_dump_data_dir(*s);
      meta.mutable_npu()->set_has_dump_data_dir(*p != JsonType::kNull);
    } else if (key == "node") {
      GA_RETURN_IF_ERROR(ReadNodes(&npu));
    } else if (key == "ToolTip") {
      GA_RETURN_IF_ERROR(ReadToolTip(&meta));
    } else if (key == "Colors") {
      GA_RETURN_IF_ERROR(ReadColors(&meta));
    } else if (key == "MicroSteps") {
      auto v = ReadInt(r_);
      if (!v.ok()) return v.error();
      meta.set_micro_steps(static_cast<uint32_t>(std::max<int64_t>(1, *v)));
    } else if (key == "task") {
      auto s = ReadText(r_);
      if (!s.ok()) return s.error();
      task = *s;
    } else if (key == "OverflowCheck") {
      auto p = r_.Peek();
      if (!p.ok()) return p.error();
      if (*p == JsonType::kBool) {
        auto b = r_.ReadBool();
        if (!b.ok()) return b.error();
        meta.set_overflow_checked(*b);
      } else {
        GA_RETURN_IF_ERROR(r_.Skip());
      }
    } else if (key == "npu_match_nodes") {
      GA_RETURN_IF_ERROR(ReadMatchMap(&npu_map));
    } else if (key == "bench_match_nodes") {
      GA_RETURN_IF_ERROR(ReadMatchMap(&bench_map));
    } else {
      GA_RETURN_IF_ERROR(r_.Skip());
    }
  }
  GA_RETURN_IF_ERROR(r_.ExpectEnd());
  if (npu.size() == 0) return Error{path_, "key node", "the file holds no graph (no \"node\" object)"};
  // The plugin's saved match maps name pairs the links do not.
  for (const auto& [n, b] : npu_map) npu.Add(n).matched = b;
  for (const auto& [b, n] : bench_map) bench.Add(b).matched = n;
  std::string npu_root = meta.npu().root().empty() ? "DefaultModel" : meta.npu().root();
  auto npu_side = npu.Finish(npu_root, path_);
  if (!npu_side.ok()) return npu_side.error();
  g.npu = std::move(*npu_side);
  meta.mutable_npu()->set_root(npu_root);
  meta.set_format_version(vis::kFormatVersion);
  meta.set_writer("msprobe JSON .vis");
  meta.set_created_unix(static_cast<int64_t>(time(nullptr)));
  if (meta.micro_steps() == 0) meta.set_micro_steps(1);
  if (compare) {
    std::string bench_root = meta.bench().root().empty() ? "DefaultModel" : meta.bench().root();
    auto bench_side = bench.Finish(bench_root, path_);
    if (!bench_side.ok()) return bench_side.error();
    g.bench = std::move(*bench_side);
    meta.mutable_bench()->set_root(bench_root);
    GA_RETURN_IF_ERROR(ResolveMatches(path_, npu, &g.npu, bench, &g.bench));
    meta.set_kind(vis::GRAPH_COMPARE);
    meta.set_mode(ModeOfTask(task));
    meta.set_task(task.empty() ? "summary" : task);
  } else {
    meta.set_kind(vis::GRAPH_BUILD);
    meta.set_mode(vis::MODE_NONE);
  }
  NameLegend(&meta);
  return g;
}

}  // namespace

Result<GraphFile> ReadMsprobeJson(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  JsonVisReader reader(file->text(), path);
  return reader.Run();
}

}  // namespace graph_ascend::formats
