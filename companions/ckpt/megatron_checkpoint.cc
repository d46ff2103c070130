#include "ckpt/megatron_checkpoint.h"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

#include "base/mapped_file.h"
#include "compare/tensor_compare.h"

namespace graph_ascend::ckpt {
namespace fs = std::filesystem;
namespace {

using Kind = PickleValue::Kind;

// Parameters split along dim 0 (weights and biases) and along dim 1 (weights
// only) by Megatron's column- and row-parallel layers, matched as substrings
// of the name as msprobe does.
const char* const kColumnParallel[] = {"linear_qkv", "linear_fc1", "word_embeddings.weight", "output_layer.weight"};
const char* const kRowParallel[] = {"linear_fc2.weight", "linear_proj.weight"};

bool Contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

std::string Pad(int v, int width) {
  std::string s = std::to_string(v);
  return std::string(width > static_cast<int>(s.size()) ? width - s.size() : 0, '0') + s;
}

Result<std::string> IterationDir(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return Error{path, "", "not a checkpoint folder"};
  fs::path tracker = fs::path(path) / "latest_checkpointed_iteration.txt";
  if (!fs::exists(tracker, ec)) return path;
  auto text = ReadFileToString(tracker.string());
  if (!text.ok()) return text.error();
  std::string t = *text;
  while (!t.empty() && isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  while (!t.empty() && isspace(static_cast<unsigned char>(t.front()))) t.erase(t.begin());
  std::string dir;
  if (t == "release") {
    dir = "release";
  } else if (!t.empty() && t.size() <= 9 && t.find_first_not_of("0123456789") == std::string::npos) {
    dir = "iter_" + Pad(std::stoi(t), 7);
  } else {
    return Error{tracker.string(), "line 1", "expected an iteration number or 'release', got '" + QuoteBytes(t) + "'"};
  }
  fs::path full = fs::path(path) / dir;
  if (!fs::is_directory(full, ec)) {
    return Error{full.string(), "", "iteration folder named by " + tracker.string() + " is missing"};
  }
  return full.string();
}

// Walks nested dicts; tensors become name -> meta ("a.b.c").
Status Flatten(const PickleValue& v, const std::string& prefix, int depth, const std::string& file,
               std::vector<std::pair<std::string, TensorMeta>>* out) {
  if (depth > 64) return Error{file, prefix, "state dict nested too deeply"};
  const PickleValue* d = &v;
  for (const auto& [k, x] : d->dict) {
    if (k->kind != Kind::kString) continue;
    std::string name = prefix.empty() ? k->s : prefix + "." + k->s;
    while (!name.empty() && name.front() == '.') name.erase(name.begin());
    while (!name.empty() && name.back() == '.') name.pop_back();
    if (x->kind == Kind::kDict) {
      GA_RETURN_IF_ERROR(Flatten(*x, name, depth + 1, file, out));
    } else if (x->kind == Kind::kTensor) {
      out->emplace_back(name, x->tensor);
    }
  }
  return Status::Ok();
}

// The model chunks of one rank file: "model", or "model0", "model1", ... with VPP.
Result<std::vector<const PickleValue*>> ModelChunks(const TorchFile& f) {
  std::vector<const PickleValue*> chunks;
  if (f.root().kind != Kind::kDict) return Error{f.path(), "data.pkl", "checkpoint is not a dict"};
  if (const PickleValue* m = f.root().Get("model")) {
    chunks.push_back(m);
  } else {
    for (int v = 0;; ++v) {
      const PickleValue* m = f.root().Get("model" + std::to_string(v));
      if (!m) break;
      chunks.push_back(m);
    }
  }
  if (chunks.empty()) return Error{f.path(), "key model", "no 'model' or 'model0' entry in the checkpoint"};
  for (const PickleValue* c : chunks) {
    if (c->kind != Kind::kDict) return Error{f.path(), "key model", "the model entry is not a state dict"};
  }
  return chunks;
}

int64_t IntArg(const PickleValue* args, const char* name, int64_t fallback) {
  const PickleValue* v = args ? args->Get(name) : nullptr;
  return v && v->is_int() ? v->i : fallback;
}

// The first "<word><digits>." in `name` (what the regex <word>(\d+)\. finds;
// no std::regex: its recursion grows with the input): the digits' place and
// value; false if there is none (an index of more than 12 digits is none).
struct Index {
  size_t begin = 0, end = 0;
  int64_t value = 0;
};
bool FindIndex(const std::string& name, const std::string& word, Index* out) {
  for (size_t at = name.find(word); at != std::string::npos; at = name.find(word, at + 1)) {
    size_t d = at + word.size(), e = d;
    while (e < name.size() && isdigit(static_cast<unsigned char>(name[e]))) ++e;
    if (e > d && e - d <= 12 && e < name.size() && name[e] == '.') {
      *out = Index{d, e, std::stoll(name.substr(d, e - d))};
      return true;
    }
  }
  return false;
}

// `name` with the digits at `i` replaced by `value`.
std::string Renumber(const std::string& name, const Index& i, int64_t value) {
  return name.substr(0, i.begin) + std::to_string(value) + name.substr(i.end);
}

// The TP shards of one parameter (in TP order) as one parameter of the whole
// model: concatenated along dim 0 (column-parallel) or 1 (row-parallel), or
// the first of identical copies (replicated; a warning when they differ).
Result<ModelParam> MergeTensorParallel(const std::string& name, const std::vector<ShardRef>& shards, int tp,
                                       const std::string& dir, std::vector<std::string>* warnings) {
  const std::string where = shards[0].file->path();
  if (static_cast<int>(shards.size()) != tp) {
    return Error{where, "key " + name,
                 "parameter present in " + std::to_string(shards.size()) + " of " + std::to_string(tp) +
                     " tensor-parallel ranks"};
  }
  ModelParam param;
  param.concat_dim = -1;
  for (const char* c : kColumnParallel)
    if (Contains(name, c)) param.concat_dim = 0;
  if (param.concat_dim < 0)
    for (const char* r : kRowParallel)
      if (Contains(name, r)) param.concat_dim = 1;
  if (tp == 1) param.concat_dim = -1;
  param.shape = shards[0].meta.shape;
  if (param.concat_dim >= 0) {
    size_t d = static_cast<size_t>(param.concat_dim);
    if (param.shape.size() <= d) {
      return Error{where, "key " + name,
                   "a " + std::to_string(param.shape.size()) + "-d tensor cannot be tensor-parallel along dim " +
                       std::to_string(d)};
    }
    param.shape[d] = 0;
    for (const ShardRef& s : shards) {
      std::vector<int64_t> a = s.meta.shape, b = shards[0].meta.shape;
      if (a.size() != b.size()) return Error{s.file->path(), "key " + name, "TP shards differ in rank"};
      param.shape[d] += a[d];
      a[d] = b[d] = 0;
      if (a != b)
        return Error{s.file->path(), "key " + name, "TP shards differ in shape outside dim " + std::to_string(d)};
    }
    int64_t numel = 1;
    for (int64_t n : param.shape) {
      if (__builtin_mul_overflow(numel, n, &numel) || numel > (int64_t{1} << 48)) {
        return Error{where, "key " + name, "merged tensor too large"};
      }
    }
    param.shards = shards;
    return param;
  }
  param.shards = {shards[0]};
  // The copies of a replicated parameter should agree (msprobe: np.allclose, then keep the first).
  for (size_t s = 1; s < shards.size(); ++s) {
    bool same = shards[s].meta.shape == shards[0].meta.shape;
    if (same) {
      ModelParam a{param.shape, -1, {shards[0]}}, b{param.shape, -1, {shards[s]}};
      ParamReader ra(a), rb(b);
      std::vector<double> va(4096), vb(4096);
      for (;;) {
        auto na = ra.Read(va.data(), va.size());
        if (!na.ok()) return na.error();
        auto nb = rb.Read(vb.data(), vb.size());
        if (!nb.ok()) return nb.error();
        if (*na == 0) break;
        for (size_t k = 0; k < *na && same; ++k) {
          double diff = std::fabs(va[k] - vb[k]);
          same = (std::isnan(va[k]) && std::isnan(vb[k])) || diff <= 1e-8 + 1e-5 * std::fabs(vb[k]);
        }
        if (!same) break;
      }
    }
    if (!same) {
      warnings->push_back(name + ": differs between tensor-parallel ranks 0 and " + std::to_string(s) + " of " + dir +
                          " (the first is used)");
      break;
    }
  }
  return param;
}

}  // namespace

std::string ToMcoreName(std::string name) {
  // Derived from msprobe 26.2.0's ckpt_compare/name_mapping.yaml (data only), in its order.
  static const std::pair<const char*, const char*> kMap[] = {
      {"self_attention.linear_qkv.layer_norm_", "input_layernorm."},
      {"language_model.", ""},
      {"encoder", "decoder"},
      {".input_norm.", ".input_layernorm."},
      {"query_key_value", "linear_qkv"},
      {".dense.", ".linear_proj."},
      {"post_attention_norm", "pre_mlp_layernorm"},
      {"dense_h_to_4h", "linear_fc1"},
      {"dense_4h_to_h", "linear_fc2"},
      {"mlp.local_experts", "mlp.experts.local_experts"},
      {"final_norm", "final_layernorm"},
      {"word_embeddings_for_head", "output_layer"},
  };
  for (const auto& [from, to] : kMap) {
    std::string out;
    size_t at = 0, len = strlen(from);
    for (size_t hit; (hit = name.find(from, at)) != std::string::npos; at = hit + len) {
      out += name.substr(at, hit - at) + to;
    }
    name = out + name.substr(at);
  }
  return name;
}

std::string MegatronCheckpoint::Layout() const {
  std::string s = "TP " + std::to_string(tp);
  if (pp > 1) s += " x PP " + std::to_string(pp);
  if (vpp > 1) s += " x VPP " + std::to_string(vpp);
  if (ep > 1) s += " x EP " + std::to_string(ep);
  return s;
}

int64_t ModelParam::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Result<MegatronCheckpoint> LoadMegatronCheckpoint(const std::string& path) {
  auto dir = IterationDir(path);
  if (!dir.ok()) return dir.error();
  MegatronCheckpoint ck;
  ck.dir = *dir;
  std::set<std::string> present;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(ck.dir, ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind("mp_rank_", 0) == 0 && e.is_directory()) present.insert(n);
  }
  if (ec) return Error{ck.dir, "", ec.message()};
  if (present.empty()) return Error{ck.dir, "", "no mp_rank_* folders (not a Megatron checkpoint iteration)"};

  // The first rank's pickled args give the layout (msprobe reads the same
  // fields); without args the folder names give it.
  std::map<std::string, std::unique_ptr<TorchFile>> opened;
  auto open = [&](const std::string& rank) -> Result<TorchFile*> {
    auto& slot = opened[rank];
    if (!slot) {
      std::string file = (fs::path(ck.dir) / rank / "model_optim_rng.pt").string();
      if (!fs::exists(file, ec)) return Error{file, "", "missing rank checkpoint"};
      auto f = TorchFile::Open(file);
      if (!f.ok()) return f.error();
      slot = std::make_unique<TorchFile>(std::move(*f));
    }
    return slot.get();
  };
  auto first = open(*present.begin());
  if (!first.ok()) return first.error();
  const PickleValue* args = (*first)->root().kind == Kind::kDict ? (*first)->root().Get("args") : nullptr;
  if (args && args->kind == Kind::kObject && args->Get("tensor_model_parallel_size")) {
    ck.tp = static_cast<int>(IntArg(args, "tensor_model_parallel_size", 1));
    ck.pp = static_cast<int>(IntArg(args, "pipeline_model_parallel_size", 1));
    ck.ep = static_cast<int>(IntArg(args, "expert_model_parallel_size", 1));
    ck.num_experts = IntArg(args, "num_experts", 0);
  } else {
    std::set<std::string> t, p, x;
    for (const std::string& r : present) {
      std::vector<std::string> parts;
      for (size_t a = 8, b; a <= r.size(); a = b + 1) {
        b = r.find('_', a);
        if (b == std::string::npos) b = r.size();
        parts.push_back(r.substr(a, b - a));
      }
      t.insert(parts[0]);
      if (parts.size() > 1) p.insert(parts[1]);
      if (parts.size() > 2) x.insert(parts[2]);
    }
    ck.tp = static_cast<int>(t.size());
    ck.pp = static_cast<int>(std::max<size_t>(1, p.size()));
    ck.ep = static_cast<int>(std::max<size_t>(1, x.size()));
    ck.warnings.push_back((*first)->path() + ": no Megatron args; layout taken from the folder names");
  }
  if (ck.tp < 1 || ck.pp < 1 || ck.ep < 1 || ck.tp * ck.pp * ck.ep > 65536) {
    return Error{(*first)->path(), "key args", "implausible parallel sizes"};
  }
  auto rank_dir = [&](int t, int p, int x) {
    std::string r = "mp_rank_" + Pad(t, 2);
    if (ck.pp > 1) r += "_" + Pad(p, 3);
    if (ck.ep > 1) r += "_" + Pad(x, 3);
    return r;
  };
  std::set<std::string> expected;
  for (int x = 0; x < ck.ep; ++x)
    for (int p = 0; p < ck.pp; ++p)
      for (int t = 0; t < ck.tp; ++t) expected.insert(rank_dir(t, p, x));
  if (expected != present) {
    std::string why;
    for (const auto& r : expected)
      if (!present.count(r)) why += " missing " + r;
    for (const auto& r : present)
      if (!expected.count(r)) why += " unexpected " + r;
    return Error{ck.dir, "",
                 "rank folders do not match TP " + std::to_string(ck.tp) + " x PP " + std::to_string(ck.pp) +
                     " x EP " + std::to_string(ck.ep) + " of the checkpoint's args:" + why};
  }

  if (ck.num_experts > 0 && ck.num_experts % ck.ep != 0) {
    return Error{(*first)->path(), "key args",
                 "num_experts " + std::to_string(ck.num_experts) + " is not a multiple of EP " + std::to_string(ck.ep)};
  }

  // One model chunk of one pipeline stage of one expert rank: its parameters'
  // TP shards, and how many transformer layers it holds (local numbering).
  struct Chunk {
    int x = 0, p = 0, v = 0;
    std::vector<std::string> order;
    std::map<std::string, std::vector<ShardRef>> shards;
    int64_t layers = 0;
  };
  std::vector<Chunk> chunks;  // x major, then v, then p: the order of the model's layers
  for (int x = 0; x < ck.ep; ++x) {
    std::vector<std::vector<Chunk>> by_stage(static_cast<size_t>(ck.pp));
    for (int p = 0; p < ck.pp; ++p) {
      std::vector<Chunk>& stage = by_stage[static_cast<size_t>(p)];
      for (int t = 0; t < ck.tp; ++t) {
        auto f = open(rank_dir(t, p, x));
        if (!f.ok()) return f.error();
        auto models = ModelChunks(**f);
        if (!models.ok()) return models.error();
        if (t == 0) {
          stage.resize(models->size());
        } else if (models->size() != stage.size()) {
          return Error{(*f)->path(), "key model",
                       std::to_string(models->size()) + " model chunks, tensor-parallel rank 0 has " +
                           std::to_string(stage.size())};
        }
        for (size_t v = 0; v < models->size(); ++v) {
          Chunk& c = stage[v];
          c.x = x, c.p = p, c.v = static_cast<int>(v);
          std::vector<std::pair<std::string, TensorMeta>> flat;
          GA_RETURN_IF_ERROR(Flatten(*(*models)[v], "", 0, (*f)->path(), &flat));
          for (auto& [name, meta] : flat) {
            auto& list = c.shards[ToMcoreName(name)];
            if (list.empty()) c.order.push_back(ToMcoreName(name));
            list.push_back(ShardRef{*f, std::move(meta)});
          }
        }
      }
      if (stage.size() != by_stage[0].size()) {
        return Error{
            (fs::path(ck.dir) / rank_dir(0, p, x) / "model_optim_rng.pt").string(), "key model",
            std::to_string(stage.size()) + " model chunks, pipeline stage 0 has " + std::to_string(by_stage[0].size())};
      }
    }
    ck.vpp = static_cast<int>(by_stage[0].size());
    for (size_t v = 0; v < by_stage[0].size(); ++v)
      for (auto& stage : by_stage) chunks.push_back(std::move(stage[v]));
  }

  // Where each global name came from, to refuse a merge that gives one name twice.
  std::map<std::string, const Chunk*> origin;
  int64_t offset = 0;
  for (Chunk& c : chunks) {
    if (c.p == 0 && c.v == 0) offset = 0;  // each expert rank holds the whole layer stack again
    for (const std::string& key : c.order) {
      Index i;
      if (FindIndex(key, "layers.", &i)) c.layers = std::max<int64_t>(c.layers, i.value + 1);
    }
    for (const std::string& local : c.order) {
      auto param = MergeTensorParallel(local, c.shards[local], ck.tp, ck.dir, &ck.warnings);
      if (!param.ok()) return param.error();
      // Local layer -> global: the layers of the chunks before this one (msprobe
      // multiplies the stage index by the first stage's layer count, which
      // misnumbers uneven pipelines); local expert -> global expert.
      std::string name = local;
      Index i;
      if (FindIndex(name, "layers.", &i)) name = Renumber(name, i, i.value + offset);
      bool expert = FindIndex(name, "experts.", &i);
      if (expert && ck.num_experts > 0) name = Renumber(name, i, i.value + c.x * (ck.num_experts / ck.ep));
      auto [it, added] = origin.emplace(name, &c);
      if (!added) {
        const Chunk& o = *it->second;
        // Non-expert parameters are replicated on every expert rank: the first copy is used.
        if (o.x != c.x && !expert) continue;
        return Error{param->shards[0].file->path(), "key " + local,
                     "inconsistent layout: global parameter " + name + " is also given by " +
                         o.shards.at(o.order.front()).front().file->path() +
                         (expert ? " (expert-parallel ranks without distinct expert numbers; num_experts " +
                                       std::to_string(ck.num_experts) + " in args)"
                                 : "")};
      }
      ck.params[name] = std::move(*param);
    }
    offset += c.layers;
  }
  for (auto& [rank, f] : opened) ck.files.push_back(std::move(f));
  return ck;
}

Status ParamReader::DecodeShard(const ShardRef& s, int64_t flat, size_t n, double* out) {
  ElementType type;
  auto bytes = s.file->TensorBytes(s.meta, &type);
  if (!bytes.ok()) return bytes.error();
  const std::vector<int64_t>& shape = s.meta.shape;
  const std::vector<int64_t>& stride = s.meta.stride;
  bool contiguous = true;
  int64_t expect = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] != 1 && stride[k] != expect) contiguous = false;
    expect *= shape[k];
  }
  const char* base = bytes->data();
  if (contiguous) {
    const char* p = base + (s.meta.offset + flat) * type.width;
    if (type.kind == 'f' && type.width == 4) {
      for (size_t i = 0; i < n; ++i) {
        float f;
        memcpy(&f, p + 4 * i, 4);
        out[i] = f;
      }
    } else if (type.kind == 'V') {  // bfloat16: the upper half of a float32
      for (size_t i = 0; i < n; ++i) {
        uint16_t b;
        memcpy(&b, p + 2 * i, 2);
        uint32_t u = static_cast<uint32_t>(b) << 16;
        float f;
        memcpy(&f, &u, 4);
        out[i] = f;
      }
    } else {
      for (size_t i = 0; i < n; ++i) out[i] = compare::DecodeElement(p + i * type.width, type.kind, type.width);
    }
    // Streamed once: the pages read so far are handed back at once (the one
    // this chunk started in too, which the chunk before it finished), so
    // memory stays at a few chunks.
    static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const char* from = std::max(base, reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(p) & ~(page - 1)));
    s.file->Release(std::string_view(from, static_cast<size_t>(p - from) + n * static_cast<size_t>(type.width)));
    return Status::Ok();
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t rest = flat + static_cast<int64_t>(i), at = s.meta.offset;
    for (size_t k = shape.size(); k-- > 0;) {
      at += (rest % shape[k]) * stride[k];
      rest /= shape[k];
    }
    out[i] = compare::DecodeElement(base + at * type.width, type.kind, type.width);
  }
  return Status::Ok();
}

Result<size_t> ParamReader::Read(double* out, size_t max) {
  size_t got = 0;
  const std::vector<int64_t>& shape = param_.shape;
  int d = param_.concat_dim < 0 ? 0 : param_.concat_dim;
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < d; ++k) outer *= shape[k];
  for (size_t k = static_cast<size_t>(d) + 1; k < shape.size(); ++k) inner *= shape[k];
  if (param_.concat_dim < 0) {
    outer = 1;
    inner = param_.numel();
  }
  while (!done_ && got < max) {
    if (outer_ >= outer || param_.numel() == 0) {
      done_ = true;
      break;
    }
    const ShardRef& s = param_.shards[shard_];
    int64_t block = param_.concat_dim < 0 ? inner : s.meta.shape[static_cast<size_t>(d)] * inner;
    size_t n = static_cast<size_t>(std::min<int64_t>(block - within_, static_cast<int64_t>(max - got)));
    GA_RETURN_IF_ERROR(DecodeShard(s, outer_ * block + within_, n, out + got));
    got += n;
    within_ += static_cast<int64_t>(n);
    if (within_ == block) {
      within_ = 0;
      if (++shard_ == param_.shards.size()) {
        shard_ = 0;
        ++outer_;
      }
    }
  }
  return got;
}

}  // namespace graph_ascend::ckpt
