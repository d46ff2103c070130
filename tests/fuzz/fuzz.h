// A deterministic mutation fuzzer for the builder's readers (no extra
// toolchain: it builds with the project's compiler, with or without
// ASan/UBSan). A target is a few lines (targets.cc):
//
//   GA_FUZZ_TARGET(dump_json, "dump.json", [] { return SampleFiles("dump.json"); }, "null", "\\ud800") {
//     StringPool pool;
//     return dump::ReadDumpJson(input.File("dump.json"), &pool, {}).status();
//   }
//
// (name, description, seed function, then tokens for the mutator to splice in.)
// A target gets one mutated input and returns the reader's Status: an Error
// is the expected answer to damage. A crash, an uncaught exception (such as
// std::bad_alloc from an unbounded allocation under the harness's memory
// limit) or an input that takes longer than the time limit is a failure: the
// harness writes the input to crash-<target>-<run>.bin and exits non-zero.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace graph_ascend::fuzz {

// Tokens for a JSON reader's mutator: structure, odd numbers, broken escapes and UTF-8.
#define GA_JSON_TOKENS "{", "}", "[", "]", "\"", ",", ":", "null", "true", "NaN", "-Infinity", "\\ud800", \
                       "\\udc00\\ud800", "\xff", "\xc0\x80", "\xed\xa0\x80", "{\"type\": \"torch.Tensor\"}", "\"\": "

// One input to a target.
class Input {
 public:
  explicit Input(std::string_view bytes) : bytes_(bytes) {}
  std::string_view bytes() const { return bytes_; }
  // The input written to a file (one per process, rewritten per input), for
  // readers that take a path; `name` is its file name (some readers look at it).
  const std::string& File(const std::string& name = "input") const;

 private:
  std::string_view bytes_;
};

struct Target {
  std::string name;
  std::string description;
  std::function<Status(const Input&)> run;
  std::function<std::vector<std::string>()> seeds;  // seed inputs (bytes)
  std::vector<std::string> dictionary;              // tokens the mutator splices in
};

// Registration (by the macros).
std::vector<Target>& Targets();
struct Register {
  explicit Register(Target t) { Targets().push_back(std::move(t)); }
};

// Seed helpers: the contents of every file under samples/ (or `under`, a
// directory of the source tree) whose name is `file_name` (or ends with it
// when it starts with '.'), at most `max_bytes` each, in path order.
std::vector<std::string> SampleFiles(const std::string& file_name, size_t max_bytes = 256 << 10,
                                     const std::string& under = "samples");
std::string SourceDir();
// A fresh scratch directory of this process (removed at exit).
const std::string& ScratchDir();

// .vis files built from samples/ by the builder itself (a compare of
// dist_gloo, a build of structure, a compare of overflow_nan), once per process.
const std::vector<std::string>& BuiltVis();
// Everything info and export read of a .vis: index columns, details, stacks.
Status ReadWholeVis(const std::string& path);

}  // namespace graph_ascend::fuzz

#define GA_FUZZ_CONCAT_(a, b) a##b
#define GA_FUZZ_CONCAT(a, b) GA_FUZZ_CONCAT_(a, b)

// GA_FUZZ_TARGET(name, description, seeds_fn, dictionary) { body using `input` }
#define GA_FUZZ_TARGET(name, description, seeds, ...)                                                      \
  static ::graph_ascend::Status GA_FUZZ_CONCAT(FuzzRun_, name)(const ::graph_ascend::fuzz::Input& input); \
  static ::graph_ascend::fuzz::Register GA_FUZZ_CONCAT(fuzz_register_, name)(                              \
      ::graph_ascend::fuzz::Target{#name, description, GA_FUZZ_CONCAT(FuzzRun_, name), seeds, {__VA_ARGS__}}); \
  static ::graph_ascend::Status GA_FUZZ_CONCAT(FuzzRun_, name)(const ::graph_ascend::fuzz::Input& input)
