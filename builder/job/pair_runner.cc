#include "job/pair_runner.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "base/parallel.h"
#include "base/temp_files.h"
#include "base/version.h"
#include "compare/grading.h"
#include "compare/legend.h"
#include "compare/pair_compare.h"
#include "divergence/overview_counts.h"
#include "match/layer_mapping.h"
#include "match/matcher.h"
#include "vis_writer/graph_writer.h"
#include "weights/ckpt_similarity.h"

namespace graph_ascend::job {
namespace {

using graph::Graph;
using graph::kNoNode;
using graph::NodeOp;
using graph::Side;


// §6.1: the compare mode from the two dump.json files.
Result<vis::CompareMode> DetectMode(const Side& npu, const Side* bench) {
  auto check = [](const Side& s) -> Status {
    const std::string& t = s.dump.task;
    if (t == "statistics" || t == "tensor" || t == "structure") return Status::Ok();
    if (t.empty()) return Error{s.dump.path, "key task", "missing: expected statistics, tensor or structure"};
    return Error{s.dump.path, "key task",
                 "unknown task '" + QuoteBytes(t) + "': expected statistics, tensor or structure"};
  };
  GA_RETURN_IF_ERROR(check(npu));
  if (bench == nullptr) return vis::MODE_NONE;
  GA_RETURN_IF_ERROR(check(*bench));
  if (npu.dump.task != bench->dump.task) {
    return Error{bench->dump.path, "key task", "the npu dump has task '" + npu.dump.task + "' (" + npu.dump.path +
                                                   ") but the bench dump has task '" + bench->dump.task +
                                                   "': both runs must be dumped with the same task"};
  }
  if (npu.dump.task == "tensor") return vis::MODE_TENSOR;
  if (npu.dump.task == "structure") return vis::MODE_STRUCTURE;
  if (npu.dump.summary_md5 != bench->dump.summary_md5) {
    const Side& with = npu.dump.summary_md5 ? npu : *bench;
    const Side& without = npu.dump.summary_md5 ? *bench : npu;
    return Error{without.dump.path, "", "has no md5 values but " + with.dump.path +
                                            " does (summary_mode md5): both runs must use the same summary_mode"};
  }
  return npu.dump.summary_md5 ? vis::MODE_MD5 : vis::MODE_STATISTICS;
}

// §5.10 for a compare: the NPU splits, matched Bench top-level nodes follow.
void AssignCompareMicroSteps(Graph* npu, Graph* bench) {
  uint32_t steps = graph::AssignMicroSteps(npu);
  for (int32_t c = npu->first_child[0]; c != kNoNode; c = npu->next_sibling[c]) {
    if (npu->matched[c] != kNoNode) bench->micro_step[npu->matched[c]] = npu->micro_step[c];
  }
  for (int32_t c = bench->first_child[0]; c != kNoNode; c = bench->next_sibling[c]) {
    if (bench->micro_step[c] != kNoNode) continue;
    std::string_view name = bench->Name(static_cast<uint32_t>(c));
    std::string_view last = name.substr(name.rfind('.') + 1);
    int32_t v = 0;
    bool digits = !last.empty() && last.size() < 9;
    for (char ch : last) digits &= ch >= '0' && ch <= '9';
    if (digits) v = std::atoi(std::string(last).c_str());
    bench->micro_step[c] = v;
  }
  npu->micro_steps = bench->micro_steps = steps;
}

// §6.9: API collections under the root take the worst index of their
// children, matched or not. A parallel merge's all-ranks collection takes
// the worst of its per-rank collections, each aggregated first.
void AggregateCollections(Graph* g, vis::CompareMode mode) {
  bool md5 = mode == vis::MODE_MD5;
  auto aggregate = [&](int32_t c) {
    double v = md5 ? 1 : 0;
    bool is_float = false;
    for (int32_t k = g->first_child[c]; k != kNoNode; k = g->next_sibling[k]) {
      double p = std::isnan(g->precision[k]) ? (md5 ? 1 : 0) : g->precision[k];
      if (md5 ? p < v : p > v) {
        v = p;
        is_float = !std::isnan(g->precision[k]) && g->precision_float[k];
      }
    }
    g->precision[c] = v;
    g->precision_float[c] = is_float;
  };
  // msprobe 26: the worst grade of the children, from pass.
  auto aggregate_grade = [&](int32_t c) {
    if (mode != vis::MODE_STATISTICS && mode != vis::MODE_MD5 && mode != vis::MODE_TENSOR) return;
    double v = 0;
    for (int32_t k = g->first_child[c]; k != kNoNode; k = g->next_sibling[k]) {
      if (!std::isnan(g->grade[k])) v = std::max(v, g->grade[k]);
    }
    g->grade[c] = v;
  };
  for (int32_t c = g->first_child[0]; c != kNoNode; c = g->next_sibling[c]) {
    if (g->op[c] != NodeOp::kApiCollection) continue;
    if (g->Name(static_cast<uint32_t>(c)).substr(0, 30) == "Apis_Between_Modules_All_Ranks") {
      for (int32_t k = g->first_child[c]; k != kNoNode; k = g->next_sibling[k]) {
        aggregate(k);
        aggregate_grade(k);
      }
    }
    aggregate(c);
    aggregate_grade(c);
  }
}

void ApplyOverflow(Side* side) {
  Graph& g = *side->graph;
  for (uint32_t n = 0; n < g.size(); ++n) {
    if (g.entry[n] != kNoNode) g.overflow[n] = side->dump.entries[g.entry[n]].overflow;
  }
}

}  // namespace

Status MakeOutputDir(const std::string& dir) {
  // Registered: a failed or interrupted run removes the folders it made when empty.
  GA_RETURN_IF_ERROR(MakeOutputFolders(dir, 0750));
  if (access(dir.c_str(), W_OK) != 0) return Error{dir, "", "output directory is not writable"};
  return Status::Ok();
}

void Release(std::unique_ptr<PreparedPair> pair) {
  if (pair == nullptr) return;
  std::unique_ptr<Side> bench = std::move(pair->bench);
  BackgroundWork free_bench([&bench] { bench.reset(); });
  pair.reset();
  (void)free_bench.Join();  // freeing throws nothing
}

Result<std::unique_ptr<PreparedPair>> JobRunner::Prepare(const PairJob& job) {
  auto pair = std::make_unique<PreparedPair>();
  pair->job = &job;
  pair->pool = std::make_shared<StringPool>();
  bool compare = !job.bench_dir.empty();
  graph::BuildOptions build;
  build.complete_stack = options_.complete_stack;
  build.overflow_check = options_.overflow_check;
  build.backward_inplace = options_.backward_inplace;
  build.code_mapping = options_.code_mapping;
  build.bench_code_mapping = options_.bench_code_mapping;
  build.progress = [&](size_t done, size_t total) { Report(job, total ? 0.6 * done / total : 0); };
  // The threads the batch leaves this pair (every core when it runs alone).
  build.threads = options_.threads > 0 ? options_.threads : DefaultThreads();
  Stage("reading dumps");
  Report(job, 0);
  Timed("start " + job.output_name);
  if (compare) {
    auto sides = graph::BuildSidePair(job.npu_dir, job.bench_dir, pair->pool.get(), build);
    if (!sides.ok()) return sides.error();
    pair->npu = std::move(sides->npu);
    pair->bench = std::move(sides->bench);
    Warn(*pair->npu);
    Warn(*pair->bench);
    Timed("read " + job.npu_dir + " and " + job.bench_dir + ": " + std::to_string(pair->npu->graph->size()) + " and " +
          std::to_string(pair->bench->graph->size()) + " nodes");
  } else {
    auto npu = graph::BuildSide(job.npu_dir, pair->pool.get(), build);
    if (!npu.ok()) return npu.error();
    pair->npu = std::move(*npu);
    Warn(*pair->npu);
    Timed("read " + job.npu_dir + ": " + std::to_string(pair->npu->graph->size()) + " nodes");
  }
  GA_RETURN_IF_ERROR(Finish(pair.get()));
  return pair;
}

Result<std::unique_ptr<PreparedPair>> JobRunner::PrepareMerged(const PairJob& job, std::shared_ptr<StringPool> pool,
                                                               std::unique_ptr<Side> npu, std::unique_ptr<Side> bench) {
  auto pair = std::make_unique<PreparedPair>();
  pair->job = &job;
  pair->pool = std::move(pool);
  pair->parallel_merge = true;
  pair->npu = std::move(npu);
  pair->bench = std::move(bench);
  GA_RETURN_IF_ERROR(Finish(pair.get()));
  return pair;
}

Result<std::vector<merge::MergedSide>> JobRunner::BuildMerged(const std::vector<RankFolder>& ranks,
                                                              const ParallelParams& params, StringPool* pool,
                                                              const std::string& label) {
  graph::BuildOptions build;
  build.complete_stack = options_.complete_stack;
  build.overflow_check = options_.overflow_check;
  build.backward_inplace = options_.backward_inplace;
  std::vector<merge::RankSide> sides;
  Stage("reading ranks");
  for (size_t i = 0; i < ranks.size(); ++i) {
    build.progress = [&](size_t done, size_t total) {
      if (options_.progress) options_.progress(label, (i + (total ? double(done) / total : 0)) / ranks.size());
    };
    auto side = graph::BuildSide(ranks[i].dir, pool, build);
    if (!side.ok()) return side.error();
    Warn(**side);
    if ((*side)->dump.task == "tensor") {
      return Error{(*side)->dump.path, "key task",
                   "'tensor': parallel merge merges the statistics of the ranks' dumps; compare tensor dumps rank "
                   "by rank (without parallel parameters)"};
    }
    Timed("read " + ranks[i].dir + ": " + std::to_string((*side)->graph->size()) + " nodes");
    sides.push_back(merge::RankSide{ranks[i].rank, std::move(*side)});
  }
  Stage("merging ranks");
  auto merged = merge::MergeRanks(std::move(sides), params, options_.log);
  if (!merged.ok()) return merged.error();
  std::string sizes;
  for (const merge::MergedSide& m : *merged) sizes += (sizes.empty() ? "" : ", ") + std::to_string(m.side->graph->size());
  Timed("merged " + std::to_string(ranks.size()) + " " + params.side + " ranks into " +
        std::to_string(merged->size()) + " graph(s) of " + sizes + " nodes");
  return merged;
}

Status JobRunner::Finish(PreparedPair* pair) {
  const PairJob& job = *pair->job;
  bool compare = pair->bench != nullptr;
  auto mode = DetectMode(*pair->npu, pair->bench.get());
  if (!mode.ok()) return mode.error();
  pair->mode = *mode;

  vis::FileMeta& meta = pair->meta;
  meta.set_format_version(1);
  meta.set_writer(std::string("graph-ascend ") + kVersion);
  meta.set_kind(compare ? vis::GRAPH_COMPARE : vis::GRAPH_BUILD);
  meta.set_mode(*mode);
  meta.set_task(compare ? compare::TaskName(*mode) : pair->npu->dump.task);
  meta.set_step(job.step);
  meta.set_rank(job.rank);
  meta.set_stage(job.stage);
  meta.set_created_unix(static_cast<int64_t>(time(nullptr)));
  meta.set_overflow_checked(options_.overflow_check);
  vis::BuildFlags* flags = meta.mutable_flags();
  flags->set_overflow_check(options_.overflow_check);
  flags->set_complete_stack(options_.complete_stack);
  flags->set_fuzzy_match(options_.fuzzy_match);
  flags->set_layer_mapping(options_.layer_mapping);
  flags->set_layer_mapping_file(options_.layer_mapping_file);
  if (config_.pairing == FolderPairing::kIntersect) {
    flags->set_visualize(true);
    flags->set_target_path(config_.npu_path);
    flags->set_golden_path(config_.bench_path);
  } else {
    flags->set_compare_json(config_.path);
  }
  for (const std::string& a : options_.argv) flags->add_argv(a);
  auto graph_meta = [](const Side& s, vis::GraphMeta* m) {
    m->set_root("DefaultModel");
    m->set_dump_data_dir(s.dump.dump_data_dir);
    m->set_has_dump_data_dir(s.dump.has_dump_data_dir);
    // Absolute, so that the graph service can find the dump whatever folder the graph was built from.
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::absolute(s.dir, ec);
    m->set_dump_path(ec ? s.dir : dir.lexically_normal().string());
    m->set_framework(s.dump.framework.empty() ? s.dump.detected_framework : s.dump.framework);
    m->set_task(s.dump.task);
    m->set_code_mapping(s.code_mapping_path);
    m->set_code_mapping_nodes(static_cast<uint32_t>(s.code_mapping_nodes));
  };
  graph_meta(*pair->npu, meta.mutable_npu());
  Graph& g = *pair->npu->graph;
  if (compare) {
    Side* npu_side = pair->npu.get();
    Side* bench_side = pair->bench.get();
    graph_meta(*bench_side, meta.mutable_bench());
    const std::string& fa = npu_side->dump.detected_framework;
    const std::string& fb = bench_side->dump.detected_framework;
    if (!fa.empty() && !fb.empty() && fa != fb && !options_.layer_mapping) {
      // MSAdapter's dumps hold MindSpore tensors under PyTorch's names: msprobe counts them as MindSpore.
      bool mindtorch = npu_side->dump.framework == "mindtorch" || bench_side->dump.framework == "mindtorch";
      auto named = [](const Side& s) {
        return s.dump.framework == "mindtorch" ? "mindtorch (MindSpore tensors)" : s.dump.detected_framework;
      };
      std::string hint = mindtorch ? "; -lm alone pairs mindtorch's PyTorch names as they are)" : ")";
      return Error{config_.path, "", "the npu dump is " + named(*npu_side) + " and the bench dump is " +
                                         named(*bench_side) + ": a cross-framework compare needs a layer mapping " +
                                         "(-lm FILE" + hint};
    }
    Stage("matching");
    uint32_t pairs;
    if (pair->parallel_merge) {
      meta.set_match(vis::MATCH_FUZZY);
      pairs = match::MatchFuzzy(npu_side, bench_side, /*check_shape=*/false);
    } else if (options_.layer_mapping) {
      meta.set_match(vis::MATCH_LAYER_MAPPING);
      auto mapping = match::NameMapping::Build(*npu_side, *bench_side, options_.layer_mapping_file);
      if (!mapping.ok()) return mapping.error();
      Timed("layer mapping: " + std::to_string(mapping->mapped()) + " dump names mapped, " +
          std::to_string(mapping->unmapped()) + " without a counterpart, " +
          std::to_string(mapping->yaml_entries_used()) + " yaml entries used");
      pairs = match::MatchMapped(npu_side, bench_side, *mapping);
    } else if (options_.fuzzy_match) {
      meta.set_match(vis::MATCH_FUZZY);
      pairs = match::MatchFuzzy(npu_side, bench_side);
    } else {
      meta.set_match(vis::MATCH_DEFAULT);
      pairs = match::MatchDefault(npu_side, bench_side);
    }
    Timed("matched " + std::to_string(pairs) + " of " + std::to_string(g.size()) + " npu nodes");
    AssignCompareMicroSteps(&g, bench_side->graph.get());
    if (*mode == vis::MODE_TENSOR) {
      pair->tensors = std::make_unique<compare::DumpTensorSource>(job.npu_dir, job.bench_dir);
    }
  } else {
    graph::AssignMicroSteps(&g);
  }
  meta.set_micro_steps(g.micro_steps);
  compare::SetLegendAndTooltips(&meta);
  compare::SetGradeLegend(&meta);
  meta.set_grading(options_.grading);
  if (options_.overflow_check) {
    ApplyOverflow(pair->npu.get());
    if (pair->bench) ApplyOverflow(pair->bench.get());
  }
  return Status::Ok();
}

void JobRunner::ComparePair(PreparedPair* pair, uint32_t n, compare::PairMetrics* metrics) const {
  Graph& g = *pair->npu->graph;
  // Reused from pair to pair by each thread.
  thread_local compare::NodeItems npu_items, bench_items;
  thread_local compare::ItemPairing items;
  auto items_of = [](const Side& side, uint32_t node, compare::NodeItems* out) {
    const Graph& sg = *side.graph;
    const dump::DumpEntry* e = sg.entry[node] == kNoNode ? nullptr : &side.dump.entries[sg.entry[node]];
    compare::ItemsOf(side.dump, e, sg.Name(node), *side.pool, out);
  };
  items_of(*pair->npu, n, &npu_items);
  if (n == 0) {  // the root never gets an index
    metrics->Reset(static_cast<uint32_t>(npu_items.items().size()));
    return;
  }
  items_of(*pair->bench, static_cast<uint32_t>(g.matched[n]), &bench_items);
  // The three readings of the pair share one pairing of its items.
  compare::PairItems(npu_items, bench_items, &items);
  std::string_view name = g.Name(n);
  compare::PairVerdict v = compare::ComparePair(pair->mode, name, items, pair->tensors.get(), metrics);
  g.grade[n] = compare::Grade26(pair->mode, name, items, *metrics, pair->parallel_merge);
  if (!options_.pair_written) {  // a .vis.db holds no divergence ranking
    if (pair->evidence.size() < g.size()) pair->evidence.resize(g.size());
    pair->evidence[n] = divergence::EvidenceOf(pair->mode, items, *metrics);
  }
  if (v.has_precision) {
    g.precision[n] = v.precision_index;
    g.precision_float[n] = v.is_float;
  }
  if (options_.compare_log && pair->mode == vis::MODE_TENSOR) {
    char index[32];
    snprintf(index, sizeof(index), "%.6g", v.has_precision ? v.precision_index : std::nan(""));
    options_.compare_log("[" + std::string(g.Name(n)) + "] Compare result: precision_index " + index);
  }
}

void JobRunner::ComputePrecision(PreparedPair* pair) {
  if (!pair->bench) return;
  Graph& g = *pair->npu->graph;
  compare::PairMetrics metrics;
  for (uint32_t n = 1; n < g.size(); ++n) {
    if (g.matched[n] == kNoNode) continue;
    ComparePair(pair, n, &metrics);
  }
  AggregateCollections(&g, pair->mode);
}

Status JobRunner::Write(PreparedPair* pair, std::string* written) {
  const PairJob& job = *pair->job;
  vis::WriteRequest request;
  request.npu = pair->npu.get();
  if (pair->bench) {
    request.bench = pair->bench.get();
    request.compare_pair = [this, pair](uint32_t n, compare::PairMetrics* metrics) { ComparePair(pair, n, metrics); };
    // Pairs are compared on several threads; tensor compares read .pt files in order.
    request.serial_compare = pair->tensors != nullptr;
    Graph* g = pair->npu->graph.get();
    vis::CompareMode mode = pair->mode;
    request.after_compare = [g, mode]() { AggregateCollections(g, mode); };
    // A .vis.db holds neither the divergence ranking nor the overview (the page ranks one it
    // opens): its scratch .vis goes without them.
    if (!options_.pair_written) {
      // Sized before the write: the compare threads fill it by node index.
      if (pair->evidence.size() < g->size()) pair->evidence.resize(g->size());
      request.rank_divergence = [g, mode, pair]() { return divergence::Rank(*g, pair->evidence, mode); };
      request.summarize = [g](const vis::DivergenceRanking& ranking, vis::FileMeta* meta) {
        *meta->mutable_overview() = divergence::CountForOverview(*g, *meta, ranking);
      };
    }
  }
  request.meta = pair->meta;
  request.threads = options_.threads;
  // The compared nodes' metrics, for the pair's details again once the file is written (pair_written).
  compare::KeptMetrics kept;
  if (options_.pair_written && pair->bench) request.kept_metrics = &kept;
  // Its rows are made from memory: the scratch .vis needs no details (their serializing and packing
  // were ~8 % of the db path's CPU at 10^5 nodes a side).
  request.details = !options_.pair_written;
  request.stage_done = [this](const std::string& what) { Timed(what); };
  vis::CkptSimilarity ckpt;
  if (options_.ckpt) {
    const Graph& g = *pair->npu->graph;
    std::vector<vis::CkptParam> params(options_.ckpt->param().begin(), options_.ckpt->param().end());
    ckpt = weights::MapOntoModules(std::move(params), g.size(), [&g](uint32_t n) {
      return g.op[n] == graph::NodeOp::kModule ? g.Name(n) : std::string_view();
    });
    ckpt.set_checkpoint_a(options_.ckpt->checkpoint_a());
    ckpt.set_checkpoint_b(options_.ckpt->checkpoint_b());
    ckpt.set_json(options_.ckpt->json());
    weights::Summarize(ckpt, &request.meta);
    request.ckpt = &ckpt;
  }
  Stage(pair->bench ? "comparing and writing" : "writing");
  request.progress = [&](double f) { Report(job, 0.6 + 0.4 * f); };
  std::string path = output_dir_ + "/" + job.output_name;
  GA_RETURN_IF_ERROR(vis::WriteVis(path, request));
  if (pair->tensors) {
    Status damaged = pair->tensors->damage();
    if (!damaged.ok()) {
      unlink(path.c_str());  // compared with a damaged tensor file: not a result
      return damaged;
    }
  }
  if (options_.pair_written) {
    Stage("writing .vis.db");
    auto details = [pair, &kept](vis::Side side, uint32_t n, vis::NodeDetail* out) {
      if (side == vis::SIDE_NPU) {
        vis::KeptDetail(*pair->npu, &kept, n, out);
      } else {
        vis::KeptDetail(*pair->bench, nullptr, n, out);
      }
    };
    Status rows = options_.pair_written(path, details);
    if (!rows.ok()) {
      unlink(path.c_str());
      return rows;
    }
    std::string kept_mb =
        pair->bench ? ", the compare's metrics kept in " + std::to_string(kept.bytes() >> 20) + " MiB" : "";
    Timed("wrote the .vis.db rows" + kept_mb);
  }
  if (options_.log) options_.log("wrote " + path);
  ++files_done_;
  *written = path;
  return Status::Ok();
}

Result<std::vector<MergeStepJob>> PlanMerged(const CompareConfig& config, const GraphOptions& options) {
  bool compare = !config.bench_path.empty();
  if (compare && !config.has_bench_parallel) {
    return Error{config.path, config.npu_parallel.from_flags ? "flag --rank_size" : "key parallel_merge.bench",
                 "missing: a parallel-merge compare needs the bench run's rank_size, tp and pp too"};
  }
  if (options.layer_mapping) {
    return Error{config.path, "", "-lm (layer mapping) cannot be used with parallel merge: merged graphs are matched "
                                  "fuzzily by name (msprobe forces -f there)"};
  }
  auto plan = PlanMergeJobs(config);
  if (!plan.ok()) return plan.error();
  for (const MergeStepJob& step : *plan) {
    GA_RETURN_IF_ERROR(merge::ValidateParallelParams(config.npu_parallel, step.npu_ranks.size(), step.npu_dir));
    if (compare) {
      GA_RETURN_IF_ERROR(merge::ValidateParallelParams(config.bench_parallel, step.bench_ranks.size(), step.bench_dir));
    }
  }
  return plan;
}

Status RunMergedStep(JobRunner* runner, const CompareConfig& config, const MergeStepJob& step, const std::string& ts,
                     std::vector<std::string>* outputs) {
  bool compare = !config.bench_path.empty();
  auto pool = std::make_shared<StringPool>();
  std::string label = "merging " + (step.step.empty() ? std::string() : step.step + " ");
  auto npu = runner->BuildMerged(step.npu_ranks, config.npu_parallel, pool.get(), label + "npu");
  if (!npu.ok()) return npu.error();
  std::vector<merge::MergedSide> bench;
  if (compare) {
    auto b = runner->BuildMerged(step.bench_ranks, config.bench_parallel, pool.get(), label + "bench");
    if (!b.ok()) return b.error();
    bench = std::move(*b);
    if (bench.size() != npu->size()) {
      return Error{config.path, "", "parallel merge gives " + std::to_string(npu->size()) + " npu graph(s) but " +
                                        std::to_string(bench.size()) + " bench graph(s): the data-parallel sizes " +
                                        "(dp = rank_size / (tp * pp)) of the two runs must agree"};
    }
  }
  for (size_t i = 0; i < npu->size(); ++i) {
    merge::MergedSide& n = (*npu)[i];
    PairJob job;
    job.npu_dir = n.side->dir;
    if (compare) job.bench_dir = bench[i].side->dir;
    job.step = step.step;
    job.rank = "rank" + std::to_string(n.rank);
    job.rank_number = n.rank;
    job.output_name = MergedOutputName(compare, step.step, i, ts);
    auto pair = runner->PrepareMerged(job, pool, std::move(n.side), compare ? std::move(bench[i].side) : nullptr);
    if (!pair.ok()) return pair.error();
    std::string written;
    GA_RETURN_IF_ERROR(runner->Write(pair->get(), &written));
    outputs->push_back(written);
  }
  return Status::Ok();
}

}  // namespace graph_ascend::job
