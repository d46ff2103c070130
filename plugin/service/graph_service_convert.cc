// GraphService: conversions started from the page (Convert*), run by
// ConvertQueue.
#include "graph_service.h"

#include <chrono>

#include "convert_inputs.h"
#include "rpc_answers.h"

namespace graph_ascend::service {

namespace {

grpc::Status Of(const ConvertStatus& st) {
  return st.ok() ? grpc::Status::OK : Fail(static_cast<grpc::StatusCode>(st.code), st.message);
}

}  // namespace

grpc::Status GraphServiceImpl::ConvertInputs(grpc::ServerContext*, const ConvertInputsRequest*,
                                             ConvertInputsReply* reply) {
  reply->set_allowed(convert_.allowed());
  reply->set_not_allowed_reason(convert_.not_allowed_reason());
  if (convert_.allowed()) ListConvertInputs(logdir_, reply);
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::ConvertPlan(grpc::ServerContext*, const ConvertRequest* req, ConvertPlanReply* reply) {
  return Of(convert_.Plan(*req, reply));
}

grpc::Status GraphServiceImpl::ConvertStart(grpc::ServerContext*, const ConvertRequest* req, ConvertJob* reply) {
  return Of(convert_.Start(*req, reply));
}

grpc::Status GraphServiceImpl::ConvertProgress(grpc::ServerContext* ctx, const ConvertJobRequest* req,
                                               grpc::ServerWriter<ConvertJob>* writer) {
  uint64_t version = 0;
  while (!ctx->IsCancelled()) {
    ConvertJob job;
    uint64_t seen = version;
    ConvertStatus st = convert_.WaitChange(req->session(), req->id(), &version, std::chrono::milliseconds(500), &job);
    if (!st.ok()) return Of(st);
    if (version != seen && !writer->Write(job)) break;  // the page has gone
    if (job.state() != CONVERT_QUEUED && job.state() != CONVERT_RUNNING) break;
  }
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::ConvertCancel(grpc::ServerContext*, const ConvertJobRequest* req, ConvertJob* reply) {
  return Of(convert_.Cancel(req->session(), req->id(), reply));
}

grpc::Status GraphServiceImpl::ConvertList(grpc::ServerContext*, const ConvertListRequest* req,
                                           ConvertListReply* reply) {
  convert_.List(req->session(), reply);
  return grpc::Status::OK;
}

}  // namespace graph_ascend::service
