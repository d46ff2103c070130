// ReproScript: graph-ascend op_generate for one API node of an open graph.
//
// The dump is found through the graph's FileMeta (GraphMeta.dump_path, the
// folder the builder read). The service reads it only when its realpath lies
// inside the log directory, and writes nothing: both files go back in the
// reply, made by the same code as the command (op_generate::MakeFiles).
// Files the dump names outside the log directory count as absent whether or
// not they exist (OpConfig::read_root): the answer tells nothing about them.
#include <filesystem>

#include "base/strings.h"
#include "graph_service.h"
#include "op_generate/op_generate.h"
#include "rpc_answers.h"

namespace graph_ascend::service {

namespace {

namespace fs = std::filesystem;

// "Functional.linear.0.backward" -> "backward"; "" for a name without a direction.
std::string DirectionOf(const std::string& name) {
  if (EndsWith(name, ".forward")) return "forward";
  if (EndsWith(name, ".backward")) return "backward";
  return "";
}

}  // namespace

grpc::Status GraphServiceImpl::ReproScript(grpc::ServerContext*, const ReproRequest* req, ReproReply* reply) {
  std::shared_ptr<OpenGraph> file;
  grpc::Status st = Open(req->file(), {}, &file);
  if (!st.ok()) return st;
  std::shared_lock<std::shared_mutex> lock(file->mutex());
  vis::Side side = req->side();
  const SideGraph* g = file->side(side);
  if (g == nullptr) return Fail(grpc::StatusCode::INVALID_ARGUMENT, req->file() + ": the file has no Bench graph");
  st = CheckNode(*file, side, *g, req->node());
  if (!st.ok()) return st;
  uint32_t n = static_cast<uint32_t>(req->node());
  std::string name(g->name(n));
  if (g->node_type(n) != vis::NODE_API) {
    return Fail(grpc::StatusCode::FAILED_PRECONDITION,
                  name + " is not an API node: repro scripts reproduce one API call (Functional, Tensor, Torch)");
  }
  const vis::GraphMeta& meta = side == vis::SIDE_BENCH ? file->meta().bench() : file->meta().npu();
  if (meta.dump_path().empty()) {
    return Fail(grpc::StatusCode::FAILED_PRECONDITION,
                  req->file() + " does not record the dump it was built from (written by msprobe or an older "
                                "graph-ascend): run graph-ascend op_generate on the dump instead");
  }
  const std::string& root = logdir_.root();
  std::string dump_json = op_generate::RealPathInside(root, (fs::path(meta.dump_path()) / "dump.json").string());
  if (dump_json.empty()) {
    return Fail(grpc::StatusCode::FAILED_PRECONDITION,
                  "the dump of this graph (" + meta.dump_path() +
                      ") is not reachable inside the log directory, and the service reads nothing outside it: "
                      "run graph-ascend op_generate there, or build the graph from a dump under --logdir");
  }

  op_generate::OpConfig config;
  config.file = req->file();
  config.dump_json_path = dump_json;
  config.api_name = name;
  config.propagation = !req->propagation().empty() ? req->propagation() : DirectionOf(name);
  if (config.propagation.empty()) config.propagation = "forward";
  config.data_mode = req->data_mode().empty() ? "random_data" : req->data_mode();
  config.random_seed = req->random_seed() != 0 ? req->random_seed() : 1234;
  config.iter_times = req->iter_times() != 0 ? req->iter_times() : 1;
  config.read_root = root;
  if (config.propagation != "forward" && config.propagation != "backward") {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT,
                  "propagation: forward or backward, not '" + config.propagation + "'");
  }
  if (config.data_mode != "random_data" && config.data_mode != "real_data") {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT,
                  "data_mode: random_data or real_data, not '" + config.data_mode + "'");
  }
  if (config.iter_times < 1 || config.iter_times > 1000) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT,
                  "iter_times: between 1 and 1000, not " + std::to_string(config.iter_times));
  }
  auto entries = op_generate::LoadEntries(config);
  if (!entries.ok()) return Fail(grpc::StatusCode::FAILED_PRECONDITION, entries.error().ToString());
  std::string framework = op_generate::ScriptFramework(*entries, meta.framework() == "mindspore" ? "mindspore" : "");
  // An API off msprobe's list is refused outright, with the command's one line.
  auto api = op_generate::ResolveApi(entries->source, entries->api_name, framework);
  if (!api.ok()) return Fail(grpc::StatusCode::INVALID_ARGUMENT, api.error().ToString());
  auto made = op_generate::MakeFiles(*entries, config, framework);
  if (!made.ok()) return Fail(grpc::StatusCode::FAILED_PRECONDITION, made.error().ToString());

  std::string call = name;
  std::string direction = DirectionOf(name);
  if (!direction.empty()) call.resize(call.size() - direction.size() - 1);
  reply->set_api_name(call);
  reply->set_framework(made->framework);
  reply->set_dump_json(dump_json.substr(root.size() + 1));
  reply->set_propagation(config.propagation);
  reply->set_data_mode(config.data_mode);
  reply->set_extract_name(call + ".json");
  reply->set_extract_json(std::move(made->extract_text));
  reply->set_script_name(std::move(made->script_name));
  reply->set_script(std::move(made->script_text));
  return grpc::Status::OK;
}

}  // namespace graph_ascend::service
