#include "config_check/pack_writer.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/mapped_file.h"

namespace graph_ascend::config_check {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// JSON text; bytes of a script, yaml or environment that are not UTF-8 become U+FFFD.
std::string Text(const Json& v, int indent = -1) { return v.dump(indent, ' ', false, Json::error_handler_t::replace); }

bool IsFlag(const std::string& t) { return t.size() > 2 && t[0] == '-' && t[1] == '-'; }

// PyYAML's int and float forms, [-+]?(0|[1-9][0-9_]*) and
// [-+]?([0-9][0-9_]*)?\.[0-9.]*([eE][-+][0-9]+)?, checked by hand: std::regex
// recurses once per character and a long scalar would end the process.
bool IsYamlInt(const std::string& s) {
  size_t i = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  if (s[i] == '0') return i + 1 == s.size();
  if (s[i] < '1' || s[i] > '9') return false;
  for (++i; i < s.size(); ++i)
    if (!isdigit(static_cast<unsigned char>(s[i])) && s[i] != '_') return false;
  return true;
}

bool IsYamlFloat(const std::string& s) {
  auto digit = [&](size_t i) { return i < s.size() && isdigit(static_cast<unsigned char>(s[i])); };
  size_t i = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (digit(i))
    while (digit(i) || (i < s.size() && s[i] == '_')) ++i;
  if (i == s.size() || s[i] != '.') return false;
  for (++i; digit(i) || (i < s.size() && s[i] == '.');) ++i;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    if (++i == s.size() || (s[i] != '-' && s[i] != '+')) return false;
    size_t first = ++i;
    while (digit(i)) ++i;
    if (i == first) return false;
  }
  return i == s.size();
}

// The value of a YAML scalar as PyYAML types it: bool, int, float or text.
Json ScalarValue(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted
  if (s == "true" || s == "True" || s == "TRUE" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "False" || s == "FALSE" || s == "no" || s == "off") return false;
  bool is_int = IsYamlInt(s);
  if (!is_int && (!IsYamlFloat(s) || s == ".")) return s;
  std::string digits = s;  // PyYAML drops the underscores
  digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
  if (is_int) {
    errno = 0;
    long long v = strtoll(digits.c_str(), nullptr, 10);
    if (errno != ERANGE) return static_cast<int64_t>(v);  // else beyond int64: a float, as JSON holds it
  }
  return strtod(digits.c_str(), nullptr);
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

constexpr size_t kMaxCommand = size_t{16} << 20;

bool IsWordChar(char c) { return isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsSpace(char c) { return isspace(static_cast<unsigned char>(c)) != 0; }

// Where the launch command starts: the first msrun / torchrun / python[N] -m
// torch.distributed.launch followed by a space (msprobe's launchers); without
// one, the first "python[3] [-opts] script.py" (msprobe reads none). npos if
// neither. Scanned by hand: std::regex recurses once per character.
size_t LaunchLine(const std::string& script) {
  size_t best = std::string::npos;
  for (const char* word : {"msrun", "torchrun"}) {
    size_t len = strlen(word);
    for (size_t at = script.find(word); at != std::string::npos && at < best; at = script.find(word, at + 1)) {
      if (at + len < script.size() && IsSpace(script[at + len])) best = std::min(best, at);
    }
  }
  static const std::string kLauncher = " -m torch.distributed.launch";
  for (size_t at = script.find("python"); at != std::string::npos && at < best; at = script.find("python", at + 1)) {
    size_t i = at + 6;
    if (i < script.size() && isdigit(static_cast<unsigned char>(script[i]))) ++i;
    if (script.compare(i, kLauncher.size(), kLauncher) == 0 && i + kLauncher.size() < script.size() &&
        IsSpace(script[i + kLauncher.size()])) {
      best = at;
    }
  }
  if (best != std::string::npos) return best;
  for (size_t at = script.find("python"); at != std::string::npos; at = script.find("python", at + 1)) {
    if (at > 0 && !IsSpace(script[at - 1]) && std::string_view(";&/").find(script[at - 1]) == std::string_view::npos)
      continue;
    size_t i = at + 6;
    while (i < script.size() && (isdigit(static_cast<unsigned char>(script[i])) || script[i] == '.')) ++i;
    if (i == script.size() || !IsSpace(script[i])) continue;
    for (;;) {  // options, then the script
      while (i < script.size() && IsSpace(script[i])) ++i;
      size_t e = i;
      while (e < script.size() && !IsSpace(script[e])) ++e;
      if (e == i) break;
      if (script[i] == '-') {
        i = e;
        continue;
      }
      if (e - i > 3 && script.compare(e - 3, 3, ".py") == 0) return at;
      break;
    }
  }
  return std::string::npos;
}

// The NAME_ARGS="..." blocks of a script, in order (msprobe's findall of
// ([a-zA-Z0-9_]{1,20}_ARGS)="(.*?)" with DOTALL), scanned by hand.
std::vector<std::pair<std::string, std::string>> ArgsBlocks(const std::string& script) {
  std::vector<std::pair<std::string, std::string>> out;
  static const std::string kTail = "_ARGS=\"";
  for (size_t pos = 0, at; (at = script.find(kTail, pos)) != std::string::npos;) {
    size_t begin = at;
    while (begin > pos && at - begin < 20 && IsWordChar(script[begin - 1])) --begin;
    if (begin == at) {
      pos = at + 1;
      continue;
    }
    size_t body = at + kTail.size(), close = script.find('"', body);
    if (close == std::string::npos) break;
    out.emplace_back(script.substr(begin, at + 5 - begin), script.substr(body, close - body));
    pos = close + 1;
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
  std::map<std::string, std::string> out;
  size_t start = LaunchLine(script);
  if (start == std::string::npos) return out;
  std::string command = script.substr(start);
  command = command.substr(0, command.find('|'));
  for (const auto& [name, block] : ArgsBlocks(script)) {
    std::string body = block;
    std::replace(body.begin(), body.end(), '\n', ' ');
    std::string var = "$" + name;
    // One pass, as Python's str.replace: a block that names itself is not expanded again.
    for (size_t at = 0; (at = command.find(var, at)) != std::string::npos; at += body.size()) {
      command.replace(at, var.size(), body);
      if (command.size() > kMaxCommand) {
        return Error{path, name, "the launch command grows past 16 MB when its " + name + " blocks are expanded"};
      }
    }
  }
  std::map<std::string, std::string> definitions;  // "VAR=" -> its last value in the script
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
    // $VAR or ${VAR}: the value of the script's last VAR=... (msprobe's findall of VAR=\s*(.+)).
    if (!value.empty() && value[0] == '$') {
      size_t b = value.size() > 1 && value[1] == '{' ? 2 : 1, e = b;
      while (e < value.size() && IsWordChar(value[e])) ++e;
      if (e > b) {
        std::string def = value.substr(b, e - b) + "=";
        auto known = definitions.find(def);
        if (known == definitions.end()) {
          std::string found;
          for (size_t at = 0; (at = script.find(def, at)) != std::string::npos;) {
            size_t v = script.find_first_not_of(" \t\n\r\f\v", at + def.size());
            if (v == std::string::npos) break;
            size_t end = std::min(script.find('\n', v), script.size());
            found = script.substr(v, end - v);
            at = end;
          }
          known = definitions.emplace(def, found).first;
        }
        if (!known->second.empty()) value = known->second;
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
