// op_generate: a single-API reproduction from an msprobe dump (msprobe docs 23/33).
//
// From msprobe's config_op.json it extracts one API call's entries (forward
// and backward) from dump.json into `extract_api_path`, exactly as msprobe
// 8.3.3 writes that file, and writes `<api>.<forward|backward>.py`, a script
// that rebuilds the inputs, runs the API on the device under test and on a
// CPU bench in higher precision, and prints the new-precision-standard
// metrics. Both files appear together (temporary files + rename) or not at all.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "op_generate/json_value.h"

namespace graph_ascend::op_generate {

struct OpConfig {
  std::string file;              // the config_op.json read
  std::string dump_json_path;    // empty: use an existing extract_api_path
  std::string api_name;          // "Functional.linear.0"
  std::string extract_api_path;  // where the extracted entries go (required)
  std::string propagation = "forward";
  std::string data_mode = "random_data";
  int64_t random_seed = 1234;
  int64_t iter_times = 1;
};

// Reads and checks config_op.json. Relative paths are taken from the
// config's folder, as graph-ascend does for compare.json.
Result<OpConfig> ReadOpConfig(const std::string& path);

// One API call's entries, keyed as in dump.json.
struct ApiEntries {
  std::string source;     // the dump.json or extract file they came from
  std::string api_name;   // "Functional.linear.0"
  std::string framework;  // "pytorch", "mindspore" or "" (extract files do not say)
  JsonValue entries;      // {"<api>.forward": {...}, "<api>.backward": {...}}
};

// The entries of `api_name` in dump.json. Each data_name becomes a path in
// the dump's tensor folder: dump_data_dir when it exists, else the
// dump_tensor_data folder beside dump.json.
Result<ApiEntries> ExtractApi(const std::string& dump_json_path, const std::string& api_name);

// Reads an extract file written by msprobe or by ExtractApi.
Result<ApiEntries> ReadExtract(const std::string& path);

// Checks that `entries` can make the requested script: a supported API type,
// a backward entry for propagation backward, and in real_data mode a tensor
// file for every tensor input.
Status CheckRequest(const ApiEntries& entries, const OpConfig& config, const std::string& framework);

// The script's file name: "<api>.<forward|backward>.py".
std::string ScriptName(const ApiEntries& entries, const OpConfig& config);

// The text of the PyTorch reproduction script.
std::string PyTorchScript(const ApiEntries& entries, const OpConfig& config);

// The text of the MindSpore reproduction script: the API run with MindSpore
// on the device under test and one precision step up, doc 33's two CSV files.
std::string MindSporeScript(const ApiEntries& entries, const OpConfig& config);

// Whether a MindSpore dump's API can be reproduced alone (Mint, MintFunctional, Functional, Tensor).
bool MindSporeApiType(const std::string& api_name);

// A script: `runtime` (the runner's Python text), then SPEC (the entry and
// the config) and a call of main(SPEC). `options` are the runner's, for the header.
std::string ScriptText(const ApiEntries& entries, const OpConfig& config, const std::string& python_api,
                       const char* runtime, const std::string& options);

// The command's files, made in memory: what Generate writes, and what the
// page's "Repro script" (graph service ReproScript) hands to the browser.
struct OpFiles {
  std::string framework;     // the framework the script runs: "pytorch" or "mindspore"
  std::string extract_text;  // the extract file's JSON; empty when the config named no dump
  std::string script_name;   // ScriptName()
  std::string script_text;
};

// Extract (when dump_json_path is set), check and make both files' texts;
// nothing is written. `framework` as for Generate.
Result<OpFiles> MakeFiles(const OpConfig& config, const std::string& framework);

struct OpOutputs {
  std::string extract_path;  // empty when the config named no dump (extract reused)
  std::string script_path;
};

// The whole command: extract (when dump_json_path is set), check, write both
// files. `framework` is "pytorch", "mindspore" or "" (take the dump's).
Result<OpOutputs> Generate(const OpConfig& config, const std::string& out_dir, const std::string& framework);

}  // namespace graph_ascend::op_generate
