// The parser of dump.json (reference §3.2, §4), shared by the files that
// make it up: dump_reader.cc reads the top level and each entry, orders
// and splits its items (§4.3); dump_values.cc reads an entry's values into
// items and fields (§4.1), leaves through a cache of their bytes. Private
// to the dump library: ReadDumpJson (dump/dump_data.h) is its interface.
#pragma once

#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/mapped_file.h"
#include "dump/dump_data.h"
#include "dump/overflow_scene.h"
#include "json/json_reader.h"

namespace graph_ascend::dump::parse {

using json::JsonNumber;
using json::JsonReader;
using json::JsonType;
using Step = JsonReader::Step;

constexpr int kMaxNesting = 400;  // msprobe's recursion limit (§4.1)

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

// The first and last word of a string of at most 16 bytes, which with its
// size identify it (the words overlap when it is shorter; StringPool's
// short-string cache does the same).
inline void Words(std::string_view s, uint64_t* head, uint64_t* tail) {
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

// What a field name means to the parse, found once per field name and
// position (DumpParser::KeyId).
enum class FieldRole : uint8_t { kOther, kType, kStat, kNorm, kMd5, kDataName, kOp, kPeer, kGroupId };

inline FieldRole RoleOf(std::string_view key) {
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
  // Reads entries of "data" from the reader's position (after an entry, or
  // the object's start) until the reader is at `stop`, or to the object's end
  // (*closed). False when it fails or passes `stop` inside an entry (the
  // part was not where json.dump's layout said). For DataParts.
  // Stops early (false) once *cancel is set.
  bool ParsePart(size_t stop, bool* closed, const std::atomic<bool>* cancel);
  // Once the reader is at or past `stop` after an entry, take(exact,
  // &resume) is asked for the rest of "data" (read by other parsers), exact
  // when it is at `stop`: when it gives it, reading goes on at `resume`,
  // after data's closing brace; otherwise here.
  void TakeRestAt(size_t stop, std::function<bool(bool, size_t*)> take) {
    take_at_ = stop;
    take_ = std::move(take);
  }

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
  size_t take_at_ = SIZE_MAX;
  std::function<bool(bool, size_t*)> take_;
  // The P2POp being read (§5.7).
  uint32_t p2p_op_ = 0;
  uint32_t p2p_group_ = 0;
  int64_t p2p_peer_ = -1;
  bool p2p_has_peer_ = false;
};

// Parses the dump.json mapped in `file` into `out` (whose arrays are
// reserved), with up to options.threads threads when the file is large and
// laid out as json.dump writes it (dump_parts.cc); the result is the same
// for any number of threads, pool ids included.
Status ParseInParts(MappedFile* file, StringPool* pool, const DumpOptions& options, DumpData* out);

}  // namespace graph_ascend::dump::parse
