// GetCkpt: the checkpoint similarity of a file's NPU modules (docs/API.md).
// The file's own SECTION_CKPT (graph --ckpt / --ckpt-json), or a ckpt_compare
// JSON mapped onto the NPU side's module nodes on request, by the builder's
// mapping (weights/ckpt_similarity.h), so both agree.
#include <sys/stat.h>

#include "graph_service.h"
#include "rpc_answers.h"
#include "weights/ckpt_similarity.h"

namespace graph_ascend::service {
namespace {

// What ckpt_compare writes by default (graph-ascend's and msprobe's).
constexpr char kBesideName[] = "ckpt_similarity.json";

std::string FolderOf(const std::string& relative) {
  size_t slash = relative.rfind('/');
  return slash == std::string::npos ? "" : relative.substr(0, slash + 1);
}

}  // namespace

grpc::Status GraphServiceImpl::GetCkpt(grpc::ServerContext*, const CkptRequest* req, CkptReply* reply) {
  std::shared_ptr<OpenGraph> file;
  grpc::Status st = Open(req->file(), {}, &file, false);  // the meta first: an opening screen will do
  if (!st.ok()) return st;
  weights::Tolerance t;
  if (req->has_cos_tolerance()) t.cos = req->cos_tolerance();
  if (req->has_l2_tolerance()) t.l2 = req->l2_tolerance();
  if (!(t.cos >= 0 && t.cos <= 2) || !(t.l2 >= 0)) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, "cos_tolerance must lie in [0, 2] and l2_tolerance be >= 0");
  }
  // Which JSON, if any: the request's, else the file's own section, else one beside it.
  std::string json = req->json();
  bool own = false;
  {
    std::shared_lock<std::shared_mutex> l(file->mutex());
    own = json.empty() && file->meta().ckpt_compared();
  }
  if (json.empty() && !own) {
    std::string beside = FolderOf(req->file()) + kBesideName;
    struct stat sb;
    if (stat(InLogDir(beside).c_str(), &sb) == 0 && S_ISREG(sb.st_mode)) {
      json = beside;
      reply->set_source("beside");
    }
  } else if (!json.empty()) {
    reply->set_source("json");
  }
  vis::CkptSimilarity* s = reply->mutable_similarity();
  if (own) {
    auto stored = file->Ckpt();
    if (!stored.ok()) return Fail(grpc::StatusCode::DATA_LOSS, stored.error());
    *s = std::move(*stored);
    reply->set_source("file");
  } else if (!json.empty()) {
    st = Open(req->file(), {}, &file);  // every node: the modules the JSON maps onto
    if (!st.ok()) return st;
    bool missing = false;
    auto abs = logdir_.Resolve(json, true, &missing);
    if (!abs.ok()) {
      return Fail(missing ? grpc::StatusCode::NOT_FOUND : grpc::StatusCode::INVALID_ARGUMENT, abs.error());
    }
    auto params = weights::ReadCkptJson(*abs);
    if (!params.ok()) {
      Error e = params.error();
      e.file = json;  // relative, as the client named it
      return Fail(grpc::StatusCode::INVALID_ARGUMENT, e);
    }
    std::shared_lock<std::shared_mutex> l(file->mutex());
    const SideGraph& npu = *file->side(vis::SIDE_NPU);
    *s = weights::MapOntoModules(std::move(*params), npu.size(), [&npu](uint32_t n) {
      return npu.node_type(n) == vis::NODE_MODULE ? npu.name(n) : std::string_view();
    });
    s->set_json(json);
    reply->set_source_path(json);
  }
  reply->set_available(own || !json.empty());
  reply->set_cos_tolerance(t.cos);
  reply->set_l2_tolerance(t.l2);
  for (const vis::CkptModule& m : s->module()) reply->add_differs(weights::Differs(m, t));
  for (uint32_t i : weights::WorstModules(*s, t, static_cast<size_t>(s->module_size()))) reply->add_differing(i);
  uint32_t unmapped = 0;
  for (const vis::CkptParam& p : s->param()) unmapped += p.module() < 0;
  reply->set_unmapped(unmapped);
  return grpc::Status::OK;
}

}  // namespace graph_ascend::service
