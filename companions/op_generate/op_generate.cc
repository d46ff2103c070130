#include "op_generate/op_generate.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

namespace graph_ascend::op_generate {

namespace {

namespace fs = std::filesystem;

// Writes `text` beside `path` under a temporary name; the caller renames it.
Result<std::string> WriteTemp(const std::string& path, const std::string& text) {
  std::string temp = path + ".tmp" + std::to_string(getpid());
  FILE* f = fopen(temp.c_str(), "wb");
  if (f == nullptr) return MakeError(path, "", "cannot write");
  bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = (fclose(f) == 0) && ok;
  if (!ok) {
    fs::remove(temp);
    return MakeError(path, "", "cannot write (disk full?)");
  }
  return temp;
}

Status MakeDir(const std::string& dir) {
  std::error_code ec;
  if (dir.empty() || fs::is_directory(dir, ec)) return Status::Ok();
  fs::create_directories(dir, ec);
  if (ec) return MakeError(dir, "", "cannot create the folder: " + ec.message());
  return Status::Ok();
}

}  // namespace

Result<OpFiles> MakeFiles(const OpConfig& config, const std::string& framework) {
  bool from_dump = !config.dump_json_path.empty();
  auto entries = from_dump ? ExtractApi(config.dump_json_path, config.api_name) : ReadExtract(config.extract_api_path);
  if (!entries.ok()) return entries.error();
  OpFiles files;
  files.framework = !framework.empty() ? framework : !entries->framework.empty() ? entries->framework : "pytorch";
  GA_RETURN_IF_ERROR(CheckRequest(*entries, config, files.framework));
  if (from_dump) entries->entries.Write(&files.extract_text);
  files.script_name = ScriptName(*entries, config);
  files.script_text =
      files.framework == "mindspore" ? MindSporeScript(*entries, config) : PyTorchScript(*entries, config);
  return files;
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
  std::vector<std::pair<std::string, std::string>> files;  // temp, final
  auto discard = [&files] {
    for (auto& f : files) fs::remove(f.first);
  };
  GA_RETURN_IF_ERROR(MakeDir(out_dir));
  if (!config.dump_json_path.empty()) {
    out.extract_path = config.extract_api_path;
    GA_RETURN_IF_ERROR(MakeDir(fs::path(config.extract_api_path).parent_path().string()));
    auto temp = WriteTemp(config.extract_api_path, made->extract_text);
    if (!temp.ok()) return temp.error();
    files.emplace_back(*temp, config.extract_api_path);
  }
  auto temp = WriteTemp(out.script_path, made->script_text);
  if (!temp.ok()) {
    discard();
    return temp.error();
  }
  files.emplace_back(*temp, out.script_path);
  for (auto& [from, to] : files) {
    fs::rename(from, to, ec);
    if (ec) {
      discard();
      return MakeError(to, "", "cannot rename the temporary file: " + ec.message());
    }
  }
  fs::permissions(out.script_path, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add, ec);
  return out;
}

}  // namespace graph_ascend::op_generate
