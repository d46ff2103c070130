// What the process may use (base/cores.h): cgroup v2 limits read from their
// files' texts, the affinity mask of the calling thread, --max-memory sizes,
// and how many pairs a batch runs at once (job/batch_run.h).
#include "base/cores.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <limits>
#include <thread>

#include "job/batch_run.h"

namespace graph_ascend {
namespace {

TEST(CoresTest, CgroupCpuMaxRoundsUp) {
  EXPECT_EQ(CgroupCores("max 100000\n"), 0);  // no limit
  EXPECT_EQ(CgroupCores("200000 100000\n"), 2);
  EXPECT_EQ(CgroupCores("150000 100000\n"), 2);
  EXPECT_EQ(CgroupCores("50000 100000\n"), 1);
  EXPECT_EQ(CgroupCores(""), 0);  // no such file
}

TEST(CoresTest, CgroupMemoryLeftAboveCurrent) {
  EXPECT_EQ(CgroupMemoryLeft("max\n", "123\n"), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(CgroupMemoryLeft("1000\n", "400\n"), 600u);
  EXPECT_EQ(CgroupMemoryLeft("1000\n", "4000\n"), 0u);
  EXPECT_EQ(CgroupMemoryLeft("", ""), std::numeric_limits<uint64_t>::max());
}

// taskset's mask is what sched_getaffinity gives the thread: one core allowed, one counted.
TEST(CoresTest, AffinityMaskLimitsTheCores) {
  int all = UsableCores();
  EXPECT_GE(all, 1);
  EXPECT_LE(all, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  cpu_set_t saved, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &saved)) {
      CPU_SET(c, &one);
      break;
    }
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  EXPECT_EQ(UsableCores(), 1);
  ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);
  EXPECT_EQ(UsableCores(), all);
}

TEST(CoresTest, AvailableMemoryIsKnownHere) { EXPECT_GT(AvailableMemory(), 0u); }

uint64_t Bytes(const std::string& text) {
  auto r = ParseByteSize(text, "flag --max-memory");
  return r.ok() ? *r : 0;
}

TEST(CoresTest, ByteSizes) {
  EXPECT_EQ(Bytes("8G"), 8ull << 30);
  EXPECT_EQ(Bytes("512m"), 512ull << 20);
  EXPECT_EQ(Bytes("4096"), 4096u);
  EXPECT_EQ(Bytes("1T"), 1ull << 40);
  for (const char* bad : {"", "G", "0", "-1G", "1.5G", "8GB", "99999999999999999999", "20000000T"}) {
    auto r = ParseByteSize(bad, "flag --max-memory");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().ToString().find("flag --max-memory"), std::string::npos) << r.error().ToString();
  }
}

TEST(BatchJobsTest, CoresByDefaultAtMostThePairs) {
  EXPECT_EQ(job::BatchJobs(0, 4, 16), 4);
  EXPECT_EQ(job::BatchJobs(0, 16, 3), 3);
  EXPECT_EQ(job::BatchJobs(8, 2, 16), 8);  // asked for: more than the cores
  EXPECT_EQ(job::BatchJobs(0, 0, 0), 1);
}

}  // namespace
}  // namespace graph_ascend
