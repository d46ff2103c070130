// Reading an entry's values into items and fields (reference §4.1): the
// DumpParser members of dump/dump_parser.h that walk a value, read a leaf's
// members and keep leaves by their bytes.
#include <algorithm>
#include <cmath>

#include "dump/dump_parser.h"

namespace graph_ascend::dump::parse {
namespace {

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

}  // namespace

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

}  // namespace graph_ascend::dump::parse
