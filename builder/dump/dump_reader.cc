// Reading dump.json (reference §3.2) and flattening its entries into items
// (§4), with the overflow scenes of §7 computed in the same pass: the top
// level and each entry here, its values in dump_values.cc (the parser is
// dump/dump_parser.h).
#include <algorithm>
#include <bit>
#include <cstring>
#include <string_view>

#include "base/huge_pages.h"
#include "base/mapped_file.h"
#include "dump/dump_data.h"
#include "dump/dump_parser.h"
#include "json/json_reader.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace graph_ascend::dump {
namespace parse {

Status DumpParser::Parse() {
  if (!ParseTop()) return r_->error();
  GA_RETURN_IF_ERROR(r_->ExpectEnd());
  if (!saw_data_) return Error{out_->path, "", "no \"data\" key: this is not a msprobe dump.json"};
  if (out_->framework == "pytorch" || out_->framework == "mindspore") out_->detected_framework = out_->framework;
  return Status::Ok();
}

bool DumpParser::ParseTop() {
  JsonType t;
  if (!r_->PeekType(&t)) {
    if (r_->offset() == 0 || r_->error().message.find("end of input") != std::string::npos) {
      return Fail("empty or truncated dump.json: expected a JSON object");
    }
    return false;
  }
  if (t != JsonType::kObject) return Fail("dump.json must be a JSON object");
  if (!r_->BeginObject()) return false;
  std::string_view key;
  for (;;) {
    Step more = r_->NextKey(&key);
    if (more == Step::kFailed) return false;
    if (more == Step::kEnd) break;
    auto read_text = [&](std::string* dst, bool* present, const char* name) -> bool {
      JsonType type;
      if (!r_->PeekType(&type)) return false;
      if (type == JsonType::kNull) {
        if (present) *present = false;
        return r_->GetNull();
      }
      if (type != JsonType::kString) return Fail(std::string("key ") + name + ": expected a string or null");
      std::string_view s;
      if (!r_->GetString(&s)) return false;
      dst->assign(s);
      if (present) *present = true;
      return true;
    };
    bool ok;
    if (key == "task") {
      ok = read_text(&out_->task, nullptr, "task");
    } else if (key == "level") {
      ok = read_text(&out_->level, nullptr, "level");
    } else if (key == "framework") {
      ok = read_text(&out_->framework, nullptr, "framework");
    } else if (key == "dump_data_dir") {
      ok = read_text(&out_->dump_data_dir, &out_->has_dump_data_dir, "dump_data_dir");
    } else if (key == "data") {
      if (!r_->PeekType(&t)) return false;
      if (t != JsonType::kObject) return Fail("key data: expected an object of dump entries");
      saw_data_ = true;
      ok = ParseData();
    } else {
      ok = r_->SkipValue();
    }
    if (!ok) return false;
  }
  return true;
}

bool DumpParser::ParseData() {
  if (!r_->BeginObject()) return false;
  std::string_view key;
  std::string name;
  for (;;) {
    Step more = r_->NextKey(&key);
    if (more == Step::kFailed) return false;
    if (more == Step::kEnd) break;
    name.assign(key);
    if (r_->PeekByte() != '{') {
      JsonType t;
      if (!r_->PeekType(&t)) return false;
      return Fail("key data." + name + ": expected an object (a dump entry)");
    }
    if (!ParseEntry(name)) return false;
    if (r_->offset() >= take_at_) {
      size_t resume;
      bool taken = take_(r_->offset() == take_at_, &resume);
      take_at_ = SIZE_MAX;
      if (taken) {
        r_->Rewind(resume, r_->depth() - 1);  // after data's closing brace
        return true;
      }
    }
    if (file_ != nullptr && (out_->entries.size() & 1023) == 0) file_->Release(r_->offset());
    if (options_.progress && (out_->entries.size() & 255) == 0) options_.progress(r_->offset());
  }
  return true;
}

bool DumpParser::ParsePart(size_t stop, bool* closed, const std::atomic<bool>* cancel) {
  std::string_view key;
  std::string name;
  size_t released = r_->offset();
  *closed = false;
  for (;;) {
    Step more = r_->NextKey(&key);
    if (more == Step::kFailed) return false;
    if (more == Step::kEnd) {
      *closed = true;
      return true;
    }
    name.assign(key);
    if (r_->PeekByte() != '{' || !ParseEntry(name)) return false;  // the first part's parser reports it
    if (r_->offset() >= stop) return r_->offset() == stop;
    if (cancel->load(std::memory_order_relaxed)) return false;
    if (file_ != nullptr && r_->offset() - released > (16u << 20)) {
      file_->ReleaseRange(released, r_->offset());
      released = r_->offset();
    }
  }
}

bool DumpParser::SameKey(const PendingItem& a, const PendingItem& b) const {
  std::string_view ka = KeyOf(a), kb = KeyOf(b);
  if (a.whole == b.whole) return ka == kb;
  std::string_view whole = a.whole ? ka : kb, part = a.whole ? kb : ka;
  return whole.size() == entry_name_.size() + part.size() && whole.substr(0, entry_name_.size()) == entry_name_ &&
         whole.substr(entry_name_.size()) == part;
}

// Whether `s` holds `needle` (N bytes, the first a '.'): item keys are
// short, a plain scan with fixed-size compares beats a general search.
template <size_t N>
bool Holds(std::string_view s, const char* needle) {
  for (size_t i = 0; i + N <= s.size(); ++i) {
    if (s[i] == '.' && memcmp(s.data() + i, needle, N) == 0) return true;
  }
  return false;
}

template <size_t N>
bool DumpParser::KeyHolds(const PendingItem& p, const char (&needle)[N], bool in_name, bool at_joint) const {
  constexpr size_t kSize = N - 1;
  if (!p.whole && in_name) return true;
  std::string_view key = KeyOf(p);
  if (Holds<kSize>(key, needle)) return true;
  if (p.whole) return false;
  // Across the joint of the entry's name and the rest. The needle's only
  // inner '.' is its last byte, so a rest that starts with '.' (as
  // traversal names do) completes it only after a name ending in the rest.
  if (!key.empty() && key[0] == '.') return at_joint;
  char window[2 * kSize];
  size_t from_name = std::min(entry_name_.size(), kSize - 1);
  size_t from_key = std::min(key.size(), kSize - 1);
  memcpy(window, entry_name_.data() + entry_name_.size() - from_name, from_name);
  memcpy(window + from_name, key.data(), from_key);
  return Holds<kSize>(std::string_view(window, from_name + from_key), needle);
}

void DumpParser::ScanName(std::string_view name) {
  const char* p = name.data();
  size_t n = name.size();
  bool input = false, output = false, parameters_grad = false;
  auto at_dot = [&](size_t i) {
    size_t rest = n - i;
    switch (rest > 1 ? p[i + 1] : 0) {
      case 'i': input |= rest >= 7 && memcmp(p + i, ".input.", 7) == 0; break;
      case 'o': output |= rest >= 8 && memcmp(p + i, ".output.", 8) == 0; break;
      case 'p': parameters_grad |= rest >= 16 && memcmp(p + i, ".parameters_grad", 16) == 0; break;
    }
  };
  size_t i = 0;
#if defined(__SSE2__)
  for (; i + 16 <= n; i += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    for (uint32_t dots = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('.')))); dots != 0;
         dots &= dots - 1) {
      at_dot(i + static_cast<size_t>(std::countr_zero(dots)));
    }
  }
#endif
  for (; i < n; ++i) {
    if (p[i] == '.') at_dot(i);
  }
  name_input_ = input;
  name_output_ = output;
  joint_input_ = name.ends_with(".input");
  name_parameters_grad_ = parameters_grad;
  joint_output_ = name.ends_with(".output");
}

bool DumpParser::ParseEntry(std::string_view name) {
  npending_ = 0;
  keys_.clear();
  entry_name_ = name;
  ScanName(name);
  in_elems_.clear();
  kw_elems_.clear();
  kw_names_.clear();
  out_elems_.clear();
  input_elems_.clear();
  has_input_args_ = false;
  has_md5_ = false;
  size_t p2p_start = out_->p2p.size();
  uint32_t name_id = pool_->Intern(name);

  bool pgrad = name_parameters_grad_ && !ParametersGradModule(name).empty();
  bool batch_p2p = name.find("batch_isend_irecv") != std::string_view::npos;

  if (!r_->BeginObject()) return false;
  std::string_view key;
  // Every traversal name of the entry starts with its name.
  std::string& traversal = traversal_;
  traversal.assign(name);
  // Items of each category, in the fixed order of §4.1 step 2.
  struct Category {
    std::string_view key;
    std::string_view suffix;
    ItemState state;
  };
  static const Category kCategories[] = {
      {"input_args", ".input", ItemState::kInput},
      {"input_kwargs", ".input", ItemState::kInput},
      {"input", ".input", ItemState::kInput},
      {"output", ".output", ItemState::kOutput},
      {"parameters", ".parameters", ItemState::kParameters},
  };
  // Each category is parsed where it appears in the file but its items are
  // ordered by category afterwards.
  std::vector<std::pair<int, size_t>>& spans = spans_;
  spans.clear();
  for (;;) {
    Step more = r_->NextKey(&key);
    if (more == Step::kFailed) return false;
    if (more == Step::kEnd) break;
    if (pgrad) {
      traversal.resize(name.size());
      traversal += '.';
      traversal += key;
      spans.emplace_back(0, npending_);
      Anomaly a;
      if (!ParseValue(&traversal, ItemState::kParametersGrad, true, 1, 0, &a)) return false;
      continue;
    }
    int cat = -1;
    for (int c = 0; c < 5; ++c) {
      if (key == kCategories[c].key) cat = c;
    }
    if (cat < 0) {
      if (!r_->SkipValue()) return false;
      continue;
    }
    spans.emplace_back(cat, npending_);
    traversal.resize(name.size());
    traversal += kCategories[cat].suffix;
    JsonType t;
    if (!r_->PeekType(&t)) return false;
    // A category holds a list or an object of arguments (or null); a bare
    // string, number or boolean there is damage, not "no inputs".
    if (t != JsonType::kArray && t != JsonType::kObject && t != JsonType::kNull) {
      return Fail(std::string("key data.") + std::string(pool_->Get(name_id)) + "." +
                  std::string(kCategories[cat].key) + ": expected a list or an object of arguments, found a " +
                  (t == JsonType::kString   ? "string"
                   : t == JsonType::kNumber ? "number"
                                            : "boolean"));
    }
    // Top-level elements of input_args / input / output and values of
    // input_kwargs are what the overflow check looks at.
    if ((cat == 0 || cat == 2 || cat == 3) && t == JsonType::kArray) {
      if (cat == 0) has_input_args_ = true;
      std::vector<Anomaly>& elems = cat == 0 ? in_elems_ : cat == 2 ? input_elems_ : out_elems_;
      if (!r_->BeginArray()) return false;
      size_t base = traversal.size();
      for (int i = 0;; ++i) {
        Step el = r_->NextItem();
        if (el == Step::kFailed) return false;
        if (el == Step::kEnd) break;
        traversal.resize(base);
        AppendIndex(i, &traversal);
        Anomaly a;
        int p2p = (batch_p2p && cat == 3 && i == 0) ? 1 : 0;
        // Mostly a leaf: straight to ParseObject (ParseValue's nesting
        // check cannot fail at this depth).
        bool ok = r_->PeekByte() == '{' ? ParseObject(&traversal, kCategories[cat].state, false, 2, p2p, false, &a)
                                        : ParseValue(&traversal, kCategories[cat].state, false, 2, p2p, &a);
        if (!ok) return false;
        elems.push_back(a);
      }
    } else if (cat == 1 && t == JsonType::kObject) {
      // A kwargs object that is itself a leaf (has a string "type") is one item.
      Anomaly a;
      if (!ParseObject(&traversal, ItemState::kInput, false, 1, 0, true, &a)) return false;
    } else {
      Anomaly a;
      if (!ParseValue(&traversal, kCategories[cat].state, false, 1, 0, &a)) return false;
      if (cat == 3) out_elems_.push_back(a);
    }
  }
  if (has_md5_) out_->summary_md5 = true;

  // Order the pending items by category (stable), then split into
  // input_data / output_data by key (§4.3), last duplicate wins in place.
  std::vector<size_t>& order = order_;
  order.clear();
  // The categories are usually in their order in the file already (and
  // then `order` stays empty: the pending items in turn).
  bool in_order = true;
  for (size_t s = 1; s < spans.size(); ++s) in_order &= spans[s - 1].first <= spans[s].first;
  if (!in_order) {
    for (int c = 0; c < 5; ++c) {
      for (size_t s = 0; s < spans.size(); ++s) {
        if (spans[s].first != c) continue;
        size_t end = s + 1 < spans.size() ? spans[s + 1].second : npending_;
        for (size_t i = spans[s].second; i < end; ++i) order.push_back(i);
      }
    }
  }
  std::vector<size_t>& inputs = inputs_;
  std::vector<size_t>& outputs = outputs_;
  inputs.clear();
  outputs.clear();
  auto place = [&](std::vector<size_t>* list, size_t idx) {
    for (size_t& existing : *list) {
      if (SameKey(pending_[existing], pending_[idx])) {
        existing = idx;
        return;
      }
    }
    list->push_back(idx);
  };
  for (size_t k = 0, count = in_order ? npending_ : order.size(); k < count; ++k) {
    size_t idx = in_order ? k : order[k];
    const PendingItem& p = pending_[idx];
    bool is_output =
        !KeyHolds(p, ".input.", name_input_, joint_input_) && KeyHolds(p, ".output.", name_output_, joint_output_);
    place(is_output ? &outputs : &inputs, idx);
  }

  DumpEntry entry;
  entry.name = name_id;
  entry.first_item = static_cast<uint32_t>(out_->items.size());
  entry.input_count = static_cast<uint32_t>(inputs.size());
  entry.output_count = static_cast<uint32_t>(outputs.size());
  entry.first_p2p = static_cast<uint32_t>(p2p_start);
  entry.p2p_count = static_cast<uint32_t>(out_->p2p.size() - p2p_start);
  entry.has_md5 = has_md5_;
  for (const auto* list : {&inputs, &outputs}) {
    for (size_t idx : *list) {
      const PendingItem& p = pending_[idx];
      DumpItem item;
      item.first_field = p.first_field;
      item.field_count = p.field_count;
      item.state = p.state;
      item.flags = p.flags;
      std::string_view k = KeyOf(p);
      if (!p.whole) {
        item.key = pool_->InternShort(k);  // the key after the entry's name, which starts with '.'
      } else if (k.size() > name.size() && k.substr(0, name.size()) == name && k[name.size()] == '.') {
        item.key = pool_->InternShort(k.substr(name.size()));
      } else {
        item.key = pool_->Intern(k);
        item.flags |= kItemFullKey;
      }
      out_->items.push_back(item);
    }
  }

  if (options_.overflow_check) {
    // §7: inputs are input_args, or "input" when there are no input_args.
    entry.overflow =
        OverflowLevelOf(name, has_input_args_ ? in_elems_ : input_elems_, kw_elems_, kw_names_, out_elems_);
  }

  uint32_t index = static_cast<uint32_t>(out_->entries.size());
  uint32_t at = out_->entry_of.Insert(name_id, index);
  if (at == index) {
    out_->entries.push_back(entry);
  } else {
    out_->entries[at] = entry;  // a repeated key: the last one wins (§14.1)
  }
  return true;
}

}  // namespace parse

std::string_view ParametersGradModule(std::string_view name, long* call) {
  static constexpr std::string_view kSuffix = ".parameters_grad";
  if (call) *call = -1;
  if (name.size() > kSuffix.size() && name.substr(name.size() - kSuffix.size()) == kSuffix) {
    return name.substr(0, name.size() - kSuffix.size());
  }
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == name.size() || name.size() - dot > 10) return {};
  for (size_t i = dot + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return {};
  }
  std::string_view head = name.substr(0, dot);
  if (head.size() <= kSuffix.size() || head.substr(head.size() - kSuffix.size()) != kSuffix) return {};
  if (call) *call = std::stol(std::string(name.substr(dot + 1)));
  return head.substr(0, head.size() - kSuffix.size());
}

Result<DumpData> ReadDumpJson(const std::string& path, StringPool* pool, const DumpOptions& options) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  DumpData data;
  data.path = path;
  if (file->text().find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Error{path, "", "empty file: expected a msprobe dump.json object"};
  }
  // Room for the arrays from the file size, so that they never grow by
  // copying (the pages of a reservation are only touched as they fill).
  // msprobe writes indent=1: a field takes 30-40 bytes, an item 200-300, an
  // entry 500-1000; a smaller file with denser values grows the usual way.
  // The fields and items fill on huge pages where the kernel allows.
  size_t size = file->text().size();
  data.fields.reserve(size / 32);
  data.items.reserve(size / 192);
  data.entries.reserve(size / 512);
  AdviseHugePages(data.fields.data(), data.fields.capacity() * sizeof(Field));
  AdviseHugePages(data.items.data(), data.items.capacity() * sizeof(DumpItem));
  GA_RETURN_IF_ERROR(parse::ParseInParts(&*file, pool, options, &data));
  if (options.progress) options.progress(file->text().size());
  return data;
}

}  // namespace graph_ascend::dump
