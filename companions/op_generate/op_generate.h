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
#include "op_generate/api_names.h"
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
  // When set (a realpath: the service's log directory), a file whose realpath
  // lies outside it counts as absent, whether or not it exists: the dump's
  // tensor folder and real_data's tensor files. The answer then tells nothing
  // about the files outside.
  std::string read_root;
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
// dump_tensor_data folder beside dump.json (either only when inside
// `read_root`, if set: OpConfig::read_root).
Result<ApiEntries> ExtractApi(const std::string& dump_json_path, const std::string& api_name,
                              const std::string& read_root = "");

// Reads an extract file written by msprobe or by ExtractApi.
Result<ApiEntries> ReadExtract(const std::string& path);

// The entries `config` names: extracted from its dump (dump_json_path), else
// read from its extract file.
Result<ApiEntries> LoadEntries(const OpConfig& config);

// The framework a script of `entries` runs: `requested` ("pytorch",
// "mindspore"), else the dump's, else pytorch.
std::string ScriptFramework(const ApiEntries& entries, const std::string& requested);

// Checks that `entries` can make the requested script (the API itself is
// ResolveApi's): a backward entry for propagation backward, and in real_data
// mode a tensor file for every tensor input.
Status CheckRequest(const ApiEntries& entries, const OpConfig& config);

// The realpath of `path` when it lies inside `root` (a realpath), else "".
std::string RealPathInside(const std::string& root, const std::string& path);

// The script's file name: "<api>.<forward|backward>.py".
std::string ScriptName(const ApiEntries& entries, const OpConfig& config);

// The text of the PyTorch reproduction script of `call` (ResolveApi's).
std::string PyTorchScript(const ApiEntries& entries, const OpConfig& config, const ApiCall& call);

// The text of the MindSpore reproduction script: the API run with MindSpore
// on the device under test and one precision step up, doc 33's two CSV files.
std::string MindSporeScript(const ApiEntries& entries, const OpConfig& config, const ApiCall& call);

// A script: `runtime` (the runner's Python text), then SUPPORTED_APIS (the
// runner's own list of what it may run), SPEC (the entry and the config) and
// a call of main(SPEC). `options` are the runner's, for the header. Dump text
// appears only inside SPEC's literals (PythonString).
std::string ScriptText(const ApiEntries& entries, const OpConfig& config, const ApiCall& call,
                       const std::string& framework, const char* runtime, const std::string& options);

// The command's files, made in memory: what Generate writes, and what the
// page's "Repro script" (graph service ReproScript) hands to the browser.
struct OpFiles {
  std::string framework;     // the framework the script runs: "pytorch" or "mindspore"
  std::string extract_text;  // the extract file's JSON; empty when the config named no dump
  std::string script_name;   // ScriptName()
  std::string script_text;
};

// Extract (when dump_json_path is set), check and make both files' texts;
// nothing is written. `framework` as for Generate. An API name that is not on
// msprobe's list is ResolveApi's error.
Result<OpFiles> MakeFiles(const OpConfig& config, const std::string& framework);

// The same from entries already loaded (LoadEntries) and their framework
// (ScriptFramework).
Result<OpFiles> MakeFiles(const ApiEntries& entries, const OpConfig& config, const std::string& framework);

struct OpOutputs {
  std::string extract_path;  // empty when the config named no dump (extract reused)
  std::string script_path;
};

// The whole command: extract (when dump_json_path is set), check, write both
// files. `framework` is "pytorch", "mindspore" or "" (take the dump's).
Result<OpOutputs> Generate(const OpConfig& config, const std::string& out_dir, const std::string& framework);

}  // namespace graph_ascend::op_generate
