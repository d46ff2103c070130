// graph-ascend report: a compare as one self-contained HTML file (issue 32;
// builder/report), written through a temporary file and renamed.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/temp_files.h"
#include "cli/commands.h"
#include "formats/foreign_file.h"
#include "report/html_report.h"

namespace graph_ascend::cli {
namespace {

const char* kReportUsage =
    "usage: graph-ascend report FILE.vis -o REPORT.html [--depth N]\n"
    "\n"
    "Writes one self-contained HTML file (no script, nothing fetched: it opens offline) to attach to a\n"
    "bug report: the verdict (the first divergence with its reason and margin, or no divergence beyond\n"
    "noise), the path from the root to it on both sides, its comparison table, the next entries of the\n"
    "divergence ranking, the layer profile as a chart (info --profile) and the runs' metadata.\n"
    "\n"
    "  -o, --output REPORT.html   the file to write (replaced whole, or left as it was on error)\n"
    "  --depth N                  profile the modules at depth N instead of the repeated layers\n"
    "  -h, --help                 this help\n";

Status WriteWhole(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp-" + std::to_string(getpid());
  TemporaryFile registered(tmp);
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error{path, "", std::string("cannot write: ") + strerror(errno)};
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      close(fd);
      unlink(tmp.c_str());
      return Error{path, "", std::string("cannot write: ") + strerror(err)};
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0 || rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return Error{path, "", std::string("cannot write: ") + strerror(err)};
  }
  return Status::Ok();
}

}  // namespace

int ReportCommand(const std::vector<std::string>& args) {
  std::string input, output;
  int depth = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      fputs(kReportUsage, stdout);
      return 0;
    }
    if (a == "-o" || a == "--output" || a == "--depth") {
      if (i + 1 == args.size()) return Fail(a + " needs a value", kReportUsage);
      const std::string& value = args[++i];
      if (a != "--depth") {
        output = value;
        continue;
      }
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), depth);
      if (ec != std::errc() || end != value.data() + value.size() || depth < 1) {
        return Fail("--depth '" + value + "': expected a depth from 1", kReportUsage);
      }
    } else if (!a.empty() && a[0] == '-') {
      return Fail("unknown option '" + a + "'", kReportUsage);
    } else if (!input.empty()) {
      return Fail("report takes one .vis file", kReportUsage);
    } else {
      input = a;
    }
  }
  if (input.empty()) return Fail("report needs a .vis file", kReportUsage);
  if (output.empty()) return Fail("report needs -o REPORT.html", kReportUsage);
  auto format = formats::DetectFormat(input);
  if (!format.ok()) return Fail(format.error().ToString());
  if (*format != formats::FileFormat::kVis) {
    return Fail(Error{input, "",
                      std::string("is ") + formats::FormatName(*format) +
                          ", which holds no divergence ranking: convert it with graph-ascend import (or build the "
                          "compare with graph-ascend graph) and report its .vis"}
                    .ToString());
  }
  auto reader = vis::VisReader::Open(input);
  if (!reader.ok()) return Fail(reader.error().ToString());
  auto html = report::RenderReport(**reader, input, depth);
  if (!html.ok()) return Fail(html.error().ToString());
  if (Status st = WriteWhole(output, *html); !st.ok()) return Fail(st.error().ToString());
  return 0;
}

}  // namespace graph_ascend::cli
