// bin/ga_same_graphs [--any-order] DIR_A DIR_B: exit 0 when two output
// folders hold the same graph content (same_graphs.h), else 1 with what
// differs. Used by the cluster scripts (scripts/test-cluster.sh) to compare a
// sharded batch with the one-process batch; --any-order compares two imports
// of a .vis.db, whose sides' detail blocks interleave as their threads ran.
#include <cstdio>
#include <string>

#include "same_graphs.h"

int main(int argc, char** argv) {
  bool any_order = argc == 4 && std::string(argv[1]) == "--any-order";
  if (argc != 3 && !any_order) {
    fprintf(stderr, "usage: ga_same_graphs [--any-order] DIR_A DIR_B\n");
    return 2;
  }
  if (any_order) ++argv;
  std::string diff = graph_ascend::testing::FolderContentDiff(argv[1], argv[2], any_order);
  if (!diff.empty()) {
    fprintf(stderr, "ga_same_graphs: %s\n", diff.c_str());
    return 1;
  }
  printf("ga_same_graphs: %s and %s hold the same graphs\n", argv[1], argv[2]);
  return 0;
}
