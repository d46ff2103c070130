// The wire forms of NodeDetail and NodeIndexChunk written without
// protobuf's serializer, for the compare-and-write loop (vis/graph_writer):
// the same bytes protobuf would write (fields in number order, proto3
// defaults left out), several times cheaper since no message is built, sizes
// are not cached in messages and strings are checked for UTF-8 by a
// word-wide ASCII scan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compare/pair_metrics.h"
#include "graph/graph_builder.h"
#include "vis.pb.h"

namespace graph_ascend::vis {

// Appends `d` as a length-delimited field `field` (< 16) of its parent
// message and returns true, with the detail's own size in `*size`. Returns
// false, appending nothing, for what it leaves to protobuf: a detail with
// suggestions (a map, whose order protobuf decides) or with a string that is
// not plain ASCII (protobuf checks and reports invalid UTF-8).
bool AppendDetailWire(const NodeDetail& d, int field, std::string* out, size_t* size);

// Appends `d` as AppendDetailWire does, and what that leaves to protobuf
// through protobuf's serializer (which logs invalid UTF-8): always appends.
void AppendDetail(const NodeDetail& d, int field, std::string* out, size_t* size);

// The same for the detail FillDetail(side, node) would make, read straight
// from the side's dump. Made once per string pool for a write (both sides of
// a compare share theirs): it notes which of the pool's strings are plain
// ASCII (a string interned later takes the general path). Append may be
// called from several threads at once.
class SideDetailWriter {
 public:
  explicit SideDetailWriter(const StringPool& pool);

  // Appends node's detail like AppendDetailWire. With `compared` (the
  // metrics a compare gave node's items, and its md5 result), the detail
  // that compare::StoreMetrics would make of the filled detail. Returns
  // false, appending nothing, for a side of another pool, a node with
  // distributed links or parallel-merge lines, or a string that is not
  // plain ASCII: the caller goes through FillDetail and AppendDetail.
  bool Append(const graph::Side& side, uint32_t node, int field, std::string* out, size_t* size,
              const compare::PairMetrics* compared = nullptr) const;

 private:
  // False for a string interned after the writer was made.
  bool Plain(uint32_t id) const { return id < plain_.size() && plain_[id] != 0; }

  const StringPool* pool_;
  std::vector<uint8_t> plain_;  // per pool id: 1 when the string is plain ASCII
  uint64_t generation_;         // tells this writer's fields in a thread's field cache from others'
};

// The NodeIndexChunk of nodes [first, end) of `side`: an index section.
NodeIndexChunk IndexChunkOf(const graph::Side& side, uint32_t first, uint32_t end);

// Appends IndexChunkOf(side, first, end)'s wire form and returns true. Returns false,
// appending nothing, when a name is not plain ASCII: the caller builds the
// message and leaves the UTF-8 check to protobuf.
bool AppendIndexChunkWire(const graph::Side& side, uint32_t first, uint32_t end, std::string* out);

}  // namespace graph_ascend::vis
