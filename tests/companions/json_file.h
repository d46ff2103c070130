// Reading a JSON result file in the companion tests.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace graph_ascend::testing {

// The file's JSON (ordered), or a discarded value after recording a failure.
inline nlohmann::ordered_json ReadJson(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return nlohmann::ordered_json::parse(in, nullptr, false);
}

}  // namespace graph_ascend::testing
