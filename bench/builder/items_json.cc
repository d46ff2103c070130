// Times formats::AppendItemsJson alone (the items text of every .vis.db row,
// docs/PERFORMANCE.md "Writing a .vis.db") on the details of a .vis, and
// gives a digest of all the texts, so that two builds can be checked to write
// the same bytes.
//
//   g++ -std=c++20 -O2 -DNDEBUG -Ibuilder -Ibuild/generated/proto -o /tmp/items_json \
//       bench/builder/items_json.cc build/builder/libga_formats_model.a build/builder/libga_vis.a \
//       build/builder/libga_json.a build/builder/libga_compare.a build/builder/libga_torch_save.a \
//       build/builder/libga_dump.a build/builder/libga_base.a build/builder/libga_vis_proto.a \
//       -lprotobuf -lzstd -lz -lpthread
//   /tmp/items_json FILE.vis [--repeat N]
//
// Reading and parsing the detail blocks is not timed: only the calls. With --repeat N > 1
// the first round (which also digests the texts) is left out of the time.
#include <time.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include "formats/model/foreign_item.h"
#include "vis/vis_file.h"
#include "vis/vis_index.h"

using namespace graph_ascend;

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE.vis [--repeat N]\n", argv[0]);
    return 2;
  }
  int repeat = 1;
  if (argc >= 4 && strcmp(argv[2], "--repeat") == 0) repeat = atoi(argv[3]);
  auto reader = vis::VisReader::Open(argv[1]);
  if (!reader.ok()) {
    fprintf(stderr, "%s\n", reader.error().ToString().c_str());
    return 1;
  }
  const vis::FileMeta& meta = (*reader)->meta();
  double seconds = 0;
  uint64_t bytes = 0, digest = 1469598103934665603ull, rows = 0;
  std::string text;
  for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
    if (!(*reader)->has_side(side)) continue;
    auto index = vis::LoadSideIndex(**reader, side);
    if (!index.ok()) return fprintf(stderr, "%s\n", index.error().ToString().c_str()), 1;
    vis::NodeDetailBlock block;
    uint32_t next = 0;
    for (const vis::SectionRef* ref : (*reader)->Sections(vis::SECTION_NODE_DETAILS, side)) {
      Status s = (*reader)->ReadSection(*ref, &block);
      if (!s.ok()) return fprintf(stderr, "%s\n", s.error().ToString().c_str()), 1;
      const vis::SideIndex* idx = &*index;
      vis::ResolveKeys([idx](uint32_t n) { return n < idx->size() ? idx->Name(n) : std::string_view(); }, &block);
      // Timed in this thread's CPU time, a block at a time: other processes on the machine
      // do not count.
      uint32_t first = next;
      for (int r = 0; r < repeat; ++r) {
        next = first;
        timespec t0, t1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        for (const vis::NodeDetail& d : block.detail()) {
          std::string_view name = index->Name(next++);
          for (const auto* items : {&d.input(), &d.output()}) {
            text.clear();
            formats::AppendItemsJson(*items, meta.mode(), name, &text);
            if (r == 0) {
              bytes += text.size();
              ++rows;
              for (unsigned char c : text) digest = (digest ^ c) * 1099511628211ull;
            }
          }
        }
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
        if (r > 0 || repeat == 1) seconds += (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
      }
    }
  }
  printf("%" PRIu64 " texts, %" PRIu64 " bytes, fnv1a %016" PRIx64 ", %.3f s CPU a round\n", rows, bytes, digest,
         seconds / (repeat > 1 ? repeat - 1 : 1));
  return 0;
}
