// The overflow check of `graph -oc` (dump/overflow_scene.h).
#include "dump/overflow_scene.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace graph_ascend::dump {
namespace {

// The rules of msprobe's overflow false-positive filter (§7 step 4).
struct IgnoreRule {
  const char* key;
  std::vector<int> inputs;
  std::vector<const char*> kwargs;
  std::vector<int> outputs;
  bool has_inputs, has_kwargs, has_outputs;
};

const std::vector<IgnoreRule>& IgnoreRules() {
  static const std::vector<IgnoreRule> rules = {
      {"torch.empty", {}, {}, {0}, false, false, true},
      {"torch.empty_like", {}, {}, {0}, false, false, true},
      {"torch.empty_strided", {}, {}, {0}, false, false, true},
      {"distributed.recv", {0}, {"tensor"}, {}, true, true, false},
      {"distributed.all_gather", {0}, {}, {}, true, false, false},
      {"distributed._reduce_scatter_base", {0}, {}, {}, true, false, false},
      {"distributed.all_gather_into_tensor", {0}, {}, {}, true, false, false},
      {"distributed.reduce_scatter_tensor", {0}, {}, {}, true, false, false},
      {"distributed.reduce_scatter", {0}, {"output"}, {}, true, true, false},
      {"tensor.masked_fill_", {0}, {}, {}, true, false, false},
  };
  return rules;
}

}  // namespace

bool AnomalousText(std::string_view s) {
  if (s.size() < 3 || s.size() > 4) return false;
  char lower[4];
  for (size_t i = 0; i < s.size(); ++i) lower[i] = static_cast<char>(tolower(static_cast<unsigned char>(s[i])));
  std::string_view l(lower, s.size());
  return l == "inf" || l == "-inf" || l == "nan";
}

OverflowLevel OverflowLevelOf(std::string_view name, std::span<const Anomaly> inputs, std::span<const Anomaly> kwargs,
                              std::span<const std::string> kwarg_names, std::span<const Anomaly> outputs) {
  bool in_any = false, out_any = false;
  for (const Anomaly& a : inputs) in_any |= a.any;
  for (const Anomaly& a : kwargs) in_any |= a.any;
  for (const Anomaly& a : outputs) out_any |= a.any;
  OverflowLevel level = OverflowLevel::kNone;
  if (!in_any && out_any) {
    level = OverflowLevel::kCritical;
  } else if (in_any && out_any) {
    level = OverflowLevel::kHigh;
  } else if (in_any) {
    level = OverflowLevel::kMedium;
  } else {
    double max_in = -1, max_out = -1;
    for (std::span<const Anomaly> list : {inputs, kwargs}) {
      for (const Anomaly& a : list) {
        if (a.torch_tensor && a.has_norm) max_in = std::max(max_in, a.norm);
      }
    }
    for (const Anomaly& a : outputs) {
      if (a.torch_tensor && a.has_norm) max_out = std::max(max_out, a.norm);
    }
    if (max_in >= 0 && max_out >= 0 && (max_in == 0 ? max_out > 100 : max_out / max_in > 100)) {
      level = OverflowLevel::kHigh;
    }
  }
  if (level != OverflowLevel::kNone) {
    // The false-positive filter keys on the first two name segments.
    size_t d1 = name.find('.');
    size_t d2 = d1 == std::string_view::npos ? d1 : name.find('.', d1 + 1);
    std::string rule_key(name.substr(0, d2));
    for (char& c : rule_key) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    for (const IgnoreRule& rule : IgnoreRules()) {
      if (rule_key != rule.key) continue;
      auto listed = [](const std::vector<int>& idx, int i) {
        return std::find(idx.begin(), idx.end(), i) != idx.end();
      };
      bool covered = true;
      if (rule.has_inputs) {
        for (size_t i = 0; i < inputs.size(); ++i) {
          covered &= !inputs[i].own || listed(rule.inputs, static_cast<int>(i));
        }
      }
      if (rule.has_kwargs) {
        for (size_t i = 0; i < kwargs.size(); ++i) {
          bool ok = !kwargs[i].own;
          for (const char* k : rule.kwargs) ok |= i < kwarg_names.size() && kwarg_names[i] == k;
          covered &= ok;
        }
      }
      if (rule.has_outputs) {
        for (size_t i = 0; i < outputs.size(); ++i) {
          covered &= !outputs[i].own || listed(rule.outputs, static_cast<int>(i));
        }
      }
      if (covered) level = OverflowLevel::kNone;
    }
  }
  return level;
}

}  // namespace graph_ascend::dump
