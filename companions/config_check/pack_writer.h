// The static part of a config_check pack, written without importing torch:
// the environment, the installed packages of a Python interpreter and the
// hyperparameters of launch scripts (.sh) or configs (.yaml).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace graph_ascend::config_check {

// Hyperparameters of a shell launch script: the flags of its torchrun / msrun /
// python -m torch.distributed.launch line (or, without one, of its first
// "python script.py" line), with $NAME replaced by a NAME_ARGS="..." block and
// $VAR by the script's last VAR=... . A flag followed by another flag (or by
// nothing) is a boolean flag (true), not the next flag as its value;
// --key=value is key = value. Values are JSON text: "\"1e-4\"" or "true".
Result<std::map<std::string, std::string>> ParseLaunchScript(const std::string& path);

// Hyperparameters of a yaml config: nested keys joined with ".", lists of scalars kept whole.
Result<std::map<std::string, std::string>> ParseYamlConfig(const std::string& path);

// The pack members "env", "pip" and (when `scripts` give any)
// "hyperparameters/hyperparameters_static.json". `python` is the interpreter
// whose packages are listed; it is run once to print its sys.path.
Result<std::vector<std::pair<std::string, std::string>>> StaticPack(const std::vector<std::string>& scripts,
                                                                    const std::string& python, char** environ);

}  // namespace graph_ascend::config_check
