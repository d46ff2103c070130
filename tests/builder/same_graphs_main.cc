// bin/ga_same_graphs DIR_A DIR_B: exit 0 when two output folders hold the
// same graph content (same_graphs.h), else 1 with what differs. Used by the
// cluster scripts (scripts/test-cluster.sh) to compare a sharded batch with
// the one-process batch.
#include <cstdio>

#include "same_graphs.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: ga_same_graphs DIR_A DIR_B\n");
    return 2;
  }
  std::string diff = graph_ascend::testing::FolderContentDiff(argv[1], argv[2]);
  if (!diff.empty()) {
    fprintf(stderr, "ga_same_graphs: %s\n", diff.c_str());
    return 1;
  }
  printf("ga_same_graphs: %s and %s hold the same graphs\n", argv[1], argv[2]);
  return 0;
}
