#include "cli/args.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include "base/cores.h"
#include "job/shard_job.h"

namespace graph_ascend::cli {

bool ArgReader::Value(std::string* out) {
  if (i_ + 1 >= args_.size() || (args_[i_ + 1].size() > 1 && args_[i_ + 1][0] == '-')) return false;
  *out = args_[++i_];
  return true;
}

bool ArgReader::Shard(job::ShardSpec* s, std::string* error) {
  if (flag() != "--shard") return false;
  std::string value = "auto";
  Value(&value);
  auto spec = job::ParseShard(value, getenv);
  if (spec.ok()) {
    *s = *spec;
  } else {
    *error = spec.error().ToString();
  }
  return true;
}

bool ArgReader::Batch(job::GraphOptions* o, std::string* error) {
  if (flag() != "--jobs" && flag() != "--max-memory") return false;
  std::string name = flag(), value;
  if (!Value(&value)) {
    *error = name + (name == "--jobs" ? " needs a number of pairs to run at once" : " needs a size (8G, 512M)");
  } else if (name == "--jobs") {
    if (value.empty() || value.size() > 6 || value.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(value) == 0) {
      *error = "--jobs '" + value + "': expected a positive number of pairs to run at once";
    } else {
      o->jobs = std::stoi(value);
    }
  } else {
    auto bytes = ParseByteSize(value, "flag --max-memory");
    if (bytes.ok()) {
      o->max_memory = *bytes;
    } else {
      *error = bytes.error().ToString();
    }
  }
  return true;
}

bool ArgReader::CodeMapping(job::GraphOptions* o, std::string* error) {
  if (flag() != "--code_mapping") return false;
  std::vector<std::string> files = Values();
  if (files.empty() || files.size() > 2) {
    *error = "--code_mapping takes a code_mapping CSV (and a second one for the bench side of a compare)";
    return true;
  }
  for (size_t i = 0; i < files.size(); ++i) {
    auto mapping = dump::ReadCodeMapping(files[i]);
    if (!mapping.ok()) {
      *error = mapping.error().ToString();
      return true;
    }
    (i == 0 ? o->code_mapping : o->bench_code_mapping) = std::make_shared<const dump::CodeMapping>(std::move(*mapping));
  }
  return true;
}

std::vector<std::string> ArgReader::Values() {
  std::vector<std::string> out;
  while (i_ + 1 < args_.size()) {
    const std::string& next = args_[i_ + 1];
    bool number = next.size() > 1 && next[0] == '-' && std::isdigit(static_cast<unsigned char>(next[1]));
    if (next.size() > 1 && next[0] == '-' && !number) break;
    out.push_back(args_[++i_]);
  }
  return out;
}

bool ArgReader::Parallel(job::ParallelFlags* p, std::string* error) {
  const std::string a = flag();
  const char* counted = " needs a value (two, npu bench, in a compare)";
  if (a == "--order") {
    if (!p->order.empty()) {
      *error = a + " is given twice";
    } else {
      p->order = Values();
      if (p->order.empty()) *error = a + counted;
    }
    return true;
  }
  std::vector<int>* out = a == "--rank_size" ? &p->rank_size
                          : a == "--tp"      ? &p->tp
                          : a == "--pp"      ? &p->pp
                          : a == "--vpp"     ? &p->vpp
                                             : nullptr;
  if (out == nullptr) return false;
  if (!out->empty()) {
    *error = a + " is given twice";
    return true;
  }
  std::vector<std::string> v = Values();
  if (v.empty()) *error = a + counted;
  for (const std::string& text : v) {
    char* end = nullptr;
    errno = 0;
    long n = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || n < INT_MIN || n > INT_MAX) {
      *error = a + " takes integers, got '" + text + "'";
      return true;
    }
    out->push_back(static_cast<int>(n));
  }
  return true;
}

ProgressBar::ProgressBar() : enabled_(isatty(fileno(stderr))) {}

void ProgressBar::Update(const std::string& name, double f) {
  if (!enabled_) return;
  int pct = static_cast<int>(f * 100);
  if (pct == last_pct_ && name == last_name_) return;
  last_pct_ = pct;
  last_name_ = name;
  int filled = pct * 30 / 100;
  fprintf(stderr, "\r[%.*s%.*s] %3d%% %s", filled, "##############################", 30 - filled,
          "..............................", pct, name.c_str());
  fflush(stderr);
  shown_ = true;
}

void ProgressBar::Done() {
  if (shown_) fputc('\n', stderr);
  shown_ = false;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void ProgressLines::Attach(job::GraphOptions* options) {
  auto file = options->progress;
  options->progress = [this, file](const std::string& name, double f) {
    if (file) file(name, f);
    int pct = static_cast<int>(f * 100);
    if (pct == file_pct_ && name == file_) return;
    file_pct_ = pct;
    file_ = name;
    Print();
  };
  auto run = options->run_progress;
  options->run_progress = [this, run](double f) {
    if (run) run(f);
    run_reported_ = true;
    int pct = static_cast<int>(f * 100);
    if (pct == run_pct_) return;
    run_pct_ = pct;
    Print();
  };
  options->stage = [this](const std::string& stage) {
    if (stage == stage_) return;
    stage_ = stage;
    Print();
  };
}

void ProgressLines::Print() {
  // Before the run reports (a parallel merge reports per step) its fraction is the file's.
  int run = run_reported_ ? run_pct_ : file_pct_;
  char fractions[64];
  snprintf(fractions, sizeof(fractions), "\"file_fraction\": %.2f, \"fraction\": %.2f", std::max(file_pct_, 0) / 100.0,
           std::max(run, 0) / 100.0);
  std::string line = "{\"stage\": " + JsonString(stage_) + ", \"file\": " + JsonString(file_) + ", " + fractions + "}";
  if (line == last_) return;  // file and run progress often move together
  last_ = line;
  fprintf(stderr, "graph-ascend: progress %s\n", line.c_str());
  fflush(stderr);
}

}  // namespace graph_ascend::cli
