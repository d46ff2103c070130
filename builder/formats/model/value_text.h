// §10.5's text of one value of an item (reference §10.5 formatting): what FormatItemTo and
// AppendItemJson write for a field's value or a metric, every text as msprobe's export gives it.
#pragma once

#include <string>
#include <string_view>

#include "vis.pb.h"

namespace graph_ascend::vis {

// §10.5's rounding of a decimal text: "^\d{1,20}\.\d{1,20}%?$" with more than 6 decimals.
bool RoundsDecimals(std::string_view s);
// Whether FormatTextTo leaves `s` as it is (most do: "torch.float32", "[2, 3]", "0.0%").
bool TextKept(std::string_view s);
// §10.5 for a string value: single quotes dropped, None as null, " " as null, long decimals
// to 6 places; into `out` (replaced).
void FormatTextTo(std::string_view s, std::string* out);
std::string FormatText(std::string_view s);
// §10.5 for a float: "{:.6e}" when repr has an exponent, else repr(round(x, 6)); into `out`.
void FormatFloatTo(double x, std::string* out);
// §10.5 for a field's value ("null" for none); into `out` (replaced).
void FormatValueTo(const Value* v, std::string* out);

// How §10.5 writes a metric. Numbers the reference kept as Python numbers (differences,
// tensor metrics) are formatted as numbers; everything else ("20.0%", "N/A", "pass",
// "True") as text.
enum class MetricForm { kText, kInteger, kFloat };
MetricForm MetricFormOf(const Metric& m);
void FormatMetricTo(const Metric& m, std::string* out);

// Python's type(value) as str() writes it ("<class 'int'>"), for §4.2's plain arguments.
const char* PyTypeName(const Value* v);

}  // namespace graph_ascend::vis
