// Times the reading layer alone (dump/, json/, base/string_pool) on one dump
// directory, and writes everything it read as text, so that two builds can be
// checked to read the same DumpData with the same string ids.
//
//   g++ -std=c++20 -O3 -DNDEBUG -Ibuilder -o /tmp/read_dump bench/builder/read_dump.cc \
//       build/builder/libga_dump.a build/builder/libga_base.a -lpthread
//   /tmp/read_dump DIR [--dump OUT.txt] [--repeat N] [--overflow]
//   valgrind --tool=callgrind /tmp/read_dump DIR     # instruction counts (docs/PERFORMANCE.md)
//
// DIR holds dump.json, construct.json and stack.json (one rank of one step).
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/string_pool.h"
#include "dump/dump_data.h"

namespace ga = graph_ascend;
using ga::StringPool;
namespace dump = ga::dump;

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: read_dump DIR [--dump OUT.txt] [--repeat N] [--overflow]\n");
    return 2;
  }
  std::string dir = argv[1];
  const char* dump_out = nullptr;
  int repeat = 1;
  bool overflow = false;
  for (int i = 2; i < argc; ++i) {
    if (!strcmp(argv[i], "--dump") && i + 1 < argc) {
      dump_out = argv[++i];
    } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
      repeat = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--overflow")) {
      overflow = true;
    }
  }
  for (int rep = 0; rep < repeat; ++rep) {
    StringPool pool;
    dump::DumpOptions o;
    o.overflow_check = overflow;
    auto t0 = std::chrono::steady_clock::now();
    auto d = dump::ReadDumpJson(dir + "/dump.json", &pool, o);
    auto t1 = std::chrono::steady_clock::now();
    if (!d.ok()) {
      printf("dump error: %s\n", d.error().ToString().c_str());
      return 2;
    }
    auto c = dump::ReadConstructJson(dir + "/construct.json", &pool, &*d);
    if (!c.ok()) {
      printf("construct error: %s\n", c.error().ToString().c_str());
      return 2;
    }
    auto s = dump::ReadStackJson(dir + "/stack.json", &pool);
    if (!s.ok()) {
      printf("stack error: %s\n", s.error().ToString().c_str());
      return 2;
    }
    auto t2 = std::chrono::steady_clock::now();
    fprintf(stderr, "dump %.3f s, construct+stack %.3f s, %zu entries %zu items %zu fields %zu strings\n",
            std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count(),
            d->entries.size(), d->items.size(), d->fields.size(), pool.size());
    if (dump_out && rep == 0) {
      FILE* f = fopen(dump_out, "w");
      auto S = [&](uint32_t id) { return std::string(pool.Get(id)); };
      fprintf(f, "task=%s level=%s fw=%s det=%s ddd=%s has=%d md5=%d\n", d->task.c_str(), d->level.c_str(),
              d->framework.c_str(), d->detected_framework.c_str(), d->dump_data_dir.c_str(), d->has_dump_data_dir,
              d->summary_md5);
      for (const auto& e : d->entries) {
        fprintf(f, "E %s in=%u out=%u p2p=%u ov=%d md5=%d\n", S(e.name).c_str(), e.input_count, e.output_count,
                e.p2p_count, (int)e.overflow, e.has_md5);
        for (uint32_t i = 0; i < e.input_count + e.output_count; ++i) {
          const auto& it = d->items[e.first_item + i];
          fprintf(f, " I %s st=%d fl=%d n=%d\n", S(it.key).c_str(), (int)it.state, it.flags, it.field_count);
          for (uint32_t k = 0; k < it.field_count; ++k) {
            const auto& fl = d->fields[it.first_field + k];
            fprintf(f, "  F %s ", S(fl.name).c_str());
            switch (fl.value.kind) {
              case dump::ValueKind::kNull: fprintf(f, "null\n"); break;
              case dump::ValueKind::kBool: fprintf(f, "b%d\n", fl.value.boolean); break;
              case dump::ValueKind::kInteger: fprintf(f, "i%" PRId64 "\n", fl.value.integer); break;
              case dump::ValueKind::kNumber: fprintf(f, "d%.17g\n", fl.value.number); break;
              case dump::ValueKind::kString: fprintf(f, "s%s\n", S(fl.value.string).c_str()); break;
              case dump::ValueKind::kJson: fprintf(f, "j%s\n", S(fl.value.string).c_str()); break;
            }
          }
        }
        for (uint32_t i = 0; i < e.p2p_count; ++i) {
          const auto& p = d->p2p[e.first_p2p + i];
          fprintf(f, " P %s %" PRId64 " %s\n", S(p.op).c_str(), p.peer, S(p.group_id).c_str());
        }
      }
      for (const auto& e : c->edges) {
        fprintf(f, "C %s <- %s %d\n", S(e.parent).c_str(), S(e.child).c_str(), e.micro_step);
      }
      fprintf(f, "grouped=%d\n", s->grouped);
      for (size_t i = 0; i < s->stacks.size(); ++i) {
        fprintf(f, "S%zu:", i);
        for (uint32_t k = 0; k < s->stacks[i].count; ++k) {
          fprintf(f, " %s|", S(s->lines[s->stacks[i].first + k]).c_str());
        }
        fprintf(f, "\n");
      }
      std::vector<std::pair<std::string, uint32_t>> so;
      s->stack_of.ForEach([&](uint32_t n, uint32_t i) { so.emplace_back(S(n), i); });
      std::sort(so.begin(), so.end());
      for (auto& [n, i] : so) fprintf(f, "SO %s %u\n", n.c_str(), i);
      for (uint32_t i = 0; i < pool.size(); ++i) fprintf(f, "P%u %s\n", i, S(i).c_str());
      fclose(f);
    }
  }
  return 0;
}
