// The value of --shard: which share of a batch this process builds (job::ShardSpec), given or read from the
// environment of the engine that started it.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"
#include "plan/run_flags.h"

namespace graph_ascend::cli {

// I and N of `--shard VALUE`: "I/N"; "auto" takes both from the environment
// of the engine that started the process (Slurm array, Open MPI, PMI, srun);
// "auto/N" takes I from it and N as given (a Kubernetes indexed Job's
// JOB_COMPLETION_INDEX). `env` reads a variable (getenv: null when unset).
Result<job::ShardSpec> ParseShard(const std::string& value, const std::function<const char*(const char*)>& env);

}  // namespace graph_ascend::cli
