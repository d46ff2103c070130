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

// The fields of an item that the comparison reads, found in one pass over
// its fields (each the first of its name, as FindField gives it; null when
// absent). Points into the item.
struct ItemFields {
  const vis::Value* type = nullptr;
  const vis::Value* dtype = nullptr;
  const vis::Value* shape = nullptr;
  const vis::Value* requires_grad = nullptr;
  const vis::Value* value = nullptr;
  const vis::Value* group_ranks = nullptr;
  const vis::Value* md5 = nullptr;
  const vis::Value* stat[4] = {nullptr, nullptr, nullptr, nullptr};  // Max, Min, Mean, Norm
};
ItemFields FieldsOf(const vis::Item& item);

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
// PyStr(a) == PyStr(b), without building the texts when the values are
// alike (same kind, same payload).
bool SamePyStr(const vis::Value* a, const vis::Value* b);

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
// The same from the item's FieldsOf.
void NormalizedNumbers(const vis::Item& item, const ItemFields& fields, StatNumber out[4]);

// The md5 msprobe compares for an item (§4.2): the dumped md5 when present,
// str(value) for src/dst arguments, str(group_ranks) for process groups,
// else CRC-32 of str(value).
std::string ItemMd5(const vis::Item& item);
std::string ItemMd5(const vis::Item& item, const ItemFields& fields);

}  // namespace graph_ascend::compare
