#include "side_graph.h"

#include <google/protobuf/arena.h>

#include <algorithm>
#include <limits>

namespace graph_ascend::service {
namespace {

// Sizes in the table of contents are claims of the file: reservations made
// from them are capped, so a forged size costs at most this much up front.
constexpr uint64_t kMaxReserveBytes = uint64_t{256} << 20;
constexpr uint64_t kMaxReserveNodes = uint64_t{1} << 22;

template <typename Column, typename T>
bool CopyColumn(const Column& col, uint32_t n, T fallback, std::vector<T>* out) {
  if (col.size() == 0) {
    out->insert(out->end(), n, fallback);
    return true;
  }
  if (static_cast<uint32_t>(col.size()) != n) return false;
  for (auto v : col) out->push_back(static_cast<T>(v));
  return true;
}

// The first value of a column of unsigned values above `max`, or -1.
template <typename Column>
int64_t FirstAbove(const Column& col, uint64_t max) {
  for (int i = 0; i < col.size(); ++i) {
    if (static_cast<uint64_t>(col.Get(i)) > max) return i;
  }
  return -1;
}

}  // namespace

Result<std::unique_ptr<SideGraph>> SideGraph::Load(const vis::VisReader& reader, vis::Side side,
                                                   const std::function<void(double)>& progress) {
  const std::string& path = reader.path();
  auto sections = reader.Sections(vis::SECTION_NODE_INDEX, side);
  if (sections.empty()) return MakeError(path, "", side == vis::SIDE_NPU ? "no NPU node index" : "no Bench node index");
  uint64_t total_nodes = 0, total_bytes = 0, done_bytes = 0, raw_bytes = 0;
  for (const auto* s : sections) {
    total_nodes += s->count();
    total_bytes += s->compressed_size();
    raw_bytes += s->raw_size();
  }
  if (total_nodes == 0 || total_nodes >= static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    return MakeError(path, "node index", "bad node count " + std::to_string(total_nodes));
  }
  std::unique_ptr<SideGraph> g(new SideGraph());
  const uint32_t n_total = static_cast<uint32_t>(total_nodes);
  const size_t reserve = static_cast<size_t>(std::min<uint64_t>(n_total, kMaxReserveNodes));
  g->names_.reserve(static_cast<size_t>(std::min(raw_bytes, kMaxReserveBytes)));
  g->name_offset_.reserve(reserve + 1);
  g->node_type_.reserve(reserve);
  g->parent_.reserve(reserve);
  g->child_begin_.reserve(reserve + 1);
  g->children_.reserve(reserve);
  g->micro_step_.reserve(reserve);
  g->precision_.reserve(reserve);
  g->grade_.reserve(reserve);
  g->overflow_.reserve(reserve);
  g->matched_.reserve(reserve);
  g->flags_.reserve(reserve);
  g->child_begin_.push_back(0);

  uint32_t expect = 0;
  for (const vis::SectionRef* ref : sections) {
    google::protobuf::Arena arena;
    auto* chunk = google::protobuf::Arena::CreateMessage<vis::NodeIndexChunk>(&arena);
    GA_RETURN_IF_ERROR(reader.ReadSection(*ref, chunk));
    const std::string where = "node index section at byte " + std::to_string(ref->offset());
    const uint32_t n = static_cast<uint32_t>(chunk->name_size());
    if (chunk->first() != expect || n != ref->count()) {
      return MakeError(path, where, "damaged node index (chunks out of order)");
    }
    // Names go into the buffer as they are; a chunk whose names hold a line
    // break (one memchr pass tells) is redone name by name.
    const size_t chunk_start = g->names_.size();
    const size_t first_node = g->name_offset_.size();
    for (const std::string& name : chunk->name()) {
      g->name_offset_.push_back(static_cast<uint32_t>(g->names_.size()));
      g->names_ += name;
      g->names_.push_back('\n');
    }
    std::string_view added(g->names_.data() + chunk_start, g->names_.size() - chunk_start);
    const size_t breaks = static_cast<size_t>(std::count(added.begin(), added.end(), '\n'));
    if (breaks != n || added.find('\r') != std::string_view::npos) {
      g->names_.resize(chunk_start);
      g->name_offset_.resize(first_node);
      for (const std::string& name : chunk->name()) {
        g->AppendName(static_cast<uint32_t>(g->name_offset_.size()), name);
      }
    }
    if (g->names_.size() >= std::numeric_limits<uint32_t>::max()) return MakeError(path, where, "names too large");
    bool ok = CopyColumn(chunk->node_type(), n, uint8_t{0}, &g->node_type_) &&
              CopyColumn(chunk->parent(), n, int32_t{-1}, &g->parent_) &&
              CopyColumn(chunk->micro_step(), n, int32_t{-1}, &g->micro_step_) &&
              CopyColumn(chunk->precision_index(), n, std::numeric_limits<double>::quiet_NaN(), &g->precision_) &&
              CopyColumn(chunk->grade_index(), n, std::numeric_limits<double>::quiet_NaN(), &g->grade_) &&
              CopyColumn(chunk->overflow_level(), n, uint8_t{0}, &g->overflow_) &&
              CopyColumn(chunk->matched(), n, int32_t{-1}, &g->matched_) &&
              CopyColumn(chunk->flags(), n, uint8_t{0}, &g->flags_);
    if (!ok) return MakeError(path, where, "damaged node index (columns of different lengths)");
    // Columns kept in narrower types are checked against their range, so no
    // value is truncated or reaches a shift or table out of range later.
    const std::pair<const char*, int64_t> narrow[] = {
        {"node_type", FirstAbove(chunk->node_type(), 255)},
        {"overflow_level", FirstAbove(chunk->overflow_level(), vis::OVERFLOW_CRITICAL)},
        {"flags", FirstAbove(chunk->flags(), 255)},
    };
    for (const auto& [column, at] : narrow) {
      if (at >= 0) {
        return MakeError(path, where,
                         "damaged node index (" + std::string(column) + " of node " +
                             std::to_string(chunk->first() + static_cast<uint64_t>(at)) + " out of range)");
      }
    }
    if (chunk->child_count_size() != 0 && static_cast<uint32_t>(chunk->child_count_size()) != n) {
      return MakeError(path, where, "damaged node index (child_count column)");
    }
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t c = chunk->child_count_size() ? chunk->child_count(static_cast<int>(i)) : 0;
      sum += c;
      g->child_begin_.push_back(static_cast<uint32_t>(g->child_begin_.back() + c));
    }
    if (sum != static_cast<uint64_t>(chunk->children_size())) {
      return MakeError(path, where, "damaged node index (children do not add up to child_count)");
    }
    g->children_.insert(g->children_.end(), chunk->children().begin(), chunk->children().end());
    expect += n;
    done_bytes += ref->compressed_size();
    if (progress) progress(0.8 * static_cast<double>(done_bytes) / static_cast<double>(total_bytes));
  }
  g->name_offset_.push_back(static_cast<uint32_t>(g->names_.size()));
  if (progress) progress(0.85);
  GA_RETURN_IF_ERROR(g->Derive(path, side));
  if (progress) progress(1.0);
  return g;
}

void SideGraph::AppendName(uint32_t i, std::string_view name) {
  name_offset_.push_back(static_cast<uint32_t>(names_.size()));
  if (name.find_first_of("\n\r") == std::string_view::npos) {
    names_ += name;
  } else {
    odd_names_[i] = std::string(name);
    std::string flat(name);
    std::replace(flat.begin(), flat.end(), '\n', ' ');
    std::replace(flat.begin(), flat.end(), '\r', ' ');
    names_ += flat;
  }
  names_.push_back('\n');
}

Result<std::unique_ptr<SideGraph>> SideGraph::FromPartial(const vis::PartialSideIndex& idx,
                                                          const std::string& path, vis::Side side) {
  const uint32_t n = idx.size;
  const std::string where = side == vis::SIDE_NPU ? "NPU node index" : "Bench node index";
  if (n == 0) return MakeError(path, where, "no nodes");
  std::unique_ptr<SideGraph> g(new SideGraph());
  uint64_t children = 0, name_bytes = 0;
  for (size_t k = 0; k < idx.known.size(); ++k) {
    const vis::PartialSideIndex::Known& node = idx.known[k];
    if (node.index >= n || (k > 0 && node.index <= idx.known[k - 1].index)) {
      return MakeError(path, where, "node " + std::to_string(node.index) + " out of range or out of order");
    }
    if (node.flags > 255) return MakeError(path, where, "flags out of range");
    if (node.overflow > vis::OVERFLOW_CRITICAL) return MakeError(path, where, "overflow_level out of range");
    children += node.children.size();
    name_bytes += node.name.size();
  }
  if (name_bytes + n >= std::numeric_limits<uint32_t>::max() || children >= n) {
    return MakeError(path, where, "names or children out of range");
  }
  // Nameless nodes column-wide, the known ones over them: each column
  // written once (10^5-10^6 nodes, a few dozen known).
  g->names_.reserve(name_bytes + n);
  g->name_offset_.reserve(n + 1);
  g->child_begin_.reserve(n + 1);
  g->children_.reserve(children);
  g->node_type_.assign(n, static_cast<uint8_t>(vis::NODE_MODULE));
  g->parent_.assign(n, -1);
  g->micro_step_.assign(n, -1);
  g->precision_.assign(n, std::numeric_limits<double>::quiet_NaN());
  g->grade_.assign(n, std::numeric_limits<double>::quiet_NaN());
  g->overflow_.assign(n, 0);
  g->matched_.assign(n, -1);
  g->flags_.assign(n, 0);
  uint32_t next = 0;  // nodes before it are written
  auto nameless_to = [&](uint32_t end) {  // an empty line each, no children: whole runs at once
    const size_t run = end - next, from = g->name_offset_.size();
    const uint32_t base = static_cast<uint32_t>(g->names_.size());
    g->names_.append(run, '\n');
    g->name_offset_.resize(from + run);
    for (size_t j = 0; j < run; ++j) g->name_offset_[from + j] = base + static_cast<uint32_t>(j);
    g->child_begin_.insert(g->child_begin_.end(), run, static_cast<uint32_t>(g->children_.size()));
    next = end;
  };
  for (const vis::PartialSideIndex::Known& node : idx.known) {
    nameless_to(node.index);
    const uint32_t at = node.index;
    g->AppendName(at, node.name);
    g->child_begin_.push_back(static_cast<uint32_t>(g->children_.size()));
    for (uint32_t c : node.children) {
      if (c >= n || c == 0 || g->parent_[c] >= 0) {
        return MakeError(path, where,
                         "node " + std::to_string(at) + ": child " + std::to_string(c) +
                             " out of range or listed twice");
      }
      g->parent_[c] = static_cast<int32_t>(at);
      g->children_.push_back(c);
    }
    g->node_type_[at] = node.node_type;
    g->micro_step_[at] = node.micro_step;
    g->precision_[at] = node.precision;
    g->overflow_[at] = node.overflow;
    g->matched_[at] = node.matched;
    g->flags_[at] = static_cast<uint8_t>(node.flags);
    next = at + 1;
  }
  nameless_to(n);
  g->name_offset_.push_back(static_cast<uint32_t>(g->names_.size()));
  g->child_begin_.push_back(static_cast<uint32_t>(g->children_.size()));
  // Only known nodes have children, so a cycle of parents is one of known
  // nodes: each chain reaches a root within as many steps as there are.
  for (const vis::PartialSideIndex::Known& node : idx.known) {
    int32_t at = static_cast<int32_t>(node.index);
    for (size_t steps = 0; at >= 0; ++steps) {
      if (steps > idx.known.size()) return MakeError(path, where, "the parents form a cycle");
      at = g->parent_[static_cast<uint32_t>(at)];
    }
  }
  GA_RETURN_IF_ERROR(g->Derive(path, side));
  return g;
}

Status SideGraph::Derive(const std::string& path, vis::Side side) {
  SideGraph* g = this;
  const uint32_t n_total = size();
  // Hierarchy checks and derived columns: a breadth-first walk from the root.
  const std::string where = side == vis::SIDE_NPU ? "NPU node index" : "Bench node index";
  for (uint32_t c : g->children_) {
    if (c >= n_total || c == 0) return MakeError(path, where, "child index " + std::to_string(c) + " out of range");
  }
  for (uint32_t i = 0; i < n_total; ++i) {
    if (g->parent_[i] < -1 || g->parent_[i] >= static_cast<int32_t>(n_total)) {
      return MakeError(path, where, "node " + std::to_string(i) + ": parent out of range");
    }
  }
  g->depth_.assign(n_total, -1);
  g->top_micro_step_.assign(n_total, -1);
  g->depth_[0] = 0;
  std::vector<uint32_t> queue = {0};
  queue.reserve(n_total);
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    uint32_t p = queue[qi];
    for (uint32_t k = g->child_begin_[p]; k < g->child_begin_[p + 1]; ++k) {
      uint32_t c = g->children_[k];
      if (g->depth_[c] >= 0) {
        return MakeError(path, where, "node " + std::to_string(c) + " is listed twice in the hierarchy");
      }
      if (g->parent_[c] != static_cast<int32_t>(p)) {
        return MakeError(path, where, "node " + std::to_string(c) + ": parent column disagrees with children");
      }
      g->depth_[c] = g->depth_[p] + 1;
      g->top_micro_step_[c] = p == 0 ? g->micro_step_[c] : g->top_micro_step_[p];
      queue.push_back(c);
    }
  }
  g->folded_ = g->names_;
  for (char& ch : g->folded_) {
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  }
  g->bucket_.assign(n_total, -1);
  g->grade_bucket_.assign(n_total, -1);
  return Status::Ok();
}

std::string_view SideGraph::name(uint32_t n) const {
  if (!odd_names_.empty()) {
    auto it = odd_names_.find(n);
    if (it != odd_names_.end()) return it->second;
  }
  return std::string_view(names_).substr(name_offset_[n], name_offset_[n + 1] - name_offset_[n] - 1);
}

uint32_t SideGraph::NodeAtOffset(size_t offset) const {
  auto it = std::upper_bound(name_offset_.begin(), name_offset_.end(), static_cast<uint32_t>(offset));
  return static_cast<uint32_t>(it - name_offset_.begin()) - 1;
}

int32_t SideGraph::Find(std::string_view name) const {
  std::call_once(by_name_once_, [this] {
    by_name_.reserve(size());
    for (uint32_t i = 0; i < size(); ++i) by_name_.emplace(this->name(i), i);
  });
  auto it = by_name_.find(name);
  return it == by_name_.end() ? -1 : static_cast<int32_t>(it->second);
}

std::vector<uint32_t> SideGraph::Ancestors(uint32_t n, size_t limit) const {
  std::vector<uint32_t> out;
  limit = std::min<size_t>(limit, size());
  for (int32_t p = parent_[n]; p >= 0 && out.size() < limit; p = parent_[p]) out.push_back(static_cast<uint32_t>(p));
  std::reverse(out.begin(), out.end());
  return out;
}

size_t SideGraph::MemoryBytes() const {
  size_t per_node = sizeof(uint32_t) * 3 + sizeof(uint8_t) * 3 + sizeof(int32_t) * 5 + sizeof(double) * 2 + 2;
  size_t bytes = names_.capacity() + folded_.capacity() + per_node * size() + children_.capacity() * sizeof(uint32_t);
  if (!by_name_.empty()) bytes += by_name_.size() * 48;
  return bytes;
}

}  // namespace graph_ascend::service
