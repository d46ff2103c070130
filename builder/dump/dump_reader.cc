// Reading dump.json (reference §3.2) and flattening its entries into items
// (§4), with the overflow scenes of §7 computed in the same pass.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string_view>
#include <type_traits>
#include <unordered_set>

#include "base/huge_pages.h"
#include "base/mapped_file.h"
#include "dump/dump_data.h"
#include "json/json_reader.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace graph_ascend::dump {
namespace {

using json::JsonNumber;
using json::JsonReader;
using json::JsonType;
using Step = JsonReader::Step;

constexpr int kMaxNesting = 400;  // msprobe's recursion limit (§4.1)

// What the overflow check needs to know about one value (§7 step 2).
struct Anomaly {
  bool any = false;  // recursive test (lists descend)
  bool own = false;  // non-recursive test: a dict whose own Max/Min/Mean is inf/nan
  bool torch_tensor = false;
  bool has_norm = false;  // a non-null, non-NaN Norm
  double norm = 0;
};

bool AnomalousText(std::string_view s) {
  if (s.size() < 3 || s.size() > 4) return false;
  char lower[4];
  for (size_t i = 0; i < s.size(); ++i) lower[i] = static_cast<char>(tolower(static_cast<unsigned char>(s[i])));
  std::string_view l(lower, s.size());
  return l == "inf" || l == "-inf" || l == "nan";
}

// Appends ".<i>" (a list index in a traversal name).
inline void AppendIndex(int i, std::string* name) {
  if (i < 10) {
    const char digit[2] = {'.', static_cast<char>('0' + i)};
    name->append(digit, 2);
    return;
  }
  char buf[16];
  buf[0] = '.';
  auto r = std::to_chars(buf + 1, buf + sizeof(buf), i);
  name->append(buf, r.ptr);
}

// The rules of msprobe's overflow false-positive filter (§7 step 4).
struct IgnoreRule {
  const char* key;
  std::vector<int> inputs;
  std::vector<const char*> kwargs;
  std::vector<int> outputs;
  bool has_inputs, has_kwargs, has_outputs;
};

const std::vector<IgnoreRule>& IgnoreRules() {
  static const std::vector<IgnoreRule> rules = {
      {"torch.empty", {}, {}, {0}, false, false, true},
      {"torch.empty_like", {}, {}, {0}, false, false, true},
      {"torch.empty_strided", {}, {}, {0}, false, false, true},
      {"distributed.recv", {0}, {"tensor"}, {}, true, true, false},
      {"distributed.all_gather", {0}, {}, {}, true, false, false},
      {"distributed._reduce_scatter_base", {0}, {}, {}, true, false, false},
      {"distributed.all_gather_into_tensor", {0}, {}, {}, true, false, false},
      {"distributed.reduce_scatter_tensor", {0}, {}, {}, true, false, false},
      {"distributed.reduce_scatter", {0}, {"output"}, {}, true, true, false},
      {"tensor.masked_fill_", {0}, {}, {}, true, false, false},
  };
  return rules;
}

// The first and last word of a string of at most 16 bytes, which with its
// size identify it (the words overlap when it is shorter; StringPool's
// short-string cache does the same).
void Words(std::string_view s, uint64_t* head, uint64_t* tail) {
  const char* p = s.data();
  size_t n = s.size();
  *head = *tail = 0;
  if (n >= 8) {
    memcpy(head, p, 8);
    memcpy(tail, p + n - 8, 8);
  } else if (n >= 4) {
    memcpy(head, p, 4);
    memcpy(tail, p + n - 4, 4);
  } else if (n > 0) {
    *head = static_cast<unsigned char>(p[0]) | static_cast<uint64_t>(static_cast<unsigned char>(p[n >> 1])) << 8 |
            static_cast<uint64_t>(static_cast<unsigned char>(p[n - 1])) << 16;
  }
}

// A hash of a leaf's bytes (at least DumpParser::kLeafMin) from a few of
// its words, the statistics near its end among them: the compare of the
// whole decides.
uint64_t LeafHash(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = n * 0x9E3779B97F4A7C15ull;
  for (size_t at : {n - 8, n - 24, n - 40, n / 2, n / 4, size_t{8}}) {
    uint64_t w;
    memcpy(&w, p + at, 8);
    h = (h ^ w) * 0xC2B2AE3D27D4EB4Full;
  }
  return h ^ h >> 32;
}

// What a field name means to the parse, found once per field name and
// position (DumpParser::KeyId).
enum class FieldRole : uint8_t { kOther, kType, kStat, kNorm, kMd5, kDataName, kOp, kPeer, kGroupId };

FieldRole RoleOf(std::string_view key) {
  switch (key.size()) {
    case 2: return key == "op" ? FieldRole::kOp : FieldRole::kOther;
    case 3:
      if (key == "Max" || key == "Min") return FieldRole::kStat;
      return key == "md5" ? FieldRole::kMd5 : FieldRole::kOther;
    case 4:
      if (key == "type") return FieldRole::kType;
      if (key == "Mean") return FieldRole::kStat;
      if (key == "Norm") return FieldRole::kNorm;
      return key == "peer" ? FieldRole::kPeer : FieldRole::kOther;
    case 8: return key == "group_id" ? FieldRole::kGroupId : FieldRole::kOther;
    case 9: return key == "data_name" ? FieldRole::kDataName : FieldRole::kOther;
    default: return FieldRole::kOther;
  }
}

// The per-entry state of the parse: items per category before they are
// split into input_data / output_data. An item's key is its traversal name,
// which starts with the entry's name, or is derived from its data_name;
// only the part after the entry's name is kept of the former.
struct PendingItem {
  uint32_t key_start;  // into DumpParser::keys_
  uint32_t key_size;
  bool whole;  // the key is all there (from data_name), not the part after the entry's name
  ItemState state;
  uint8_t flags;
  uint32_t first_field;
  uint16_t field_count;
};

class DumpParser {
 public:
  DumpParser(JsonReader* r, StringPool* pool, DumpData* out, const DumpOptions& options, MappedFile* file)
      : r_(r), pool_(pool), out_(out), options_(options), file_(file) {
    // Interned first, so that the ids of a pool stay what they always were.
    pool_->Intern("type");
    pool_->Intern("data_name");
    pool_->Intern("md5");
  }

  Status Parse();

 private:
  // The parse functions return false after recording the error in the
  // reader (JsonReader's fast interface).
  bool ParseTop();
  bool ParseData();
  bool ParseEntry(std::string_view name);
  // Parses one value at traversal name `name` (§4.1), appending items to
  // pending_. `p2p` collects batch_isend_irecv operations at that level.
  bool ParseValue(std::string* name, ItemState state, bool pgrad, int depth, int p2p, Anomaly* anomaly);
  bool ParseObject(std::string* name, ItemState state, bool pgrad, int depth, int p2p, bool kwargs_top,
                   Anomaly* anomaly);
  bool ReadFieldValue(Value* v, Anomaly* own, bool is_stat, size_t index);
  // What the first pass of ParseObject learns from the fields it reads.
  struct ObjectFacts {
    bool leaf = false;  // has a string "type"
    bool has_md5 = false;
    uint32_t type_string = 0;
    uint32_t data_name = 0;  // StringPool id of a string data_name
    Value norm;
    Anomaly own;
    // What AddLeaf needs, worked out once per leaf read (ConcludeLeaf), not
    // per use of a cached one.
    bool torch_tensor = false;
    bool has_norm = false;
    double norm_value = 0;
    std::string_view framework;  // "mindspore", "pytorch" or empty, by type
    bool named = false;          // the item's key is from data_name
    std::string_view item_key;   // that key
  };
  void ConcludeLeaf(ObjectFacts* facts) const;
  // How the first pass of ParseObject reads a member whose value is an
  // object or a list while no string "type" has been read: such an object
  // is a container (kwargs) whose values are read again member by member,
  // so the value is skipped, not compacted and interned.
  enum class Defer : uint8_t {
    kNone,     // read it: the object is a leaf after all
    kChecked,  // skip it, checking it
    kScanned,  // skip it by ContainerEndAhead; the container pass checks it
  };
  // The first pass of ParseObject: the members of the object just begun as
  // fields. *deferred tells whether a value was skipped, *scanned whether
  // one was skipped unchecked.
  bool ReadFields(int p2p, Defer defer, ObjectFacts* facts, bool* deferred, bool* scanned);
  // A value NextScalar read.
  void SetFieldValue(const JsonReader::Scalar& scalar, Value* v, Anomaly* own, bool is_stat, size_t index);
  // Appends a field of the object being read.
  void AddField(const Field& f, FieldRole role, int p2p, ObjectFacts* facts);
  // The item of the leaf `facts` tells of, whose fields start at
  // fields_start (§4.1).
  void AddLeaf(const ObjectFacts& facts, size_t fields_start, std::string_view traversal, ItemState state, int depth,
               Anomaly* anomaly);
  // Leaves by their bytes: msprobe dumps a tensor as the output of one call
  // and as the input of the next, so more than half of a statistics dump's
  // leaves are, byte for byte, one read shortly before (and read the same).
  struct CachedLeaf {
    uint32_t size = 0;  // 0: an empty slot
    uint32_t first_field = 0;
    uint32_t field_count = 0;
    ObjectFacts facts;
    char text[512];
  };
  static constexpr size_t kLeafMin = 48;
  // A module's inputs and outputs were read as its first and last calls'
  // some hundreds of leaves before: 256 slots missed most of them.
  static constexpr size_t kLeafSlots = 4096;
  struct FreeLeaves {
    void operator()(CachedLeaf* p) const { free(p); }
  };
  // The kernel's zero pages (a zeroed slot is empty), touched only as the
  // slots fill: a small dump pays nothing for the 2.4 MB.
  static std::unique_ptr<CachedLeaf[], FreeLeaves> NewLeaves() {
    static_assert(std::is_trivially_copyable_v<CachedLeaf>);
    void* p = calloc(kLeafSlots, sizeof(CachedLeaf));
    if (p == nullptr) throw std::bad_alloc();
    return std::unique_ptr<CachedLeaf[], FreeLeaves>(static_cast<CachedLeaf*>(p));
  }
  std::unique_ptr<CachedLeaf[], FreeLeaves> leaves_ = NewLeaves();
  // A key of up to 16 bytes is (size, first word, last word), compared
  // without a call.
  struct Memo {
    uint64_t head = 0;
    uint64_t tail = 0;
    uint32_t size = ~0u;
    uint32_t id = 0;
    FieldRole role = FieldRole::kOther;  // RoleOf the string (used for field names)
  };
  static constexpr size_t kMemos = 16;
  // The id of `s`, a field name or string value at position `index` of its
  // object. The leaves of a dump repeat one key order ("type", "dtype",
  // "shape", "Max", ...) and few values ("torch.Tensor", "torch.float32"),
  // so the string last seen at the same position is usually it.
  Memo* Memoized(Memo* memos, std::string_view s, size_t index) {
    if (index >= kMemos || s.size() > 16) return nullptr;
    Memo& memo = memos[index];
    uint64_t head, tail;
    Words(s, &head, &tail);
    if (memo.size == s.size() && memo.head == head && memo.tail == tail) return &memo;
    memo = Memo{head, tail, static_cast<uint32_t>(s.size()), pool_->InternShort(s), RoleOf(s)};
    return &memo;
  }
  uint32_t ValueId(std::string_view s, size_t index) {
    Memo* memo = Memoized(value_memo_, s, index);
    return memo ? memo->id : pool_->InternShort(s);
  }
  // A field name's id and role.
  uint32_t KeyId(std::string_view key, size_t index, FieldRole* role) {
    Memo* memo = Memoized(key_memo_, key, index);
    if (memo == nullptr) {
      *role = RoleOf(key);
      return pool_->InternShort(key);
    }
    *role = memo->role;
    return memo->id;
  }
  // An error of the dump's shape at the reader's position.
  bool Fail(std::string message) { return r_->Fail(r_->offset(), std::move(message)); }

  JsonReader* r_;
  StringPool* pool_;
  DumpData* out_;
  DumpOptions options_;
  MappedFile* file_;
  Memo key_memo_[kMemos];    // field names by position
  Memo value_memo_[kMemos];  // string values by position
  // The member of key_memo_[i] as last read at position i, and the values
  // NextKnownRun reads.
  JsonReader::MemberHead heads_[kMemos];
  JsonReader::Scalar scalars_[kMemos];
  // The id of the last list of integers a Scalar gave, and its list_serial.
  uint32_t last_list_ = 0;
  uint64_t last_list_serial_ = 0;

  // Per entry, reused.
  // Reused across entries (the strings keep their capacity): no heap
  // traffic per item. Only the first npending_ are live.
  std::vector<PendingItem> pending_;
  size_t npending_ = 0;
  std::string keys_;             // the pending items' keys
  std::string_view entry_name_;  // of the entry being read
  // Whether the entry's name holds ".output." / ".input." (item keys start
  // with it), and whether it ends with ".output" / ".input" (which a key
  // after it, starting with '.', completes).
  bool name_output_ = false;
  bool name_input_ = false;
  bool joint_output_ = false;
  bool joint_input_ = false;
  // Whether the name holds ".parameters_grad" (which ParametersGradModule
  // looks for).
  bool name_parameters_grad_ = false;
  // A new pending item whose key is the traversal name `key`, or all of
  // `key` when `whole`.
  PendingItem& NewPending(std::string_view key, bool whole) {
    if (npending_ == pending_.size()) pending_.emplace_back();
    PendingItem& p = pending_[npending_++];
    if (!whole) key.remove_prefix(entry_name_.size());
    p.key_start = static_cast<uint32_t>(keys_.size());
    p.key_size = static_cast<uint32_t>(key.size());
    p.whole = whole;
    keys_.append(key);
    return p;
  }
  std::string_view KeyOf(const PendingItem& p) const {
    return std::string_view(keys_.data() + p.key_start, p.key_size);
  }
  bool SameKey(const PendingItem& a, const PendingItem& b) const;
  // Sets name_output_, name_input_, joint_output_, joint_input_ and
  // name_parameters_grad_ for the entry `name`, in one scan of its dots.
  void ScanName(std::string_view name);
  // Whether the item's whole key holds `needle` (".output." or ".input.",
  // `in_name` saying whether the entry's name does).
  template <size_t N>
  bool KeyHolds(const PendingItem& p, const char (&needle)[N], bool in_name, bool at_joint) const;
  std::vector<Anomaly> in_elems_, kw_elems_, out_elems_;
  std::vector<std::string> kw_names_;
  bool has_input_args_ = false;
  std::vector<Anomaly> input_elems_;  // the "input" key (backward entries)
  bool has_md5_ = false;
  std::string scratch_;
  // Per-entry working storage, reused (no heap traffic per entry).
  std::string traversal_;
  std::vector<std::pair<int, size_t>> spans_;  // (category, first pending index)
  std::vector<size_t> order_, inputs_, outputs_;
  bool saw_data_ = false;
  // The P2POp being read (§5.7).
  uint32_t p2p_op_ = 0;
  uint32_t p2p_group_ = 0;
  int64_t p2p_peer_ = -1;
  bool p2p_has_peer_ = false;
};

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
    if (file_ != nullptr && (out_->entries.size() & 1023) == 0) file_->Release(r_->offset());
    if (options_.progress && (out_->entries.size() & 255) == 0) options_.progress(r_->offset());
  }
  return true;
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
    const std::vector<Anomaly>& in = has_input_args_ ? in_elems_ : input_elems_;
    bool in_any = false, out_any = false;
    for (const Anomaly& a : in) in_any |= a.any;
    for (const Anomaly& a : kw_elems_) in_any |= a.any;
    for (const Anomaly& a : out_elems_) out_any |= a.any;
    OverflowLevel level = OverflowLevel::kNone;
    if (!in_any && out_any) {
      level = OverflowLevel::kCritical;
    } else if (in_any && out_any) {
      level = OverflowLevel::kHigh;
    } else if (in_any) {
      level = OverflowLevel::kMedium;
    } else {
      double max_in = -1, max_out = -1;
      for (const std::vector<Anomaly>* list : {&in, static_cast<const std::vector<Anomaly>*>(&kw_elems_)}) {
        for (const Anomaly& a : *list) {
          if (a.torch_tensor && a.has_norm) max_in = std::max(max_in, a.norm);
        }
      }
      for (const Anomaly& a : out_elems_) {
        if (a.torch_tensor && a.has_norm) max_out = std::max(max_out, a.norm);
      }
      if (max_in >= 0 && max_out >= 0 && (max_in == 0 ? max_out > 100 : max_out / max_in > 100)) {
        level = OverflowLevel::kHigh;
      }
    }
    if (level != OverflowLevel::kNone) {
      // The false-positive filter keys on the first two name segments.
      size_t d1 = name.find('.');
      size_t d2 = d1 == std::string_view::npos ? d1 : name.find('.', d1 + 1);
      std::string rule_key(name.substr(0, d2));
      for (char& c : rule_key) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
      for (const IgnoreRule& rule : IgnoreRules()) {
        if (rule_key != rule.key) continue;
        auto listed = [](const std::vector<int>& idx, int i) {
          return std::find(idx.begin(), idx.end(), i) != idx.end();
        };
        bool covered = true;
        if (rule.has_inputs) {
          for (size_t i = 0; i < in.size(); ++i) covered &= !in[i].own || listed(rule.inputs, static_cast<int>(i));
        }
        if (rule.has_kwargs) {
          for (size_t i = 0; i < kw_elems_.size(); ++i) {
            bool ok = !kw_elems_[i].own;
            for (const char* k : rule.kwargs) ok |= i < kw_names_.size() && kw_names_[i] == k;
            covered &= ok;
          }
        }
        if (rule.has_outputs) {
          for (size_t i = 0; i < out_elems_.size(); ++i) {
            covered &= !out_elems_[i].own || listed(rule.outputs, static_cast<int>(i));
          }
        }
        if (covered) level = OverflowLevel::kNone;
      }
    }
    entry.overflow = level;
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

bool DumpParser::ParseValue(std::string* name, ItemState state, bool pgrad, int depth, int p2p, Anomaly* anomaly) {
  if (depth > kMaxNesting) return Fail("values nested deeper than " + std::to_string(kMaxNesting) + " levels");
  JsonType t;
  if (!r_->PeekType(&t)) return false;
  switch (t) {
    case JsonType::kNull: {
      if (!r_->GetNull()) return false;
      PendingItem& p = NewPending(*name, false);
      p.state = state;
      p.flags = kItemNull;
      p.first_field = static_cast<uint32_t>(out_->fields.size());
      p.field_count = 0;
      return true;
    }
    case JsonType::kArray: {
      if (!r_->BeginArray()) return false;
      size_t base = name->size();
      for (int i = 0;; ++i) {
        Step el = r_->NextItem();
        if (el == Step::kFailed) return false;
        if (el == Step::kEnd) break;
        if (!pgrad) {
          name->resize(base);
          AppendIndex(i, name);
        }
        Anomaly a;
        if (!ParseValue(name, state, pgrad, depth + 1, p2p == 1 ? 2 : 0, &a)) return false;
        anomaly->any |= a.any;
      }
      name->resize(base);
      return true;
    }
    case JsonType::kObject: return ParseObject(name, state, pgrad, depth, p2p, false, anomaly);
    default:
      // Bare numbers, strings and booleans carry no item (§4.1).
      return r_->SkipValue();
  }
}

bool DumpParser::ReadFieldValue(Value* v, Anomaly* own, bool is_stat, size_t index) {
  JsonType t;
  if (!r_->PeekType(&t)) return false;
  switch (t) {
    case JsonType::kNull: v->kind = ValueKind::kNull; return r_->GetNull();
    case JsonType::kBool: v->kind = ValueKind::kBool; return r_->GetBool(&v->boolean);
    case JsonType::kNumber: {
      JsonNumber n;
      if (!r_->GetNumber(&n)) return false;
      if (n.is_integer) {
        v->kind = ValueKind::kInteger;
        v->integer = n.integer;
      } else {
        v->kind = ValueKind::kNumber;
        v->number = n.number;
        if (is_stat && !std::isfinite(n.number)) own->own = true;
      }
      return true;
    }
    case JsonType::kString: {
      std::string_view s;
      if (!r_->GetString(&s)) return false;
      if (is_stat && AnomalousText(s)) own->own = true;
      v->kind = ValueKind::kString;
      v->string = ValueId(s, index);
      return true;
    }
    default: {
      scratch_.clear();
      if (!r_->GetCompact(&scratch_)) return false;
      v->kind = ValueKind::kJson;
      v->string = pool_->InternShort(scratch_);
      return true;
    }
  }
}

void DumpParser::SetFieldValue(const JsonReader::Scalar& scalar, Value* v, Anomaly* own, bool is_stat, size_t index) {
  switch (scalar.type) {
    case JsonType::kNumber:
      if (scalar.number.is_integer) {
        v->kind = ValueKind::kInteger;
        v->integer = scalar.number.integer;
      } else {
        v->kind = ValueKind::kNumber;
        v->number = scalar.number.number;
        if (is_stat && !std::isfinite(scalar.number.number)) own->own = true;
      }
      return;
    case JsonType::kString:
      if (is_stat && AnomalousText(scalar.text)) own->own = true;
      v->kind = ValueKind::kString;
      v->string = ValueId(scalar.text, index);
      return;
    case JsonType::kBool:
      v->kind = ValueKind::kBool;
      v->boolean = scalar.boolean;
      return;
    case JsonType::kArray:
      v->kind = ValueKind::kJson;
      if (scalar.list_serial != last_list_serial_) {
        last_list_ = pool_->InternShort(scalar.text);
        last_list_serial_ = scalar.list_serial;
      }
      v->string = last_list_;
      return;
    default: v->kind = ValueKind::kNull;
  }
}

[[gnu::always_inline]] inline void DumpParser::AddField(const Field& f, FieldRole role, int p2p, ObjectFacts* facts) {
  switch (role) {
    case FieldRole::kOther:
    case FieldRole::kStat: break;
    case FieldRole::kType:
      if (f.value.kind == ValueKind::kString) {
        facts->leaf = true;
        facts->type_string = f.value.string;
      }
      break;
    case FieldRole::kMd5: facts->has_md5 = true; break;
    case FieldRole::kDataName:
      if (f.value.kind == ValueKind::kString) facts->data_name = f.value.string;
      break;
    case FieldRole::kNorm: facts->norm = f.value; break;
    // A P2POp of batch_isend_irecv (§5.7).
    case FieldRole::kOp:
      if (p2p == 2 && f.value.kind == ValueKind::kString) p2p_op_ = f.value.string;
      break;
    case FieldRole::kPeer:
      if (p2p == 2 && f.value.kind == ValueKind::kInteger) {
        p2p_peer_ = f.value.integer;
        p2p_has_peer_ = true;
      }
      break;
    case FieldRole::kGroupId:
      if (p2p == 2 && f.value.kind == ValueKind::kString) p2p_group_ = f.value.string;
      break;
  }
  out_->fields.push_back(f);
}

void DumpParser::ConcludeLeaf(ObjectFacts* facts) const {
  std::string_view type = pool_->Get(facts->type_string);
  facts->torch_tensor = type == "torch.Tensor";
  if (facts->norm.kind == ValueKind::kNumber && !std::isnan(facts->norm.number)) {
    facts->has_norm = true;
    facts->norm_value = facts->norm.number;
  } else if (facts->norm.kind == ValueKind::kInteger) {
    facts->has_norm = true;
    facts->norm_value = static_cast<double>(facts->norm.integer);
  }
  if (type.substr(0, 9) == "mindspore") {
    facts->framework = "mindspore";
  } else if (type.substr(0, 5) == "torch") {
    facts->framework = "pytorch";
  }
  std::string_view dn = pool_->Get(facts->data_name);
  facts->named = !dn.empty() && dn != "-1";
  if (facts->named) facts->item_key = dn.substr(0, std::min(dn.rfind('.'), dn.size()));
}

void DumpParser::AddLeaf(const ObjectFacts& facts, size_t fields_start, std::string_view traversal, ItemState state,
                         int depth, Anomaly* anomaly) {
  anomaly->own = facts.own.own;
  anomaly->any = facts.own.own;
  anomaly->torch_tensor = facts.torch_tensor;
  anomaly->has_norm = facts.has_norm;
  anomaly->norm = facts.norm_value;
  if (facts.has_md5 && depth <= 2) has_md5_ = true;
  if (out_->detected_framework.empty() && !facts.framework.empty()) out_->detected_framework = facts.framework;
  PendingItem& p = NewPending(facts.named ? facts.item_key : traversal, facts.named);
  p.state = state;
  p.flags = 0;
  p.first_field = static_cast<uint32_t>(fields_start);
  p.field_count = static_cast<uint16_t>(std::min<size_t>(out_->fields.size() - fields_start, 65535));
}

bool DumpParser::ReadFields(int p2p, Defer defer, ObjectFacts* facts, bool* deferred, bool* scanned) {
  std::string_view key;
  for (size_t index = 0;; ++index) {
    Field f;
    FieldRole role;
    if (index < kMemos) {
      // The members of a leaf are laid out as the ones at the same
      // positions of the leaf before: a run of them in one call.
      size_t read;
      JsonReader::Member run = r_->NextKnownRun(heads_ + index, kMemos - index, scalars_, &read);
      for (size_t k = 0; k < read; ++k, ++index) {
        const Memo& memo = key_memo_[index];
        f.name = memo.id;
        SetFieldValue(scalars_[k], &f.value, &facts->own, memo.role == FieldRole::kStat, index);
        AddField(f, memo.role, p2p, facts);
      }
      if (run == JsonReader::Member::kEnd) break;
    }
    JsonReader::Scalar& scalar = scalars_[0];
    JsonReader::MemberHead head;
    JsonReader::Member member = r_->NextScalar(&key, &scalar, &head);
    if (member == JsonReader::Member::kEnd) break;
    // heads_[index] is kept for the key of key_memo_[index] only.
    uint32_t memo_id = index < kMemos ? key_memo_[index].id : 0;
    if (member == JsonReader::Member::kMore) {
      f.name = KeyId(key, index, &role);
      SetFieldValue(scalar, &f.value, &facts->own, role == FieldRole::kStat, index);
      if (index < kMemos) heads_[index] = key_memo_[index].id == f.name ? head : JsonReader::MemberHead();
    } else {
      Step more = r_->NextKey(&key);
      if (more == Step::kFailed) return false;
      if (more == Step::kEnd) break;
      // Everything about the key is taken before its value is read (a nested
      // object's keys reuse the reader's key storage).
      f.name = KeyId(key, index, &role);
      if (index < kMemos && key_memo_[index].id != memo_id) heads_[index] = JsonReader::MemberHead();
      if (defer != Defer::kNone && !facts->leaf) {
        char c = r_->PeekByte();
        if (c == '{' || c == '[') {
          *deferred = true;
          // Shallow, so that the container pass meets no nesting limit first.
          size_t end = defer == Defer::kScanned ? r_->ContainerEndAhead(64) : 0;
          if (end != 0) {
            *scanned = true;
            r_->SkipKnown(end - r_->offset());
          } else if (!r_->SkipValue()) {
            return false;
          }
          continue;
        }
      }
      if (!ReadFieldValue(&f.value, &facts->own, role == FieldRole::kStat, index)) return false;
    }
    AddField(f, role, p2p, facts);
  }
  return true;
}

bool DumpParser::ParseObject(std::string* name, ItemState state, bool pgrad, int depth, int p2p, bool kwargs_top,
                             Anomaly* anomaly) {
  // First pass: read the members as fields. An object with a string "type"
  // is a leaf (one item); any other object is re-read as a container.
  size_t start = r_->offset();
  size_t depth_before = r_->depth();
  size_t fields_start = out_->fields.size();
  // A leaf that is byte for byte one read before is that leaf again (a
  // P2POp is read for its operation, every time).
  CachedLeaf* cached = nullptr;
  std::string_view ahead;
  if (p2p == 0) ahead = r_->FlatObjectAhead(sizeof(CachedLeaf::text));
  if (ahead.size() >= kLeafMin) {
    cached = &leaves_[LeafHash(ahead) & (kLeafSlots - 1)];
    if (cached->size == ahead.size() && memcmp(cached->text, ahead.data(), ahead.size()) == 0) {
      out_->fields.resize(fields_start + cached->field_count);
      std::copy_n(out_->fields.begin() + cached->first_field, cached->field_count, out_->fields.begin() + fields_start);
      r_->SkipKnown(ahead.size());
      AddLeaf(cached->facts, fields_start, *name, state, depth, anomaly);
      return true;
    }
  }
  if (!r_->BeginObject()) return false;
  // An empty object (input_kwargs of most calls) is a container of nothing.
  if (p2p != 2 && r_->PeekByte() == '}') {
    r_->SkipKnown(1);
    r_->Rewind(r_->offset(), depth_before);
    anomaly->own = anomaly->any = false;
    return true;
  }
  ObjectFacts facts;
  bool deferred = false, scanned = false;
  auto read_again = [&](Defer defer) {
    out_->fields.resize(fields_start);
    r_->Rewind(start, depth_before);
    facts = ObjectFacts();
    return r_->BeginObject() && ReadFields(p2p, defer, &facts, &deferred, &scanned);
  };
  if (!ReadFields(p2p, Defer::kScanned, &facts, &deferred, &scanned)) {
    // A value skipped unchecked may be what failed: the error is the
    // checked read's.
    if (!scanned || !read_again(Defer::kChecked)) return false;
  }
  if (facts.leaf && deferred && !read_again(Defer::kNone)) return false;
  if (p2p == 2) {
    if (p2p_op_ != 0 || p2p_has_peer_) out_->p2p.push_back(P2POp{p2p_op_, p2p_has_peer_ ? p2p_peer_ : -1, p2p_group_});
    p2p_op_ = 0;
    p2p_group_ = 0;
    p2p_has_peer_ = false;
  }
  if (facts.leaf) {
    ConcludeLeaf(&facts);
    size_t count = out_->fields.size() - fields_start;
    if (cached != nullptr && r_->offset() == start + ahead.size() && count < 65535) {
      cached->size = static_cast<uint32_t>(ahead.size());
      memcpy(cached->text, ahead.data(), ahead.size());
      cached->first_field = static_cast<uint32_t>(fields_start);
      cached->field_count = static_cast<uint32_t>(count);
      cached->facts = facts;
    }
    AddLeaf(facts, fields_start, *name, state, depth, anomaly);
    return true;
  }
  anomaly->own = facts.own.own;
  anomaly->any = facts.own.own;
  // Not a leaf: drop the fields and read the object again as a container.
  out_->fields.resize(fields_start);
  r_->Rewind(start, depth_before);
  if (!r_->BeginObject()) return false;
  size_t base = name->size();
  std::string_view key;
  for (;;) {
    Step more = r_->NextKey(&key);
    if (more == Step::kFailed) return false;
    if (more == Step::kEnd) break;
    name->resize(base);
    *name += '.';
    *name += key;
    if (kwargs_top) kw_names_.emplace_back(key);  // `key` does not outlive the value's members
    Anomaly a;
    if (!ParseValue(name, state, pgrad, depth + 1, 0, &a)) return false;
    if (kwargs_top) kw_elems_.push_back(a);
  }
  name->resize(base);
  return true;
}

}  // namespace

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
  JsonReader reader(file->text(), path);
  DumpParser parser(&reader, pool, &data, options, &*file);
  GA_RETURN_IF_ERROR(parser.Parse());
  if (options.progress) options.progress(file->text().size());
  return data;
}

}  // namespace graph_ascend::dump
