#include "cli/shard_flag.h"

#include <cstdlib>

namespace graph_ascend::cli {
namespace {

Result<uint32_t> ParseNumber(const std::string& text, const std::string& where, const std::string& what) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) {
    return Error{"", where, "'" + text + "': expected " + what};
  }
  return static_cast<uint32_t>(std::strtoul(text.c_str(), nullptr, 10));
}

// The shard index and count the environment gives, if any.
struct EnvShard {
  bool found = false;
  std::string source;  // the variables, for messages
  uint32_t index = 0;
  uint32_t count = 0;  // 0: the engine gives no count
};

Result<EnvShard> ShardFromEnvironment(const std::function<const char*(const char*)>& env) {
  auto number = [&](const char* name, uint32_t* out) -> Status {
    auto v = ParseNumber(env(name), "environment " + std::string(name), "a non-negative integer");
    if (!v.ok()) return v.error();
    *out = *v;
    return Status::Ok();
  };
  EnvShard s;
  s.found = true;
  if (env("SLURM_ARRAY_TASK_ID") != nullptr) {
    s.source = "SLURM_ARRAY_TASK_ID";
    uint32_t id = 0, min = 0, step = 1;
    GA_RETURN_IF_ERROR(number("SLURM_ARRAY_TASK_ID", &id));
    if (env("SLURM_ARRAY_TASK_COUNT") == nullptr) {
      return Error{"", "environment SLURM_ARRAY_TASK_COUNT", "missing beside SLURM_ARRAY_TASK_ID"};
    }
    GA_RETURN_IF_ERROR(number("SLURM_ARRAY_TASK_COUNT", &s.count));
    if (env("SLURM_ARRAY_TASK_MIN") != nullptr) GA_RETURN_IF_ERROR(number("SLURM_ARRAY_TASK_MIN", &min));
    if (env("SLURM_ARRAY_TASK_STEP") != nullptr) GA_RETURN_IF_ERROR(number("SLURM_ARRAY_TASK_STEP", &step));
    if (step == 0 || id < min || (id - min) % step != 0) {
      return Error{"", "environment SLURM_ARRAY_TASK_ID",
                   std::to_string(id) + " is not in a regular array (min " + std::to_string(min) + ", step " +
                       std::to_string(step) + "): use --array=0-N-1 or give --shard I/N"};
    }
    s.index = (id - min) / step;
    return s;
  }
  const std::pair<const char*, const char*> pairs[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMI_RANK", "PMI_SIZE"},
      {"SLURM_PROCID", "SLURM_NTASKS"},
  };
  for (const auto& [rank, size] : pairs) {
    if (env(rank) == nullptr) continue;
    s.source = rank;
    GA_RETURN_IF_ERROR(number(rank, &s.index));
    if (env(size) == nullptr) {
      return Error{"", std::string("environment ") + size, std::string("missing beside ") + rank};
    }
    GA_RETURN_IF_ERROR(number(size, &s.count));
    return s;
  }
  if (env("JOB_COMPLETION_INDEX") != nullptr) {
    s.source = "JOB_COMPLETION_INDEX";
    GA_RETURN_IF_ERROR(number("JOB_COMPLETION_INDEX", &s.index));
    return s;
  }
  return EnvShard{};
}

}  // namespace

Result<job::ShardSpec> ParseShard(const std::string& value, const std::function<const char*(const char*)>& env) {
  const std::string where = "flag --shard";
  std::string index_text = value, count_text;
  size_t slash = value.find('/');
  if (slash != std::string::npos) {
    index_text = value.substr(0, slash);
    count_text = value.substr(slash + 1);
  }
  job::ShardSpec spec;
  if (index_text == "auto") {
    auto e = ShardFromEnvironment(env);
    if (!e.ok()) return e.error();
    if (!e->found) {
      return Error{"", where,
                   "'" + value + "': no shard index in the environment (SLURM_ARRAY_TASK_ID, OMPI_COMM_WORLD_RANK, "
                   "PMI_RANK, SLURM_PROCID, JOB_COMPLETION_INDEX): give --shard I/N"};
    }
    spec.index = e->index;
    if (!count_text.empty()) {
      auto n = ParseNumber(count_text, where, "auto/N with N a positive integer");
      if (!n.ok()) return n.error();
      if (e->count != 0 && e->count != *n) {
        return Error{"", where, "'" + value + "': the environment (" + e->source + ") gives " +
                                    std::to_string(e->count) + " shards"};
      }
      spec.count = *n;
    } else if (e->count == 0) {
      return Error{"", where, "'" + value + "': " + e->source + " gives no shard count: give --shard auto/N"};
    } else {
      spec.count = e->count;
    }
  } else {
    if (count_text.empty()) return Error{"", where, "'" + value + "': expected I/N, auto or auto/N"};
    auto i = ParseNumber(index_text, where, "I/N with I a non-negative integer");
    if (!i.ok()) return i.error();
    auto n = ParseNumber(count_text, where, "I/N with N a positive integer");
    if (!n.ok()) return n.error();
    spec.index = *i;
    spec.count = *n;
  }
  if (spec.count == 0) return Error{"", where, "'" + value + "': the shard count must be at least 1"};
  if (spec.index >= spec.count) {
    return Error{"", where, "'" + value + "': shard " + std::to_string(spec.index) + " of " +
                                std::to_string(spec.count) + " (shards are numbered from 0)"};
  }
  return spec;
}

}  // namespace graph_ascend::cli
