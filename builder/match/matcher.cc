#include "match/matcher.h"

#include <algorithm>
#include <deque>
#include <string>
#include <unordered_map>

namespace graph_ascend::match {
namespace {

using graph::Graph;
using graph::kNoNode;

// The type and shape of an item as msprobe compares them (§4.2, §6.3.1):
// a tensor's shape field; for a leaf without a dtype a text derived from it
// (a torch.Size's value, a slice's "(3,)", otherwise "[]"), which never
// equals a tensor's shape; nothing for a None argument. Missing: kNull.
struct Signature {
  dump::ValueKind type_kind;
  uint32_t type;
  dump::ValueKind shape_kind;
  uint32_t shape;
  bool operator==(const Signature& o) const {
    return type_kind == o.type_kind && type == o.type && shape_kind == o.shape_kind && shape == o.shape;
  }
  bool SameShape(const Signature& o) const { return shape_kind == o.shape_kind && shape == o.shape; }
};

class SignatureReader {
 public:
  explicit SignatureReader(StringPool* pool)
      : type_(pool->Intern("type")),
        shape_(pool->Intern("shape")),
        dtype_(pool->Intern("dtype")),
        value_(pool->Intern("value")),
        torch_size_(pool->Intern("torch.Size")),
        slice_(pool->Intern("slice")),
        scalar_shape_(pool->Intern("[]")),
        slice_shape_(pool->Intern("(3,)")),
        empty_(pool->Intern("")) {}

  Signature Of(const dump::DumpData& d, const dump::DumpItem& item) const {
    Signature s{dump::ValueKind::kNull, 0, dump::ValueKind::kNull, 0};
    if (item.flags & dump::kItemNull) return s;
    bool has_dtype = false;
    const dump::Value* value = nullptr;
    for (uint32_t f = item.first_field; f < item.first_field + item.field_count; ++f) {
      const dump::Field& field = d.fields[f];
      if (field.name == type_) Set(field.value, &s.type_kind, &s.type);
      if (field.name == shape_) Set(field.value, &s.shape_kind, &s.shape);
      if (field.name == dtype_) {
        has_dtype = field.value.kind == dump::ValueKind::kString && field.value.string != empty_;
      }
      if (field.name == value_) value = &field.value;
    }
    if (has_dtype) return s;
    // A derived text, of another kind than a tensor's shape list: "[]" is
    // not a 0-d tensor's [].
    bool typed = s.type_kind == dump::ValueKind::kString;
    s.shape_kind = dump::ValueKind::kString;
    s.shape = scalar_shape_;
    if (typed && s.type == torch_size_ && value != nullptr && value->kind == dump::ValueKind::kJson) {
      s.shape = value->string;  // str(value); the list's compact JSON text stands for it
    } else if (typed && s.type == slice_) {
      s.shape = slice_shape_;
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
  uint32_t type_, shape_, dtype_, value_, torch_size_, slice_, scalar_shape_, slice_shape_, empty_;
};

// Same number of inputs and outputs and the same signature at each position;
// parameter gradients pair by name (their order is the order they arrived
// in, which differs between runs).
bool SameStructure(const graph::Side& a, int32_t ea, const graph::Side& b, int32_t eb, const SignatureReader& sig) {
  const dump::DumpEntry* x = ea == kNoNode ? nullptr : &a.dump.entries[ea];
  const dump::DumpEntry* y = eb == kNoNode ? nullptr : &b.dump.entries[eb];
  uint32_t xi = x ? x->input_count : 0, xo = x ? x->output_count : 0;
  uint32_t yi = y ? y->input_count : 0, yo = y ? y->output_count : 0;
  if (xi != yi || xo != yo) return false;
  for (uint32_t k = 0; k < xi + xo; ++k) {
    const dump::DumpItem& item = a.dump.items[x->first_item + k];
    const dump::DumpItem* peer = &b.dump.items[y->first_item + k];
    if (item.state == dump::ItemState::kParametersGrad) {
      peer = nullptr;
      for (uint32_t j = 0; j < yi + yo && peer == nullptr; ++j) {
        const dump::DumpItem& c = b.dump.items[y->first_item + j];
        if (c.state == dump::ItemState::kParametersGrad && c.key == item.key) peer = &c;
      }
      if (peer == nullptr) return false;
    }
    if (!(sig.Of(a.dump, item) == sig.Of(b.dump, *peer))) return false;
  }
  return true;
}

// The signatures of a node's inputs and outputs, for fuzzy equality.
struct Shapes {
  std::vector<Signature> in, out;
};

Shapes ShapesOf(const graph::Side& side, int32_t entry, const SignatureReader& sig) {
  Shapes s;
  if (entry == kNoNode) return s;
  const dump::DumpEntry& e = side.dump.entries[entry];
  std::vector<std::pair<uint32_t, Signature>> gradients;  // by key: they pair by name
  for (uint32_t k = 0; k < e.input_count + e.output_count; ++k) {
    const dump::DumpItem& item = side.dump.items[e.first_item + k];
    if (item.state == dump::ItemState::kParametersGrad) {
      gradients.emplace_back(item.key, sig.Of(side.dump, item));
      continue;
    }
    (k < e.input_count ? s.in : s.out).push_back(sig.Of(side.dump, item));
  }
  std::stable_sort(gradients.begin(), gradients.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& g : gradients) s.in.push_back(g.second);
  return s;
}

// Shapes only, zipped: the shorter list decides how many are compared.
bool ZipEqual(const std::vector<Signature>& a, const std::vector<Signature>& b) {
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (!a[i].SameShape(b[i])) return false;
  }
  return true;
}

void Link(Graph* a, uint32_t n, Graph* b, uint32_t t) {
  a->matched[n] = static_cast<int32_t>(t);
  b->matched[t] = static_cast<int32_t>(n);
}

}  // namespace

std::string FuzzyKey(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  size_t i = 0;
  while (i < name.size()) {
    if (name[i] == '.') {
      size_t j = i + 1;
      while (j < name.size() && name[j] >= '0' && name[j] <= '9') ++j;
      if (j > i + 1 && j < name.size() && name[j] == '.') {
        out.push_back('.');
        i = j + 1;  // the trailing dot belongs to the match (non-overlapping)
        continue;
      }
    }
    if (name.compare(i, 5, "_rank") == 0) {
      size_t j = i + 5;
      while (j < name.size() && name[j] >= '0' && name[j] <= '9') ++j;
      if (j > i + 5) {
        i = j;
        continue;
      }
    }
    out.push_back(name[i++]);
  }
  return out;
}

uint32_t MatchFuzzy(graph::Side* npu, graph::Side* bench, bool check_shape) {
  Graph& a = *npu->graph;
  Graph& b = *bench->graph;
  SignatureReader sig(npu->pool);
  auto fuzzy_eq = [&](uint32_t n, uint32_t t) {
    if (!check_shape) return true;
    Shapes x = ShapesOf(*npu, a.entry[n], sig);
    Shapes y = ShapesOf(*bench, b.entry[t], sig);
    return ZipEqual(x.in, y.in) && ZipEqual(x.out, y.out);
  };
  // API children keyed by their fuzzy name and occurrence: "Torch.matmul.forward1".
  auto api_keys = [](const Graph& g, uint32_t parent) {
    std::unordered_map<std::string, uint32_t> keys;
    std::unordered_map<std::string, uint32_t> seen;
    for (int32_t c = g.first_child[parent]; c != kNoNode; c = g.next_sibling[c]) {
      if (g.op[c] != graph::NodeOp::kApi) continue;
      std::string k = FuzzyKey(g.Name(static_cast<uint32_t>(c)));
      uint32_t occurrence = ++seen[k];
      keys.emplace(k + std::to_string(occurrence), static_cast<uint32_t>(c));
    }
    return keys;
  };
  uint32_t matched = 0;
  for (uint32_t n : BreadthFirst(a)) {
    if (a.op[n] == graph::NodeOp::kApi) continue;  // APIs match through their parent
    int32_t t = b.Find(a.name[n]);
    if (t == kNoNode || b.matched[t] != kNoNode || !fuzzy_eq(n, static_cast<uint32_t>(t))) continue;
    Link(&a, n, &b, static_cast<uint32_t>(t));
    ++matched;
    auto bench_apis = api_keys(b, static_cast<uint32_t>(t));
    for (auto& [key, child] : api_keys(a, n)) {
      auto it = bench_apis.find(key);
      if (it == bench_apis.end() || b.matched[it->second] != kNoNode || !fuzzy_eq(child, it->second)) continue;
      Link(&a, child, &b, it->second);
      ++matched;
    }
  }
  return matched;
}

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
