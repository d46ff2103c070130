// Temporary directories and small files for the builder tests. Each test
// writes its own hand-made inputs into a fresh directory that is removed
// when the test ends.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "base/status.h"

namespace graph_ascend::testing {

// The value of `r`, or (after recording a failure) a default value.
template <typename T>
T Ok(Result<T> r) {
  if (!r.ok()) {
    ADD_FAILURE() << r.error().ToString();
    return T{};
  }
  return std::move(r).value();
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ga_builder_test_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed for " << tmpl;
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // `rel` below the directory.
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// Writes `text` to `path`, creating parent directories.
inline void WriteFile(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes a dump directory: dump.json, construct.json and stack.json.
inline void WriteDumpDir(const std::string& dir, const std::string& dump, const std::string& construct,
                         const std::string& stack = "{}") {
  WriteFile(dir + "/dump.json", dump);
  WriteFile(dir + "/construct.json", construct);
  WriteFile(dir + "/stack.json", stack);
}

// A statistics tensor leaf as msprobe writes it.
inline std::string Tensor(const std::string& shape, const std::string& max, const std::string& min,
                          const std::string& mean, const std::string& norm, const std::string& extra = "") {
  return R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": )" + shape + R"(, "Max": )" + max +
         R"(, "Min": )" + min + R"(, "Mean": )" + mean + R"(, "Norm": )" + norm + R"(, "requires_grad": true)" +
         (extra.empty() ? "" : ", " + extra) + "}";
}

// A dump.json with the given "data" members.
inline std::string DumpJson(const std::string& data, const std::string& task = "statistics",
                            const std::string& framework = "pytorch") {
  return R"({"task": ")" + task + R"(", "level": "mix", "framework": ")" + framework +
         R"(", "dump_data_dir": null, "data": {)" + data + "}}";
}

// The directory holding the committed samples and test data.
inline std::string SourceDir() {
  const char* s = getenv("GA_SOURCE_DIR");
  return s != nullptr ? s : ".";
}

}  // namespace graph_ascend::testing
