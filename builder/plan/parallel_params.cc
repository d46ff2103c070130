#include "plan/parallel_params.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <unordered_set>

namespace graph_ascend::merge {
namespace {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

std::vector<long> PrefixProducts(const std::vector<long>& dims) {
  std::vector<long> out = {1};
  for (long d : dims) out.push_back(out.back() * d);
  return out;
}

long InnerProduct(const std::vector<long>& a, const std::vector<long>& b) {
  long s = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) s += a[i] * b[i];
  return s;
}

std::vector<long> Decompose(long index, const std::vector<long>& shape) {
  std::vector<long> strides = PrefixProducts(shape);
  std::vector<long> out;
  for (size_t i = 0; i < shape.size(); ++i) out.push_back((index / strides[i]) % shape[i]);
  return out;
}

// Megatron's create_masked_rank_groups: the groups of the dimensions where
// `mask` is set.
RankGroups MaskedRankGroups(long total, const std::vector<long>& dims, const std::vector<bool>& mask) {
  std::vector<long> masked_dims, unmasked_dims, masked_strides, unmasked_strides;
  std::vector<long> global = PrefixProducts(dims);
  for (size_t i = 0; i < dims.size(); ++i) {
    (mask[i] ? masked_dims : unmasked_dims).push_back(dims[i]);
    (mask[i] ? masked_strides : unmasked_strides).push_back(global[i]);
  }
  long group_dim = PrefixProducts(masked_dims).back();
  long group_count = total / group_dim;
  RankGroups groups;
  for (long g = 0; g < group_count; ++g) {
    std::vector<long> dg = Decompose(g, unmasked_dims);
    std::vector<int> group;
    for (long j = 0; j < group_dim; ++j) {
      group.push_back(static_cast<int>(InnerProduct(Decompose(j, masked_dims), masked_strides) +
                                       InnerProduct(dg, unmasked_strides)));
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace

std::string ParallelParams::Where(std::string_view key) const {
  if (from_flags) return "flag --" + std::string(key) + " (" + side + " value)";
  return "key parallel_merge." + side + "." + std::string(key);
}

std::string PyList(const std::vector<int>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

Status ValidateParallelParams(const ParallelParams& p, size_t rank_folders, const std::string& rank_dir) {
  auto fail = [&](std::string_view key, const std::string& message) -> Status {
    return Error{p.file, p.Where(key), message};
  };
  const std::pair<const char*, int> required[] = {{"rank_size", p.rank_size}, {"tp", p.tp}, {"pp", p.pp}};
  for (const auto& [key, value] : required) {
    if (value <= 0) return fail(key, "missing: parallel merge needs rank_size, tp and pp (positive integers)");
  }
  if (p.vpp <= 0) return fail("vpp", "must be a positive integer");
  if (static_cast<size_t>(p.rank_size) != rank_folders) {
    return fail("rank_size", "is " + std::to_string(p.rank_size) + " but " + rank_dir + " has " +
                                 std::to_string(rank_folders) + " rank folder" + (rank_folders == 1 ? "" : "s"));
  }
  if (p.tp > p.rank_size)
    return fail("tp",
                "tp (" + std::to_string(p.tp) + ") must not exceed rank_size (" + std::to_string(p.rank_size) + ")");
  if (p.pp > p.rank_size)
    return fail("pp",
                "pp (" + std::to_string(p.pp) + ") must not exceed rank_size (" + std::to_string(p.rank_size) + ")");
  if (p.rank_size % p.tp != 0) {
    return fail("tp", "rank_size " + std::to_string(p.rank_size) + " is not divisible by tp " + std::to_string(p.tp));
  }
  if (p.rank_size % p.pp != 0) {
    return fail("pp", "rank_size " + std::to_string(p.rank_size) + " is not divisible by pp " + std::to_string(p.pp));
  }
  if (static_cast<long>(p.tp) * p.pp > p.rank_size) {
    return fail("pp", "tp * pp (" + std::to_string(static_cast<long>(p.tp) * p.pp) + ") must not exceed rank_size (" +
                          std::to_string(p.rank_size) + ")");
  }
  if (p.vpp > 1 && p.pp < 2) return fail("vpp", "vpp > 1 (virtual pipeline) needs pp > 1");
  if (p.order.empty() ||
      !std::all_of(p.order.begin(), p.order.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '-'; })) {
    return fail("order", "'" + p.order + "' must consist of lowercase letters and '-' (like tp-cp-ep-dp-pp)");
  }
  auto groups = MakeDefaultGroups(p);
  return groups.ok() ? Status::Ok() : groups.status();
}

Strategy SelectStrategy(const ParallelParams& p) {
  if (p.tp == 1 && p.pp == 1 && p.rank_size == 1) return Strategy::kNoParallel;
  if (p.tp == p.rank_size) return Strategy::kTp;
  if (p.pp == p.rank_size) return p.vpp == 1 ? Strategy::kPp : Strategy::kVpp;
  if (p.pp == 1) return Strategy::kTp;
  if (p.tp == 1) return p.vpp == 1 ? Strategy::kPp : Strategy::kVpp;
  if (p.tp * p.pp == p.rank_size) return Strategy::kTpPp;
  return Strategy::kFull;
}

const char* StrategyName(Strategy s) {
  switch (s) {
    case Strategy::kNoParallel:
      return "no parallelism";
    case Strategy::kTp:
      return "TP";
    case Strategy::kPp:
      return "PP";
    case Strategy::kVpp:
      return "VPP";
    case Strategy::kTpPp:
      return "TP+PP";
    case Strategy::kFull:
      return "TP+PP with DP";
  }
  return "";
}

Result<DefaultGroups> MakeDefaultGroups(const ParallelParams& p) {
  auto fail = [&](std::string_view key, const std::string& message) -> Error {
    return Error{p.file, p.Where(key), message};
  };
  long product = static_cast<long>(p.tp) * p.pp;
  if (p.tp <= 0 || p.pp <= 0 || p.rank_size % product != 0) {
    return fail("rank_size", "rank_size " + std::to_string(p.rank_size) + " is not divisible by tp * pp (" +
                                 std::to_string(p.tp) + " x " + std::to_string(p.pp) + ")");
  }
  long dp = p.rank_size / product;
  // The sizes in Megatron's dictionary order (tp, pp, dp, ep, cp).
  const std::vector<std::pair<std::string, long>> sizes = {
      {"tp", p.tp}, {"pp", p.pp}, {"dp", dp}, {"ep", 1}, {"cp", 1}};
  std::string order = p.order;
  for (char& c : order) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (order.find("ep") != std::string::npos && order.find("ep-dp") == std::string::npos &&
      order.find("dp-ep") == std::string::npos) {
    return fail("order", "'" + p.order + "': ep and dp must be adjacent");
  }
  for (const auto& [name, size] : sizes) {
    if (order.find(name) != std::string::npos) continue;
    if (size != 1) {
      return fail("order", "'" + p.order + "' does not name " + name + ", whose size is " + std::to_string(size));
    }
    order += "-" + name;
  }
  std::vector<std::string> tokens;
  std::vector<long> dims;
  for (const std::string& t : Split(order, '-')) {
    if (t == "ep") continue;
    auto it = std::find_if(sizes.begin(), sizes.end(), [&](const auto& s) { return s.first == t; });
    if (it == sizes.end())
      return fail("order", "'" + p.order + "': unknown dimension '" + t + "' (use tp, cp, ep, dp, pp)");
    tokens.push_back(t);
    dims.push_back(it->second);
  }
  auto groups_of = [&](const std::string& token) {
    std::vector<bool> mask(tokens.size(), false);
    mask[static_cast<size_t>(std::find(tokens.begin(), tokens.end(), token) - tokens.begin())] = true;
    return MaskedRankGroups(p.rank_size, dims, mask);
  };
  return DefaultGroups{groups_of("tp"), groups_of("pp")};
}

RankGroups TraceP2PChains(const std::vector<std::pair<int, int>>& sends) {
  std::unordered_map<int, int> next;
  for (const auto& [from, to] : sends) next[from] = to;  // a repeated key keeps the last peer, its first place
  std::vector<int> keys;
  std::unordered_set<int> seen_keys;
  for (const auto& [from, to] : sends) {
    if (seen_keys.insert(from).second) keys.push_back(from);
  }
  std::unordered_set<int> visited;
  RankGroups chains;
  for (int key : keys) {
    if (visited.count(key)) continue;
    std::vector<int> chain;
    for (int cur = key; next.count(cur) && !visited.count(cur); cur = next[cur]) {
      chain.push_back(cur);
      visited.insert(cur);
    }
    if (!chain.empty()) chains.push_back(std::move(chain));
  }
  return chains;
}

}  // namespace graph_ascend::merge
