#include "op_generate/api_names.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "base/strings.h"

namespace graph_ascend::op_generate {

extern const char kPyTorchSupportList[];
extern const char kMindSporeSupportList[];

namespace {

// The msprobe whose lists support_wrap_ops/ holds (its README says where they come from).
constexpr const char* kListVersion = "26.2.0";

// A section of msprobe's list and the data prefix msprobe gives its calls
// (msprobe core/common/const.py API_DATA_PREFIX). `module` null: msprobe dumps
// these, but a script cannot run one alone (communication, NPU kernels, aten).
struct Section {
  const char* prefix;
  const char* key;
  const char* module;
};

constexpr Section kPyTorch[] = {
    {"Functional", "functional", "torch.nn.functional"},
    {"Tensor", "tensor", "torch.Tensor"},
    {"Torch", "torch", "torch"},
    {"NPU", "torch_npu", nullptr},
    {"Aten", "aten", nullptr},
    {"VF", "_VF", nullptr},
    {"Distributed", "distributed", nullptr},
    {"Distributed", "npu_distributed", nullptr},
    {"MindSpeed", "mindspeed", nullptr},
};

constexpr Section kMindSpore[] = {
    {"MintFunctional", "mint.nn.functional", "mindspore.mint.nn.functional"},
    {"Mint", "mint.ops", "mindspore.mint"},
    {"Functional", "ops", "mindspore.ops"},
    {"Tensor", "tensor", "mindspore.Tensor"},
    {"Distributed", "communication.comm_func", nullptr},
    {"MintDistributed", "mint.distributed", nullptr},
};

using SupportList = std::map<std::string, std::vector<std::string>, std::less<>>;

bool IsIdentifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// "linalg.norm": identifiers joined by dots.
bool IsDottedIdentifier(std::string_view s) {
  for (;;) {
    size_t dot = s.find('.');
    if (!IsIdentifier(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// msprobe's YAML is a map of sections to lists of names ("functional:" then
// "  - conv1d"). An entry that is not a (dotted) identifier names no
// attribute ("bool astype") and is left out.
SupportList Parse(std::string_view yaml) {
  SupportList list;
  std::vector<std::string>* section = nullptr;
  while (!yaml.empty()) {
    size_t end = yaml.find('\n');
    std::string_view line = yaml.substr(0, end);
    yaml.remove_prefix(end == std::string_view::npos ? yaml.size() : end + 1);
    std::string_view text = Trim(line);
    if (text.empty() || text[0] == '#') continue;
    if (line[0] != ' ' && line[0] != '-' && text.back() == ':') {
      section = &list[std::string(text.substr(0, text.size() - 1))];
    } else if (section != nullptr && text[0] == '-') {
      std::string_view name = Trim(text.substr(1));
      if (IsDottedIdentifier(name)) section->emplace_back(name);
    }
  }
  return list;
}

const SupportList& ListOf(const std::string& framework) {
  static const SupportList pytorch = Parse(kPyTorchSupportList);
  static const SupportList mindspore = Parse(kMindSporeSupportList);
  return framework == "mindspore" ? mindspore : pytorch;
}

const std::vector<std::string>& Names(const std::string& framework, const char* key) {
  static const std::vector<std::string> none;
  const SupportList& list = ListOf(framework);
  auto it = list.find(std::string_view(key));
  return it == list.end() ? none : it->second;
}

std::string_view LastPart(std::string_view s) {
  size_t dot = s.rfind('.');
  return dot == std::string_view::npos ? s : s.substr(dot + 1);
}

// The section of `framework`'s list whose calls carry `prefix` and that a script can run, or null.
const Section* RunnableSection(const std::string& framework, std::string_view prefix) {
  auto find = [&](const auto& table) -> const Section* {
    for (const Section& s : table) {
      if (prefix == s.prefix && s.module != nullptr) return &s;
    }
    return nullptr;
  };
  return framework == "mindspore" ? find(kMindSpore) : find(kPyTorch);
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The code point of the UTF-8 sequence at s[*i] (advancing *i past it), or
// U+FFFD for a byte that starts no valid sequence (advancing one byte).
uint32_t NextCodePoint(std::string_view s, size_t* i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(*i);
  int extra = c >= 0xF0 && c <= 0xF4 ? 3 : c >= 0xE0 ? (c <= 0xEF ? 2 : -1) : c >= 0xC2 ? 1 : -1;
  if (extra < 0 || *i + extra >= s.size()) {
    ++*i;
    return 0xFFFD;
  }
  uint32_t cp = c & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    if ((byte(*i + k) & 0xC0) != 0x80) {
      ++*i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (byte(*i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
  if (cp < kMin[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++*i;
    return 0xFFFD;
  }
  *i += extra + 1;
  return cp;
}

void AppendHex(uint32_t v, int digits, std::string* out) {
  static const char* kHex = "0123456789abcdef";
  for (int sh = (digits - 1) * 4; sh >= 0; sh -= 4) out->push_back(kHex[(v >> sh) & 15]);
}

// Escapes `s` into `out`: printable ASCII kept (but `quote` and backslash),
// control bytes as \n \r \t \xNN; other bytes as code points when `ascii`,
// else kept.
void AppendEscaped(std::string_view s, bool ascii, char quote, std::string* out) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\\' || (quote != 0 && c == static_cast<unsigned char>(quote))) {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out->append("\\n");
    } else if (c == '\r') {
      out->append("\\r");
    } else if (c == '\t') {
      out->append("\\t");
    } else if (c < 0x20 || c == 0x7F) {
      out->append("\\x");
      AppendHex(c, 2, out);
    } else if (c < 0x80 || !ascii) {
      out->push_back(static_cast<char>(c));
    } else {
      uint32_t cp = NextCodePoint(s, &i);
      if (cp < 0x100) {
        out->append("\\x");
        AppendHex(cp, 2, out);
      } else if (cp < 0x10000) {
        out->append("\\u");
        AppendHex(cp, 4, out);
      } else {
        out->append("\\U");
        AppendHex(cp, 8, out);
      }
      continue;
    }
    ++i;
  }
}

}  // namespace

std::string PythonString(std::string_view s) {
  std::string out = "\"";
  AppendEscaped(s, true, '"', &out);
  out.push_back('"');
  return out;
}

std::string Printable(std::string_view s) {
  std::string out;
  AppendEscaped(s, false, 0, &out);
  return out;
}

Result<ApiCall> ResolveApi(const std::string& source, const std::string& api_name, const std::string& framework) {
  const bool mindspore = framework == "mindspore";
  const std::string file = Printable(source);
  const std::string shown = "'" + Printable(api_name) + "'";
  std::vector<std::string> parts = SplitDotsCopy(api_name);
  if (parts.size() < 3 || !AllDigits(parts.back()) || parts.back().size() > 9) {
    return MakeError(file, "",
                     shown + " is not an msprobe API call name (<type>.<api>.<call index>, e.g. Functional.linear.0): "
                             "no script is made for it");
  }
  const Section* section = RunnableSection(framework, parts[0]);
  if (section == nullptr) {
    return MakeError(file, "",
                     std::string(mindspore ? "only Mint, MintFunctional, Functional and Tensor"
                                           : "only Functional, Tensor and Torch") +
                         " APIs can be reproduced alone, not " + shown);
  }
  std::string function = JoinDots(parts, 1, parts.size() - 1);
  const std::vector<std::string>& names = Names(framework, section->key);
  if (std::find(names.begin(), names.end(), function) != names.end()) {
    return ApiCall{section->prefix, function, section->module};
  }
  // msprobe 26 names a dotted entry by its last part: Torch.vector_norm.0 is torch.linalg.vector_norm.
  if (IsIdentifier(function)) {
    const std::string* only = nullptr;
    int matches = 0;
    for (const std::string& name : names) {
      if (name.find('.') != std::string::npos && LastPart(name) == function) {
        only = &name;
        ++matches;
      }
    }
    if (matches == 1) return ApiCall{section->prefix, *only, section->module};
  }
  return MakeError(file, "",
                   shown + ": msprobe " + kListVersion + " dumps no " + (mindspore ? "MindSpore" : "PyTorch") + " " +
                       section->prefix + " API named '" + Printable(function) + "' (its support_wrap_ops.yaml, " +
                       section->key + "): refused, a repro script runs only the APIs msprobe dumps");
}

std::string SupportedApisPython(const std::string& framework) {
  std::string out = "# The APIs this script may run, by module: msprobe ";
  out += kListVersion;
  out += "'s support_wrap_ops.yaml, written by graph-ascend\n# op_generate. resolve() runs nothing else.\n";
  out += "SUPPORTED_APIS = {\n";
  auto write = [&](const Section& s) {
    if (s.module == nullptr) return;
    out += "    " + PythonString(s.module) + ": frozenset(\n        \"\"\"";
    size_t column = 100;  // the first name starts a line
    for (const std::string& name : Names(framework, s.key)) {
      if (column + name.size() + 1 > 100) {
        out += "\n        ";
        column = 8;
      } else {
        out.push_back(' ');
        ++column;
      }
      out += name;  // a dotted identifier (Parse keeps nothing else)
      column += name.size();
    }
    out += "\n        \"\"\".split()\n    ),\n";
  };
  if (framework == "mindspore") {
    for (const Section& s : kMindSpore) write(s);
  } else {
    for (const Section& s : kPyTorch) write(s);
  }
  out += "}\n";
  return out;
}

}  // namespace graph_ascend::op_generate
