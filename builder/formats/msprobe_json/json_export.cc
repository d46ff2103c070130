#include "formats/msprobe_json/json_export.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "base/py_format.h"
#include "compare/item_view.h"
#include "json/json_reader.h"
#include "json/json_writer.h"
#include "vis/vis_index.h"

namespace graph_ascend::vis {
namespace {

const char* ModeTask(CompareMode m) {
  switch (m) {
    case MODE_STATISTICS: return "summary";
    case MODE_MD5: return "md5";
    case MODE_TENSOR: return "all";
    case MODE_STRUCTURE: return "structure";
    default: return "";
  }
}

std::string Number(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  if (x == std::floor(x) && std::fabs(x) < 1e15) return std::to_string(static_cast<long long>(x));
  return PyRepr(x);
}

const char* OverflowName(uint8_t level) {
  switch (level) {
    case OVERFLOW_MEDIUM: return "medium";
    case OVERFLOW_HIGH: return "high";
    case OVERFLOW_CRITICAL: return "critical";
    default: return nullptr;
  }
}

class Exporter {
 public:
  Exporter(const VisReader& reader, FILE* out, Grading grading)
      : reader_(reader), out_(out), grading_(grading), w_(&buf_) {}

  Status Run();

 private:
  Status Flush(bool force = false) {
    if (!force && buf_.size() < (1u << 20)) return Status::Ok();
    if (fwrite(buf_.data(), 1, buf_.size(), out_) != buf_.size()) {
      return Error{"", "", std::string("write failed: ") + strerror(errno)};
    }
    buf_.clear();
    return Status::Ok();
  }
  Status WriteGraph(Side side, const SideIndex& idx, const SideIndex* other, const GraphMeta& gm);
  void WriteItems(const char* key, const google::protobuf::RepeatedPtrField<Item>& items, const std::string& node);

  const VisReader& reader_;
  FILE* out_;
  Grading grading_;
  std::string buf_;
  ItemText item_text_;  // reused from item to item
  json::JsonWriter w_;
  CompareMode mode_ = MODE_NONE;
};

void Exporter::WriteItems(const char* key, const google::protobuf::RepeatedPtrField<Item>& items,
                          const std::string& node) {
  w_.Key(key);
  w_.BeginObject();
  for (const Item& item : items) {
    w_.Key(item.key());
    w_.BeginObject();
    FormatItemTo(item, mode_, node, &item_text_);
    for (const auto& [k, v] : item_text_) {
      w_.Key(k);
      w_.String(v);
    }
    w_.EndObject();
  }
  w_.EndObject();
}

Status Exporter::WriteGraph(Side side, const SideIndex& idx, const SideIndex* other, const GraphMeta& gm) {
  // Stacks are deduplicated in the .vis; read them all once.
  std::vector<std::vector<std::string>> stacks;
  for (const SectionRef* ref : reader_.Sections(SECTION_STACKS, side)) {
    StackChunk chunk;
    GA_RETURN_IF_ERROR(reader_.ReadSection(*ref, &chunk));
    for (const Stack& s : chunk.stack()) stacks.emplace_back(s.frame().begin(), s.frame().end());
  }
  w_.Key("root");
  w_.String(idx.size() ? idx.Name(0) : "DefaultModel");
  w_.Key("dump_data_dir");
  if (gm.has_dump_data_dir()) {
    w_.String(gm.dump_data_dir());
  } else {
    w_.Null();
  }
  w_.Key("node");
  w_.BeginObject();
  NodeDetailBlock block;
  bool have_block = false;
  for (uint32_t n = 0; n < idx.size(); ++n) {
    if (!have_block || n < block.first() || n >= block.first() + static_cast<uint32_t>(block.detail_size())) {
      auto b = reader_.ReadDetailBlock(side, n, [&idx](uint32_t i) { return idx.Name(i); });
      if (!b.ok()) return b.error();
      block = std::move(*b);
      have_block = true;
    }
    const NodeDetail& d = block.detail(static_cast<int>(n - block.first()));
    std::string name(idx.Name(n));
    w_.Key(name);
    w_.BeginObject();
    w_.Key("id");
    w_.String(name);
    w_.Key("node_type");
    w_.Raw(std::to_string(idx.node_type[n]));
    WriteItems("output_data", d.output(), name);
    WriteItems("input_data", d.input(), name);
    w_.Key("upnode");
    w_.String(idx.parent[n] >= 0 ? idx.Name(static_cast<uint32_t>(idx.parent[n])) : "None");
    w_.Key("subnodes");
    w_.BeginArray();
    for (uint32_t i = idx.child_offset[n]; i < idx.child_offset[n + 1]; ++i) w_.String(idx.Name(idx.children[i]));
    w_.EndArray();
    w_.Key("matched_node_link");
    w_.BeginArray();
    if (other != nullptr && idx.matched[n] >= 0 && static_cast<uint32_t>(idx.matched[n]) < other->size()) {
      uint32_t m = static_cast<uint32_t>(idx.matched[n]);
      for (uint32_t a : other->Ancestors(m)) w_.String(other->Name(a));
      w_.String(other->Name(m));
    }
    w_.EndArray();
    w_.Key("suggestions");
    w_.BeginObject();
    for (const auto& [k, v] : d.suggestions()) {
      w_.Key(k);
      w_.String(v);
    }
    w_.EndObject();
    w_.Key("stack_info");
    w_.BeginArray();
    if (d.stack_id() >= 0 && static_cast<size_t>(d.stack_id()) < stacks.size()) {
      for (const std::string& line : stacks[d.stack_id()]) w_.String(line);
    }
    w_.EndArray();
    if (idx.micro_step[n] >= 0) {
      w_.Key("micro_step_id");
      w_.Raw(std::to_string(idx.micro_step[n]));
    }
    w_.Key("data");
    w_.BeginObject();
    if (grading_ == GRADING_26) {
      if (side == SIDE_NPU && !std::isnan(idx.grade[n])) {
        w_.Key("precision_index");
        w_.Raw(Number(idx.grade[n]));
      }
    } else if (side == SIDE_NPU && !std::isnan(idx.precision[n])) {
      w_.Key("precision_index");
      w_.Raw((idx.flags[n] & FLAG_PRECISION_FLOAT) ? PyRepr(idx.precision[n]) : Number(idx.precision[n]));
    }
    if (!d.md5_result().empty()) {
      w_.Key("Result");
      w_.String(d.md5_result());
    }
    if (const char* level = OverflowName(idx.overflow[n])) {
      w_.Key("overflow_level");
      w_.String(level);
    }
    w_.EndObject();
    if (d.distributed_size() > 0) {
      w_.Key("matched_distributed");
      // One dict per link type: {"communications_type", "nodes_info": {rank: [index, node]}}.
      auto dict = [&](int first, int last) {
        w_.BeginObject();
        w_.Key("communications_type");
        w_.String(d.distributed(first).communications_type());
        w_.Key("nodes_info");
        w_.BeginObject();
        for (int i = first; i < last; ++i) {
          const DistributedLink& l = d.distributed(i);
          w_.Key(std::to_string(l.rank()));
          w_.BeginArray();
          w_.String(l.peer_index());
          w_.String(l.peer_node());
          w_.EndArray();
        }
        w_.EndObject();
        w_.EndObject();
      };
      if (d.distributed_is_list()) {
        // batch_isend_irecv: one dict per operation.
        w_.BeginArray();
        for (int i = 0; i < d.distributed_size(); ++i) dict(i, i + 1);
        w_.EndArray();
      } else {
        dict(0, d.distributed_size());
      }
    }
    if (d.parallel_merge_info_size() > 0) {
      w_.Key("parallel_merge_info");
      w_.BeginArray();
      for (const std::string& s : d.parallel_merge_info()) w_.String(s);
      w_.EndArray();
    }
    w_.EndObject();
    GA_RETURN_IF_ERROR(Flush());
  }
  w_.EndObject();
  return Status::Ok();
}

Status Exporter::Run() {
  const FileMeta& meta = reader_.meta();
  mode_ = meta.mode();
  auto npu = LoadSideIndex(reader_, SIDE_NPU);
  if (!npu.ok()) return npu.error();
  bool compare = meta.kind() == GRAPH_COMPARE;
  w_.BeginObject();
  if (!compare) {
    // A build is the graph object itself plus MicroSteps / OverflowCheck.
    GA_RETURN_IF_ERROR(WriteGraph(SIDE_NPU, *npu, nullptr, meta.npu()));
  } else {
    auto bench = LoadSideIndex(reader_, SIDE_BENCH);
    if (!bench.ok()) return bench.error();
    w_.Key("NPU");
    w_.BeginObject();
    GA_RETURN_IF_ERROR(WriteGraph(SIDE_NPU, *npu, &*bench, meta.npu()));
    w_.EndObject();
    w_.Key("Bench");
    w_.BeginObject();
    GA_RETURN_IF_ERROR(WriteGraph(SIDE_BENCH, *bench, &*npu, meta.bench()));
    w_.EndObject();
    if (meta.tooltips_size() > 0) {
      std::string tip = "{";
      for (int i = 0; i < meta.tooltips_size(); ++i) {
        if (i) tip += ", ";
        json::AppendQuoted(meta.tooltips(i).key(), &tip, true);
        tip += ": ";
        json::AppendQuoted(meta.tooltips(i).text(), &tip, true);
      }
      tip += "}";
      w_.Key("ToolTip");
      w_.String(tip);
    }
    if (meta.legend_size() > 0) {
      w_.Key("Colors");
      w_.BeginObject();
      for (const ColorBucket& b : meta.legend()) {
        w_.Key(b.color());
        w_.BeginObject();
        w_.Key("value");
        w_.BeginArray();
        if (!b.unmatched()) {
          w_.Raw(Number(b.lo()));
          w_.Raw(Number(b.hi()));
        }
        w_.EndArray();
        w_.Key("description");
        w_.String(b.description());
        w_.EndObject();
      }
      w_.EndObject();
    }
  }
  w_.Key("MicroSteps");
  w_.Raw(std::to_string(std::max<uint32_t>(1, meta.micro_steps())));
  if (compare && *ModeTask(mode_)) {
    w_.Key("task");
    w_.String(ModeTask(mode_));
  }
  w_.Key("OverflowCheck");
  w_.Bool(meta.overflow_checked());
  w_.EndObject();
  return Flush(true);
}

}  // namespace


Status ExportJson(const std::string& vis_path, const std::string& json_path) {
  return ExportJson(vis_path, json_path, GRADING_INDEX);
}

Status ExportJson(const std::string& vis_path, const std::string& json_path, Grading grading) {
  auto reader = VisReader::Open(vis_path);
  if (!reader.ok()) return reader.error();
  std::string tmp = json_path + ".tmp-" + std::to_string(getpid());
  TemporaryFile temp(tmp);
  FILE* f = fopen(tmp.c_str(), "wb");
  if (f == nullptr) return Error{json_path, "", std::string("cannot create: ") + strerror(errno)};
  Exporter exporter(**reader, f, grading);
  Status st = exporter.Run();
  if (fclose(f) != 0 && st.ok()) st = Error{json_path, "", std::string("write failed: ") + strerror(errno)};
  if (!st.ok()) {
    unlink(tmp.c_str());
    if (st.error().file.empty()) st.error().file = json_path;
    return st;
  }
  if (rename(tmp.c_str(), json_path.c_str()) != 0) {
    unlink(tmp.c_str());
    return Error{json_path, "", std::string("cannot rename temporary file: ") + strerror(errno)};
  }
  return Status::Ok();
}

}  // namespace graph_ascend::vis
