#include "op_generate/op_generate.h"

#include <limits.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "base/confine.h"
#include "base/temp_files.h"
#include "output/output_file.h"

namespace graph_ascend::op_generate {

namespace {

namespace fs = std::filesystem;

// The folders made are registered (base/temp_files): a failed or
// interrupted run removes them again when empty.
Status MakeDir(const std::string& dir) {
  std::error_code ec;
  if (dir.empty() || fs::is_directory(dir, ec)) return Status::Ok();
  Status made = MakeOutputFolders(dir);
  if (!made.ok()) return MakeError(dir, "", "cannot create the folder: " + made.error().message);
  return Status::Ok();
}

}  // namespace

std::string RealPathInside(const std::string& root, const std::string& path) {
  char* real = realpath(path.c_str(), nullptr);
  if (real == nullptr) return "";
  std::string r(real);
  free(real);
  return PathInside(r, root) ? r : "";
}

Result<ApiEntries> LoadEntries(const OpConfig& config) {
  if (config.dump_json_path.empty()) return ReadExtract(config.extract_api_path);
  return ExtractApi(config.dump_json_path, config.api_name, config.read_root);
}

std::string ScriptFramework(const ApiEntries& entries, const std::string& requested) {
  if (!requested.empty()) return requested;
  return entries.framework == "mindspore" ? "mindspore" : "pytorch";
}

Result<OpFiles> MakeFiles(const ApiEntries& entries, const OpConfig& config, const std::string& framework) {
  // The name first: nothing of an API off msprobe's list is looked at further.
  auto call = ResolveApi(entries.source, entries.api_name, framework);
  if (!call.ok()) return call.error();
  GA_RETURN_IF_ERROR(CheckRequest(entries, config));
  OpFiles files;
  files.framework = framework;
  if (!config.dump_json_path.empty()) entries.entries.Write(&files.extract_text);
  files.script_name = ScriptName(entries, config);
  files.script_text = framework == "mindspore" ? MindSporeScript(entries, config, *call)
                                               : PyTorchScript(entries, config, *call);
  return files;
}

Result<OpFiles> MakeFiles(const OpConfig& config, const std::string& framework) {
  auto entries = LoadEntries(config);
  if (!entries.ok()) return entries.error();
  return MakeFiles(*entries, config, ScriptFramework(*entries, framework));
}

Result<OpOutputs> Generate(const OpConfig& config, const std::string& out_dir, const std::string& framework) {
  auto made = MakeFiles(config, framework);
  if (!made.ok()) return made.error();
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec)) {
    return MakeError(out_dir, "", "the output path exists and is not a folder");
  }

  OpOutputs out;
  out.script_path = (fs::path(out_dir) / made->script_name).string();
  // Both files staged, then renamed together; a temporary file never
  // outlives the command (output/output_file.h).
  std::vector<std::unique_ptr<output::StagedFile>> staged;
  GA_RETURN_IF_ERROR(MakeDir(out_dir));
  if (!config.dump_json_path.empty()) {
    out.extract_path = config.extract_api_path;
    GA_RETURN_IF_ERROR(MakeDir(fs::path(config.extract_api_path).parent_path().string()));
    auto extract = output::StagedFile::Write(config.extract_api_path, made->extract_text);
    if (!extract.ok()) return extract.error();
    staged.push_back(std::move(*extract));
  }
  auto script = output::StagedFile::Write(out.script_path, made->script_text);
  if (!script.ok()) return script.error();
  staged.push_back(std::move(*script));
  for (auto& s : staged) GA_RETURN_IF_ERROR(s->Commit());
  fs::permissions(out.script_path, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add, ec);
  return out;
}

}  // namespace graph_ascend::op_generate
