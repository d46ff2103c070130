// dump.json's "data" read in parts on several threads (a 10^6-node dump.json
// is 700 MB, most of a pair's reading). The parts after the first start
// where json.dump's layout (indent=1) closes an entry, "\n  },\n  \"" (no
// raw line break can be inside a string), each read by a parser of its own
// into a pool of its own. The first part is read from the file's start by
// the one parser that would read it all alone: only when it ends an entry
// exactly where the second part starts, and each part ended an entry exactly
// where the next starts and the last one closed "data", were the guesses
// entry boundaries (by induction from the file's start), and their results
// are taken; otherwise that parser goes on alone (a file of another layout,
// or damage, which it then reports as it always did). The parts' strings are
// interned into the pool in part order, which is the order one parser
// interns them in, so ids and the arrays are what one thread gives.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "base/huge_pages.h"
#include "base/mapped_file.h"
#include "base/parallel.h"
#include "dump/dump_parser.h"

namespace graph_ascend::dump::parse {
namespace {

struct Part {
  size_t begin = 0;
  size_t stop = SIZE_MAX;  // the next part's begin; SIZE_MAX: the last part, to data's end
  StringPool pool;
  DumpData data;
  bool ok = false;
  size_t end = 0;  // the reader's offset when it stopped
};

// Where parts 1 .. n-1 would start: after an entry's closing brace (at the
// comma) found from each n-th of the file on; fewer when the layout has none.
std::vector<size_t> PartStarts(std::string_view text, int n) {
  static constexpr std::string_view kEntryEnd = "\n  },\n  \"";
  std::vector<size_t> starts;
  for (int i = 1; i < n; ++i) {
    size_t from = text.size() / n * i;
    if (!starts.empty()) from = std::max(from, starts.back() + 1);
    const void* at = memmem(text.data() + from, text.size() - from, kEntryEnd.data(), kEntryEnd.size());
    if (at == nullptr) break;
    starts.push_back(static_cast<size_t>(static_cast<const char*>(at) - text.data()) + 4);  // at the comma
  }
  return starts;
}

void ReadPart(MappedFile* file, const std::string& path, const DumpOptions& options, const std::atomic<bool>* cancel,
              Part* p) {
  size_t bytes = (p->stop == SIZE_MAX ? file->text().size() : p->stop) - p->begin;
  p->data.fields.reserve(bytes / 32);
  p->data.items.reserve(bytes / 192);
  p->data.entries.reserve(bytes / 512);
  AdviseHugePages(p->data.fields.data(), p->data.fields.capacity() * sizeof(Field));
  AdviseHugePages(p->data.items.data(), p->data.items.capacity() * sizeof(DumpItem));
  json::JsonReader reader(file->text(), path);
  reader.Rewind(p->begin, 2);  // inside the top object and "data", after a member
  DumpOptions own;
  own.overflow_check = options.overflow_check;
  DumpParser parser(&reader, &p->pool, &p->data, own, file);
  bool closed = false;
  p->ok = parser.ParsePart(p->stop, &closed, cancel) && closed == (p->stop == SIZE_MAX);
  p->end = reader.offset();
}

// The pool ids of part p's strings in `pool`, interned in the part's order.
std::vector<uint32_t> InternPart(const Part& p, StringPool* pool) {
  std::vector<uint32_t> id(p.pool.size());
  for (uint32_t i = 0; i < p.pool.size(); ++i) id[i] = pool->Intern(p.pool.Get(i));
  return id;
}

// Rewrites part p's string ids into the pool's.
void Renumber(const std::vector<uint32_t>& id, DumpData* d) {
  for (DumpEntry& e : d->entries) e.name = id[e.name];
  for (DumpItem& it : d->items) it.key = id[it.key];
  for (Field& f : d->fields) {
    f.name = id[f.name];
    if (f.value.kind == ValueKind::kString || f.value.kind == ValueKind::kJson) f.value.string = id[f.value.string];
  }
  for (P2POp& op : d->p2p) {
    op.op = id[op.op];
    op.group_id = id[op.group_id];
  }
}

// Where part i's fields, items and p2p operations go in `out`.
struct Place {
  size_t fields, items, p2p;
};

// Copies a renumbered part's fields, items and p2p operations to `at` in
// out's arrays (grown to hold every part: parts copy on their own threads),
// its items pointing at their fields there, and frees them.
void CopyArrays(DumpData* part, const Place& at, DumpData* out) {
  std::copy(part->fields.begin(), part->fields.end(), out->fields.begin() + at.fields);
  std::vector<Field>().swap(part->fields);
  auto items = out->items.begin() + at.items;
  for (DumpItem it : part->items) {
    it.first_field += static_cast<uint32_t>(at.fields);
    *items++ = it;
  }
  std::vector<DumpItem>().swap(part->items);
  std::copy(part->p2p.begin(), part->p2p.end(), out->p2p.begin() + at.p2p);
}

// Appends a part's entries to `out` as if they had been read there: a key
// read before keeps its place and takes the part's entry (the last one
// wins).
void AppendEntries(DumpData* part, const Place& at, DumpData* out) {
  for (DumpEntry e : part->entries) {
    e.first_item += static_cast<uint32_t>(at.items);
    e.first_p2p += static_cast<uint32_t>(at.p2p);
    uint32_t index = static_cast<uint32_t>(out->entries.size());
    uint32_t slot = out->entry_of.Insert(e.name, index);
    if (slot == index) {
      out->entries.push_back(e);
    } else {
      out->entries[slot] = e;
    }
  }
  std::vector<DumpEntry>().swap(part->entries);
  if (part->summary_md5) out->summary_md5 = true;
  // The first leaf's framework, unless one before it named one.
  if (out->detected_framework.empty()) out->detected_framework = part->detected_framework;
}

}  // namespace

Status ParseInParts(MappedFile* file, StringPool* pool, const DumpOptions& options, DumpData* out) {
  json::JsonReader reader(file->text(), out->path);
  DumpParser parser(&reader, pool, out, options, file);
  size_t size = file->text().size();
  int n = static_cast<int>(std::min<size_t>(std::max(options.threads, 1), size / std::max<size_t>(options.part_bytes, 1)));
  std::vector<size_t> starts = n > 1 ? PartStarts(file->text(), n) : std::vector<size_t>();
  if (starts.empty()) return parser.Parse();

  std::vector<std::unique_ptr<Part>> parts;
  for (size_t i = 0; i < starts.size(); ++i) {
    parts.push_back(std::make_unique<Part>());
    parts.back()->begin = starts[i];
    if (i + 1 < starts.size()) parts.back()->stop = starts[i + 1];
  }
  // Set when the parts' results will not be taken: they stop reading.
  std::atomic<bool> cancel{false};
  std::vector<std::unique_ptr<BackgroundWork>> readers;
  for (auto& p : parts) {
    Part* part = p.get();
    readers.push_back(std::make_unique<BackgroundWork>([file, out, &options, &cancel, part] {
      ReadPart(file, out->path, options, &cancel, part);
    }));
  }
  Status thrown = Status::Ok();
  bool taken = false;
  auto join = [&] {
    for (auto& r : readers) {
      Status s = r->Join(out->path);
      if (thrown.ok() && !s.ok()) thrown = s;
    }
    readers.clear();
  };
  parser.TakeRestAt(starts[0], [&](bool exact, size_t* resume) {
    if (!exact) cancel = true;  // the first part passed the second's start: not an entry boundary
    join();
    if (!exact) return false;
    for (auto& p : parts) {
      if (!p->ok || (p->stop != SIZE_MAX && p->end != p->stop)) return false;
    }
    taken = thrown.ok();
    *resume = parts.back()->end;
    return taken;
  });
  Status parsed = parser.Parse();
  cancel = true;  // the first part never reached the second (an error, or another layout)
  join();
  GA_RETURN_IF_ERROR(parsed);
  if (!taken) return Status::Ok();  // read by the first part's parser alone
  std::vector<std::vector<uint32_t>> ids;
  for (auto& p : parts) ids.push_back(InternPart(*p, pool));
  std::vector<Place> places;
  Place end{out->fields.size(), out->items.size(), out->p2p.size()};
  for (auto& p : parts) {
    places.push_back(end);
    end.fields += p->data.fields.size();
    end.items += p->data.items.size();
    end.p2p += p->data.p2p.size();
  }
  // Grown once (the reserved pages are touched here), filled on every part's thread.
  out->fields.resize(end.fields);
  out->items.resize(end.items);
  out->p2p.resize(end.p2p);
  RunOnThreads(static_cast<int>(parts.size()), [&](int i) {
    Renumber(ids[i], &parts[i]->data);
    CopyArrays(&parts[i]->data, places[i], out);
  });
  out->parts = static_cast<uint32_t>(parts.size() + 1);
  for (size_t i = 0; i < parts.size(); ++i) {
    AppendEntries(&parts[i]->data, places[i], out);
    parts[i].reset();
  }
  return Status::Ok();
}

}  // namespace graph_ascend::dump::parse
