#include <filesystem>

#include "base/mapped_file.h"
#include "op_generate/op_generate.h"

namespace graph_ascend::op_generate {

namespace {

namespace fs = std::filesystem;

std::string Resolve(const std::string& config_path, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(config_path).parent_path() / path).lexically_normal().string();
}

Result<std::string> StringMember(const std::string& file, const JsonValue& v, const std::string& key) {
  if (!v.is_string()) return MakeError(file, "key " + key, "must be a string");
  return v.text;
}

Result<int64_t> IntMember(const std::string& file, const JsonValue& v, const std::string& key) {
  const std::string& t = v.text;
  bool digits = v.type == JsonValue::Type::kNumber && !t.empty() &&
                t.find_first_not_of("-0123456789") == std::string::npos && t.size() < 19;
  if (!digits) return MakeError(file, "key " + key, "must be an integer, found " + (t.empty() ? "null" : t));
  return std::stoll(t);
}

}  // namespace

Result<OpConfig> ReadOpConfig(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return text.error();
  json::JsonReader reader(*text, path);
  auto doc = JsonValue::Read(&reader);
  if (!doc.ok()) return doc.error();
  GA_RETURN_IF_ERROR(reader.ExpectEnd());
  if (!doc->is_object()) return MakeError(path, "", "the config must be a JSON object");
  OpConfig c;
  c.file = path;
  for (const auto& [key, value] : doc->members) {
    std::string* target = nullptr;
    if (key == "dump_json_path") target = &c.dump_json_path;
    if (key == "api_name") target = &c.api_name;
    if (key == "extract_api_path") target = &c.extract_api_path;
    if (key == "propagation") target = &c.propagation;
    if (key == "data_mode") target = &c.data_mode;
    if (target != nullptr) {
      auto s = StringMember(path, value, key);
      if (!s.ok()) return s.error();
      *target = *s;
    } else if (key == "random_seed" || key == "iter_times") {
      auto n = IntMember(path, value, key);
      if (!n.ok()) return n.error();
      (key == "random_seed" ? c.random_seed : c.iter_times) = *n;
    }
  }
  if (c.propagation.empty()) c.propagation = "forward";
  if (c.data_mode.empty()) c.data_mode = "random_data";
  if (c.propagation != "forward" && c.propagation != "backward") {
    return MakeError(path, "key propagation", "must be forward or backward, found '" + Printable(c.propagation) + "'");
  }
  if (c.data_mode != "random_data" && c.data_mode != "real_data") {
    return MakeError(path, "key data_mode", "must be random_data or real_data, found '" + Printable(c.data_mode) + "'");
  }
  if (c.iter_times < 1 || c.iter_times > 1000) {
    return MakeError(path, "key iter_times", "must be between 1 and 1000, found " + std::to_string(c.iter_times));
  }
  if (c.extract_api_path.empty()) return MakeError(path, "key extract_api_path", "is required");
  if (!c.dump_json_path.empty() && c.api_name.empty()) {
    return MakeError(path, "key api_name", "is required with dump_json_path");
  }
  c.dump_json_path = Resolve(path, c.dump_json_path);
  c.extract_api_path = Resolve(path, c.extract_api_path);
  return c;
}

}  // namespace graph_ascend::op_generate
