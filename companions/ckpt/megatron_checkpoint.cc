#include "ckpt/megatron_checkpoint.h"

#include <cmath>
#include <filesystem>
#include <regex>
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
    return Error{tracker.string(), "line 1", "expected an iteration number or 'release', got '" + t + "'"};
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

const std::regex kLayer(R"(layers\.(\d+)\.)");
const std::regex kExpert(R"(experts\.(\d+)\.)");

// Replaces the first "<word>.<n>." with "<word>.<n + shift>.".
std::string Renumber(const std::string& name, const std::regex& re, const char* word, int64_t value) {
  std::smatch m;
  if (!std::regex_search(name, m, re)) return name;
  return name.substr(0, m.position(0)) + word + std::to_string(value) + "." + name.substr(m.position(0) + m.length(0));
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

  for (int x = 0; x < ck.ep; ++x) {
    int64_t layers_per_stage = 0;
    for (int p = 0; p < ck.pp; ++p) {
      // name + "/" + vpp stage -> the TP shards, in TP order
      std::map<std::string, std::vector<ShardRef>> partition;
      std::vector<std::string> order;
      for (int t = 0; t < ck.tp; ++t) {
        auto f = open(rank_dir(t, p, x));
        if (!f.ok()) return f.error();
        auto chunks = ModelChunks(**f);
        if (!chunks.ok()) return chunks.error();
        for (size_t v = 0; v < chunks->size(); ++v) {
          std::vector<std::pair<std::string, TensorMeta>> flat;
          GA_RETURN_IF_ERROR(Flatten(*(*chunks)[v], "", 0, (*f)->path(), &flat));
          for (auto& [name, meta] : flat) {
            std::string key = ToMcoreName(name) + "/" + std::to_string(v);
            auto& shards = partition[key];
            if (shards.empty()) order.push_back(key);
            shards.push_back(ShardRef{*f, std::move(meta)});
          }
        }
      }
      if (layers_per_stage == 0) {
        // Layers per stage = highest local layer index + 1 (of pipeline rank 0), as msprobe.
        layers_per_stage = 1;
        bool any = false;
        for (const auto& key : order) {
          std::smatch m;
          if (std::regex_search(key, m, kLayer)) {
            int64_t idx = std::stoll(m[1].str());
            layers_per_stage = any ? std::max(layers_per_stage, idx + 1) : idx + 1;
            any = true;
          }
        }
      }
      for (const std::string& key : order) {
        std::vector<ShardRef>& shards = partition[key];
        size_t slash = key.rfind('/');
        std::string name = key.substr(0, slash);
        int vpp = std::stoi(key.substr(slash + 1));
        const std::string where = shards[0].file->path();
        if (static_cast<int>(shards.size()) != ck.tp) {
          return Error{where, "key " + name,
                       "parameter present in " + std::to_string(shards.size()) + " of " + std::to_string(ck.tp) +
                           " tensor-parallel ranks"};
        }
        ModelParam param;
        param.concat_dim = -1;
        for (const char* c : kColumnParallel)
          if (Contains(name, c)) param.concat_dim = 0;
        if (param.concat_dim < 0)
          for (const char* r : kRowParallel)
            if (Contains(name, r)) param.concat_dim = 1;
        if (ck.tp == 1) param.concat_dim = -1;
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
            if (a != b) {
              return Error{s.file->path(), "key " + name, "TP shards differ in shape outside dim " + std::to_string(d)};
            }
          }
          param.shards = shards;
        } else {
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
                  double d = std::fabs(va[k] - vb[k]);
                  same = (std::isnan(va[k]) && std::isnan(vb[k])) || d <= 1e-8 + 1e-5 * std::fabs(vb[k]);
                }
                if (!same) break;
              }
            }
            if (!same) {
              ck.warnings.push_back(name + ": differs between tensor-parallel ranks 0 and " + std::to_string(s) +
                                    " of " + ck.dir + " (the first is used)");
              break;
            }
          }
        }
        // Local (virtual) pipeline stage layer -> global layer; local expert -> global expert.
        std::smatch m;
        if (std::regex_search(name, m, kLayer)) {
          int64_t local = std::stoll(m[1].str());
          name = Renumber(name, kLayer, "layers.", local + (static_cast<int64_t>(ck.pp) * vpp + p) * layers_per_stage);
        }
        if (ck.num_experts > 0 && std::regex_search(name, m, kExpert)) {
          int64_t local = std::stoll(m[1].str());
          std::string word = m.str(0).substr(0, m.str(0).find('.') + 1);
          name = Renumber(name, kExpert, word.c_str(), local + x * (ck.num_experts / ck.ep));
        }
        ck.params[name] = std::move(param);
      }
    }
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
    for (size_t i = 0; i < n; ++i) out[i] = compare::DecodeElement(p + i * type.width, type.kind, type.width);
    // Streamed once: the pages read are handed back at once, so memory stays at a few chunks.
    s.file->Release(std::string_view(p, n * static_cast<size_t>(type.width)));
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
