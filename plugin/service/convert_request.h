// A conversion request (ConvertQueue runs it): its paths resolved inside the
// log directory, checked where they lead and named relative to it in
// messages; its plan (the builder's own planner) and its builder command line.
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

// The builder's command line of one conversion and what it needs besides.
struct ConvertCommand {
  std::vector<std::string> argv;
  std::vector<std::string> display;  // the same with paths relative to the log directory
  std::string config_dir;            // a private temporary folder holding compare.json ("graph"), removed after
};

// The command line running `builder` for `r`, writing into `staging` (which
// gets the compare.json of a "graph" run beside it; "" for a plan: none).
ConvertStatus CommandOf(const LogDir& logdir, const std::string& builder, const ConvertRequest& r,
                        const std::string& staging, ConvertCommand* launch);

// What `r` would write (kind, output names, summary, the command shown), or
// why it cannot run.
ConvertStatus PlanRequest(const LogDir& logdir, const std::string& builder, const ConvertRequest& r,
                          ConvertPlanReply* reply);

// FAILED_PRECONDITION when one of `dirs` (dump folders of a plan) or its
// dump.json, construct.json, stack.json or dump_tensor_data resolves outside `root`.
ConvertStatus CheckInside(const std::string& root, const std::vector<std::string>& dirs);

}  // namespace graph_ascend::service
