#include "vis/protobuf_log.h"

#include <google/protobuf/stubs/logging.h>

#include <mutex>

namespace graph_ascend::vis {
namespace {

thread_local int t_depth = 0;
thread_local std::string t_messages;
google::protobuf::LogHandler* g_previous = nullptr;

void OnLog(google::protobuf::LogLevel level, const char* filename, int line, const std::string& message) {
  if (t_depth == 0 || level == google::protobuf::LOGLEVEL_FATAL) {
    if (g_previous != nullptr) g_previous(level, filename, line, message);
    return;
  }
  if (!t_messages.empty()) t_messages += "; ";
  t_messages += message;
}

}  // namespace

ProtobufLogCapture::ProtobufLogCapture() {
  static std::once_flag once;
  std::call_once(once, [] { g_previous = google::protobuf::SetLogHandler(OnLog); });
  ++t_depth;
}

ProtobufLogCapture::~ProtobufLogCapture() {
  if (--t_depth == 0) t_messages.clear();
}

std::string ProtobufLogCapture::Take() {
  std::string out;
  out.swap(t_messages);
  return out;
}

}  // namespace graph_ascend::vis
