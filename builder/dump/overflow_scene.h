// The overflow check of `graph -oc` (reference §7), as the dump reader runs
// it in its one pass over dump.json: what it keeps of each value, and the
// level it gives an entry from them.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "dump/dump_data.h"

namespace graph_ascend::dump {

// What the overflow check needs to know about one value (§7 step 2).
struct Anomaly {
  bool any = false;  // recursive test (lists descend)
  bool own = false;  // non-recursive test: a dict whose own Max/Min/Mean is inf/nan
  bool torch_tensor = false;
  bool has_norm = false;  // a non-null, non-NaN Norm
  double norm = 0;
};

// Whether a statistic's text is "inf", "-inf" or "nan" (any case).
bool AnomalousText(std::string_view s);

// §7 steps 3-4: the level of the entry `name` from the values of its inputs
// (input_args, or "input" when it has none), of its input_kwargs (named
// `kwarg_names`, in order) and of its outputs, after msprobe's filter of
// false positives (torch.empty, distributed receive buffers, ...).
OverflowLevel OverflowLevelOf(std::string_view name, std::span<const Anomaly> inputs, std::span<const Anomaly> kwargs,
                              std::span<const std::string> kwarg_names, std::span<const Anomaly> outputs);

}  // namespace graph_ascend::dump
