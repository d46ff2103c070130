// Reading a tensor saved with torch.save (the .pt files of PyTorch tensor
// dumps): a stored (uncompressed) zip holding data.pkl, a pickle that calls
// torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...), and
// the raw storage bytes in data/<key>. Only that pickle shape is accepted.
#include <cstring>
#include <map>
#include <memory>
#include <variant>

#include "base/mapped_file.h"
#include "compare/tensor_compare.h"

namespace graph_ascend::compare {
namespace {

uint32_t Le(const char* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// The entries of a zip archive: name -> stored bytes.
Result<std::map<std::string, std::string_view>> ZipEntries(std::string_view d, const std::string& path) {
  // End of central directory: signature 0x06054b50 within the last 64 KiB.
  // (A file shorter than that record, e.g. an empty one, has none.)
  if (d.size() < 22) return Error{path, "", "not a torch .pt file (no zip directory)"};
  size_t eocd = std::string_view::npos;
  for (size_t i = d.size() - 22;; --i) {
    if (Le(d.data() + i, 4) == 0x06054b50) {
      eocd = i;
      break;
    }
    if (i == 0 || d.size() - i > 65557) break;
  }
  if (eocd == std::string_view::npos) return Error{path, "", "not a torch .pt file (no zip directory)"};
  uint32_t count = Le(d.data() + eocd + 10, 2);
  size_t at = Le(d.data() + eocd + 16, 4);
  std::map<std::string, std::string_view> out;
  for (uint32_t e = 0; e < count; ++e) {
    if (at + 46 > d.size() || Le(d.data() + at, 4) != 0x02014b50) {
      return Error{path, "byte " + std::to_string(at), "damaged zip directory"};
    }
    uint32_t method = Le(d.data() + at + 10, 2);
    uint32_t size = Le(d.data() + at + 20, 4);
    uint32_t name_len = Le(d.data() + at + 28, 2), extra_len = Le(d.data() + at + 30, 2),
             comment_len = Le(d.data() + at + 32, 2);
    size_t local = Le(d.data() + at + 42, 4);
    std::string name(d.substr(at + 46, name_len));
    at += 46 + name_len + extra_len + comment_len;
    if (local + 30 > d.size()) return Error{path, "byte " + std::to_string(local), "damaged zip entry"};
    size_t data = local + 30 + Le(d.data() + local + 26, 2) + Le(d.data() + local + 28, 2);
    if (method != 0) return Error{path, name, "compressed zip entries are not supported"};
    if (data + size > d.size()) return Error{path, name, "truncated zip entry"};
    out[name] = d.substr(data, size);
  }
  return out;
}

struct Global {
  std::string module, name;
};
struct Tuple;
using PValue = std::variant<std::monostate, int64_t, std::string, Global, std::shared_ptr<Tuple>, bool>;
struct Tuple {
  std::vector<PValue> items;
};

struct StorageRef {
  std::string type;  // "FloatStorage"
  std::string key;
};

// Interprets the pickle far enough to get the _rebuild_tensor_v2 call.
Status RunPickle(std::string_view p, const std::string& path, StorageRef* storage, int64_t* offset,
                 std::vector<int64_t>* size, std::vector<int64_t>* stride) {
  std::vector<PValue> stack;
  std::vector<size_t> marks;
  std::map<uint32_t, PValue> memo;
  bool have_call = false;
  auto tuple_from = [&](size_t from) {
    auto t = std::make_shared<Tuple>();
    t->items.assign(stack.begin() + static_cast<long>(from), stack.end());
    stack.resize(from);
    return PValue(t);
  };
  auto ints = [](const PValue& v, std::vector<int64_t>* out) {
    auto t = std::get_if<std::shared_ptr<Tuple>>(&v);
    if (!t) return false;
    for (const PValue& x : (*t)->items) {
      auto i = std::get_if<int64_t>(&x);
      if (!i) return false;
      out->push_back(*i);
    }
    return true;
  };
  auto bad = [&](const std::string& why) { return Error{path, "data.pkl", "unsupported tensor pickle: " + why}; };
  for (size_t i = 0; i < p.size();) {
    unsigned char op = static_cast<unsigned char>(p[i++]);
    auto need = [&](size_t n) { return i + n <= p.size(); };
    switch (op) {
      case 0x80: i += 1; break;                 // PROTO
      case 0x95: i += 8; break;                 // FRAME
      case 'c': {                               // GLOBAL "module\nname\n"
        size_t a = p.find('\n', i), b = a == std::string_view::npos ? a : p.find('\n', a + 1);
        if (b == std::string_view::npos) return bad("GLOBAL");
        stack.push_back(Global{std::string(p.substr(i, a - i)), std::string(p.substr(a + 1, b - a - 1))});
        i = b + 1;
        break;
      }
      case 'q': if (!need(1) || stack.empty()) return bad("BINPUT"); memo[static_cast<unsigned char>(p[i])] = stack.back(); i += 1; break;
      case 'r': if (!need(4) || stack.empty()) return bad("LONG_BINPUT"); memo[Le(p.data() + i, 4)] = stack.back(); i += 4; break;
      case 'h': if (!need(1)) return bad("BINGET"); stack.push_back(memo[static_cast<unsigned char>(p[i])]); i += 1; break;
      case 'j': if (!need(4)) return bad("LONG_BINGET"); stack.push_back(memo[Le(p.data() + i, 4)]); i += 4; break;
      case '(': marks.push_back(stack.size()); break;
      case 'X': {                               // BINUNICODE
        if (!need(4)) return bad("BINUNICODE");
        uint32_t n = Le(p.data() + i, 4);
        i += 4;
        if (!need(n)) return bad("BINUNICODE");
        stack.push_back(std::string(p.substr(i, n)));
        i += n;
        break;
      }
      case 0x8c: {                              // SHORT_BINUNICODE
        if (!need(1)) return bad("SHORT_BINUNICODE");
        uint32_t n = static_cast<unsigned char>(p[i++]);
        if (!need(n)) return bad("SHORT_BINUNICODE");
        stack.push_back(std::string(p.substr(i, n)));
        i += n;
        break;
      }
      case 'K': if (!need(1)) return bad("BININT1"); stack.push_back(static_cast<int64_t>(static_cast<unsigned char>(p[i]))); i += 1; break;
      case 'M': if (!need(2)) return bad("BININT2"); stack.push_back(static_cast<int64_t>(Le(p.data() + i, 2))); i += 2; break;
      case 'J': if (!need(4)) return bad("BININT"); stack.push_back(static_cast<int64_t>(static_cast<int32_t>(Le(p.data() + i, 4)))); i += 4; break;
      case 0x8a: {                              // LONG1
        if (!need(1)) return bad("LONG1");
        uint32_t n = static_cast<unsigned char>(p[i++]);
        if (n > 8 || !need(n)) return bad("LONG1");
        int64_t v = 0;
        for (int k = static_cast<int>(n) - 1; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(p[i + k]);
        if (n > 0 && n < 8 && (static_cast<unsigned char>(p[i + n - 1]) & 0x80)) v -= (int64_t{1} << (8 * n));
        stack.push_back(v);
        i += n;
        break;
      }
      case 't': {
        if (marks.empty()) return bad("TUPLE");
        size_t m = marks.back();
        marks.pop_back();
        // A REDUCE or TUPLEn in between may have taken the stack below its mark.
        if (m > stack.size()) return bad("TUPLE below its MARK");
        stack.push_back(tuple_from(m));
        break;
      }
      case ')': stack.push_back(std::make_shared<Tuple>()); break;
      case 0x85: case 0x86: case 0x87: {        // TUPLE1..3
        size_t n = op - 0x84;
        if (stack.size() < n) return bad("TUPLEn");
        stack.push_back(tuple_from(stack.size() - n));
        break;
      }
      case 'Q': {                               // BINPERSID
        if (stack.empty()) return bad("BINPERSID");
        auto t = std::get_if<std::shared_ptr<Tuple>>(&stack.back());
        if (!t || (*t)->items.size() < 3) return bad("persistent id");
        auto cls = std::get_if<Global>(&(*t)->items[1]);
        auto key = std::get_if<std::string>(&(*t)->items[2]);
        if (!cls || !key) return bad("persistent id");
        storage->type = cls->name;
        storage->key = *key;
        stack.back() = std::string("<storage>");
        break;
      }
      case 0x88: stack.push_back(true); break;  // NEWTRUE
      case 0x89: stack.push_back(false); break; // NEWFALSE
      case 'N': stack.push_back(std::monostate{}); break;
      case '}': stack.push_back(std::monostate{}); break;  // EMPTY_DICT
      case 'u': {                                          // SETITEMS
        if (marks.empty() || marks.back() > stack.size()) return bad("SETITEMS");
        stack.resize(marks.back());
        marks.pop_back();
        break;
      }
      case 'R': {                               // REDUCE
        if (stack.size() < 2) return bad("REDUCE");
        PValue args = stack.back();
        stack.pop_back();
        PValue fn = stack.back();
        stack.pop_back();
        auto g = std::get_if<Global>(&fn);
        if (g && g->name == "_rebuild_tensor_v2") {
          auto t = std::get_if<std::shared_ptr<Tuple>>(&args);
          if (!t || (*t)->items.size() < 4) return bad("_rebuild_tensor_v2 arguments");
          auto off = std::get_if<int64_t>(&(*t)->items[1]);
          if (!off || !ints((*t)->items[2], size) || !ints((*t)->items[3], stride)) return bad("tensor geometry");
          *offset = *off;
          have_call = true;
        }
        stack.push_back(std::monostate{});
        break;
      }
      case '.':                                 // STOP
        if (!have_call || storage->key.empty()) return bad("not a single tensor");
        return Status::Ok();
      default: {
        char buf[8];
        snprintf(buf, sizeof(buf), "0x%02x", op);
        return bad(std::string("opcode ") + buf);
      }
    }
  }
  return bad("no STOP");
}

// A view (offset, size, stride) that reads only inside a storage of
// `elements` and has no more elements than the storage: overlapping views
// (expand, stride 0) are refused, as torch.save of a dumped clone never makes them.
Status CheckView(const std::string& path, int64_t offset, const std::vector<int64_t>& size,
                 const std::vector<int64_t>& stride, int64_t elements) {
  auto bad = [&](const std::string& why) { return Error{path, "data.pkl", "bad tensor view: " + why}; };
  if (offset < 0) return bad("negative storage offset " + std::to_string(offset));
  int64_t count = 1, last = offset;
  for (size_t k = 0; k < size.size(); ++k) {
    if (size[k] < 0) return Error{path, "data.pkl", "bad tensor size " + std::to_string(size[k])};
    if (stride[k] < 0) return bad("negative stride " + std::to_string(stride[k]));
    if (__builtin_mul_overflow(count, size[k], &count)) return bad("element count overflows");
  }
  if (count == 0) return Status::Ok();
  for (size_t k = 0; k < size.size(); ++k) {
    int64_t reach;
    if (__builtin_mul_overflow(size[k] - 1, stride[k], &reach) || __builtin_add_overflow(last, reach, &last)) {
      return bad("extent overflows");
    }
  }
  if (offset >= elements || last >= elements) {
    return bad("reaches element " + std::to_string(last) + " of a storage of " + std::to_string(elements));
  }
  if (count > elements) {
    return bad("a view of " + std::to_string(count) + " elements over a storage of " + std::to_string(elements) +
               " (overlapping views are not supported)");
  }
  return Status::Ok();
}

}  // namespace

Result<Tensor> ReadPt(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  return ParsePt(file->text(), path);
}

Result<Tensor> ParsePt(std::string_view bytes, const std::string& path) {
  auto entries = ZipEntries(bytes, path);
  if (!entries.ok()) return entries.error();
  std::string prefix;
  std::string_view pkl;
  for (auto& [name, bytes] : *entries) {
    if (name.size() >= 8 && name.compare(name.size() - 8, 8, "data.pkl") == 0) {
      prefix = name.substr(0, name.size() - 8);
      pkl = bytes;
    }
  }
  if (pkl.empty()) return Error{path, "", "not a torch .pt file (no data.pkl)"};
  StorageRef storage;
  int64_t offset = 0;
  std::vector<int64_t> size, stride;
  GA_RETURN_IF_ERROR(RunPickle(pkl, path, &storage, &offset, &size, &stride));
  auto data = entries->find(prefix + "data/" + storage.key);
  if (data == entries->end()) return Error{path, "data/" + storage.key, "missing tensor storage"};
  struct Kind {
    const char* name;
    char kind;
    int width;
  };
  static const Kind kKinds[] = {{"FloatStorage", 'f', 4},  {"DoubleStorage", 'f', 8}, {"HalfStorage", 'f', 2},
                                {"BFloat16Storage", 'V', 2}, {"LongStorage", 'i', 8}, {"IntStorage", 'i', 4},
                                {"ShortStorage", 'i', 2},  {"CharStorage", 'i', 1},  {"ByteStorage", 'u', 1},
                                {"BoolStorage", 'b', 1}};
  const Kind* kind = nullptr;
  for (const Kind& k : kKinds) {
    if (storage.type == k.name) kind = &k;
  }
  if (kind == nullptr) return Error{path, "data.pkl", "unsupported storage type " + storage.type};
  if (size.size() != stride.size()) return Error{path, "data.pkl", "size and stride differ in length"};
  std::string_view raw = data->second;
  int64_t elements = static_cast<int64_t>(raw.size()) / kind->width;
  Tensor t;
  t.shape = size;
  t.dtype = std::string(1, kind->kind) + std::to_string(kind->width);
  // The geometry is checked against the storage before anything is
  // allocated: a crafted pickle (a stride-0 view of 2^34 elements over a few
  // floats, a negative stride, an offset past the end) must not cost memory.
  GA_RETURN_IF_ERROR(CheckView(path, offset, size, stride, elements));
  size_t count = 1;
  for (int64_t s : size) count *= static_cast<size_t>(s);
  t.values.resize(count);
  std::vector<int64_t> idx(size.size(), 0);
  for (size_t n = 0; n < count; ++n) {
    int64_t at = offset;
    for (size_t k = 0; k < size.size(); ++k) at += idx[k] * stride[k];
    t.values[n] = DecodeElement(raw.data() + at * kind->width, kind->kind, kind->width);
    for (size_t k = size.size(); k-- > 0;) {
      if (++idx[k] < size[k]) break;
      idx[k] = 0;
    }
  }
  return t;
}

}  // namespace graph_ascend::compare
