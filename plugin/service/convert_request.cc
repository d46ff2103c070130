#include "convert_request.h"

#include <grpcpp/grpcpp.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "base/confine.h"
#include "base/time_stamp.h"
#include "cli/graph_flags.h"
#include "plan/compare_config.h"
#include "plan/folder_plan.h"

namespace graph_ascend::service {
namespace {

constexpr size_t kMaxPlanNames = 100;

ConvertStatus Bad(int code, std::string message) { return ConvertStatus{code, std::move(message)}; }
ConvertStatus Invalid(std::string message) { return Bad(grpc::StatusCode::INVALID_ARGUMENT, std::move(message)); }

// The files of a dump folder the builder reads first; the tensors of
// dump_tensor_data are checked by the builder as it opens them.
constexpr const char* kDumpFiles[] = {"", "dump.json", "construct.json", "stack.json", "dump_tensor_data"};

bool SafeOrder(const std::string& s) {
  static const std::regex kOrder("^[A-Za-z]{1,8}(-[A-Za-z]{1,8}){0,7}$");
  return std::regex_match(s, kOrder);
}

}  // namespace

std::string Relative(std::string text, const std::string& root, const std::string& staging,
                     const std::string& output_dir) {
  auto replace = [&text](const std::string& from, const std::string& to) {
    for (size_t p = 0; (p = text.find(from, p)) != std::string::npos; p += to.size()) text.replace(p, from.size(), to);
  };
  if (!staging.empty()) {
    replace(staging + "-config/", "");  // the compare.json of a "graph" run
    replace(staging + "/", output_dir + "/");
  }
  replace(root + "/", "");
  // The log directory itself (a message naming the folder "."), never its absolute path.
  auto in_name = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/';
  };
  for (size_t p = 0; (p = text.find(root, p)) != std::string::npos;) {
    size_t end = p + root.size();
    bool whole = (p == 0 || !in_name(text[p - 1])) && (end == text.size() || !in_name(text[end]));
    if (whole) text.replace(p, root.size(), ".");
    p += whole ? 1 : root.size();
  }
  return text;
}

// Every dump folder of a plan and its files must resolve inside the log
// directory, as the builder will check under --confine: a symlinked step or
// rank folder or dump.json that leads out is refused before anything runs.
ConvertStatus CheckInside(const std::string& root, const std::vector<std::string>& dirs) {
  for (const std::string& dir : dirs) {
    if (dir.empty()) continue;
    for (const char* name : kDumpFiles) {
      std::string path = *name == '\0' ? dir : dir + "/" + name;
      char* real = realpath(path.c_str(), nullptr);
      if (real == nullptr) continue;  // missing: the builder says so
      bool inside = PathInside(real, root);
      free(real);
      if (!inside) {
        return Bad(grpc::StatusCode::FAILED_PRECONDITION,
                   Relative(path, root, "", "") + ": path leaves the log directory (symlink)");
      }
    }
  }
  return ConvertStatus{};
}

ConvertStatus ResolveRequest(const LogDir& logdir, const ConvertRequest& r, Resolved* out) {
  if (r.npu().empty()) return Invalid("npu: choose the dump folder to convert");
  auto npu = logdir.ResolveDir(r.npu());
  if (!npu.ok()) return Invalid("npu: " + npu.error().ToString());
  out->npu = *npu;
  if (!r.bench().empty()) {
    auto bench = logdir.ResolveDir(r.bench());
    if (!bench.ok()) return Invalid("bench: " + bench.error().ToString());
    out->bench = *bench;
  }
  if (r.output_dir().empty()) return Invalid("output_dir: name the folder the results go into");
  auto output = logdir.ResolveNewDir(r.output_dir());
  if (!output.ok()) return Invalid("output_dir: " + output.error().ToString());
  if (output->find("/" + std::string(kPrivateFolderPrefix)) != std::string::npos) {
    return Invalid("output_dir: " + r.output_dir() + ": folders named " + kPrivateFolderPrefix + "* are the server's");
  }
  out->output = *output;
  if (!r.layer_mapping_file().empty()) {
    bool missing = false;
    auto yaml = logdir.Resolve(r.layer_mapping_file(), true, &missing);
    if (!yaml.ok()) return Invalid("layer_mapping_file: " + yaml.error().ToString());
    out->mapping = *yaml;
  }
  if (r.command() != "" && r.command() != "graph_visualize" && r.command() != "graph") {
    return Invalid("command: \"" + r.command() + "\" is neither graph_visualize nor graph");
  }
  auto counted = [&](const char* name, int n) -> ConvertStatus {
    size_t want = r.bench().empty() ? 1 : 2;
    if (n != 0 && static_cast<size_t>(n) > want) {
      return Invalid(std::string(name) + ": " + std::to_string(n) + " values; " +
                     (want == 1 ? "a build takes one" : "a compare takes two (npu, bench)"));
    }
    return ConvertStatus{};
  };
  for (auto [name, n] : {std::pair{"rank_size", r.rank_size_size()}, {"tp", r.tp_size()}, {"pp", r.pp_size()},
                         {"vpp", r.vpp_size()}, {"order", r.order_size()}}) {
    ConvertStatus st = counted(name, n);
    if (!st.ok()) return st;
  }
  for (const std::string& o : r.order()) {
    if (!SafeOrder(o)) return Invalid("order: \"" + o + "\" is not a rank order like tp-cp-ep-dp-pp");
  }
  return ConvertStatus{};
}

bool Parallel(const ConvertRequest& r) {
  return r.rank_size_size() + r.tp_size() + r.pp_size() + r.vpp_size() + r.order_size() > 0;
}

ConvertStatus CommandOf(const LogDir& logdir, const std::string& builder, const ConvertRequest& r,
                        const std::string& staging, ConvertCommand* launch) {
  Resolved paths;
  ConvertStatus st = ResolveRequest(logdir, r, &paths);
  if (!st.ok()) return st;
  const std::string& root = logdir.root();
  auto shown = [&](const std::string& abs) { return abs == root ? "." : Relative(abs, root, "", ""); };
  // The request as the builder's flags: the command line is written by the
  // CLI's own flag table (cli/graph_flags.h), so it cannot drift from what
  // the builder parses. `flags` holds the real paths, `display` what the
  // user sees (relative to the log directory).
  bool visualize = r.command() != "graph";
  cli::GraphFlags flags, display;
  flags.dialect = visualize ? job::Dialect::kVisualize : job::Dialect::kGraph;
  if (visualize) {
    flags.target = paths.npu;
    flags.golden = paths.bench;
  } else {
    std::string compare_json = "compare.json";
    if (!staging.empty()) {
      // Beside the staging folder, inside the log directory (the builder reads
      // nothing outside it); a dead server's is removed as its staging is.
      std::string dir = staging + "-config";
      if (mkdir(dir.c_str(), 0700) != 0) {
        return Bad(grpc::StatusCode::INTERNAL,
                   "cannot make a folder in the log directory: " + std::string(strerror(errno)));
      }
      launch->config_dir = dir;
      compare_json = launch->config_dir + "/compare.json";
      nlohmann::json config = {{"npu_path", paths.npu}};
      if (!paths.bench.empty()) config["bench_path"] = paths.bench;
      std::ofstream(compare_json) << config.dump() << "\n";
    }
    flags.input = compare_json;
  }
  flags.output = staging.empty() ? paths.output : staging;
  flags.overflow_check = r.overflow_check();
  flags.fuzzy_match = r.fuzzy_match();
  flags.layer_mapping = r.layer_mapping() || !paths.mapping.empty();
  flags.layer_mapping_file = paths.mapping;
  flags.complete_stack = r.complete_stack() && !visualize;
  flags.compare_log = r.tensor_log() && visualize;
  flags.parallel.rank_size.assign(r.rank_size().begin(), r.rank_size().end());
  flags.parallel.tp.assign(r.tp().begin(), r.tp().end());
  flags.parallel.pp.assign(r.pp().begin(), r.pp().end());
  flags.parallel.vpp.assign(r.vpp().begin(), r.vpp().end());
  flags.parallel.order.assign(r.order().begin(), r.order().end());
  flags.progress_json = true;

  display = flags;
  if (visualize) {
    display.target = shown(paths.npu);
    if (!paths.bench.empty()) display.golden = shown(paths.bench);
  } else {
    display.input = "compare.json";
  }
  display.output = r.output_dir();
  if (!paths.mapping.empty()) display.layer_mapping_file = r.layer_mapping_file();

  // The builder reads nothing whose real path leaves the log directory (a
  // symlinked rank folder or dump.json): --confine, checked at every open.
  launch->argv = {builder, "--confine", root};
  for (std::string& a : cli::GraphArgv(flags)) launch->argv.push_back(std::move(a));
  launch->display = cli::GraphArgv(display);
  launch->display.insert(launch->display.begin(), "graph-ascend");
  return ConvertStatus{};
}

ConvertStatus PlanRequest(const LogDir& logdir, const std::string& builder, const ConvertRequest& r,
                          ConvertPlanReply* reply) {
  Resolved paths;
  ConvertStatus st = ResolveRequest(logdir, r, &paths);
  if (!st.ok()) return st;
  const std::string& root = logdir.root();
  bool compare = !paths.bench.empty();
  job::CompareConfig config;
  if (r.command() == "graph") {
    config.path = "compare.json";
    config.npu_path = paths.npu;
    config.bench_path = paths.bench;
  } else {
    auto c = job::VisualizeConfig(paths.npu, paths.bench);
    if (!c.ok()) return Bad(grpc::StatusCode::FAILED_PRECONDITION, Relative(c.error().ToString(), root, "", ""));
    config = std::move(*c);
  }
  std::string ts = LocalTimeStamp();
  std::vector<std::string> names;
  std::string shape;
  if (Parallel(r)) {
    reply->set_kind("merge");
    auto steps = job::PlanMergeJobs(config);
    if (!steps.ok()) {
      return Bad(grpc::StatusCode::FAILED_PRECONDITION, Relative(steps.error().ToString(), root, "", ""));
    }
    int tp = r.tp_size() ? r.tp(0) : 0, pp = r.pp_size() ? r.pp(0) : 0;
    int rank_size = r.rank_size_size() ? r.rank_size(0) : 0;
    if (tp <= 0 || pp <= 0 || rank_size <= 0 || rank_size % (tp * pp) != 0) {
      return Bad(grpc::StatusCode::FAILED_PRECONDITION,
                 "parallel merge needs positive rank_size, tp and pp with rank_size a multiple of tp x pp");
    }
    size_t dp = static_cast<size_t>(rank_size / (tp * pp));
    std::vector<std::string> dirs;
    for (const job::MergeStepJob& s : *steps) {
      for (const auto* ranks : {&s.npu_ranks, &s.bench_ranks}) {
        for (const job::RankFolder& f : *ranks) dirs.push_back(f.dir);
      }
    }
    if (st = CheckInside(root, dirs); !st.ok()) return st;
    for (const job::MergeStepJob& s : *steps) {
      for (size_t i = 0; i < dp; ++i) names.push_back(job::MergedOutputName(compare, s.step, i, ts));
    }
    shape = std::to_string(steps->size()) + " step(s) x " + std::to_string(dp) + " data-parallel replica(s)";
  } else {
    reply->set_kind(compare ? "compare" : "build");
    auto plan = job::PlanJobs(config, ts);
    if (!plan.ok()) return Bad(grpc::StatusCode::FAILED_PRECONDITION, Relative(plan.error().ToString(), root, "", ""));
    std::vector<std::string> dirs;
    for (const auto& step : *plan) {
      for (const job::PairJob& j : step) {
        dirs.push_back(j.npu_dir);
        dirs.push_back(j.bench_dir);
      }
    }
    if (st = CheckInside(root, dirs); !st.ok()) return st;
    size_t ranks = 0;
    std::set<std::string> stages;
    for (const auto& step : *plan) {
      ranks = std::max(ranks, step.size());
      for (const job::PairJob& j : step) {
        names.push_back(j.output_name);
        if (!j.stage.empty()) stages.insert(j.stage);
      }
    }
    shape = stages.empty() ? std::to_string(plan->size()) + " step(s) x " + std::to_string(ranks) + " rank(s)"
                           : std::to_string(stages.size()) + " stage(s), " + std::to_string(plan->size()) +
                                 " step(s) in all, up to " + std::to_string(ranks) + " rank(s)";
  }
  reply->set_files(static_cast<uint32_t>(names.size()));
  for (size_t i = 0; i < names.size() && i < kMaxPlanNames; ++i) reply->add_outputs(r.output_dir() + "/" + names[i]);
  std::string what = reply->kind() == "merge" ? (compare ? "parallel-merge compare" : "parallel-merge build")
                                              : reply->kind();
  std::string count = std::to_string(names.size());
  reply->set_summary(names.size() == 1 ? what + ": 1 file" : what + ", batch of " + count + " files (" + shape + ")");
  ConvertCommand launch;
  st = CommandOf(logdir, builder, r, "", &launch);
  if (!st.ok()) return st;
  for (const std::string& a : launch.display) reply->add_argv(a);
  return ConvertStatus{};
}

}  // namespace graph_ascend::service
