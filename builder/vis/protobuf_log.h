// protobuf reports some problems only in its log ("[libprotobuf ERROR ...]
// String field ... contains invalid UTF-8 data"), printed on stderr before
// our own one-line error. While a ProtobufLogCapture is alive, protobuf's
// messages on its thread are collected instead, so that the caller can put
// them into its Error; other threads' messages go to protobuf's handler.
#pragma once

#include <string>

namespace graph_ascend::vis {

class ProtobufLogCapture {
 public:
  ProtobufLogCapture();
  ~ProtobufLogCapture();
  ProtobufLogCapture(const ProtobufLogCapture&) = delete;
  ProtobufLogCapture& operator=(const ProtobufLogCapture&) = delete;

  // The messages so far ("; "-separated), emptied.
  std::string Take();
};

}  // namespace graph_ascend::vis
