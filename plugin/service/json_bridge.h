// CallJson's dispatch: JSON (protobuf's mapping) into a unary method of the
// service and its reply back as JSON. The table is built by walking the
// service's descriptor, so a method added to proto/graph_service.proto
// without a handler (or with a handler of other message types) stops the
// server at its start rather than answering NOT_FOUND to the page.
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <grpcpp/grpcpp.h>

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace graph_ascend::service {

class JsonBridge {
 public:
  using RunFn = std::function<grpc::Status(grpc::ServerContext*, const google::protobuf::Message& request,
                                           google::protobuf::Message* reply)>;
  // One method's handler: its name in the proto, its message types (their
  // default instances) and the call, which gets messages of those types.
  struct Handler {
    std::string method;
    const google::protobuf::Message* request = nullptr;
    const google::protobuf::Message* reply = nullptr;
    RunFn run;
  };

  // The table of every unary method of `service` but those named in
  // `not_bridged` (the bridge itself). An Error names each method left
  // without a handler, and each handler of no such unary method, given twice
  // or whose message types are not the method's.
  static Result<JsonBridge> Build(const google::protobuf::ServiceDescriptor& service, std::vector<Handler> handlers,
                                  const std::vector<std::string>& not_bridged);

  // `json` ("" = "{}", unknown fields refused) into the method's request;
  // its reply printed into `*out` with default values. NOT_FOUND for a
  // method outside the table (a streaming one, an unknown name).
  grpc::Status Call(grpc::ServerContext* ctx, const std::string& method, const std::string& json,
                    std::string* out) const;

  std::vector<std::string> methods() const;

 private:
  std::unordered_map<std::string, Handler> handlers_;
};

// A handler calling `(impl->*fn)`, its message types those of `fn`.
template <typename Impl, typename Req, typename Rep>
JsonBridge::Handler JsonHandler(std::string method, Impl* impl,
                                grpc::Status (Impl::*fn)(grpc::ServerContext*, const Req*, Rep*)) {
  return {std::move(method), &Req::default_instance(), &Rep::default_instance(),
          [impl, fn](grpc::ServerContext* ctx, const google::protobuf::Message& req, google::protobuf::Message* rep) {
            // Call makes them from these default instances: they are Req and Rep.
            return (impl->*fn)(ctx, static_cast<const Req*>(&req), static_cast<Rep*>(rep));
          }};
}

}  // namespace graph_ascend::service
