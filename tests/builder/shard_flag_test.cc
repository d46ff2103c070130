// --shard's value (cli/shard_flag.h): given, or from the environment of Slurm arrays, Open MPI, PMI, srun and
// Kubernetes indexed Jobs.
#include "cli/shard_flag.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace graph_ascend::cli {
namespace {

Result<job::ShardSpec> Parse(const std::string& value, const std::map<std::string, std::string>& env) {
  return ParseShard(value, [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

void ExpectShard(const std::string& value, const std::map<std::string, std::string>& env, uint32_t i, uint32_t n) {
  auto s = Parse(value, env);
  ASSERT_TRUE(s.ok()) << value << ": " << s.error().ToString();
  EXPECT_EQ(s->index, i) << value;
  EXPECT_EQ(s->count, n) << value;
}

void ExpectBad(const std::string& value, const std::map<std::string, std::string>& env, const std::string& part) {
  auto s = Parse(value, env);
  ASSERT_FALSE(s.ok()) << value;
  EXPECT_NE(s.error().ToString().find(part), std::string::npos) << s.error().ToString();
}

TEST(ParseShardTest, GivenOrFromTheEngines) {
  ExpectShard("3/8", {}, 3, 8);
  ExpectShard("auto", {{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}, 2, 4);
  // --array=1-4 and --array=0-6:2: the index counts the tasks.
  ExpectShard("auto", {{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_ARRAY_TASK_MIN", "1"}},
              2, 4);
  ExpectShard("auto",
              {{"SLURM_ARRAY_TASK_ID", "4"}, {"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_ARRAY_TASK_MIN", "0"},
               {"SLURM_ARRAY_TASK_STEP", "2"}},
              2, 4);
  ExpectShard("auto", {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}, 1, 2);
  ExpectShard("auto", {{"PMI_RANK", "5"}, {"PMI_SIZE", "6"}}, 5, 6);
  ExpectShard("auto", {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "3"}}, 0, 3);
  ExpectShard("auto/16", {{"JOB_COMPLETION_INDEX", "15"}}, 15, 16);
  // A Slurm array wins over the srun task inside it.
  ExpectShard("auto", {{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "2"}, {"SLURM_PROCID", "0"},
                       {"SLURM_NTASKS", "1"}},
              1, 2);
}

TEST(ParseShardTest, BadValuesAreNamed) {
  ExpectBad("2/2", {}, "numbered from 0");
  ExpectBad("0/0", {}, "at least 1");
  ExpectBad("x/2", {}, "flag --shard");
  ExpectBad("3", {}, "expected I/N");
  ExpectBad("auto", {}, "no shard index in the environment");
  ExpectBad("auto", {{"JOB_COMPLETION_INDEX", "1"}}, "give --shard auto/N");
  ExpectBad("auto/3", {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}, "gives 2 shards");
  ExpectBad("auto", {{"SLURM_ARRAY_TASK_ID", "1"}}, "SLURM_ARRAY_TASK_COUNT");
  ExpectBad("auto", {{"PMI_RANK", "-1"}, {"PMI_SIZE", "2"}}, "environment PMI_RANK");
  ExpectBad("auto/4", {{"JOB_COMPLETION_INDEX", "4"}}, "shard 4 of 4");
}

}  // namespace
}  // namespace graph_ascend::cli
