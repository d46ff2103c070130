// Conversions from the page (ConvertInputs/Plan/Start/Progress/List): a real
// server on a Unix socket running the real graph-ascend executable on copies
// of the real msprobe samples. Cancels: convert_cancel_test.cc.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <string>
#include <thread>

#include "convert_fixture.h"

namespace graph_ascend::service {
namespace {

using namespace convert_testing;  // NOLINT: the fixture and its helpers

TEST_F(ConvertTest, ListsDumpFoldersAndMappingFiles) {
  std::ofstream(dir_.Join("gpt/mapping.yaml")) << "TransformerLayer:\n  mlp: feed_forward\n";
  fs::create_directories(dir_.Join("notes"));
  std::ofstream(dir_.Join("notes/readme.txt")) << "not a dump\n";
  fs::create_symlink(SourceDir() + "/samples/cnn_statistics", dir_.Join("outside"));  // never entered
  grpc::ClientContext ctx;
  ConvertInputsReply reply;
  ASSERT_TRUE(stub_->ConvertInputs(&ctx, ConvertInputsRequest(), &reply).ok());
  EXPECT_TRUE(reply.allowed());
  std::map<std::string, ConvertDumpDir> by_path;
  for (const ConvertDumpDir& d : reply.dumps()) by_path[d.path()] = d;
  ASSERT_TRUE(by_path.count("gpt/npu")) << reply.DebugString();
  EXPECT_EQ(by_path["gpt/npu"].layout(), "steps");
  EXPECT_EQ(by_path["gpt/npu"].steps(), 2u);
  EXPECT_EQ(by_path["gpt/npu"].ranks(), 1u);
  EXPECT_EQ(by_path["gpt/npu"].task(), "statistics");
  EXPECT_EQ(by_path["gpt/npu/step0"].layout(), "ranks");
  EXPECT_EQ(by_path["gpt/bench/step1/rank0"].layout(), "files");
  for (const auto& [path, d] : by_path) {
    EXPECT_EQ(path.find("outside"), std::string::npos) << path;
    EXPECT_EQ(path.find("notes"), std::string::npos) << path;
  }
  ASSERT_EQ(reply.mapping_files_size(), 1);
  EXPECT_EQ(reply.mapping_files(0), "gpt/mapping.yaml");
}

TEST_F(ConvertTest, PlanSaysWhatTheResultWillBe) {
  grpc::ClientContext c1;
  ConvertPlanReply compare;
  ASSERT_TRUE(stub_->ConvertPlan(&c1, Request("gpt/npu", "gpt/bench", "out"), &compare).ok());
  EXPECT_EQ(compare.kind(), "compare");
  EXPECT_EQ(compare.files(), 2u);
  ASSERT_EQ(compare.outputs_size(), 2);
  EXPECT_EQ(compare.outputs(0).rfind("out/compare_step0_rank0_", 0), 0u) << compare.outputs(0);
  EXPECT_NE(compare.summary().find("batch of 2"), std::string::npos) << compare.summary();
  grpc::ClientContext c2;
  ConvertPlanReply build;
  ConvertRequest r = Request("gpt/npu/step0/rank0", "", "out");
  r.set_overflow_check(true);
  ASSERT_TRUE(stub_->ConvertPlan(&c2, r, &build).ok());
  EXPECT_EQ(build.kind(), "build");
  EXPECT_EQ(build.files(), 1u);
  std::vector<std::string> argv(build.argv().begin(), build.argv().end());
  EXPECT_EQ(argv, (std::vector<std::string>{"graph-ascend", "graph_visualize", "-tp", "gpt/npu/step0/rank0", "-o",
                                            "out", "-oc", "--progress_json"}));
  // Layouts that do not pair are refused before anything runs.
  grpc::ClientContext c3;
  ConvertPlanReply bad;
  grpc::Status st = stub_->ConvertPlan(&c3, Request("gpt/npu", "gpt/bench/step0/rank0", "out"), &bad);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(st.error_message().find(dir_.path()), std::string::npos) << "paths are relative: " << st.error_message();
}

// The builder's command line is written by the CLI's flag table (cli/graph_flags.h), for graph's flags as for
// graph_visualize's, every option of the request included.
TEST_F(ConvertTest, ThePlansCommandLineIsTheBuildersOwnFlags) {
  ConvertRequest r = Request("gpt/npu/step0/rank0", "gpt/bench/step0/rank0", "out");
  r.set_command("graph");
  r.set_overflow_check(true);
  r.set_fuzzy_match(true);
  r.set_complete_stack(true);
  grpc::ClientContext c1;
  ConvertPlanReply graph;
  ASSERT_TRUE(stub_->ConvertPlan(&c1, r, &graph).ok());
  std::vector<std::string> argv(graph.argv().begin(), graph.argv().end());
  EXPECT_EQ(argv, (std::vector<std::string>{"graph-ascend", "graph", "-i", "compare.json", "-o", "out", "-oc", "-cs",
                                            "-f", "--progress_json"}));

  r.set_command("graph_visualize");
  r.set_tensor_log(true);
  grpc::ClientContext c2;
  ConvertPlanReply visualize;
  ASSERT_TRUE(stub_->ConvertPlan(&c2, r, &visualize).ok());
  argv.assign(visualize.argv().begin(), visualize.argv().end());
  EXPECT_EQ(argv, (std::vector<std::string>{"graph-ascend", "graph_visualize", "-tp", "gpt/npu/step0/rank0", "-gp",
                                            "gpt/bench/step0/rank0", "-o", "out", "-oc", "-fm", "-tensor_log",
                                            "--progress_json"}));
}

TEST_F(ConvertTest, ConvertsWithProgressAndPublishesTheFiles) {
  ConvertRequest r = Request("gpt/npu", "gpt/bench", "converted/gpt");
  r.set_overflow_check(true);
  ConvertJob job;
  ASSERT_TRUE(Start(r, &job).ok());
  EXPECT_FALSE(job.id().empty());
  std::vector<ConvertJob> seen = Watch(job.id());
  ASSERT_FALSE(seen.empty());
  const ConvertJob& last = seen.back();
  ASSERT_EQ(last.state(), CONVERT_DONE) << last.error_message();
  EXPECT_DOUBLE_EQ(last.fraction(), 1.0);
  double previous = 0;
  for (const ConvertJob& j : seen) {
    EXPECT_GE(j.fraction(), previous);
    previous = j.fraction();
  }
  // The job's history holds every stage, however few progress messages a fast run sent.
  std::vector<std::string> stages(last.stages().begin(), last.stages().end());
  auto reading = std::find(stages.begin(), stages.end(), "reading dumps");
  auto writing = std::find(stages.begin(), stages.end(), "comparing and writing");
  EXPECT_NE(reading, stages.end());
  EXPECT_NE(writing, stages.end());
  EXPECT_LT(reading, writing);
  ASSERT_EQ(last.outputs_size(), 2);
  for (const std::string& o : last.outputs()) {
    EXPECT_EQ(o.rfind("converted/gpt/compare_step", 0), 0u) << o;
    EXPECT_TRUE(fs::is_regular_file(dir_.Join(o))) << o;
  }
  for (const auto& e : fs::directory_iterator(dir_.path())) {
    EXPECT_NE(e.path().filename().string().rfind(".graph-ascend-", 0), 0u) << "staging left: " << e.path();
  }
  // The page lists and opens them as any run.
  grpc::ClientContext lc;
  ListRunsReply runs;
  ASSERT_TRUE(stub_->ListRuns(&lc, ListRunsRequest(), &runs).ok());
  ASSERT_EQ(runs.files_size(), 2);
  EXPECT_EQ(runs.files(0).path(), last.outputs(0));
  grpc::ClientContext ic;
  FileRequest fr;
  fr.set_file(last.outputs(0));
  FileInfo info;
  ASSERT_TRUE(stub_->GetFileInfo(&ic, fr, &info).ok());
  EXPECT_TRUE(info.meta().overflow_checked());
  EXPECT_EQ(info.meta().grading(), vis::GRADING_26);  // graph_visualize's default
}

// verl's step_<N>/<stage> folders (samples/rl_stages): listed as "stages", converted stage by stage, and each
// stage listed as a run of its own, with its stage (docs/FORMAT.md "Stages").
TEST_F(ConvertTest, ConvertsAStagesLayoutStageByStage) {
  fs::copy(SourceDir() + "/samples/rl_stages", dir_.Join("rl"), fs::copy_options::recursive);
  grpc::ClientContext ctx;
  ConvertInputsReply inputs;
  ASSERT_TRUE(stub_->ConvertInputs(&ctx, ConvertInputsRequest(), &inputs).ok());
  std::map<std::string, ConvertDumpDir> by_path;
  for (const ConvertDumpDir& d : inputs.dumps()) by_path[d.path()] = d;
  EXPECT_EQ(by_path["rl/npu"].layout(), "stages") << inputs.DebugString();
  EXPECT_EQ(by_path["rl/npu"].stages(), 6u);
  EXPECT_EQ(by_path["rl/npu"].task(), "statistics");
  EXPECT_EQ(by_path["rl/npu/step_2"].layout(), "stages");
  EXPECT_EQ(by_path["rl/npu/step_2"].stages(), 3u);
  EXPECT_EQ(by_path["rl/npu/step_2/actor_update"].layout(), "steps");

  grpc::ClientContext pc;
  ConvertPlanReply plan;
  ASSERT_TRUE(stub_->ConvertPlan(&pc, Request("rl/npu", "rl/bench", "out"), &plan).ok());
  EXPECT_EQ(plan.summary(), "compare, batch of 6 files (6 stage(s), 6 step(s) in all, up to 1 rank(s))");
  ConvertJob job;
  ASSERT_TRUE(Start(Request("rl/npu", "rl/bench", "out"), &job).ok());
  std::vector<ConvertJob> seen = Watch(job.id());
  ASSERT_FALSE(seen.empty());
  ASSERT_EQ(seen.back().state(), CONVERT_DONE) << seen.back().error_message();
  ASSERT_EQ(seen.back().outputs_size(), 6);
  grpc::ClientContext lc;
  ListRunsReply runs;
  ASSERT_TRUE(stub_->ListRuns(&lc, ListRunsRequest(), &runs).ok());
  std::set<std::string> stages, groups;
  for (const RunFile& f : runs.files()) {
    // Each stage holds one graph (step0 of rank0): a single graph, listed without step and rank.
    EXPECT_EQ(f.step(), "") << f.path();
    EXPECT_EQ(f.rank(), "") << f.path();
    // out/compare_step0_rank0_<ts>_<stage>.vis is in run out/compare_<ts>_<stage>.
    std::string ts = f.path().substr(f.path().find("_rank0_") + 7, 14);
    EXPECT_EQ(f.path(), "out/compare_step0_rank0_" + ts + "_" + f.stage() + ".vis");
    EXPECT_EQ(f.group(), "out/compare_" + ts + "_" + f.stage());
    stages.insert(f.stage());
    groups.insert(f.group());
  }
  EXPECT_EQ(stages, (std::set<std::string>{"step_1.actor_compute_log_prob", "step_1.actor_update",
                                           "step_1.ref_compute_log_prob", "step_2.actor_compute_log_prob",
                                           "step_2.actor_update", "step_2.ref_compute_log_prob"}));
  EXPECT_EQ(groups.size(), 6u);
}

TEST_F(ConvertTest, QueuesJobsInOrderAndListsThemPerSession) {
  ConvertJob first, second, other;
  ASSERT_TRUE(Start(Request("gpt/npu", "gpt/bench", "q1"), &first).ok());
  ConvertRequest graph = Request("gpt/npu/step0/rank0", "gpt/bench/step0/rank0", "q2");
  graph.set_command("graph");
  graph.set_complete_stack(true);
  ASSERT_TRUE(Start(graph, &second).ok());
  ASSERT_TRUE(Start(Request("gpt/npu/step1", "", "q3", "tab2"), &other).ok());
  EXPECT_EQ(second.state(), CONVERT_QUEUED);
  EXPECT_GE(second.queue_position(), 1u);
  std::vector<ConvertJob> a = Watch(first.id());
  std::vector<ConvertJob> b = Watch(second.id());
  ASSERT_EQ(a.back().state(), CONVERT_DONE) << a.back().error_message();
  ASSERT_EQ(b.back().state(), CONVERT_DONE) << b.back().error_message();
  ASSERT_EQ(b.back().outputs_size(), 1);
  FileRequest fr;
  fr.set_file(b.back().outputs(0));
  FileInfo info;
  grpc::ClientContext ic;
  ASSERT_TRUE(stub_->GetFileInfo(&ic, fr, &info).ok());
  EXPECT_TRUE(info.meta().flags().complete_stack());
  EXPECT_EQ(info.meta().grading(), vis::GRADING_INDEX);  // graph's default
  // tab1 sees its two jobs, newest first; tab2's is not there, nor watchable from tab1.
  grpc::ClientContext lc;
  ConvertListRequest lr;
  lr.set_session("tab1");
  ConvertListReply list;
  ASSERT_TRUE(stub_->ConvertList(&lc, lr, &list).ok());
  ASSERT_EQ(list.jobs_size(), 2);
  EXPECT_EQ(list.jobs(0).id(), second.id());
  EXPECT_EQ(list.jobs(1).id(), first.id());
  grpc::Status st;
  Watch(other.id(), nullptr, "tab1", &st);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  ConvertJob ignored;
  EXPECT_EQ(Cancel(other.id(), &ignored, "tab1").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Watch(other.id(), nullptr, "tab2").back().state(), CONVERT_DONE);
}

TEST_F(ConvertTest, ABadDumpFailsWithTheBuildersMessage) {
  fs::create_directories(dir_.Join("bad"));
  std::ofstream(dir_.Join("bad/dump.json"))
      << "{\"task\": \"statistics\", \"level\": \"mix\", \"dump_data_dir\": null,\n"
         " \"data\": {\"Torch.add.0.forward\": {\"input_args\": [ }}\n";
  fs::copy(dir_.Join("gpt/npu/step0/rank0/construct.json"), dir_.Join("bad/construct.json"));
  fs::copy(dir_.Join("gpt/npu/step0/rank0/stack.json"), dir_.Join("bad/stack.json"));
  ConvertJob job;
  ASSERT_TRUE(Start(Request("bad", "", "bad_out"), &job).ok());
  const ConvertJob last = Watch(job.id()).back();
  EXPECT_EQ(last.state(), CONVERT_FAILED);
  // One line naming the file (relative to the log directory) and the place.
  EXPECT_EQ(last.error_message().rfind("bad/dump.json: line 2", 0), 0u) << last.error_message();
  EXPECT_EQ(last.error_message().find('\n'), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_.Join("bad_out")));
  EXPECT_EQ(Leftovers(dir_.path()), std::vector<std::string>{});
}

TEST_F(ConvertTest, RefusesPathsOutsideTheLogDirectory) {
  fs::create_symlink("/tmp", dir_.Join("tmp_link"));
  const std::vector<ConvertRequest> bad = {
      Request("../gpt/npu", "", "o"),         Request("/tmp", "", "o"),
      Request("gpt/npu", "gpt/../../x", "o"), Request("gpt/npu", "", "../o"),
      Request("gpt/npu", "", "/tmp/o"),       Request("gpt/npu", "", "tmp_link/o"),
      Request("tmp_link", "", "o"),           Request("gpt/npu", "", ".graph-ascend-x/o"),
      Request("gpt/npu", "", ""),             Request("gpt/npu/step0/rank0/dump.json", "", "o"),
  };
  for (const ConvertRequest& r : bad) {
    ConvertJob job;
    grpc::Status st = Start(r, &job);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << r.ShortDebugString();
  }
  ConvertRequest mapping = Request("gpt/npu", "gpt/bench", "o");
  mapping.set_layer_mapping_file("../mapping.yaml");
  ConvertJob job;
  EXPECT_EQ(Start(mapping, &job).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

// A dump folder whose rank folder, step folder, dump.json or construct.json
// is a symbolic link out of the log directory: the plan refuses it, and a
// conversion started anyway (the builder runs under --confine) fails with one
// line naming the link; no .vis is written, nothing of the outside dump is served.
TEST_F(ConvertTest, LinksOutOfTheLogDirectoryAreNeitherPlannedNorConverted) {
  TempDir outside;
  const std::string rank0 = dir_.Join("gpt/npu/step0/rank0");
  fs::copy(dir_.Join("gpt/npu/step0"), outside.Join("step0"), fs::copy_options::recursive);
  // links: a rank folder, a step folder, dump.json, construct.json.
  fs::create_directories(dir_.Join("rank_link"));
  fs::create_directory_symlink(outside.Join("step0/rank0"), dir_.Join("rank_link/rank0"));
  fs::create_directories(dir_.Join("step_link"));
  fs::create_directory_symlink(outside.Join("step0"), dir_.Join("step_link/step0"));
  for (const char* name : {"dump.json", "construct.json"}) {
    std::string folder = dir_.Join(std::string(name) == "dump.json" ? "dump_link" : "construct_link");
    fs::create_directories(folder);
    for (const char* f : {"dump.json", "construct.json", "stack.json"}) {
      if (std::string(f) == name) {
        fs::create_symlink(outside.Join(std::string("step0/rank0/") + f), folder + "/" + f);
      } else {
        fs::copy(rank0 + "/" + f, folder + "/" + f);
      }
    }
  }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"rank_link", "rank_link/rank0"},
      {"step_link", "step_link/step0"},
      {"dump_link", "dump_link/dump.json"},
      {"construct_link", "construct_link/construct.json"},
  };
  for (const auto& [npu, link] : cases) {
    for (const char* command : {"graph_visualize", "graph"}) {
      SCOPED_TRACE(npu + " " + command);
      ConvertRequest r = Request(npu, "", npu + "_out");
      r.set_command(command);
      grpc::ClientContext pc;
      ConvertPlanReply plan;
      grpc::Status st = stub_->ConvertPlan(&pc, r, &plan);
      EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
      EXPECT_NE(st.error_message().find(link), std::string::npos) << st.error_message();
      EXPECT_NE(st.error_message().find("leaves the log directory"), std::string::npos) << st.error_message();
      EXPECT_EQ(st.error_message().find(dir_.path()), std::string::npos) << st.error_message();
      ConvertJob job;
      ASSERT_TRUE(Start(r, &job).ok());
      const ConvertJob last = Watch(job.id()).back();
      EXPECT_EQ(last.state(), CONVERT_FAILED);
      EXPECT_NE(last.error_message().find(link), std::string::npos) << last.error_message();
      EXPECT_NE(last.error_message().find("leaves the log directory"), std::string::npos) << last.error_message();
      EXPECT_EQ(last.error_message().find(outside.path()), std::string::npos) << last.error_message();
      EXPECT_EQ(last.outputs_size(), 0);
      EXPECT_FALSE(fs::exists(dir_.Join(npu + "_out")));
    }
  }
  EXPECT_EQ(Leftovers(dir_.path()), std::vector<std::string>{});
  grpc::ClientContext lc;
  ListRunsReply runs;
  ASSERT_TRUE(stub_->ListRuns(&lc, ListRunsRequest(), &runs).ok());
  EXPECT_EQ(runs.files_size(), 0) << runs.DebugString();
}

// The plan names paths relative to the log directory, the log directory itself as ".".
TEST_F(ConvertTest, PlanErrorsNeverNameTheAbsoluteLogDirectory) {
  fs::create_directories(dir_.Join("loose"));
  fs::copy(dir_.Join("gpt/npu/step0/rank0/dump.json"), dir_.Join("loose/dump.json"));
  fs::create_directories(dir_.Join("notes"));
  std::ofstream(dir_.Join("notes/readme.txt")) << "not a dump\n";
  for (const ConvertRequest& r : {Request(".", "", "o"), Request(".", "gpt/npu", "o"), Request("gpt/npu", ".", "o")}) {
    grpc::ClientContext ctx;
    ConvertPlanReply plan;
    grpc::Status st = stub_->ConvertPlan(&ctx, r, &plan);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << r.ShortDebugString();
    EXPECT_EQ(st.error_message().find(dir_.path()), std::string::npos) << st.error_message();
  }
}

// A path with a newline (a folder name) gives a one-line answer.
TEST_F(ConvertTest, ErrorAnswersAreOneLine) {
  fs::create_directories(dir_.Join("two\nlines"));
  std::ofstream(dir_.Join("two\nlines/dump.json")) << "{\"task\": \"statistics\", \"data\": {\n\x1b[2J\x01";
  fs::copy(dir_.Join("gpt/npu/step0/rank0/construct.json"), dir_.Join("two\nlines/construct.json"));
  fs::copy(dir_.Join("gpt/npu/step0/rank0/stack.json"), dir_.Join("two\nlines/stack.json"));
  grpc::ClientContext ctx;
  ConvertPlanReply plan;
  grpc::Status st = stub_->ConvertPlan(&ctx, Request("no\nsuch\rfolder", "", "o"), &plan);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("no\\nsuch\\rfolder"), std::string::npos) << st.error_message();
  ConvertJob job;
  ASSERT_TRUE(Start(Request("two\nlines", "", "o"), &job).ok());
  const ConvertJob last = Watch(job.id()).back();
  EXPECT_EQ(last.state(), CONVERT_FAILED);
  EXPECT_EQ(last.error_message().rfind("two\\nlines/dump.json: ", 0), 0u) << last.error_message();
  for (char c : last.error_message()) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << last.error_message();
  for (const std::string& line : last.log()) {
    for (char c : line) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << line;
  }
}

TEST_F(ConvertTest, ConversionCanBeSwitchedOff) {
  ServiceOptions options;
  options.allow_convert = ServiceOptions::Convert::kOff;
  Serve(options);
  grpc::ClientContext ctx;
  ConvertInputsReply inputs;
  ASSERT_TRUE(stub_->ConvertInputs(&ctx, ConvertInputsRequest(), &inputs).ok());
  EXPECT_FALSE(inputs.allowed());
  EXPECT_EQ(inputs.dumps_size(), 0);
  ConvertJob job;
  EXPECT_EQ(Start(Request("gpt/npu", "", "o"), &job).error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(ConvertTest, TheJsonBridgeCarriesTheUnaryMethods) {
  grpc::ClientContext ctx;
  JsonCall call;
  call.set_method("ConvertPlan");
  call.set_request_json(R"({"session": "tab1", "npu": "gpt/npu", "outputDir": "o"})");
  JsonReply reply;
  ASSERT_TRUE(stub_->CallJson(&ctx, call, &reply).ok());
  EXPECT_NE(reply.reply_json().find("\"kind\":\"build\""), std::string::npos) << reply.reply_json();
  EXPECT_NE(reply.reply_json().find("\"files\":2"), std::string::npos) << reply.reply_json();
}

}  // namespace
}  // namespace graph_ascend::service
