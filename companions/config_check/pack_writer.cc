#include "config_check/pack_writer.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "base/mapped_file.h"

namespace graph_ascend::config_check {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// JSON text; bytes of a script, yaml or environment that are not UTF-8 become U+FFFD.
std::string Text(const Json& v, int indent = -1) { return v.dump(indent, ' ', false, Json::error_handler_t::replace); }

bool IsFlag(const std::string& t) { return t.size() > 2 && t[0] == '-' && t[1] == '-'; }

// The value of a YAML scalar as PyYAML types it: bool, int, float or text.
Json ScalarValue(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted
  static const std::regex kInt(R"([-+]?(0|[1-9][0-9_]*))");
  static const std::regex kFloat(R"([-+]?([0-9][0-9_]*)?\.[0-9.]*([eE][-+][0-9]+)?)");
  if (s == "true" || s == "True" || s == "TRUE" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "False" || s == "FALSE" || s == "no" || s == "off") return false;
  if (std::regex_match(s, kInt)) return std::stoll(s);
  if (std::regex_match(s, kFloat) && s != ".") return std::stod(s);
  return s;
}

void Flatten(const YAML::Node& n, const std::string& prefix, Json* out) {
  if (n.IsMap()) {
    for (const auto& kv : n) {
      std::string key = kv.first.Scalar();
      Flatten(kv.second, prefix.empty() ? key : prefix + "." + key, out);
    }
  } else if (n.IsSequence()) {
    bool scalars = true;
    for (const auto& x : n) scalars = scalars && x.IsScalar();
    if (scalars) {
      Json list = Json::array();
      for (const auto& x : n) list.push_back(ScalarValue(x));
      (*out)[prefix] = list;
    } else {
      size_t i = 0;
      for (const auto& x : n) {
        Flatten(x, prefix.empty() ? std::to_string(i) : prefix + "." + std::to_string(i), out);
        ++i;
      }
    }
  } else if (n.IsScalar()) {
    (*out)[prefix] = ScalarValue(n);
  }
}

Result<std::string> Run(const std::vector<std::string>& argv, char** environ) {
  int fd[2];
  if (pipe(fd) != 0) return Error{argv[0], "", "cannot start"};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd[1], 1);
  posix_spawn_file_actions_addclose(&actions, fd[0]);
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (std::string& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fd[1]);
  if (rc != 0) {
    close(fd[0]);
    return Error{argv[0], "", "cannot run the interpreter"};
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fd[0], buf, sizeof(buf))) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return Error{argv[0], "", "the interpreter failed"};
  return out;
}

// "Name: x" / "Version: y" headers of a METADATA or PKG-INFO file.
std::pair<std::string, std::string> NameVersion(const std::string& file) {
  std::ifstream in(file);
  std::string line, name, version;
  while (std::getline(in, line) && !line.empty()) {
    if (line.rfind("Name: ", 0) == 0) name = line.substr(6);
    if (line.rfind("Version: ", 0) == 0) version = line.substr(9);
  }
  return {name, version};
}

// name=version per installed distribution on `python`'s sys.path, as
// importlib.metadata.distributions() lists them.
Result<std::string> InstalledPackages(const std::string& python, char** environ) {
  auto paths = Run({python, "-c", "import sys; print('\\n'.join(sys.path))"}, environ);
  if (!paths.ok()) return paths.error();
  std::string out;
  std::istringstream lines(*paths);
  for (std::string dir; std::getline(lines, dir);) {
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec)) continue;
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      std::string n = e.path().filename().string();
      if (n.size() > 10 && n.compare(n.size() - 10, 10, ".dist-info") == 0) found.push_back(e.path() / "METADATA");
      if (n.size() > 9 && n.compare(n.size() - 9, 9, ".egg-info") == 0) {
        found.push_back(e.is_directory() ? (e.path() / "PKG-INFO").string() : e.path().string());
      }
    }
    std::sort(found.begin(), found.end());
    for (const std::string& f : found) {
      auto [name, version] = NameVersion(f);
      if (!name.empty()) out += name + "=" + version + "\n";
    }
  }
  return out;
}

}  // namespace

Result<std::map<std::string, std::string>> ParseLaunchScript(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return text.error();
  // Comment lines go, and the rest of a line after '#' (as msprobe does).
  std::string script;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    line = line.substr(0, line.find('#'));
    while (!line.empty() && isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (!line.empty()) script += line + "\n";
  }
  static const std::regex kLaunch(R"(msrun\s|torchrun\s|python\d? -m torch\.distributed\.launch\s)");
  // Without a distributed launcher, the first "python[3] [-opts] script.py" (msprobe reads none).
  static const std::regex kPython(R"((^|[\s;&/])(python[0-9.]*\s+(-\S+\s+)*\S+\.py)(\s|$))");
  std::smatch m;
  std::map<std::string, std::string> out;
  size_t start;
  if (std::regex_search(script, m, kLaunch)) {
    start = static_cast<size_t>(m.position(0));
  } else if (std::regex_search(script, m, kPython)) {
    start = static_cast<size_t>(m.position(2));
  } else {
    return out;
  }
  std::string command = script.substr(start);
  command = command.substr(0, command.find('|'));
  static const std::regex kBlock(R"(([a-zA-Z0-9_]{1,20}_ARGS)="([^"]*)\")");
  for (auto it = std::sregex_iterator(script.begin(), script.end(), kBlock); it != std::sregex_iterator(); ++it) {
    std::string body = (*it)[2].str();
    std::replace(body.begin(), body.end(), '\n', ' ');
    std::string var = "$" + (*it)[1].str();
    // One pass, as Python's str.replace: a block that names itself is not expanded again.
    for (size_t at = 0; (at = command.find(var, at)) != std::string::npos; at += body.size()) {
      command.replace(at, var.size(), body);
    }
  }
  std::vector<std::string> tokens;
  std::string token;
  for (char ch : command + " ") {
    if (isspace(static_cast<unsigned char>(ch)) || ch == '\\') {
      if (!token.empty()) tokens.push_back(token);
      token.clear();
    } else {
      token += ch;
    }
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!IsFlag(tokens[i])) continue;
    std::string key = tokens[i].substr(2), value;
    // --key=value (msrun's --worker_num=8): msprobe keeps the key and loses the value (true).
    size_t eq = key.find('=');
    bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = key.substr(eq + 1);
      key.resize(eq);
    }
    bool word = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
      return isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    });
    if (!word) continue;
    if (!inline_value) {
      if (i + 1 >= tokens.size() || IsFlag(tokens[i + 1])) {
        out[key] = "true";
        continue;
      }
      value = tokens[++i];
    }
    static const std::regex kVar(R"(^\$\{?(\w+)\}?)");
    std::smatch v;
    if (std::regex_search(value, v, kVar)) {
      std::regex def(v[1].str() + R"(=\s*(.+))");
      for (auto it = std::sregex_iterator(script.begin(), script.end(), def); it != std::sregex_iterator(); ++it) {
        value = (*it)[1].str();
      }
    }
    out[key] = Text(Json(value));
  }
  return out;
}

Result<std::map<std::string, std::string>> ParseYamlConfig(const std::string& path) {
  Json flat = Json::object();
  try {
    Flatten(YAML::LoadFile(path), "", &flat);
  } catch (const YAML::Exception& e) {
    return Error{path, "line " + std::to_string(e.mark.line + 1), e.msg};
  }
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : flat.items()) out[k] = Text(v);
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> StaticPack(const std::vector<std::string>& scripts,
                                                                    const std::string& python, char** environ) {
  Json env = Json::object();
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  std::vector<std::pair<std::string, std::string>> members = {{"env", Text(env, 4)}};
  auto pip = InstalledPackages(python, environ);
  if (!pip.ok()) return pip.error();
  members.emplace_back("pip", *pip);
  Json hyper = Json::object();
  for (const std::string& s : scripts) {
    std::error_code ec;
    if (!fs::is_regular_file(s, ec)) return Error{s, "", "not a file"};
    std::string ext = fs::path(s).extension().string();
    Result<std::map<std::string, std::string>> found =
        ext == ".sh" ? ParseLaunchScript(s)
        : (ext == ".yaml" || ext == ".yml") ? ParseYamlConfig(s)
                                            : Result<std::map<std::string, std::string>>(
                                                  Error{s, "", "expected a .sh launch script or a .yaml config"});
    if (!found.ok()) return found.error();
    for (const auto& [k, text] : *found) {
      Json v = Json::parse(text);
      // msprobe's merge of several scripts: a key set twice to different values keeps both.
      if (hyper.contains(k) && hyper[k] != v) {
        if (hyper[k].is_object() && hyper[k].contains("values")) {
          hyper[k]["values"].push_back(v);
        } else {
          hyper[k] = Json{{"description", "duplicate_value"}, {"values", Json::array({hyper[k], v})}};
        }
      } else {
        hyper[k] = v;
      }
    }
  }
  if (!hyper.empty()) members.emplace_back("hyperparameters/hyperparameters_static.json", Text(hyper, 4));
  return members;
}

}  // namespace graph_ascend::config_check
