// Comparing one matched pair of nodes (msprobe builder reference §6.4–§6.9).
//
// Works on views of the items (compare/item_view.h), which come from the
// dump (the builder's automatic matches) or from the details stored in a
// .vis (the graph service's manual matches): both give a pair the same
// metrics and the same precision index.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "compare/item_view.h"
#include "compare/pair_metrics.h"
#include "vis.pb.h"

namespace graph_ascend::compare {

// Supplies tensor data for MODE_TENSOR; may be null in the other modes.
class TensorSource;

struct PairVerdict {
  double precision_index = 0;  // meaningful when has_precision
  bool has_precision = false;
  bool is_float = false;        // Python would hold a float (prints "1.0"), not an int
  std::string md5_result;      // MODE_MD5: "pass" or "Different"
};

// The Bench item paired with each NPU item, in the order of npu's input then
// output items; null when none. The k-th item of a state pairs with the k-th
// Bench item of that state (§6.4, without the reference's window shift for
// unequal counts), except parameter gradients, which pair by parameter name:
// msprobe writes them in arrival order, which differs between runs.
std::vector<const vis::Item*> PairedItems(const vis::NodeDetail& npu, const vis::NodeDetail& bench);

// The items of one matched pair, paired once for every consumer of the pair
// (ComparePair, Grade26, divergence::EvidenceOf). Entry i belongs to NPU
// item i. Points into both NodeItems, which must outlive it.
struct PairedItem {
  const ItemView* peer = nullptr;        // as PairedItems
  const ItemView* positional = nullptr;  // the k-th Bench item of the state, gradients too
};
struct ItemPairing {
  const NodeItems* npu = nullptr;
  std::vector<PairedItem> items;
};
// Pairs the items of npu with those of bench into `out` (its storage reused).
void PairItems(const NodeItems& npu, const NodeItems& bench, ItemPairing* out);

// Computes the metrics of every NPU item paired with a Bench item into
// `metrics` (after Reset) and returns the node's precision index.
// `node_name` is the NPU node's name (the ignore list of §6.9 is by name).
PairVerdict ComparePair(vis::CompareMode mode, std::string_view node_name, const ItemPairing& pairing,
                        const TensorSource* tensors, PairMetrics* metrics);
// The same on stored details: the metrics replace those of npu's items
// (StoreMetrics), and its md5 result is set in MODE_MD5 (cleared otherwise).
PairVerdict ComparePair(vis::CompareMode mode, const std::string& node_name, vis::NodeDetail* npu,
                        const vis::NodeDetail& bench, const TensorSource* tensors);

// Removes every metric from the items of `detail` (unmatching).
void ClearMetrics(vis::NodeDetail* detail);

// The legend bucket of a precision index: the index into `legend` of the
// first bucket with lo <= p < hi, where the last numeric bucket also holds
// p == hi and a bucket [x, x] holds exactly x. -1 when none holds p.
int BucketOf(const google::protobuf::RepeatedPtrField<vis::ColorBucket>& legend, double p);

// The index of the "not matched" entry of the legend, or -1.
int UnmatchedBucket(const google::protobuf::RepeatedPtrField<vis::ColorBucket>& legend);

// The bucket that colours a node (docs/API.md, "Colours"): an API collection
// of the NPU side with a value (the worst of its APIs) takes its value's
// bucket; otherwise an unmatched node takes `unmatched_bucket`, a matched one
// its value's bucket (-1 when the value is NaN). `value` is the precision
// index or grade of the NPU node (a Bench node's partner).
int NodeBucket(const google::protobuf::RepeatedPtrField<vis::ColorBucket>& legend, int unmatched_bucket,
               bool matched, bool npu_collection, double value);

}  // namespace graph_ascend::compare
