// Read access to the fields of a stored item (vis::Item), shared by the
// comparison, the exporter and the service.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "vis.pb.h"

namespace graph_ascend::compare {

// The value of field `name`, or null when the item has no such field.
const vis::Value* FindField(const vis::Item& item, std::string_view name);

// True for an integer or a float (not a bool).
bool IsNumber(const vis::Value* v);
double AsDouble(const vis::Value& v);
// A float that is NaN or infinite (msprobe's "float NaN/inf" tests).
bool IsNonFiniteFloat(const vis::Value* v);
// Null or absent.
bool IsNull(const vis::Value* v);

// Python's str() of the value as msprobe loaded it from JSON:
// None, True, 3, 0.5, 'text' inside containers, [2, 3].
std::string PyStr(const vis::Value* v);

// Statistic k (0 Max, 1 Min, 2 Mean, 3 Norm) as msprobe sees it after
// normalising the leaf (§4.2): a tensor's own field; for other leaves the
// value (or its text for src/dst and process groups); null when absent.
vis::Value NormalizedStat(const vis::Item& item, int k);

// The number msprobe would compute with, for the hot path: whether
// statistic k of the normalised leaf is an int or a float (never a bool),
// and its value. Also tells NaN/inf floats and null apart.
struct StatNumber {
  enum Kind : uint8_t { kNull, kInteger, kFloat, kOther } kind = kNull;
  int64_t integer = 0;
  double number = 0;
};
StatNumber NormalizedNumber(const vis::Item& item, int k);
// NormalizedNumber for k = 0..3 at once (the leaf's kind is found once).
void NormalizedNumbers(const vis::Item& item, StatNumber out[4]);

// The md5 msprobe compares for an item (§4.2): the dumped md5 when present,
// str(value) for src/dst arguments, str(group_ranks) for process groups,
// else CRC-32 of str(value).
std::string ItemMd5(const vis::Item& item);

}  // namespace graph_ascend::compare
