#include "base/parallel.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace graph_ascend {

int DefaultThreads() {
  unsigned n = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(n, 1u, 16u));
}

void RunOnThreads(int threads, const std::function<void(int)>& fn) {
  std::vector<std::thread> others;
  for (int t = 1; t < threads; ++t) others.emplace_back(fn, t);
  fn(0);
  for (std::thread& t : others) t.join();
}

}  // namespace graph_ascend
