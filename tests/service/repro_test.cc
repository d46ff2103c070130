// ReproScript (plugin/service/graph_service_repro.cc), the page's "Repro script", on a graph
// built by bin/graph-ascend from a dump inside the log directory: the answer tells nothing of the
// files outside the log directory, and an API off msprobe's list is refused (issue 35, points 3-4).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "../builder/cli_runner.h"
#include "graph_service.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The log directory holds gpt_tensor's NPU dump (dump/) and the graph built from it (repro/);
// `outside` is a folder beside the log directory.
class ReproScriptTest : public ::testing::Test {
 protected:
  // Copies the dump with each text edited by `edit` and dump_data_dir set to `data_dir`, builds the graph.
  void Build(const std::string& data_dir, const std::function<std::string(std::string)>& edit = nullptr) {
    std::string sample = graph_ascend::testing::Sample("gpt_tensor/npu/step0/rank0/");
    fs::create_directories(dir_.Join("logdir/dump"));
    fs::create_directories(dir_.Join("outside"));
    for (const char* name : {"dump.json", "construct.json", "stack.json"}) {
      std::string text = Slurp(sample + name);
      if (std::string(name) == "dump.json") {
        text = std::regex_replace(text, std::regex("\"dump_data_dir\": \"[^\"]*\""),
                                  "\"dump_data_dir\": \"" + data_dir + "\"");
      }
      std::ofstream(dir_.Join("logdir/dump/") + name) << (edit ? edit(text) : text);
    }
    std::ofstream(dir_.Join("build.json")) << "{\"npu_path\": \"" << dir_.Join("logdir/dump") << "\"}";
    graph_ascend::testing::RunResult r =
        graph_ascend::testing::RunTool({"graph", "-i", dir_.Join("build.json"), "-o", dir_.Join("logdir/repro")});
    ASSERT_EQ(r.status, 0) << r.err;
    for (const auto& e : fs::directory_iterator(dir_.Join("logdir/repro"))) {
      if (e.path().extension() == ".vis") file_ = "repro/" + e.path().filename().string();
    }
    ASSERT_FALSE(file_.empty());
    ServiceOptions options;
    options.logdir = dir_.Join("logdir");
    service_.Start(options, dir_.Join("s.sock"));
    ASSERT_NE(service_.stub(), nullptr);
  }

  // Copies gpt_tensor's tensor files into `dir`.
  void CopyTensors(const std::string& dir) {
    fs::create_directories(dir);
    std::string from = graph_ascend::testing::Sample("gpt_tensor/npu/step0/rank0/dump_tensor_data");
    for (const auto& e : fs::directory_iterator(from)) {
      fs::copy_file(e.path(), dir + "/" + e.path().filename().string());
    }
  }

  int32_t Find(const std::string& name) {
    {
      grpc::ClientContext ctx;
      FileRequest req;
      req.set_file(file_);
      auto reader = service_.stub()->OpenFile(&ctx, req);
      OpenProgress p;
      while (reader->Read(&p)) {
      }
      EXPECT_TRUE(reader->Finish().ok());
    }
    grpc::ClientContext ctx;
    SearchRequest search;
    search.mutable_view()->set_session("s");
    search.mutable_view()->set_file(file_);
    search.mutable_view()->set_micro_step(-1);
    search.set_query(name);
    NodeList hits;
    EXPECT_TRUE(service_.stub()->Search(&ctx, search, &hits).ok());
    for (const auto& h : hits.hits()) {
      if (h.name() == name) return h.index();
    }
    ADD_FAILURE() << name << " not found";
    return -1;
  }

  grpc::Status Repro(int32_t node, const std::string& mode, ReproReply* reply) {
    grpc::ClientContext ctx;
    ReproRequest req;
    req.set_file(file_);
    req.set_node(node);
    req.set_data_mode(mode);
    return service_.stub()->ReproScript(&ctx, req, reply);
  }

  TempDir dir_;
  std::string file_;
  testing::InProcessService service_;
};

TEST_F(ReproScriptTest, RealDataReadsTheTensorsInsideTheLogDirectory) {
  // dump_data_dir names the dumping machine's folder; the files beside dump.json are inside.
  CopyTensors(dir_.Join("logdir/dump/dump_tensor_data"));
  ASSERT_NO_FATAL_FAILURE(Build("/nonexistent/dump_tensor_data"));
  ReproReply reply;
  grpc::Status st = Repro(Find("Functional.linear.0.forward"), "real_data", &reply);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(reply.script_name(), "Functional.linear.0.forward.py");
  EXPECT_NE(reply.script().find("logdir/dump/dump_tensor_data/Functional.linear.0.forward.input.0.pt"),
            std::string::npos);
}

TEST_F(ReproScriptTest, AFileOutsideTheLogDirectoryGetsTheSameAnswerWhetherOrNotItExists) {
  // Before: 200 when the tensor files outside existed, 412 when not, an oracle on any path.
  std::string outside = dir_.Join("outside/dump_tensor_data");
  CopyTensors(outside);
  ASSERT_NO_FATAL_FAILURE(Build(outside));
  int32_t node = Find("Functional.linear.0.forward");
  ReproReply real_present, real_absent, random_present, random_absent;
  grpc::Status present = Repro(node, "real_data", &real_present);
  ASSERT_TRUE(Repro(node, "random_data", &random_present).ok());
  fs::remove_all(outside);
  grpc::Status absent = Repro(node, "real_data", &real_absent);
  ASSERT_TRUE(Repro(node, "random_data", &random_absent).ok());
  EXPECT_EQ(present.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << present.error_message();
  EXPECT_EQ(absent.error_code(), present.error_code());
  EXPECT_EQ(absent.error_message(), present.error_message());
  EXPECT_NE(present.error_message().find("no such tensor file inside the log directory"), std::string::npos)
      << present.error_message();
  // The tensor folder the script names does not depend on whether the folder outside exists either.
  EXPECT_EQ(random_present.script(), random_absent.script());
  EXPECT_EQ(random_present.extract_json(), random_absent.extract_json());
}

TEST_F(ReproScriptTest, AnApiOffMsprobesListIsInvalidArgumentWithTheCommandsLine) {
  ASSERT_NO_FATAL_FAILURE(Build("/nonexistent", [](std::string text) {
    return std::regex_replace(text, std::regex("Functional\\.linear\\.0\\."), "Torch.os.system.0.");
  }));
  ReproReply reply;
  grpc::Status st = Repro(Find("Torch.os.system.0.forward"), "random_data", &reply);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  EXPECT_NE(st.error_message().find("'Torch.os.system.0': msprobe 26.2.0 dumps no PyTorch Torch API named 'os.system'"),
            std::string::npos)
      << st.error_message();
  EXPECT_EQ(st.error_message().find('\n'), std::string::npos);
  EXPECT_TRUE(reply.script().empty());
}

}  // namespace
}  // namespace graph_ascend::service
