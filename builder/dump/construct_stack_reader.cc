// Reading construct.json (§3.3) and stack.json (§3.4), through JsonReader's
// fast interface (errors are recorded in the reader and returned at the end).
#include "base/mapped_file.h"
#include "dump/dump_data.h"
#include "json/json_reader.h"

namespace graph_ascend::dump {

using json::JsonNumber;
using json::JsonReader;
using json::JsonType;
using Step = JsonReader::Step;

namespace {

Status CheckNotEmpty(const MappedFile& file, const char* what) {
  if (file.text().find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Error{file.path(), "", std::string("empty file: expected a JSON object (") + what + ")"};
  }
  return Status::Ok();
}

bool Fail(JsonReader* r, std::string message) { return r->Fail(r->offset(), std::move(message)); }

constexpr std::string_view kMicroStepKey = "megatron_micro_step_number";

void AddEdge(const ConstructData::Edge& edge, ConstructData* out) {
  uint32_t index = static_cast<uint32_t>(out->edges.size());
  uint32_t at = out->edge_of.Insert(edge.child, index);
  if (at == index) {
    out->edges.push_back(edge);
  } else {
    out->edges[at] = edge;  // last value wins, first position kept (Python dict)
  }
}

// The value of the construct.json member of key `key` (NextKey's, copied
// into `child` before anything else is read), read in general: every shape
// and every error.
bool ParseMember(JsonReader* r, std::string_view key, StringPool* pool, std::string* child, ConstructData* out) {
  child->assign(key);
  if (*child == kMicroStepKey) return r->SkipValue();
  ConstructData::Edge edge{pool->Intern(*child), 0, -1};
  JsonType t;
  if (!r->PeekType(&t)) return false;
  std::string_view s;
  if (t == JsonType::kNull) {
    if (!r->GetNull()) return false;
  } else if (t == JsonType::kString) {
    if (!r->GetString(&s)) return false;
    edge.parent = pool->Intern(s);
  } else if (t == JsonType::kArray) {
    // The Megatron variant: [parent, micro_step].
    if (!r->BeginArray()) return false;
    for (int i = 0;; ++i) {
      Step el = r->NextItem();
      if (el == Step::kFailed) return false;
      if (el == Step::kEnd) break;
      JsonType et;
      if (!r->PeekType(&et)) return false;
      if (i == 0 && et == JsonType::kString) {
        if (!r->GetString(&s)) return false;
        edge.parent = pool->Intern(s);
      } else if (i == 1 && et == JsonType::kNumber) {
        JsonNumber n;
        if (!r->GetNumber(&n)) return false;
        edge.micro_step = static_cast<int32_t>(n.number);
      } else if (i == 0 && et == JsonType::kNull) {
        if (!r->GetNull()) return false;
      } else {
        return Fail(r, "key " + *child + ": expected [parent, micro_step]");
      }
    }
  } else {
    return Fail(r, "key " + *child + ": the parent must be a string or null");
  }
  AddEdge(edge, out);
  return true;
}

// construct.json names the nodes of dump.json mostly in its order (70 % of
// keys are the entry after the key before's): a key is first compared with
// that entry's name, which when equal needs no pool lookup (a random probe
// of a table of 10^5 strings or more, a cache miss).
class EntryOrder {
 public:
  // `dump`, read into `pool`, or null for none.
  EntryOrder(const DumpData* dump, StringPool* pool) : dump_(dump), pool_(pool) {}

  // pool->Intern(key), the same id with the same effect.
  uint32_t Intern(std::string_view key) {
    if (dump_ == nullptr) return pool_->Intern(key);
    if (next_ < dump_->entries.size()) {
      uint32_t id = dump_->entries[next_].name;
      if (pool_->Get(id) == key) {
        ++next_;
        return id;
      }
    }
    uint32_t id = pool_->Intern(key);
    uint32_t entry = dump_->entry_of.Get(id);
    if (entry != IdIndex::kNone) next_ = entry + 1;
    return id;
  }

 private:
  const DumpData* dump_;
  StringPool* pool_;
  size_t next_ = 0;  // the entry expected next
};

// The top-level object of construct.json, or false with the error in `r`.
bool ParseConstruct(JsonReader* r, StringPool* pool, const DumpData* dump, ConstructData* out) {
  JsonType top;
  if (!r->PeekType(&top)) return false;
  if (top != JsonType::kObject) return Fail(r, "construct.json must be a JSON object of child -> parent");
  if (!r->BeginObject()) return false;
  // json.dump writes `"child": "parent"` or `"child": null` a line: such a
  // member is read in one pass (NextScalar), and a parent that is the one
  // of the member before (siblings come in a row: 70 % of them) takes its
  // id again without a pool lookup. Any other member goes back (Rewind) to
  // the general path, which reads the first member too: Rewind cannot give
  // back an object's "first member still to come".
  std::string_view key;
  std::string child;
  JsonReader::Scalar value;
  std::string_view last_parent;  // a view into the input
  uint32_t last_parent_id = 0;   // Intern("")
  EntryOrder children(dump, pool);
  for (bool first = true;; first = false) {
    if (!first) {
      size_t at = r->offset(), depth = r->depth();
      JsonReader::Member m = r->NextScalar(&key, &value);
      if (m == JsonReader::Member::kEnd) break;
      if (m == JsonReader::Member::kMore) {
        if ((value.type == JsonType::kString || value.type == JsonType::kNull) && key != kMicroStepKey) {
          ConstructData::Edge edge{children.Intern(key), 0, -1};
          if (value.type == JsonType::kString) {
            if (value.text != last_parent) {
              last_parent = value.text;
              last_parent_id = pool->Intern(value.text);
            }
            edge.parent = last_parent_id;
          }
          AddEdge(edge, out);
          continue;
        }
        r->Rewind(at, depth);
      }
    }
    Step more = r->NextKey(&key);
    if (more == Step::kFailed) return false;
    if (more == Step::kEnd) break;
    if (!ParseMember(r, key, pool, &child, out)) return false;
  }
  return true;
}

// Reads a list of strings into `lines`.
bool ReadLines(JsonReader* r, StringPool* pool, std::vector<uint32_t>* lines) {
  if (!r->BeginArray()) return false;
  std::string_view s;
  for (;;) {
    Step el = r->NextItem();
    if (el == Step::kFailed) return false;
    if (el == Step::kEnd) return true;
    if (r->PeekByte() != '"') {
      if (!r->SkipValue()) return false;  // msprobe keeps whatever is there; a non-string line is dropped
      continue;
    }
    if (!r->GetString(&s)) return false;
    lines->push_back(pool->Intern(s));
  }
}

// The top-level object of stack.json, or false with the error in `r`.
bool ParseStack(JsonReader* r, StringPool* pool, StackData* out) {
  JsonType top;
  if (!r->PeekType(&top)) return false;
  if (top != JsonType::kObject) return Fail(r, "stack.json must be a JSON object");
  if (!r->BeginObject()) return false;
  std::string_view key;
  std::string name;
  std::vector<uint32_t> names;
  bool first = true, grouped = false;
  for (;;) {
    Step more = r->NextKey(&key);
    if (more == Step::kFailed) return false;
    if (more == Step::kEnd) break;
    name.assign(key);
    if (first) grouped = out->grouped = name == "0";  // the grouped format starts with group "0"
    first = false;
    if (r->PeekByte() != '[') {
      if (!r->SkipValue()) return false;  // not a list: no stack (§5.6 leaves non-lists alone)
      continue;
    }
    StackData::Range range{static_cast<uint32_t>(out->lines.size()), 0};
    if (!grouped) {
      if (!ReadLines(r, pool, &out->lines)) return false;
      range.count = static_cast<uint32_t>(out->lines.size() - range.first);
      out->stack_of.Set(pool->Intern(name), static_cast<uint32_t>(out->stacks.size()));
      out->stacks.push_back(range);
      continue;
    }
    // {"0": [[names], [lines]]}; other shapes are skipped.
    names.clear();
    if (!r->BeginArray()) return false;
    int index = 0;
    bool valid = true;
    for (;; ++index) {
      Step el = r->NextItem();
      if (el == Step::kFailed) return false;
      if (el == Step::kEnd) break;
      bool list = r->PeekByte() == '[';
      if (index == 0 && list) {
        if (!r->BeginArray()) return false;
        std::string_view s;
        for (;;) {
          Step ne = r->NextItem();
          if (ne == Step::kFailed) return false;
          if (ne == Step::kEnd) break;
          if (r->PeekByte() != '"') {
            if (!r->SkipValue()) return false;
            continue;
          }
          if (!r->GetString(&s)) return false;
          names.push_back(pool->Intern(s));
        }
      } else if (index == 1 && list && valid) {
        if (!ReadLines(r, pool, &out->lines)) return false;
      } else {
        valid = false;
        if (!r->SkipValue()) return false;
      }
    }
    if (!valid || index != 2) {
      out->lines.resize(range.first);
      continue;
    }
    range.count = static_cast<uint32_t>(out->lines.size() - range.first);
    uint32_t id = static_cast<uint32_t>(out->stacks.size());
    out->stacks.push_back(range);
    for (uint32_t n : names) out->stack_of.Set(n, id);
  }
  return true;
}

// Room from the file size, so that the arrays never grow by copying: a
// construct.json line takes 60-100 bytes, a stack.json one 100 or more.
void Reserve(size_t size, ConstructData* out) { out->edges.reserve(size / 48); }

void Reserve(size_t size, StackData* out) { out->lines.reserve(size / 96); }

// Maps `path` and parses its one top-level value with parse(JsonReader*, Data*).
template <typename Data, typename Parse>
Result<Data> ReadWhole(const std::string& path, const char* what, Parse parse) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  GA_RETURN_IF_ERROR(CheckNotEmpty(*file, what));
  Data out;
  out.path = path;
  Reserve(file->text().size(), &out);
  JsonReader r(file->text(), path);
  if (!parse(&r, &out)) return r.error();
  GA_RETURN_IF_ERROR(r.ExpectEnd());
  return out;
}

}  // namespace

Result<ConstructData> ReadConstructJson(const std::string& path, StringPool* pool, const DumpData* dump) {
  return ReadWhole<ConstructData>(
      path, "construct.json maps each node to its parent",
      [&](JsonReader* r, ConstructData* out) { return ParseConstruct(r, pool, dump, out); });
}

Result<StackData> ReadStackJson(const std::string& path, StringPool* pool) {
  return ReadWhole<StackData>(path, "stack.json maps nodes to call stacks",
                              [&](JsonReader* r, StackData* out) { return ParseStack(r, pool, out); });
}

}  // namespace graph_ascend::dump
