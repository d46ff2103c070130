#include "json_bridge.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <memory>
#include <set>

#include "rpc_answers.h"

namespace graph_ascend::service {

Result<JsonBridge> JsonBridge::Build(const google::protobuf::ServiceDescriptor& service, std::vector<Handler> handlers,
                                     const std::vector<std::string>& not_bridged) {
  std::unordered_map<std::string, Handler> given;
  std::vector<std::string> problems;
  for (Handler& h : handlers) {
    std::string name = h.method;
    if (!given.emplace(name, std::move(h)).second) problems.push_back(name + " has two handlers");
  }
  JsonBridge bridge;
  for (int i = 0; i < service.method_count(); ++i) {
    const google::protobuf::MethodDescriptor& m = *service.method(i);
    bool bridged = !m.client_streaming() && !m.server_streaming() &&
                   std::find(not_bridged.begin(), not_bridged.end(), m.name()) == not_bridged.end();
    auto it = given.find(m.name());
    if (!bridged) {
      if (it != given.end()) {
        problems.push_back(m.name() + " is not a bridged unary method but has a handler");
        given.erase(it);
      }
      continue;
    }
    if (it == given.end()) {
      problems.push_back(m.name() + " has no handler");
      continue;
    }
    const Handler& h = it->second;
    if (h.request == nullptr || h.reply == nullptr || h.request->GetDescriptor() != m.input_type() ||
        h.reply->GetDescriptor() != m.output_type()) {
      problems.push_back(m.name() + " has a handler of other types than " + m.input_type()->name() + " -> " +
                         m.output_type()->name());
    }
    bridge.handlers_.emplace(m.name(), std::move(it->second));
    given.erase(it);
  }
  std::set<std::string> unknown;  // sorted: the message does not depend on hashing
  for (const auto& [name, h] : given) unknown.insert(name);
  for (const std::string& name : unknown) problems.push_back(name + " is no method of the service but has a handler");
  if (problems.empty()) return bridge;
  std::string message = "the JSON bridge does not fit the proto's methods: ";
  for (size_t i = 0; i < problems.size(); ++i) message += (i == 0 ? "" : "; ") + problems[i];
  return MakeError(service.full_name(), "", message);
}

grpc::Status JsonBridge::Call(grpc::ServerContext* ctx, const std::string& method, const std::string& json,
                              std::string* out) const {
  auto it = handlers_.find(method);
  if (it == handlers_.end()) return Fail(grpc::StatusCode::NOT_FOUND, "no unary API method " + method);
  const Handler& h = it->second;
  std::unique_ptr<google::protobuf::Message> req(h.request->New());
  google::protobuf::util::JsonParseOptions parse;
  parse.ignore_unknown_fields = false;
  auto parsed = google::protobuf::util::JsonStringToMessage(json.empty() ? "{}" : json, req.get(), parse);
  if (!parsed.ok()) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT,
                "bad " + h.request->GetDescriptor()->name() + " JSON: " + std::string(parsed.message()));
  }
  std::unique_ptr<google::protobuf::Message> rep(h.reply->New());
  grpc::Status st = h.run(ctx, *req, rep.get());
  if (!st.ok()) return st;
  google::protobuf::util::JsonPrintOptions print;
  print.always_print_primitive_fields = true;
  auto printed = google::protobuf::util::MessageToJsonString(*rep, out, print);
  if (!printed.ok()) return Fail(grpc::StatusCode::INTERNAL, std::string(printed.message()));
  return grpc::Status::OK;
}

std::vector<std::string> JsonBridge::methods() const {
  std::vector<std::string> out;
  for (const auto& [name, h] : handlers_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace graph_ascend::service
