// The contents of one msprobe dump directory (reference §3): dump.json
// flattened into items (§4), construct.json and stack.json.
//
// Everything of one side lives in flat arrays that share one StringPool:
// entries index items, items index fields. Nothing is a per-node heap object.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/id_index.h"
#include "base/status.h"
#include "base/string_pool.h"

namespace graph_ascend::dump {

enum class ItemState : uint8_t { kInput = 0, kOutput = 1, kParameters = 2, kParametersGrad = 3 };

enum class ValueKind : uint8_t { kNull, kBool, kInteger, kNumber, kString, kJson };

// A field value of a dump leaf. Strings and compact JSON (lists, objects)
// are StringPool ids.
//
// Packed to 4-byte alignment (12 bytes, not 16) so that a Field is 16 bytes,
// not 24: a side of 10^5 nodes holds about two million fields. Its 8-byte
// members are then 4-aligned, which x86-64 and AArch64 load at full speed.
#pragma pack(push, 4)
struct Value {
  ValueKind kind = ValueKind::kNull;
  union {
    bool boolean;
    int64_t integer;
    double number;
    uint32_t string;
  };
  Value() : integer(0) {}
};
#pragma pack(pop)

struct Field {
  Value value;
  uint32_t name;  // StringPool id of the field name
};
static_assert(sizeof(Field) == 16);

// One flattened leaf of a dump entry (§4.1–§4.3).
struct DumpItem {
  uint32_t key;          // StringPool id: the item key minus the node name (".input.0"), or the full key
  uint32_t first_field;  // into DumpData::fields
  uint16_t field_count;
  ItemState state;
  uint8_t flags;         // kItem* bits
};

inline constexpr uint8_t kItemNull = 1;     // a null argument (msprobe's default item)
inline constexpr uint8_t kItemFullKey = 2;  // `key` is the whole key (data_name not under the node name)

enum class OverflowLevel : uint8_t { kNone = 0, kMedium = 1, kHigh = 2, kCritical = 3 };

// A batch_isend_irecv operation of an entry (§5.7).
struct P2POp {
  uint32_t op;        // StringPool id: "isend" / "irecv"
  int64_t peer;
  uint32_t group_id;  // StringPool id
};

// One key of dump.json "data".
struct DumpEntry {
  uint32_t name;         // StringPool id of the dump name
  uint32_t first_item;   // items of input_data, then items of output_data
  uint32_t input_count;
  uint32_t output_count;
  uint32_t first_p2p;
  uint32_t p2p_count;
  OverflowLevel overflow = OverflowLevel::kNone;  // with DumpOptions::overflow_check
  bool has_md5 = false;
};

struct DumpOptions {
  bool overflow_check = false;
  // Called now and then with the number of bytes parsed.
  std::function<void(size_t)> progress;
  // Threads that read a large file's "data" in parts (dump/dump_parts.cc);
  // what is read does not depend on it.
  int threads = 1;
  size_t part_bytes = 32u << 20;  // the least a part may hold: below it a thread does not pay
};

// dump.json of one directory.
struct DumpData {
  std::string path;
  std::string task;           // "statistics", "tensor", "structure", ...
  std::string level;
  std::string framework;      // as written; empty when absent
  std::string detected_framework;  // "pytorch" / "mindspore" / "" (§6.2)
  std::string dump_data_dir;
  bool has_dump_data_dir = false;
  bool summary_md5 = false;   // some leaf carries md5 (§6.1 md5_find)

  std::vector<DumpEntry> entries;  // in file order; a repeated key keeps the last
  std::vector<DumpItem> items;
  std::vector<Field> fields;
  std::vector<P2POp> p2p;
  IdIndex entry_of;  // name id -> entry index
  uint32_t parts = 1;  // the parts "data" was read in at once (DumpOptions::threads)

  const DumpEntry* Find(uint32_t name) const {
    uint32_t e = entry_of.Get(name);
    return e == IdIndex::kNone ? nullptr : &entries[e];
  }
};

// The module of a parameter-gradient dump name: "P" for "P.parameters_grad"
// (msprobe <= 8.x) and for "P.parameters_grad.N" (msprobe >= 26, one entry
// per gradient call); empty for any other name. `call` gets N, or -1.
std::string_view ParametersGradModule(std::string_view name, long* call = nullptr);

// Reads dump.json. Names, keys and values are interned into `pool`.
Result<DumpData> ReadDumpJson(const std::string& path, StringPool* pool, const DumpOptions& options);

// construct.json: child -> parent, in file order (§3.3).
struct ConstructData {
  std::string path;
  struct Edge {
    uint32_t child;
    uint32_t parent;     // 0 (the empty string) for top level
    int32_t micro_step;  // Megatron variant [parent, micro_step]; -1 otherwise
  };
  std::vector<Edge> edges;
  IdIndex edge_of;  // child -> index in edges (last wins)
  bool IsKey(uint32_t name) const { return edge_of.Contains(name); }
};

// `dump`, when given, is the same directory's dump.json read into `pool`
// before: its entry order makes most keys cheaper to intern.
Result<ConstructData> ReadConstructJson(const std::string& path, StringPool* pool, const DumpData* dump = nullptr);

// stack.json in either format (§3.4): name -> list of lines.
struct StackData {
  std::string path;
  std::vector<uint32_t> lines;  // StringPool ids, stacks concatenated
  struct Range {
    uint32_t first;
    uint32_t count;
  };
  std::vector<Range> stacks;
  IdIndex stack_of;      // name -> index in stacks
  bool grouped = false;  // the {"0": [[names], [lines]]} format

  const Range* Find(uint32_t name) const {
    uint32_t s = stack_of.Get(name);
    return s == IdIndex::kNone ? nullptr : &stacks[s];
  }
};

Result<StackData> ReadStackJson(const std::string& path, StringPool* pool);

}  // namespace graph_ascend::dump
