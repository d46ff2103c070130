// ga_fuzz: runs the targets of targets.cc on mutations of their seeds.
//
//   ga_fuzz [--target NAME]... [--runs N] [--seconds S] [--seed K|random] [--shard I/N]
//           [--crash-dir DIR] [--leak-check-each] [--list]
//   ga_fuzz --replay DIR             every file of DIR/<target>/ through <target>
//   ga_fuzz --replay FILE --target NAME
//
// Deterministic for a given --seed and --runs: run i of a target mutates
// seed (i mod seeds) with a generator seeded by (K, target, i), so a failure
// is reproduced by the same command (`--seed random` picks K and prints it).
// Prints one line per target: runs, seeds, inputs refused with an Error,
// inputs accepted. A crash, hang, uncaught exception or (under
// LeakSanitizer) a leak saves the input and ends the run with a non-zero
// status; --replay runs saved inputs (tests/fuzz/corpus) the same way.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "fuzz.h"

// Set when built with a sanitizer (its report ends the process; we first save the input).
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));
// Set under LeakSanitizer: a leak check now, reported, without ending the process.
extern "C" int __lsan_do_recoverable_leak_check() __attribute__((weak));

namespace graph_ascend::fuzz {
namespace {

namespace fs = std::filesystem;

// The input being run, for the crash handlers. Never destroyed: LeakSanitizer
// checks after the static destructors and calls SaveCurrent on a leak (a
// destroyed string there was a heap-use-after-free whose report hid LSan's).
std::string& g_current = *new std::string;
char g_crash_path[4096];
char g_replay_hint[8192];  // how to run the saved input again
// Where the input being run came from, when it is a file (--replay): nothing to save.
char g_replaying[4096];
bool g_running = false;  // false outside a run: a report then belongs to no input

void SaveCurrent() {
  if (!g_running) {
    const char msg[] = "ga_fuzz: sanitizer report outside the runs (no input to save)\n";
    (void)!write(2, msg, sizeof(msg) - 1);
    return;
  }
  if (g_replaying[0] != '\0') {
    const char msg[] = "ga_fuzz: failing input: ";
    (void)!write(2, msg, sizeof(msg) - 1);
    (void)!write(2, g_replaying, strlen(g_replaying));
    (void)!write(2, "\n", 1);
    return;
  }
  int fd = open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  size_t done = 0;
  while (done < g_current.size()) {
    ssize_t n = write(fd, g_current.data() + done, g_current.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  const char msg[] = "ga_fuzz: failing input saved to ";
  (void)!write(2, msg, sizeof(msg) - 1);
  (void)!write(2, g_crash_path, strlen(g_crash_path));
  (void)!write(2, "\n", 1);
  (void)!write(2, g_replay_hint, strlen(g_replay_hint));
}

void OnFatalSignal(int sig) {
  const char* what = sig == SIGALRM ? "ga_fuzz: input took longer than the time limit (hang)\n"
                                    : "ga_fuzz: crash (fatal signal)\n";
  (void)!write(2, what, strlen(what));
  SaveCurrent();
  signal(sig, SIG_DFL);
  raise(sig == SIGALRM ? SIGABRT : sig);
}

void InstallHandlers() {
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) signal(s, OnFatalSignal);
  if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(SaveCurrent);
}

class Mutator {
 public:
  Mutator(uint64_t seed, const std::vector<std::string>* seeds, const std::vector<std::string>* dict)
      : rng_(seed), seeds_(seeds), dict_(dict) {}

  std::string Mutate(std::string s) {
    int rounds = 1 + static_cast<int>(Below(8));
    for (int r = 0; r < rounds; ++r) MutateOnce(&s);
    if (s.size() > kMaxInput) s.resize(kMaxInput);
    return s;
  }

 private:
  static constexpr size_t kMaxInput = 1 << 20;

  uint64_t Below(uint64_t n) { return n == 0 ? 0 : rng_() % n; }

  void MutateOnce(std::string* s) {
    static const char* kNumbers[] = {"0",  "-1", "1e999", "-1e999", "NaN", "4294967295", "4294967296",
                                     "2147483647", "-2147483648", "9223372036854775807", "1e-400", "255"};
    size_t at = Below(s->size() + 1);
    switch (Below(11)) {
      case 0:  // flip a bit
        if (!s->empty()) (*s)[Below(s->size())] ^= static_cast<char>(1u << Below(8));
        break;
      case 1:  // an interesting byte
        if (!s->empty()) {
          static const unsigned char kBytes[] = {0x00, 0xff, 0x7f, 0x80, 0xc0, 0xed, 0xf4, '"', '\\', '{', '[', ':'};
          (*s)[Below(s->size())] = static_cast<char>(kBytes[Below(sizeof(kBytes))]);
        }
        break;
      case 2:  // erase a range
        if (!s->empty()) s->erase(Below(s->size()), 1 + Below(std::min<size_t>(s->size(), 64)));
        break;
      case 3: {  // duplicate a range
        if (s->empty()) break;
        size_t from = Below(s->size());
        size_t n = 1 + Below(std::min<size_t>(s->size() - from, 256));
        s->insert(at, s->substr(from, n));
        break;
      }
      case 4:  // a dictionary token
        if (!dict_->empty()) s->insert(at, (*dict_)[Below(dict_->size())]);
        break;
      case 5: {  // replace a run of digits by an interesting number
        size_t d = s->find_first_of("0123456789", Below(s->size() + 1));
        if (d == std::string::npos) break;
        size_t e = s->find_first_not_of("0123456789", d);
        s->replace(d, (e == std::string::npos ? s->size() : e) - d, kNumbers[Below(std::size(kNumbers))]);
        break;
      }
      case 6: {  // splice with another seed
        if (seeds_->empty()) break;
        const std::string& other = (*seeds_)[Below(seeds_->size())];
        if (other.empty()) break;
        size_t from = Below(other.size());
        s->insert(at, other.substr(from, 1 + Below(std::min<size_t>(other.size() - from, 4096))));
        break;
      }
      case 7:  // truncate
        s->resize(Below(s->size() + 1));
        break;
      case 8: {  // overwrite 1, 2, 4 or 8 bytes with an extreme little-endian value
        size_t w = size_t{1} << Below(4);
        if (s->size() < w) break;
        size_t p = Below(s->size() - w + 1);
        uint64_t v = Below(2) ? ~uint64_t{0} >> Below(64) : uint64_t{1} << Below(64);
        for (size_t k = 0; k < w; ++k) (*s)[p + k] = static_cast<char>(v >> (8 * k));
        break;
      }
      case 9: {  // swap two ranges' order (moves structure around)
        if (s->size() < 4) break;
        size_t a = Below(s->size() / 2), n = 1 + Below(std::min<size_t>(s->size() / 2 - a, 128) + 1);
        std::string piece = s->substr(a, n);
        s->erase(a, n);
        s->insert(Below(s->size() + 1), piece);
        break;
      }
      default: {  // repeat a dictionary token many times (deep nesting, long lists)
        if (dict_->empty()) break;
        const std::string& t = (*dict_)[Below(dict_->size())];
        std::string many;
        for (uint64_t k = 0, n = 1 + Below(2000); k < n && many.size() < 65536; ++k) many += t;
        s->insert(at, many);
        break;
      }
    }
  }

  std::mt19937_64 rng_;
  const std::vector<std::string>* seeds_;
  const std::vector<std::string>* dict_;
};

struct Tally {
  uint64_t runs = 0, refused = 0, accepted = 0;
};

// Runs `t` on g_current (whose file is g_crash_path, or g_replaying when it
// came from one). False after a failure that did not end the process (an
// uncaught exception; with `leak_check`, a leak), the input saved.
bool RunOne(const Target& t, bool leak_check, bool* ok) {
  g_running = true;
  alarm(20);
  try {
    *ok = t.run(Input(g_current)).ok();
  } catch (const std::bad_alloc&) {
    fprintf(stderr, "ga_fuzz: %s: unbounded allocation (std::bad_alloc)\n", t.name.c_str());
    SaveCurrent();
    return false;
  } catch (const std::exception& e) {
    fprintf(stderr, "ga_fuzz: %s: uncaught exception: %s\n", t.name.c_str(), e.what());
    SaveCurrent();
    return false;
  }
  alarm(0);
  if (leak_check && __lsan_do_recoverable_leak_check != nullptr && __lsan_do_recoverable_leak_check() != 0) {
    fprintf(stderr, "ga_fuzz: %s: memory leaked (LeakSanitizer's report above)\n", t.name.c_str());
    SaveCurrent();
    return false;
  }
  g_running = false;
  return true;
}

const Target* FindTarget(const std::string& name) {
  for (const Target& t : Targets()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// Every file of a corpus (DIR/<target>/*, or one file for one target)
// through its target: each must be handled without a crash, hang,
// exception or leak. Prints one line per target.
int Replay(const std::string& path, const std::vector<std::string>& only) {
  std::vector<std::pair<const Target*, std::vector<std::string>>> work;
  if (fs::is_regular_file(path)) {
    const Target* t = only.size() == 1 ? FindTarget(only[0]) : nullptr;
    if (t == nullptr) {
      fprintf(stderr, "ga_fuzz: --replay of a file needs one --target (a known one)\n");
      return 2;
    }
    work.push_back({t, {path}});
  } else {
    std::error_code ec;
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(path, ec)) dirs.push_back(e.path());
    if (ec) {
      fprintf(stderr, "ga_fuzz: %s: %s\n", path.c_str(), ec.message().c_str());
      return 2;
    }
    std::sort(dirs.begin(), dirs.end());
    for (const fs::path& d : dirs) {
      std::string name = d.filename().string();
      if (!fs::is_directory(d) || name[0] == '.') continue;
      if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
      const Target* t = FindTarget(name);
      if (t == nullptr) {
        fprintf(stderr, "ga_fuzz: %s: no target of that name\n", d.c_str());
        return 2;
      }
      std::vector<std::string> files;
      for (const auto& e : fs::directory_iterator(d)) {
        if (e.is_regular_file()) files.push_back(e.path().string());
      }
      std::sort(files.begin(), files.end());
      work.push_back({t, std::move(files)});
    }
  }
  for (const auto& [t, files] : work) {
    Tally tally;
    for (const std::string& file : files) {
      std::ifstream in(file, std::ios::binary);
      g_current.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      snprintf(g_replaying, sizeof(g_replaying), "%s", file.c_str());
      bool ok = false;
      if (!RunOne(*t, true, &ok)) return 1;
      ++tally.runs;
      (ok ? tally.accepted : tally.refused)++;
    }
    printf("%-18s replayed %llu  refused %llu  accepted %llu  crashes 0\n", t->name.c_str(),
           static_cast<unsigned long long>(tally.runs), static_cast<unsigned long long>(tally.refused),
           static_cast<unsigned long long>(tally.accepted));
    fflush(stdout);
  }
  g_replaying[0] = '\0';
  return 0;
}

int Run(int argc, char** argv) {
  std::vector<std::string> only;
  uint64_t runs = 1000, seed = 1;
  double seconds = 0;
  bool list = false, leak_check_each = false, random_seed = false;
  std::string replay, crash_dir = ".";
  unsigned shard = 0, shards = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        fprintf(stderr, "ga_fuzz: %s needs a value\n", a.c_str());
        exit(2);
      }
      return argv[++i];
    };
    if (a == "--target") only.push_back(next());
    else if (a == "--runs") runs = std::stoull(next());
    else if (a == "--seconds") seconds = std::stod(next());
    else if (a == "--seed") {
      std::string v = next();
      random_seed = v == "random";
      if (!random_seed) seed = std::stoull(v);
    } else if (a == "--shard") {
      std::string v = next();
      if (sscanf(v.c_str(), "%u/%u", &shard, &shards) != 2 || shards == 0 || shard >= shards) {
        fprintf(stderr, "ga_fuzz: --shard I/N with I < N\n");
        return 2;
      }
    } else if (a == "--crash-dir") crash_dir = next();
    else if (a == "--replay") replay = next();
    else if (a == "--leak-check-each") leak_check_each = true;
    else if (a == "--list") list = true;
    else {
      fprintf(stderr,
              "usage: ga_fuzz [--target NAME]... [--runs N] [--seconds S per target] [--seed K|random]\n"
              "               [--shard I/N] [--crash-dir DIR] [--leak-check-each] [--list]\n"
              "       ga_fuzz --replay DIR|FILE [--target NAME]...\n");
      return 2;
    }
  }
  if (list) {
    for (const Target& t : Targets()) printf("%-16s %s\n", t.name.c_str(), t.description.c_str());
    return 0;
  }
  // An unbounded allocation becomes std::bad_alloc (a failure below), not
  // the machine's memory. Sanitizers reserve huge virtual ranges, so there
  // their own allocation limit (max_allocation_size_mb) does this.
  if (__sanitizer_set_death_callback == nullptr) {
    struct rlimit lim = {size_t{4} << 30, size_t{4} << 30};
    setrlimit(RLIMIT_AS, &lim);
  }
  InstallHandlers();
  if (!replay.empty()) return Replay(replay, only);
  if (random_seed) {
    seed = std::random_device()() | (uint64_t{std::random_device()()} << 32);
    seed %= 1000000000;  // short enough to copy
  }
  fprintf(stderr, "ga_fuzz: --seed %llu\n", static_cast<unsigned long long>(seed));
  for (const std::string& name : only) {
    if (FindTarget(name) == nullptr) {
      fprintf(stderr, "ga_fuzz: no target %s (--list names them)\n", name.c_str());
      return 2;
    }
  }
  size_t index = 0;
  for (const Target& t : Targets()) {
    if (!only.empty() && std::find(only.begin(), only.end(), t.name) == only.end()) continue;
    if (index++ % shards != shard) continue;
    std::vector<std::string> seeds = t.seeds();
    if (seeds.empty()) {
      fprintf(stderr, "ga_fuzz: %s has no seeds (is GA_SOURCE_DIR the source tree?)\n", t.name.c_str());
      return 1;
    }
    Tally tally;
    int refused_seeds = 0;
    auto start = std::chrono::steady_clock::now();
    for (uint64_t i = 0;; ++i) {
      if (seconds > 0) {
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= seconds) break;
      } else if (i >= runs) {
        break;
      }
      uint64_t s = seed * 0x9E3779B97F4A7C15ull ^ std::hash<std::string>()(t.name) ^ (i * 0xBF58476D1CE4E5B9ull);
      Mutator m(s, &seeds, &t.dictionary);
      // Every 16th run is an unmutated seed (counted apart: a target whose
      // seeds are all refused tests nothing but its error paths).
      g_current = i % 16 == 0 ? seeds[i / 16 % seeds.size()] : m.Mutate(seeds[i % seeds.size()]);
      snprintf(g_crash_path, sizeof(g_crash_path), "%s/crash-%s-seed%llu-run%llu.bin", crash_dir.c_str(),
               t.name.c_str(), static_cast<unsigned long long>(seed), static_cast<unsigned long long>(i));
      snprintf(g_replay_hint, sizeof(g_replay_hint),
               "ga_fuzz: run it again: ga_fuzz --replay %s --target %s (or: --target %s --seed %llu --runs %llu)\n",
               g_crash_path, t.name.c_str(), t.name.c_str(), static_cast<unsigned long long>(seed),
               static_cast<unsigned long long>(i + 1));
      bool ok = false;
      if (!RunOne(t, leak_check_each, &ok)) return 1;
      if (i % 16 == 0 && !ok) ++refused_seeds;
      ++tally.runs;
      (ok ? tally.accepted : tally.refused)++;
    }
    // Under LeakSanitizer, what this target's runs lost (the input is not
    // known: --leak-check-each finds it, a check after every run).
    if (__lsan_do_recoverable_leak_check != nullptr && __lsan_do_recoverable_leak_check() != 0) {
      fprintf(stderr,
              "ga_fuzz: %s: memory leaked in these runs (LeakSanitizer's report above); the input: "
              "ga_fuzz --target %s --seed %llu --runs %llu --leak-check-each\n",
              t.name.c_str(), t.name.c_str(), static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(tally.runs));
      return 1;
    }
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // A crash, hang or exception has ended the process before this line.
    printf("%-18s runs %llu  seeds %zu  refused %llu  accepted %llu  crashes 0  refused seed runs %d  "
           "(%.1f s, %.0f runs/s)\n",
           t.name.c_str(), static_cast<unsigned long long>(tally.runs), seeds.size(),
           static_cast<unsigned long long>(tally.refused), static_cast<unsigned long long>(tally.accepted),
           refused_seeds, took, took > 0 ? tally.runs / took : 0.0);
    fflush(stdout);
  }
  return 0;
}

}  // namespace

std::vector<Target>& Targets() {
  static std::vector<Target> targets;
  return targets;
}

std::string SourceDir() {
  const char* d = getenv("GA_SOURCE_DIR");
  return d != nullptr ? d : GA_DEFAULT_SOURCE_DIR;
}

const std::string& ScratchDir() {
  // Removed by the destructor of the static at exit (an atexit handler
  // registered here would run after the string is gone).
  struct Scratch {
    std::string path;
    ~Scratch() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static const Scratch dir{[] {
    std::string tmpl = (fs::temp_directory_path() / "ga_fuzz_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      perror("ga_fuzz: mkdtemp");
      exit(1);
    }
    return tmpl;
  }()};
  return dir.path;
}

const std::string& Input::File(const std::string& name) const {
  static std::string path;
  path = ScratchDir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes_.data(), static_cast<std::streamsize>(bytes_.size()));
  return path;
}

std::vector<std::string> SampleFiles(const std::string& file_name, size_t max_bytes, const std::string& under) {
  std::vector<std::string> paths;
  for (const auto& e : fs::recursive_directory_iterator(SourceDir() + "/" + under)) {
    if (!e.is_regular_file()) continue;
    std::string name = e.path().filename().string();
    bool suffix = file_name[0] == '.';
    bool match = suffix ? name.size() >= file_name.size() &&
                              name.compare(name.size() - file_name.size(), file_name.size(), file_name) == 0
                        : name == file_name;
    if (match && e.file_size() <= max_bytes) paths.push_back(e.path().string());
  }
  std::sort(paths.begin(), paths.end());  // the same order on every machine
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::ifstream in(p, std::ios::binary);
    out.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

}  // namespace graph_ascend::fuzz

int main(int argc, char** argv) { return graph_ascend::fuzz::Run(argc, argv); }
