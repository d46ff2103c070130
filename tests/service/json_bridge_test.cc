// CallJson's table (json_bridge.h): built from the proto's method list, so a
// method without a handler stops the start; every unary method reachable.
#include "json_bridge.h"

#include <google/protobuf/message.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <set>

#include "graph_service.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

const google::protobuf::ServiceDescriptor& Service() { return GraphServiceImpl::Descriptor(); }

// A handler of `m` with its own message types that answers OK with an empty reply.
JsonBridge::Handler HandlerOf(const google::protobuf::MethodDescriptor& m) {
  auto* factory = google::protobuf::MessageFactory::generated_factory();
  return {m.name(), factory->GetPrototype(m.input_type()), factory->GetPrototype(m.output_type()),
          [](grpc::ServerContext*, const google::protobuf::Message&, google::protobuf::Message*) {
            return grpc::Status::OK;
          }};
}

bool Unary(const google::protobuf::MethodDescriptor& m) { return !m.client_streaming() && !m.server_streaming(); }

// A handler for each unary method of the proto but CallJson and `left_out`.
std::vector<JsonBridge::Handler> HandlersBut(const std::string& left_out) {
  std::vector<JsonBridge::Handler> out;
  for (int i = 0; i < Service().method_count(); ++i) {
    const google::protobuf::MethodDescriptor& m = *Service().method(i);
    if (Unary(m) && m.name() != "CallJson" && m.name() != left_out) out.push_back(HandlerOf(m));
  }
  return out;
}

TEST(JsonBridgeTest, AMethodWithoutAHandlerIsAnErrorAtTheStart) {
  auto all = JsonBridge::Build(Service(), HandlersBut(""), {"CallJson"});
  ASSERT_TRUE(all.ok()) << all.error().ToString();

  auto missing = JsonBridge::Build(Service(), HandlersBut("GetCkpt"), {"CallJson"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().ToString(),
            "graph_ascend.service.GraphService: the JSON bridge does not fit the proto's methods: "
            "GetCkpt has no handler");

  // A handler of other types, of a streaming method, of no method, or given twice.
  std::vector<JsonBridge::Handler> wrong = HandlersBut("");
  for (JsonBridge::Handler& h : wrong) {
    if (h.method == "Search") h.request = &FilterRequest::default_instance();
  }
  wrong.push_back(HandlerOf(*Service().FindMethodByName("OpenFile")));
  wrong.push_back(HandlerOf(*Service().FindMethodByName("GetView")));
  JsonBridge::Handler extra = HandlerOf(*Service().FindMethodByName("Health"));
  extra.method = "GetGraph";
  wrong.push_back(extra);
  auto bad = JsonBridge::Build(Service(), wrong, {"CallJson"});
  ASSERT_FALSE(bad.ok());
  const std::string& message = bad.error().message;
  EXPECT_NE(message.find("Search has a handler of other types than SearchRequest -> NodeList"), std::string::npos)
      << message;
  EXPECT_NE(message.find("OpenFile is not a bridged unary method but has a handler"), std::string::npos) << message;
  EXPECT_NE(message.find("GetView has two handlers"), std::string::npos) << message;
  EXPECT_NE(message.find("GetGraph is no method of the service but has a handler"), std::string::npos) << message;
}

class JsonBridgeServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServiceOptions options;
    options.logdir = dir_.path();
    service_.Start(options, sock_.Join("s.sock"));
    ASSERT_NE(service_.stub(), nullptr);
  }
  grpc::Status Call(const std::string& method, const std::string& json, JsonReply* reply) {
    grpc::ClientContext ctx;
    JsonCall req;
    req.set_method(method);
    req.set_request_json(json);
    return service_.stub()->CallJson(&ctx, req, reply);
  }

  testing::TempDir dir_, sock_;
  testing::InProcessService service_;
};

// The service's own table holds every unary method of the proto; the others
// answer as before the table: NOT_FOUND, "no unary API method <name>".
TEST_F(JsonBridgeServiceTest, EveryUnaryMethodOfTheProtoIsBridged) {
  std::set<std::string> bridged, refused;
  for (int i = 0; i < Service().method_count(); ++i) {
    const google::protobuf::MethodDescriptor& m = *Service().method(i);
    JsonReply reply;
    grpc::Status st = Call(m.name(), "{}", &reply);
    if (st.error_message() == "no unary API method " + m.name()) {
      EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
      refused.insert(m.name());
    } else {
      bridged.insert(m.name());
    }
  }
  EXPECT_EQ(refused, (std::set<std::string>{"CallJson", "ConvertProgress", "OpenFile"}));
  EXPECT_EQ(bridged.size(), 30u);  // ListNodes, GetProfile, GetReport and TensorView the last four

  JsonReply reply;
  grpc::Status unknown = Call("Nope", "{}", &reply);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(unknown.error_message(), "no unary API method Nope");
  grpc::Status bad = Call("ListRuns", "{\"x\": 1}", &reply);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(bad.error_message().rfind("bad ListRunsRequest JSON: ", 0), 0u) << bad.error_message();
}

}  // namespace
}  // namespace graph_ascend::service
