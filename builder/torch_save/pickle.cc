#include "torch_save/pickle.h"

#include <cstring>
#include <map>
#include <unordered_map>

namespace graph_ascend::torch_save {
namespace {

using Kind = PickleValue::Kind;

uint64_t Le(const char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

PickleRef Make(Kind kind) {
  auto v = std::make_shared<PickleValue>();
  v->kind = kind;
  return v;
}

PickleRef Int(int64_t i) {
  auto v = Make(Kind::kInt);
  v->i = i;
  return v;
}

PickleRef Str(Kind kind, std::string_view s) {
  auto v = Make(kind);
  v->s = std::string(s);
  return v;
}

// UTF-8 text of a protocol-2 bytes object (_codecs.encode(text, "latin1")) back to its bytes.
std::string Latin1(const std::string& utf8) {
  std::string out;
  for (size_t i = 0; i < utf8.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(utf8[i]);
    if (c >= 0xc0 && c < 0xe0 && i + 1 < utf8.size()) {
      out.push_back(static_cast<char>(((c & 0x1f) << 6) | (static_cast<unsigned char>(utf8[++i]) & 0x3f)));
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

bool Ints(const PickleValue& v, std::vector<int64_t>* out) {
  if (v.kind != Kind::kTuple && v.kind != Kind::kList) return false;
  for (const PickleRef& x : v.items) {
    if (!x->is_int()) return false;
    out->push_back(x->i);
  }
  return true;
}

class Machine {
 public:
  Machine(std::string_view p, const std::string& file) : p_(p), file_(file) {}
  // Values are shared_ptrs: a value that holds itself (a list APPENDed to
  // itself through the memo) would never be freed. Unless the run returned
  // a tree without cycles, the edges of every grown container are cut.
  ~Machine() {
    if (!keep_) Unlink();
  }

  Result<PickleRef> Run();

 private:
  Error Bad(const std::string& what) const { return Error{file_, "data.pkl byte " + std::to_string(op_at_), what}; }
  bool Need(size_t n) const { return pos_ + n <= p_.size(); }
  Result<PickleRef> Pop() {
    if (stack_.size() <= Floor()) return Bad("pickle stack underflow");
    PickleRef v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  size_t Floor() const { return marks_.empty() ? 0 : marks_.back(); }
  Result<std::vector<PickleRef>> PopMark() {
    if (marks_.empty()) return Bad("pickle MARK missing");
    size_t m = marks_.back();
    marks_.pop_back();
    std::vector<PickleRef> items(stack_.begin() + static_cast<long>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  Status Push(Result<PickleRef> v) {
    if (!v.ok()) return v.error();
    stack_.push_back(std::move(*v));
    return Status::Ok();
  }
  Status Memo(uint64_t key) {
    if (stack_.empty()) return Bad("pickle memo of an empty stack");
    memo_[key] = stack_.back();
    return Status::Ok();
  }
  Status Recall(uint64_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) return Bad("pickle memo " + std::to_string(key) + " missing");
    stack_.push_back(it->second);
    return Status::Ok();
  }
  Result<PickleRef> Execute();
  // `v` (stack_.back()) is given items after it was made. Only such a value
  // can close a cycle: one made whole holds values older than itself.
  PickleValue* Grown(const PickleRef& v) {
    grown_.emplace(v.get(), v);
    return v.get();
  }
  bool HasCycle() const;
  void Unlink();
  Status SetItems(PickleValue* target, std::vector<PickleRef> items);
  Result<PickleRef> Call(const PickleRef& fn, const PickleRef& args);
  Result<PickleRef> Tensor(const PickleValue& args);

  std::string_view p_;
  const std::string& file_;
  size_t pos_ = 0, op_at_ = 0;
  std::vector<PickleRef> stack_;
  std::vector<size_t> marks_;
  std::map<uint64_t, PickleRef> memo_;
  std::unordered_map<const PickleValue*, PickleRef> grown_;
  bool keep_ = false;
};

// Depth-first over everything the grown values reach (each value once), looking for an edge back into the path.
bool Machine::HasCycle() const {
  enum : uint8_t { kOnPath = 1, kDone = 2 };
  std::unordered_map<const PickleValue*, uint8_t> mark;
  auto edges = [](const PickleValue* v) { return v->items.size() + 2 * v->dict.size() + (v->state ? 1 : 0); };
  auto edge = [](const PickleValue* v, size_t e) -> const PickleValue* {
    if (e < v->items.size()) return v->items[e].get();
    e -= v->items.size();
    if (e < 2 * v->dict.size()) return (e % 2 ? v->dict[e / 2].second : v->dict[e / 2].first).get();
    return v->state.get();
  };
  std::vector<std::pair<const PickleValue*, size_t>> path;
  for (const auto& [start, ref] : grown_) {
    if (mark[start] != 0) continue;
    mark[start] = kOnPath;
    path.emplace_back(start, 0);
    while (!path.empty()) {
      auto& [v, next] = path.back();
      if (next == edges(v)) {
        mark[v] = kDone;
        path.pop_back();
        continue;
      }
      const PickleValue* to = edge(v, next++);
      uint8_t& m = mark[to];
      if (m == kOnPath) return true;
      if (m == 0) {
        m = kOnPath;
        path.emplace_back(to, 0);
      }
    }
  }
  return false;
}

void Machine::Unlink() {
  // Every cycle passes through a grown value; the values themselves are
  // freed with grown_ and the stack, none of them recursively through a cycle.
  for (auto& [v, ref] : grown_) {
    ref->items.clear();
    ref->dict.clear();
    ref->state.reset();
  }
}

Result<PickleRef> Machine::Run() {
  Result<PickleRef> result = Execute();
  if (!result.ok()) return result;
  if (HasCycle()) return Bad("a list, dict or object that contains itself");
  keep_ = true;
  return result;
}

Status Machine::SetItems(PickleValue* target, std::vector<PickleRef> items) {
  if (items.size() % 2) return Bad("odd SETITEMS");
  if (target->kind == Kind::kObject) {
    // An OrderedDict subclass or similar opaque mapping: keep the entries.
    if (!target->state) target->state = Make(Kind::kDict);
    target = target->state.get();
  }
  if (target->kind != Kind::kDict) return Bad("SETITEMS on a non-dict");
  for (size_t k = 0; k < items.size(); k += 2) target->dict.emplace_back(items[k], items[k + 1]);
  return Status::Ok();
}

Result<PickleRef> Machine::Tensor(const PickleValue& args) {
  if (args.kind != Kind::kTuple || args.items.size() < 4 || args.items[0]->kind != Kind::kStorage ||
      !args.items[1]->is_int()) {
    return Bad("unexpected arguments of torch._utils._rebuild_tensor_v2");
  }
  auto t = Make(Kind::kTensor);
  t->tensor = args.items[0]->tensor;
  t->tensor.offset = args.items[1]->i;
  if (!Ints(*args.items[2], &t->tensor.shape) || !Ints(*args.items[3], &t->tensor.stride) ||
      t->tensor.shape.size() != t->tensor.stride.size()) {
    return Bad("bad tensor size or stride");
  }
  // Sizes must be non-negative and their product must fit (numel is used before any storage is read).
  int64_t numel = 1;
  for (int64_t d : t->tensor.shape) {
    if (d < 0 || __builtin_mul_overflow(numel, d, &numel) || numel > (int64_t{1} << 48)) {
      return Bad("bad tensor size");
    }
  }
  return t;
}

Result<PickleRef> Machine::Call(const PickleRef& fn, const PickleRef& args) {
  const std::string& name = fn->s;
  if (fn->kind == Kind::kGlobal) {
    if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor") return Tensor(*args);
    if ((name == "torch._utils._rebuild_parameter" || name == "torch._utils._rebuild_parameter_with_state") &&
        args->kind == Kind::kTuple && !args->items.empty() && args->items[0]->kind == Kind::kTensor) {
      return args->items[0];
    }
    if (name == "torch._tensor._rebuild_from_type_v2" && args->kind == Kind::kTuple && args->items.size() >= 3 &&
        args->items[0]->kind == Kind::kGlobal) {
      return Call(args->items[0], args->items[2]);
    }
    if (name == "collections.OrderedDict") return Make(Kind::kDict);
    if (name == "torch.Size" && args->kind == Kind::kTuple && args->items.size() == 1) {
      auto t = Make(Kind::kTuple);
      t->items = args->items[0]->items;
      return t;
    }
    if (name == "_codecs.encode" && args->kind == Kind::kTuple && !args->items.empty() &&
        args->items[0]->kind == Kind::kString) {
      return Str(Kind::kBytes, Latin1(args->items[0]->s));
    }
  }
  auto obj = Make(Kind::kObject);
  obj->s = fn->kind == Kind::kGlobal ? name : "<call>";
  obj->items = args->items;
  return obj;
}

Result<PickleRef> Machine::Execute() {
  while (pos_ < p_.size()) {
    op_at_ = pos_;
    unsigned char op = static_cast<unsigned char>(p_[pos_++]);
    auto fixed = [&](int n, uint64_t* v) {
      if (!Need(static_cast<size_t>(n))) return false;
      *v = Le(p_.data() + pos_, n);
      pos_ += static_cast<size_t>(n);
      return true;
    };
    auto line = [&](std::string* out) {
      size_t e = p_.find('\n', pos_);
      if (e == std::string_view::npos) return false;
      *out = std::string(p_.substr(pos_, e - pos_));
      pos_ = e + 1;
      return true;
    };
    auto sized = [&](int width, Kind kind) -> Status {
      uint64_t n;
      if (!fixed(width, &n) || !Need(n)) return Bad("truncated pickle string");
      stack_.push_back(Str(kind, p_.substr(pos_, n)));
      pos_ += n;
      return Status::Ok();
    };
    uint64_t n = 0;
    switch (op) {
      case 0x80: if (!fixed(1, &n)) return Bad("truncated PROTO"); break;
      case 0x95: if (!fixed(8, &n)) return Bad("truncated FRAME"); break;
      case '.': {
        if (stack_.empty()) return Bad("pickle STOP with an empty stack");
        return stack_.back();
      }
      case '(': marks_.push_back(stack_.size()); break;
      case '0': { auto v = Pop(); if (!v.ok()) return v.error(); break; }
      case '1': { auto v = PopMark(); if (!v.ok()) return v.error(); break; }
      case '2': if (stack_.empty()) return Bad("DUP of an empty stack"); stack_.push_back(stack_.back()); break;
      case 'N': stack_.push_back(Make(Kind::kNone)); break;
      case 0x88: case 0x89: { auto v = Make(Kind::kBool); v->b = op == 0x88; v->i = v->b; stack_.push_back(v); break; }
      case 'K': case 'M': case 'J': {  // BININT1, BININT2 (unsigned), BININT (signed)
        if (!fixed(op == 'K' ? 1 : op == 'M' ? 2 : 4, &n)) return Bad("truncated BININT");
        stack_.push_back(Int(op == 'J' ? static_cast<int32_t>(n) : static_cast<int64_t>(n)));
        break;
      }
      case 0x8a: case 0x8b: {  // LONG1, LONG4: little-endian two's complement
        if (!fixed(op == 0x8a ? 1 : 4, &n) || !Need(n)) return Bad("truncated LONG");
        if (n > 8) {  // Larger than int64 (e.g. a Python RNG seed): kept as an opaque number.
          auto big = Make(Kind::kObject);
          big->s = "builtins.int";
          stack_.push_back(big);
        } else {
          auto v = static_cast<int64_t>(Le(p_.data() + pos_, static_cast<int>(n)));
          if (n > 0 && n < 8 && (static_cast<unsigned char>(p_[pos_ + n - 1]) & 0x80)) v -= int64_t{1} << (8 * n);
          stack_.push_back(Int(v));
        }
        pos_ += n;
        break;
      }
      case 'I': case 'L': {  // text INT / LONG (protocol 0)
        std::string s;
        if (!line(&s)) return Bad("truncated INT");
        if (s == "01" || s == "00") {
          auto v = Make(Kind::kBool);
          v->b = s == "01";
          v->i = v->b;
          stack_.push_back(v);
        } else {
          stack_.push_back(Int(strtoll(s.c_str(), nullptr, 10)));
        }
        break;
      }
      case 'G': {
        if (!fixed(8, &n)) return Bad("truncated BINFLOAT");
        uint64_t be = __builtin_bswap64(n);
        auto v = Make(Kind::kFloat);
        memcpy(&v->f, &be, 8);
        stack_.push_back(v);
        break;
      }
      case 'F': {
        std::string s;
        if (!line(&s)) return Bad("truncated FLOAT");
        auto v = Make(Kind::kFloat);
        v->f = strtod(s.c_str(), nullptr);
        stack_.push_back(v);
        break;
      }
      case 'X': GA_RETURN_IF_ERROR(sized(4, Kind::kString)); break;
      case 0x8c: GA_RETURN_IF_ERROR(sized(1, Kind::kString)); break;
      case 0x8d: GA_RETURN_IF_ERROR(sized(8, Kind::kString)); break;
      case 'B': GA_RETURN_IF_ERROR(sized(4, Kind::kBytes)); break;
      case 'C': GA_RETURN_IF_ERROR(sized(1, Kind::kBytes)); break;
      case 0x8e: case 0x96: GA_RETURN_IF_ERROR(sized(8, Kind::kBytes)); break;
      case 'T': GA_RETURN_IF_ERROR(sized(4, Kind::kBytes)); break;
      case 'U': GA_RETURN_IF_ERROR(sized(1, Kind::kBytes)); break;
      case ']': stack_.push_back(Make(Kind::kList)); break;
      case ')': stack_.push_back(Make(Kind::kTuple)); break;
      case '}': stack_.push_back(Make(Kind::kDict)); break;
      case 0x8f: stack_.push_back(Make(Kind::kSet)); break;
      case 'l': case 't': case 0x91: {
        auto items = PopMark();
        if (!items.ok()) return items.error();
        auto v = Make(op == 'l' ? Kind::kList : op == 't' ? Kind::kTuple : Kind::kSet);
        v->items = std::move(*items);
        stack_.push_back(v);
        break;
      }
      case 0x85: case 0x86: case 0x87: {
        size_t k = op - 0x84u;
        if (stack_.size() < Floor() + k) return Bad("pickle stack underflow");
        auto v = Make(Kind::kTuple);
        v->items.assign(stack_.end() - static_cast<long>(k), stack_.end());
        stack_.resize(stack_.size() - k);
        stack_.push_back(v);
        break;
      }
      case 'd': {
        auto items = PopMark();
        if (!items.ok()) return items.error();
        auto v = Make(Kind::kDict);
        GA_RETURN_IF_ERROR(SetItems(v.get(), std::move(*items)));
        stack_.push_back(v);
        break;
      }
      case 'a': {
        auto item = Pop();
        if (!item.ok()) return item.error();
        if (stack_.empty() || stack_.back()->kind != Kind::kList) return Bad("APPEND to a non-list");
        Grown(stack_.back())->items.push_back(*item);
        break;
      }
      case 'e': case 0x90: {
        auto items = PopMark();
        if (!items.ok()) return items.error();
        if (stack_.empty() || (stack_.back()->kind != Kind::kList && stack_.back()->kind != Kind::kSet &&
                               stack_.back()->kind != Kind::kObject)) {
          return Bad("APPENDS to a non-list");
        }
        PickleValue* list = Grown(stack_.back());
        for (auto& x : *items) list->items.push_back(x);
        break;
      }
      case 's': {
        if (stack_.size() < Floor() + 3) return Bad("pickle stack underflow");
        std::vector<PickleRef> kv(stack_.end() - 2, stack_.end());
        stack_.resize(stack_.size() - 2);
        GA_RETURN_IF_ERROR(SetItems(Grown(stack_.back()), std::move(kv)));
        break;
      }
      case 'u': {
        auto items = PopMark();
        if (!items.ok()) return items.error();
        if (stack_.empty()) return Bad("SETITEMS without a dict");
        GA_RETURN_IF_ERROR(SetItems(Grown(stack_.back()), std::move(*items)));
        break;
      }
      case 'c': {
        std::string module, name;
        if (!line(&module) || !line(&name)) return Bad("truncated GLOBAL");
        stack_.push_back(Str(Kind::kGlobal, module + "." + name));
        break;
      }
      case 0x93: {
        auto name = Pop();
        if (!name.ok()) return name.error();
        auto module = Pop();
        if (!module.ok()) return module.error();
        stack_.push_back(Str(Kind::kGlobal, (*module)->s + "." + (*name)->s));
        break;
      }
      case 'q': if (!fixed(1, &n)) return Bad("truncated BINPUT"); GA_RETURN_IF_ERROR(Memo(n)); break;
      case 'r': if (!fixed(4, &n)) return Bad("truncated LONG_BINPUT"); GA_RETURN_IF_ERROR(Memo(n)); break;
      case 0x94: GA_RETURN_IF_ERROR(Memo(memo_.size())); break;
      case 'p': case 'g': {  // text PUT, GET (protocol 0)
        std::string s;
        if (!line(&s)) return Bad("truncated PUT/GET");
        uint64_t key = strtoull(s.c_str(), nullptr, 10);
        GA_RETURN_IF_ERROR(op == 'p' ? Memo(key) : Recall(key));
        break;
      }
      case 'h': if (!fixed(1, &n)) return Bad("truncated BINGET"); GA_RETURN_IF_ERROR(Recall(n)); break;
      case 'j': if (!fixed(4, &n)) return Bad("truncated LONG_BINGET"); GA_RETURN_IF_ERROR(Recall(n)); break;
      case 'Q': {  // BINPERSID: ('storage', storage type, key, location, numel)
        auto pid = Pop();
        if (!pid.ok()) return pid.error();
        const PickleValue& t = **pid;
        if (t.kind != Kind::kTuple || t.items.size() < 5 || t.items[1]->kind != Kind::kGlobal ||
            t.items[2]->kind != Kind::kString || !t.items[4]->is_int()) {
          return Bad("unsupported persistent id (not a torch storage)");
        }
        auto s = Make(Kind::kStorage);
        const std::string& type = t.items[1]->s;
        s->tensor.storage_type = type.substr(type.rfind('.') + 1);
        s->tensor.storage_key = t.items[2]->s;
        s->tensor.storage_numel = t.items[4]->i;
        stack_.push_back(s);
        break;
      }
      case 'R': {
        auto args = Pop();
        if (!args.ok()) return args.error();
        auto fn = Pop();
        if (!fn.ok()) return fn.error();
        GA_RETURN_IF_ERROR(Push(Call(*fn, *args)));
        break;
      }
      case 0x81: case 0x92: {  // NEWOBJ, NEWOBJ_EX: cls.__new__(cls, *args): an opaque object
        if (op == 0x92) {
          auto kwargs = Pop();
          if (!kwargs.ok()) return kwargs.error();
        }
        auto args = Pop();
        if (!args.ok()) return args.error();
        auto cls = Pop();
        if (!cls.ok()) return cls.error();
        if ((*cls)->kind == Kind::kGlobal && (*cls)->s == "collections.OrderedDict") {
          stack_.push_back(Make(Kind::kDict));
          break;
        }
        auto obj = Make(Kind::kObject);
        obj->s = (*cls)->kind == Kind::kGlobal ? (*cls)->s : "<object>";
        obj->items = (*args)->items;
        stack_.push_back(obj);
        break;
      }
      case 'b': {  // BUILD: the state goes into the object, nothing runs
        auto st = Pop();
        if (!st.ok()) return st.error();
        if (stack_.empty()) return Bad("BUILD without an object");
        PickleValue& target = *Grown(stack_.back());
        if (target.kind == Kind::kObject) {
          target.state = *st;
        } else if (target.kind == Kind::kDict && (*st)->kind == Kind::kDict) {
          for (auto& kv : (*st)->dict) target.dict.push_back(kv);
        }
        break;
      }
      default: {
        char buf[8];
        snprintf(buf, sizeof(buf), "0x%02x", op);
        return Bad(std::string("unsupported pickle opcode ") + buf);
      }
    }
  }
  return Bad("pickle without STOP (truncated)");
}

}  // namespace

const PickleValue* PickleValue::Get(std::string_view key) const {
  const PickleValue* d = this;
  if (kind == Kind::kObject) {
    if (!state) return nullptr;
    d = state.get();
    // (dict, slots) state of objects with __slots__.
    if (d->kind == Kind::kTuple && !d->items.empty()) d = d->items[0].get();
  }
  if (d->kind != Kind::kDict) return nullptr;
  for (const auto& [k, v] : d->dict) {
    if (k->kind == Kind::kString && k->s == key) return v.get();
  }
  return nullptr;
}

Result<PickleRef> Unpickle(std::string_view pickle, const std::string& file) {
  Machine m(pickle, file);
  return m.Run();
}

bool StorageElementType(const std::string& storage_type, ElementType* out) {
  static const struct {
    const char* name;
    ElementType type;
  } kTypes[] = {{"FloatStorage", {'f', 4}},  {"DoubleStorage", {'f', 8}}, {"HalfStorage", {'f', 2}},
                {"BFloat16Storage", {'V', 2}}, {"LongStorage", {'i', 8}}, {"IntStorage", {'i', 4}},
                {"ShortStorage", {'i', 2}},  {"CharStorage", {'i', 1}},  {"ByteStorage", {'u', 1}},
                {"BoolStorage", {'b', 1}}};
  for (const auto& t : kTypes) {
    if (storage_type == t.name) {
      *out = t.type;
      return true;
    }
  }
  return false;
}

}  // namespace graph_ascend::torch_save
