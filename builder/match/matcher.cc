#include "match/matcher.h"

#include <deque>

namespace graph_ascend::match {
namespace {

using graph::Graph;
using graph::kNoNode;

// The type and shape of an item, for the structural check (missing: 0).
struct Signature {
  dump::ValueKind type_kind;
  uint32_t type;
  dump::ValueKind shape_kind;
  uint32_t shape;
  bool operator==(const Signature& o) const {
    return type_kind == o.type_kind && type == o.type && shape_kind == o.shape_kind && shape == o.shape;
  }
};

class SignatureReader {
 public:
  explicit SignatureReader(StringPool* pool) : type_(pool->Intern("type")), shape_(pool->Intern("shape")) {}

  Signature Of(const dump::DumpData& d, const dump::DumpItem& item) const {
    Signature s{dump::ValueKind::kNull, 0, dump::ValueKind::kNull, 0};
    for (uint32_t f = item.first_field; f < item.first_field + item.field_count; ++f) {
      const dump::Field& field = d.fields[f];
      if (field.name == type_) Set(field.value, &s.type_kind, &s.type);
      if (field.name == shape_) Set(field.value, &s.shape_kind, &s.shape);
    }
    return s;
  }

 private:
  static void Set(const dump::Value& v, dump::ValueKind* kind, uint32_t* id) {
    *kind = v.kind;
    if (v.kind == dump::ValueKind::kString || v.kind == dump::ValueKind::kJson) {
      *id = v.string;
    } else if (v.kind == dump::ValueKind::kInteger || v.kind == dump::ValueKind::kBool) {
      *id = static_cast<uint32_t>(v.integer);
    } else {
      *id = 0;
    }
  }
  uint32_t type_, shape_;
};

// Same number of inputs and outputs and the same signature at each position.
bool SameStructure(const graph::Side& a, int32_t ea, const graph::Side& b, int32_t eb, const SignatureReader& sig) {
  const dump::DumpEntry* x = ea == kNoNode ? nullptr : &a.dump.entries[ea];
  const dump::DumpEntry* y = eb == kNoNode ? nullptr : &b.dump.entries[eb];
  uint32_t xi = x ? x->input_count : 0, xo = x ? x->output_count : 0;
  uint32_t yi = y ? y->input_count : 0, yo = y ? y->output_count : 0;
  if (xi != yi || xo != yo) return false;
  for (uint32_t k = 0; k < xi + xo; ++k) {
    if (!(sig.Of(a.dump, a.dump.items[x->first_item + k]) == sig.Of(b.dump, b.dump.items[y->first_item + k]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<uint32_t> BreadthFirst(const Graph& g) {
  std::vector<uint32_t> order;
  order.reserve(g.size());
  order.push_back(0);
  for (size_t i = 0; i < order.size(); ++i) {
    for (int32_t c = g.first_child[order[i]]; c != kNoNode; c = g.next_sibling[c]) {
      order.push_back(static_cast<uint32_t>(c));
    }
  }
  return order;
}

uint32_t MatchDefault(graph::Side* npu, graph::Side* bench) {
  Graph& a = *npu->graph;
  Graph& b = *bench->graph;
  SignatureReader sig(npu->pool);
  // same_path[n]: the NPU node's ancestor names equal those of the Bench
  // node of the same name. Parents are visited before children.
  std::vector<uint8_t> same_path(a.size(), 0);
  uint32_t matched = 0;
  for (uint32_t n : BreadthFirst(a)) {
    int32_t t = b.Find(a.name[n]);
    if (t == kNoNode) continue;
    int32_t pa = a.parent[n], pb = b.parent[t];
    bool path;
    if (pa == kNoNode || pb == kNoNode) {
      path = pa == pb;
    } else {
      path = a.name[pa] == b.name[pb] && same_path[pa];
    }
    same_path[n] = path;
    if (!path) continue;
    if (n != 0 && !SameStructure(*npu, a.entry[n], *bench, b.entry[t], sig)) continue;
    a.matched[n] = t;
    b.matched[t] = static_cast<int32_t>(n);
    ++matched;
  }
  return matched;
}

}  // namespace graph_ascend::match
