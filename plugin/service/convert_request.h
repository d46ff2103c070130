// A conversion request's paths (ConvertQueue): resolved inside the log
// directory, checked where they lead, and named relative to it in messages.
#pragma once

#include <string>
#include <vector>

#include "convert_queue.h"
#include "graph_service.pb.h"
#include "log_dir.h"

namespace graph_ascend::service {

// The request's folders and files as absolute real paths.
struct Resolved {
  std::string npu, bench, output, mapping;
};

// Checks the request (paths inside the log directory, command, parallel
// lists) and resolves its paths; INVALID_ARGUMENT naming the field otherwise.
ConvertStatus ResolveRequest(const LogDir& logdir, const ConvertRequest& r, Resolved* out);

// The request asks for a parallel merge.
bool Parallel(const ConvertRequest& r);

// Paths in the builder's messages, relative to the log directory as the page
// names them: the staging folder becomes `output_dir`, the log directory ".".
std::string Relative(std::string text, const std::string& root, const std::string& staging,
                     const std::string& output_dir);

// FAILED_PRECONDITION when one of `dirs` (dump folders of a plan) or its
// dump.json, construct.json, stack.json or dump_tensor_data resolves outside `root`.
ConvertStatus CheckInside(const std::string& root, const std::vector<std::string>& dirs);

}  // namespace graph_ascend::service
