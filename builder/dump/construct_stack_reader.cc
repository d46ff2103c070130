// Reading construct.json (§3.3) and stack.json (§3.4).
#include "base/mapped_file.h"
#include "dump/dump_data.h"
#include "json/json_reader.h"

namespace graph_ascend::dump {

using json::JsonReader;
using json::JsonType;

namespace {

Status CheckNotEmpty(const MappedFile& file, const char* what) {
  if (file.text().find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Error{file.path(), "", std::string("empty file: expected a JSON object (") + what + ")"};
  }
  return Status::Ok();
}

}  // namespace

Result<ConstructData> ReadConstructJson(const std::string& path, StringPool* pool) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  GA_RETURN_IF_ERROR(CheckNotEmpty(*file, "construct.json maps each node to its parent"));
  ConstructData out;
  out.path = path;
  JsonReader r(file->text(), path);
  auto top = r.Peek();
  if (!top.ok()) return top.error();
  if (*top != JsonType::kObject) return r.ErrorHere("construct.json must be a JSON object of child -> parent");
  GA_RETURN_IF_ERROR(r.EnterObject());
  std::string_view key;
  std::string child;
  for (;;) {
    auto more = r.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) break;
    child.assign(key);
    if (child == "megatron_micro_step_number") {
      GA_RETURN_IF_ERROR(r.Skip());
      continue;
    }
    ConstructData::Edge edge{pool->Intern(child), 0, -1};
    auto t = r.Peek();
    if (!t.ok()) return t.error();
    if (*t == JsonType::kNull) {
      GA_RETURN_IF_ERROR(r.ReadNull());
    } else if (*t == JsonType::kString) {
      auto s = r.ReadString();
      if (!s.ok()) return s.error();
      edge.parent = pool->Intern(*s);
    } else if (*t == JsonType::kArray) {
      // The Megatron variant: [parent, micro_step].
      GA_RETURN_IF_ERROR(r.EnterArray());
      for (int i = 0;; ++i) {
        auto el = r.NextElement();
        if (!el.ok()) return el.error();
        if (!*el) break;
        auto et = r.Peek();
        if (!et.ok()) return et.error();
        if (i == 0 && *et == JsonType::kString) {
          auto s = r.ReadString();
          if (!s.ok()) return s.error();
          edge.parent = pool->Intern(*s);
        } else if (i == 1 && *et == JsonType::kNumber) {
          auto n = r.ReadNumber();
          if (!n.ok()) return n.error();
          edge.micro_step = static_cast<int32_t>(n->number);
        } else if (i == 0 && *et == JsonType::kNull) {
          GA_RETURN_IF_ERROR(r.ReadNull());
        } else {
          return r.ErrorHere("key " + child + ": expected [parent, micro_step]");
        }
      }
    } else {
      return r.ErrorHere("key " + child + ": the parent must be a string or null");
    }
    auto [it, inserted] = out.edge_of.emplace(edge.child, static_cast<uint32_t>(out.edges.size()));
    if (inserted) {
      out.edges.push_back(edge);
    } else {
      out.edges[it->second] = edge;  // last value wins, first position kept (Python dict)
    }
  }
  GA_RETURN_IF_ERROR(r.ExpectEnd());
  return out;
}

namespace {

// Reads a list of strings into `lines`.
Status ReadLines(JsonReader* r, StringPool* pool, std::vector<uint32_t>* lines, const std::string& key) {
  GA_RETURN_IF_ERROR(r->EnterArray());
  for (;;) {
    auto el = r->NextElement();
    if (!el.ok()) return el.error();
    if (!*el) break;
    auto t = r->Peek();
    if (!t.ok()) return t.error();
    if (*t != JsonType::kString) {
      GA_RETURN_IF_ERROR(r->Skip());  // msprobe keeps whatever is there; a non-string line is dropped
      continue;
    }
    auto s = r->ReadString();
    if (!s.ok()) return s.error();
    lines->push_back(pool->Intern(*s));
  }
  return Status::Ok();
}

}  // namespace

Result<StackData> ReadStackJson(const std::string& path, StringPool* pool) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  GA_RETURN_IF_ERROR(CheckNotEmpty(*file, "stack.json maps nodes to call stacks"));
  StackData out;
  out.path = path;
  JsonReader r(file->text(), path);
  auto top = r.Peek();
  if (!top.ok()) return top.error();
  if (*top != JsonType::kObject) return r.ErrorHere("stack.json must be a JSON object");
  GA_RETURN_IF_ERROR(r.EnterObject());
  std::string_view key;
  std::string name;
  std::vector<uint32_t> names;
  bool first = true, grouped = false;
  for (;;) {
    auto more = r.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) break;
    name.assign(key);
    if (first) grouped = out.grouped = name == "0";  // the grouped format starts with group "0"
    first = false;
    auto t = r.Peek();
    if (!t.ok()) return t.error();
    if (*t != JsonType::kArray) {
      GA_RETURN_IF_ERROR(r.Skip());  // not a list: no stack (§5.6 leaves non-lists alone)
      continue;
    }
    StackData::Range range{static_cast<uint32_t>(out.lines.size()), 0};
    if (!grouped) {
      GA_RETURN_IF_ERROR(ReadLines(&r, pool, &out.lines, name));
      range.count = static_cast<uint32_t>(out.lines.size() - range.first);
      out.stack_of[pool->Intern(name)] = static_cast<uint32_t>(out.stacks.size());
      out.stacks.push_back(range);
      continue;
    }
    // {"0": [[names], [lines]]}; other shapes are skipped.
    names.clear();
    GA_RETURN_IF_ERROR(r.EnterArray());
    int index = 0;
    bool valid = true;
    for (;; ++index) {
      auto el = r.NextElement();
      if (!el.ok()) return el.error();
      if (!*el) break;
      auto et = r.Peek();
      if (!et.ok()) return et.error();
      if (index == 0 && *et == JsonType::kArray) {
        GA_RETURN_IF_ERROR(r.EnterArray());
        for (;;) {
          auto ne = r.NextElement();
          if (!ne.ok()) return ne.error();
          if (!*ne) break;
          auto nt = r.Peek();
          if (!nt.ok()) return nt.error();
          if (*nt != JsonType::kString) {
            GA_RETURN_IF_ERROR(r.Skip());
            continue;
          }
          auto s = r.ReadString();
          if (!s.ok()) return s.error();
          names.push_back(pool->Intern(*s));
        }
      } else if (index == 1 && *et == JsonType::kArray && valid) {
        GA_RETURN_IF_ERROR(ReadLines(&r, pool, &out.lines, name));
      } else {
        valid = false;
        GA_RETURN_IF_ERROR(r.Skip());
      }
    }
    if (!valid || index != 2) {
      out.lines.resize(range.first);
      continue;
    }
    range.count = static_cast<uint32_t>(out.lines.size() - range.first);
    uint32_t id = static_cast<uint32_t>(out.stacks.size());
    out.stacks.push_back(range);
    for (uint32_t n : names) out.stack_of[n] = id;
  }
  GA_RETURN_IF_ERROR(r.ExpectEnd());
  return out;
}

}  // namespace graph_ascend::dump
