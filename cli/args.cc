#include "cli/args.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"

namespace graph_ascend::cli {

std::string ApplyGraphFlags(const GraphFlags& flags, job::GraphOptions* o) {
  o->overflow_check = flags.overflow_check;
  o->complete_stack = o->complete_stack || flags.complete_stack;
  o->fuzzy_match = flags.fuzzy_match;
  o->layer_mapping = flags.layer_mapping;
  o->layer_mapping_file = flags.layer_mapping_file;
  o->parallel = flags.parallel;
  o->shard = flags.shard;
  o->jobs = flags.jobs;
  o->threads = flags.threads;
  o->max_memory = flags.max_memory;
  for (size_t i = 0; i < flags.code_mapping.size(); ++i) {
    auto mapping = dump::ReadCodeMapping(flags.code_mapping[i]);
    if (!mapping.ok()) return mapping.error().ToString();
    (i == 0 ? o->code_mapping : o->bench_code_mapping) = std::make_shared<const dump::CodeMapping>(std::move(*mapping));
  }
  return "";
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

void RunConsole::Attach(const GraphFlags& flags, job::GraphOptions* options) {
  options->progress = [this](const std::string& name, double f) { bar_.Update(name, f); };
  if (flags.progress_json) lines_.Attach(options);
  if (flags.verbose) {
    options->log = [this](const std::string& s) {
      bar_.Done();
      fprintf(stderr, "graph-ascend: %s\n", s.c_str());
    };
  }
  options->warn = [this](const Error& w) {
    bar_.Done();
    Warn(w.ToString());
  };
}

}  // namespace graph_ascend::cli
