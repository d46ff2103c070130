// Running bin/graph-ascend from the end-to-end tests, and reading what it
// writes through `graph-ascend export` (msprobe's JSON view of a .vis).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test_files.h"

extern char** environ;

namespace graph_ascend::testing {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

struct RunResult {
  int status = -1;  // exit status, or 128 + signal
  std::string out, err;
};

// bin/graph-ascend of the build under test; GA_BINARY_DIR is set by ga_test
// (tests/CMakeLists.txt). Without it there is no way to know which build.
inline std::string Binary() {
  const char* b = getenv("GA_BINARY_DIR");
  if (b == nullptr) {
    ADD_FAILURE() << "GA_BINARY_DIR is not set: run through ctest, or set it to the build directory";
    return "/nonexistent/bin/graph-ascend";
  }
  return std::string(b) + "/bin/graph-ascend";
}

inline std::string Sample(const std::string& rel) { return SourceDir() + "/samples/" + rel; }

// Runs graph-ascend with `args`, capturing stdout and stderr.
inline RunResult RunTool(const std::vector<std::string>& args) {
  TempDir io;
  std::string out = io / "stdout", err = io / "stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> full = {Binary()};
  full.insert(full.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : full) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  RunResult r;
  int rc = posix_spawn(&pid, full[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ADD_FAILURE() << "cannot start " << full[0] << ": " << strerror(rc);
    return r;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// How the CLI reports bad input: exit status 2, nothing on stdout, one
// "graph-ascend: error:" line on stderr that contains each of `parts`.
inline void ExpectOneError(const RunResult& r, const std::vector<std::string>& parts) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.out, "");
  std::vector<std::string> lines = Lines(r.err);
  ASSERT_EQ(lines.size(), 1u) << "one message:\n" << r.err;
  EXPECT_EQ(lines[0].rfind("graph-ascend: error: ", 0), 0u) << lines[0];
  for (const std::string& p : parts) {
    EXPECT_NE(lines[0].find(p), std::string::npos) << "'" << p << "' in: " << lines[0];
  }
}

// Every file name in `dir`, sorted.
inline std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Runs `graph` and returns the .vis files it wrote (full paths, sorted).
inline std::vector<std::string> Graph(const std::string& config, const std::string& out_dir,
                                      const std::vector<std::string>& flags = {}) {
  std::vector<std::string> args = {"graph", "-i", config, "-o", out_dir};
  args.insert(args.end(), flags.begin(), flags.end());
  RunResult r = RunTool(args);
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<std::string> paths;
  for (const std::string& line : Lines(r.out)) paths.push_back(line);
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> listed;
  for (const std::string& f : Files(out_dir)) listed.push_back(out_dir + "/" + f);
  EXPECT_EQ(paths, listed) << "stdout names exactly the files written";
  return paths;
}

// msprobe's JSON view of a .vis, through `graph-ascend export`.
inline Json Export(const std::string& vis) {
  std::string json_path = vis + ".json";
  RunResult r = RunTool({"export", vis, "-o", json_path});
  EXPECT_EQ(r.status, 0) << r.err;
  std::string text = ReadFile(json_path);
  fs::remove(json_path);
  try {
    return Json::parse(text);
  } catch (const std::exception& e) {
    ADD_FAILURE() << vis << ": exported JSON does not parse: " << e.what();
    return Json::object();
  }
}

// The nodes of one exported graph in execution (pre-)order from the root.
inline std::vector<std::string> PreOrder(const Json& graph) {
  std::vector<std::string> order;
  std::vector<std::string> todo = {graph["root"].get<std::string>()};
  while (!todo.empty()) {
    std::string n = todo.back();
    todo.pop_back();
    order.push_back(n);
    const Json& subs = graph["node"][n]["subnodes"];
    for (auto it = subs.rbegin(); it != subs.rend(); ++it) todo.push_back(it->get<std::string>());
  }
  return order;
}

inline bool HasIndex(const Json& node) { return node.at("data").contains("precision_index"); }
inline double Index(const Json& node) { return node.at("data").at("precision_index").get<double>(); }

// The first API in execution order whose precision index is above the best
// value: where the two runs start to diverge.
inline std::string FirstDivergence(const Json& npu) {
  for (const std::string& n : PreOrder(npu)) {
    const Json& node = npu["node"][n];
    if (node["node_type"] == 1 && HasIndex(node) && Index(node) > 0) return n;
  }
  return "";
}

// The colour of a precision index by the file's own legend (§6.10).
inline std::string ColorOf(const Json& colors, double p) {
  std::string last_numeric;
  for (auto& [color, entry] : colors.items()) {
    if (!entry["value"].empty()) last_numeric = color;
  }
  for (auto& [color, entry] : colors.items()) {
    const Json& v = entry["value"];
    if (v.empty()) continue;
    double lo = v[0].get<double>(), hi = v[1].get<double>();
    if (lo == hi ? p == lo : (p >= lo && (p < hi || (color == last_numeric && p == hi)))) return color;
  }
  return "";
}

inline int CountMatched(const Json& graph) {
  int n = 0;
  for (auto& [name, node] : graph["node"].items()) n += !node["matched_node_link"].empty();
  return n;
}

inline std::string InfoLine(const std::string& info, const std::string& prefix) {
  for (const std::string& line : Lines(info)) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return "<no line starting with '" + prefix + "'>";
}

}  // namespace graph_ascend::testing
