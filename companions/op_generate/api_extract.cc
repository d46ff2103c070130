#include <filesystem>

#include "base/mapped_file.h"
#include "base/strings.h"
#include "op_generate/op_generate.h"

namespace graph_ascend::op_generate {

namespace {

namespace fs = std::filesystem;

// The argument lists whose data_name msprobe turns into a path, and
// input_kwargs, which msprobe leaves relative (its scripts then miss them).
const char* const kTensorLists[] = {"input_args", "input_kwargs", "grad_input", "input", "output", "grad_output"};

void PrefixDataNames(JsonValue* v, const std::string& dir) {
  if (v->is_array()) {
    for (auto& item : v->items) PrefixDataNames(&item, dir);
  } else if (v->is_object()) {
    JsonValue* name = v->Find("data_name");
    if (name != nullptr && name->is_string()) {
      name->text = dir + "/" + name->text;
      return;
    }
    for (auto& member : v->members) PrefixDataNames(&member.second, dir);
  }
}

// "Functional.linear.0.forward" names the call too.
std::string CallName(const std::string& api_name) {
  for (const char* suffix : {".forward", ".backward"}) {
    if (EndsWith(api_name, suffix)) return api_name.substr(0, api_name.size() - std::string(suffix).size());
  }
  return api_name;
}

Status CheckEntryKeys(const ApiEntries& e) {
  for (const auto& [key, value] : e.entries.members) {
    if (key != e.api_name + ".forward" && key != e.api_name + ".backward") {
      return MakeError(Printable(e.source), "key data." + Printable(key),
                       "api_name '" + Printable(e.api_name) + "' matches more than one call (" + Printable(key) +
                           "); name one call, e.g. Functional.linear.0");
    }
    if (!value.is_object()) return MakeError(Printable(e.source), "key data." + Printable(key), "must be an object");
  }
  return Status::Ok();
}

// Whether `dir` is a folder the extraction may point at: under a read root
// only one inside it (OpConfig::read_root), so the choice tells nothing of
// the folders outside.
bool UsableDir(const std::string& dir, const std::string& read_root) {
  std::error_code ec;
  if (read_root.empty()) return fs::is_directory(dir, ec);
  std::string real = RealPathInside(read_root, dir);
  return !real.empty() && fs::is_directory(real, ec);
}

}  // namespace

Result<ApiEntries> ExtractApi(const std::string& dump_json_path, const std::string& api_name,
                              const std::string& read_root) {
  auto file = MappedFile::Open(dump_json_path);
  if (!file.ok()) return file.error();
  ApiEntries e;
  e.source = dump_json_path;
  e.api_name = CallName(api_name);
  e.entries.type = JsonValue::Type::kObject;
  std::string prefix = e.api_name + ".";
  std::string dump_data_dir;
  json::JsonReader r(file->text(), dump_json_path);
  GA_RETURN_IF_ERROR(r.EnterObject());
  std::string_view key;
  bool has_data = false;
  for (;;) {
    auto more = r.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) break;
    if (key == "framework" || key == "dump_data_dir") {
      bool framework = key == "framework";
      auto v = JsonValue::Read(&r);
      if (!v.ok()) return v.error();
      (framework ? e.framework : dump_data_dir) = v->is_string() ? v->text : "";
    } else if (key == "data") {
      has_data = true;
      GA_RETURN_IF_ERROR(r.EnterObject());
      for (;;) {
        auto next = r.NextMember(&key);
        if (!next.ok()) return next.error();
        if (!*next) break;
        if (key.size() > prefix.size() && StartsWith(key, prefix)) {
          std::string name(key);
          auto v = JsonValue::Read(&r);
          if (!v.ok()) return v.error();
          e.entries.members.emplace_back(std::move(name), std::move(*v));
        } else {
          GA_RETURN_IF_ERROR(r.Skip());
        }
      }
    } else {
      GA_RETURN_IF_ERROR(r.Skip());
    }
  }
  if (!has_data) return MakeError(Printable(dump_json_path), "key data", "missing: this is not an msprobe dump.json");
  if (e.entries.members.empty()) {
    return MakeError(Printable(dump_json_path), "key data",
                     "no entry for API '" + Printable(e.api_name) + "' (looked for '" + Printable(prefix) +
                         "forward' and '" + Printable(prefix) + "backward')");
  }
  GA_RETURN_IF_ERROR(CheckEntryKeys(e));
  if (!dump_data_dir.empty()) {
    std::error_code ec;
    fs::path beside = fs::absolute(fs::path(dump_json_path), ec).parent_path() / "dump_tensor_data";
    std::string dir = dump_data_dir;
    if (!UsableDir(dump_data_dir, read_root) && UsableDir(beside.string(), read_root)) {
      dir = beside.lexically_normal().string();
    }
    for (auto& [name, value] : e.entries.members) {
      for (const char* list : kTensorLists) {
        if (JsonValue* v = value.Find(list)) PrefixDataNames(v, dir);
      }
    }
  }
  return e;
}

Result<ApiEntries> ReadExtract(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return text.error();
  json::JsonReader r(*text, path);
  auto doc = JsonValue::Read(&r);
  if (!doc.ok()) return doc.error();
  GA_RETURN_IF_ERROR(r.ExpectEnd());
  if (!doc->is_object() || doc->members.empty()) {
    return MakeError(Printable(path), "", "an extract file must be a non-empty object {\"<api>.forward\": {...}, ...}");
  }
  ApiEntries e;
  e.source = path;
  std::vector<std::string> parts = SplitDotsCopy(doc->members.front().first);
  if (parts.size() < 4) {
    return MakeError(Printable(path), "key " + Printable(doc->members.front().first), "is not an API entry name");
  }
  e.api_name = JoinDots(parts, 0, parts.size() - 1);
  e.entries = std::move(*doc);
  GA_RETURN_IF_ERROR(CheckEntryKeys(e));
  return e;
}

}  // namespace graph_ascend::op_generate
