// The APIs a reproduction script may run: those on msprobe's support lists
// (support_wrap_ops/*.yaml, the APIs msprobe wraps and so the only names its
// dumps carry). A dump is untrusted input, so its API name never chooses what
// Python runs beyond picking an entry of these lists; and no dump text reaches
// a script except inside a Python literal made by PythonString.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace graph_ascend::op_generate {

// A dumped call resolved against msprobe's list.
struct ApiCall {
  std::string prefix;    // msprobe's data prefix: "Functional"
  std::string function;  // the list's entry: "linear", "linalg.vector_norm"
  std::string module;    // the Python module holding it: "torch.nn.functional"
  std::string python_api() const { return module + "." + function; }
};

// The API of `api_name` ("Functional.linear.0") in `framework` ("pytorch",
// "mindspore"): its prefix must name a list section a script can run and its
// function an entry of that section. Anything else is an error naming `source`
// and the name (escaped: one line whatever the dump holds).
Result<ApiCall> ResolveApi(const std::string& source, const std::string& api_name, const std::string& framework);

// The Python statement `SUPPORTED_APIS = {module: frozenset(names)}` of the
// sections `framework`'s scripts may run: the script's own check (defence in
// depth), which resolves nothing else.
std::string SupportedApisPython(const std::string& framework);

// `s` as a Python string literal in double quotes, ASCII only: quotes,
// backslashes and every byte outside printable ASCII escaped (\n, \x7f,
// \u00e9, \U0001f600; a byte that is not UTF-8 becomes \ufffd).
std::string PythonString(std::string_view s);

// `s` for a one-line message: printable ASCII kept, anything else escaped as
// PythonString does, without the quotes.
std::string Printable(std::string_view s);

}  // namespace graph_ascend::op_generate
