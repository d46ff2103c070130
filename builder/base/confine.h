// Reads confined to one directory tree: `graph-ascend --confine DIR ...`,
// which the graph service passes to the conversions it runs in its log
// directory. Every input file and folder the builder opens (compare.json's
// folders, step and rank folders, dump.json, construct.json, stack.json,
// tensors, the layer-mapping yaml) is checked by its real path, that of the
// descriptor actually opened: a symbolic link out of DIR is an Error, never
// data in a .vis the service would serve. Without --confine nothing is checked.
#pragma once

#include <string>

#include "base/status.h"

namespace graph_ascend {

// Sets the root (its real path) for the rest of the process; call before any
// thread starts. An Error when DIR is not an existing folder.
Status ConfineReadsTo(const std::string& dir);

// The root set by ConfineReadsTo, "" when reads are not confined.
const std::string& ConfinedRoot();

// `real` (an absolute real path) is `root` or lies below it.
bool PathInside(const std::string& real, const std::string& root);

// Ok when reads are not confined or `path`, opened as `fd`, lies inside the
// root; otherwise "<path>: path leaves the log directory (symlink)". With
// fd < 0 the path itself is resolved (a check before opening it).
Status CheckConfined(const std::string& path, int fd = -1);
// The same against `root` (an absolute real path) instead of the process's
// root: the graph service confines the files it reads to its --logdir this way.
Status CheckConfinedTo(const std::string& root, const std::string& path, int fd = -1);

}  // namespace graph_ascend
