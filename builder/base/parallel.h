// Running one piece of work on several threads at once.
#pragma once

#include <functional>

namespace graph_ascend {

// The threads a parallel phase uses: the machine's cores (at least 1, at
// most 16).
int DefaultThreads();

// Calls fn(0) .. fn(threads - 1) at once, fn(0) on the calling thread, and
// returns when all have returned. `fn` must not throw.
void RunOnThreads(int threads, const std::function<void(int)>& fn);

}  // namespace graph_ascend
