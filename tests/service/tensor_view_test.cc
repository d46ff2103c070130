// TensorView (plugin/service/graph_service_tensor.cc), the page's "Tensor view", on a compare built
// by bin/graph-ascend from samples/gpt_tensor's two runs copied into the log directory: the numbers
// are torch's (torch.load both files, (a - b).abs()), either side of the pair may ask, and nothing
// outside the log directory is read, nor does the answer tell whether a file there exists.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../builder/cli_runner.h"
#include "graph_service.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

constexpr char kNode[] = "Functional.embedding.0.backward";
constexpr char kItem[] = "Functional.embedding.0.backward.output.0";
constexpr char kFile[] = "Functional.embedding.0.backward.output.0.pt";

class TensorViewTest : public ::testing::Test {
 protected:
  // Copies the NPU dump into the log directory and the Bench dump into `bench_parent` (the log
  // directory or a folder beside it), builds the compare into the log directory.
  void Build(const std::string& bench_parent) {
    std::string sample = graph_ascend::testing::Sample("gpt_tensor/");
    fs::create_directories(dir_.Join("logdir"));
    fs::create_directories(bench_parent);
    fs::copy(sample + "npu/step0/rank0", dir_.Join("logdir/npu"), fs::copy_options::recursive);
    bench_ = bench_parent + "/bench";
    fs::copy(sample + "bench/step0/rank0", bench_, fs::copy_options::recursive);
    std::ofstream(dir_.Join("compare.json"))
        << "{\"npu_path\": \"" << dir_.Join("logdir/npu") << "\", \"bench_path\": \"" << bench_ << "\"}";
    graph_ascend::testing::RunResult r =
        graph_ascend::testing::RunTool({"graph", "-i", dir_.Join("compare.json"), "-o", dir_.Join("logdir/out")});
    ASSERT_EQ(r.status, 0) << r.err;
    for (const auto& e : fs::directory_iterator(dir_.Join("logdir/out"))) {
      if (e.path().extension() == ".vis") file_ = "out/" + e.path().filename().string();
    }
    ASSERT_FALSE(file_.empty());
    ServiceOptions options;
    options.logdir = dir_.Join("logdir");
    service_.Start(options, dir_.Join("s.sock"));
    ASSERT_NE(service_.stub(), nullptr);
  }

  int32_t Find(vis::Side side, const std::string& name) {
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
    search.mutable_view()->set_side(side);
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

  grpc::Status View(TensorViewRequest req, TensorViewReply* reply) {
    grpc::ClientContext ctx;
    req.set_file(file_);
    return service_.stub()->TensorView(&ctx, req, reply);
  }

  TensorViewRequest Request(vis::Side side = vis::SIDE_NPU) {
    TensorViewRequest req;
    req.set_side(side);
    req.set_node(Find(side, kNode));
    req.set_item(kItem);
    return req;
  }

  TempDir dir_;
  std::string file_, bench_;
  testing::InProcessService service_;
};

TEST_F(TensorViewTest, TheWorstElementsOfARealDumpFromEitherSide) {
  ASSERT_NO_FATAL_FAILURE(Build(dir_.Join("logdir")));
  TensorViewRequest req = Request();
  req.set_top_k(2);
  TensorViewReply npu;
  grpc::Status st = View(req, &npu);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(npu.npu().path(), std::string("npu/dump_tensor_data/") + kFile);
  EXPECT_EQ(npu.bench().path(), std::string("bench/dump_tensor_data/") + kFile);
  EXPECT_EQ(npu.npu().dtype(), "f4");
  ASSERT_EQ(npu.npu().shape_size(), 2);
  EXPECT_EQ(npu.npu().shape(0), 64);
  EXPECT_EQ(npu.elements(), 1024u);
  EXPECT_DOUBLE_EQ(npu.max_abs(), 0.0381232388317585);
  ASSERT_EQ(npu.worst_size(), 2);
  EXPECT_EQ(npu.worst(0).index(0), 2);
  EXPECT_EQ(npu.worst(0).index(1), 12);
  EXPECT_DOUBLE_EQ(npu.worst(0).bench(), -0.07923020422458649);
  // The default slice is the last two axes, 64 x 16 cells.
  EXPECT_EQ(npu.slice().row_axis(), 0);
  EXPECT_EQ(npu.slice().col_axis(), 1);
  EXPECT_EQ(npu.slice().diff_size(), 64 * 16);
  EXPECT_EQ(npu.abs_hist().zero(), 976u);

  TensorViewReply bench;
  TensorViewRequest from_bench = Request(vis::SIDE_BENCH);
  from_bench.set_top_k(2);
  st = View(from_bench, &bench);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(bench.SerializeAsString(), npu.SerializeAsString());
}

TEST_F(TensorViewTest, PaddedRowsAreMaskedByValue) {
  ASSERT_NO_FATAL_FAILURE(Build(dir_.Join("logdir")));
  TensorViewRequest req = Request();
  req.mutable_mask()->set_kind("value");
  req.mutable_mask()->set_axis(0);
  TensorViewReply reply;
  grpc::Status st = View(req, &reply);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(reply.masked_rows(), 61u);
  EXPECT_EQ(reply.compared(), 48u);
  req.mutable_mask()->set_kind("rows");
  st = View(req, &reply);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(TensorViewTest, ADumpOutsideTheLogDirectoryIsRefusedWhetherOrNotItsFileExists) {
  ASSERT_NO_FATAL_FAILURE(Build(dir_.Join("outside")));
  TensorViewReply present, absent;
  grpc::Status a = View(Request(), &present);
  EXPECT_EQ(a.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << a.error_message();
  EXPECT_NE(a.error_message().find("not reachable inside the log directory"), std::string::npos) << a.error_message();
  fs::remove_all(bench_);
  grpc::Status b = View(Request(), &absent);
  EXPECT_EQ(b.error_code(), a.error_code());
  EXPECT_EQ(b.error_message(), a.error_message());
  EXPECT_EQ(present.bench().shape_size(), 0) << "nothing of the file outside is told";
}

TEST_F(TensorViewTest, ATensorFileLinkedOutsideGetsTheAnswerOfAMissingFile) {
  ASSERT_NO_FATAL_FAILURE(Build(dir_.Join("logdir")));
  std::string inside = bench_ + "/dump_tensor_data/" + kFile;
  fs::create_directories(dir_.Join("outside"));
  fs::rename(inside, dir_.Join("outside/") + kFile);
  TensorViewReply reply;
  grpc::Status missing = View(Request(), &reply);
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << missing.error_message();
  EXPECT_NE(missing.error_message().find("no such tensor file inside the log directory (Bench side)"),
            std::string::npos)
      << missing.error_message();
  fs::create_symlink(dir_.Join("outside/") + kFile, inside);
  grpc::Status linked = View(Request(), &reply);
  EXPECT_EQ(linked.error_code(), missing.error_code());
  EXPECT_EQ(linked.error_message(), missing.error_message());
  EXPECT_EQ(reply.elements(), 0u);
}

TEST_F(TensorViewTest, AnItemTheNodeDoesNotHaveIsNotFound) {
  ASSERT_NO_FATAL_FAILURE(Build(dir_.Join("logdir")));
  TensorViewRequest req = Request();
  req.set_item(std::string(kNode) + ".output.7");
  TensorViewReply reply;
  EXPECT_EQ(View(req, &reply).error_code(), grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace graph_ascend::service
