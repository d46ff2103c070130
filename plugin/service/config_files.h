// The files the service writes beside a graph in the log directory, named as
// tb_graph_ascend 8.3.2 names them so that both tools find each other's:
// the match config "<tag>.vis.config" (a .vis.db graph:
// "<tag>_<step>_<rank>.vis.config") and the saved legend and metric choice
// "<same stem>.vis.legend.json".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"

namespace graph_ascend::service {

struct BesideNames {
  std::string match_config;  // relative to the log directory
  std::string legend;
};

// `relative` is an open file's canonical name ("dir/x.vis", "dir/x.vis.db#step0_rank1");
// `step`, `rank` its meta's ("step0", "rank1", "" for none), used for a
// .vis.db of one graph.
BesideNames BesideNamesOf(const std::string& relative, const std::string& step, const std::string& rank);

struct ConfigEntry {
  std::string path;  // relative to the log directory
  std::string name;
  uint64_t size = 0;
  int64_t mtime_unix = 0;
};

// The regular "*.vis.config" files in directory `dir` (relative, "" for the
// top) of `root` (a realpath), not recursing, in natural order; a symlink is
// listed only when it resolves to a regular file inside `root`.
std::vector<ConfigEntry> ListMatchConfigs(const std::string& root, const std::string& dir);

// Why `abs` must not be written ("" when it may): it exists and is a
// symbolic link or not a regular file.
std::string RefusedTarget(const std::string& abs);

// A stable file name for `key` (16 hex digits of its FNV-1a hash): the same
// in every build and process, for the journals of the cache folder.
std::string KeyHash(const std::string& key);

// Writes `text` to `abs_path` atomically: a temporary file beside it opened
// O_EXCL | O_NOFOLLOW, fsync, rename. Mode 0640, as tb_graph_ascend's.
Status WriteAtomically(const std::string& abs_path, const std::string& display_path, const std::string& text);

// Reads a JSON file written beside a graph (a match config, a saved legend)
// of at most `max_bytes`, keeping its key order; a parse error names the byte.
// Only a regular file is read, opened non-blocking and refused past
// `max_bytes` before reading (base/mapped_file.h's ReadFileToString): a FIFO
// or a device (/dev/zero) is an error, never a hang or an endless read.
// Callers resolve the name with LogDir::Resolve first.
Result<nlohmann::ordered_json> ReadConfigJson(const std::string& abs_path, const std::string& display_path,
                                             size_t max_bytes, const char* what);

}  // namespace graph_ascend::service
