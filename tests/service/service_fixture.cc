#include "service_fixture.h"

#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <stdexcept>

#include "compare/legend.h"
#include "compare/pair_compare.h"
#include "vis/vis_file.h"

namespace graph_ascend::service::testing {
namespace {

void Check(const Status& s) {
  if (!s.ok()) throw std::runtime_error(s.error().ToString());
}

void AddStat(vis::Item* item, const char* name, double v) {
  vis::Field* f = item->add_field();
  f->set_name(name);
  f->mutable_value()->set_number(v);
}

vis::Item MakeItem(const std::string& key, vis::ItemState state, double scale) {
  vis::Item it;
  it.set_key(key);
  it.set_state(state);
  vis::Field* t = it.add_field();
  t->set_name("type");
  t->mutable_value()->set_text("torch.Tensor");
  AddStat(&it, "Max", 10 * scale);
  AddStat(&it, "Min", -10 * scale);
  AddStat(&it, "Mean", 1 * scale);
  AddStat(&it, "Norm", 5 * scale);
  return it;
}

vis::NodeDetail MakeDetail(const std::string& name, double scale, int32_t stack_id) {
  vis::NodeDetail d;
  *d.add_input() = MakeItem(name + ".input.0", vis::STATE_INPUT, 1.0);
  *d.add_output() = MakeItem(name + ".output.0", vis::STATE_OUTPUT, scale);
  d.set_stack_id(stack_id);
  return d;
}

}  // namespace

int32_t FixtureGraph::Add(const std::string& name, int32_t parent, uint32_t type) {
  nodes.push_back(FixtureNode{name, parent, type, -1, 0});
  return static_cast<int32_t>(nodes.size() - 1);
}

int32_t FixtureGraph::Find(const std::string& name) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == name) return static_cast<int32_t>(i);
  }
  return -1;
}

FixtureGraph ResnetLike() {
  FixtureGraph g;
  g.Add("DefaultModel", -1);
  auto leaves = [&](const std::vector<std::string>& names, const std::string& dir) {
    for (const auto& n : names) g.Add("Module." + n + "." + dir + ".0", 0);
  };
  auto layers = [&](const std::string& dir, bool reverse) {
    for (int k = 0; k < 4; ++k) {
      int layer = reverse ? 4 - k : k + 1;
      std::string l = "layer" + std::to_string(layer);
      int32_t seq = g.Add("Module." + l + ".Sequential." + dir + ".0", 0);
      for (int j = 0; j < 2; ++j) {
        std::string b = "Module." + l + "." + std::to_string(j);
        int32_t block = g.Add(b + ".BasicBlock." + dir + ".0", seq);
        g.Add(b + ".conv1.Conv2d." + dir + ".0", block);
        g.Add(b + ".bn1.BatchNorm2d." + dir + ".0", block);
      }
    }
  };
  leaves({"conv1.Conv2d", "bn1.BatchNorm2d", "relu.ReLU", "maxpool.MaxPool2d"}, "forward");
  layers("forward", false);
  g.Add("Module.avgpool.AdaptiveAvgPool2d.forward.0", 0);
  g.Add("Module.fc.Linear.forward.0", 0);
  g.Add("Module.fc.Linear.backward.0", 0);
  g.Add("Module.avgpool.AdaptiveAvgPool2d.backward.0", 0);
  layers("backward", true);
  leaves({"maxpool.MaxPool2d", "relu.ReLU", "bn1.BatchNorm2d", "conv1.Conv2d"}, "backward");
  g.nodes[static_cast<size_t>(g.Find("Module.relu.ReLU.forward.0"))].overflow = vis::OVERFLOW_CRITICAL;
  g.nodes[static_cast<size_t>(g.Find("Module.layer2.0.conv1.Conv2d.forward.0"))].overflow = vis::OVERFLOW_HIGH;
  return g;
}

void StatisticsLegend(vis::FileMeta* meta) {
  const char* colors[5] = {"#FFFCF3", "#FFEDBE", "#FFDC7F", "#FFC62E", "#FF704D"};
  for (int i = 0; i < 5; ++i) {
    vis::ColorBucket* b = meta->add_legend();
    b->set_color(colors[i]);
    b->set_lo(0.2 * i);
    b->set_hi(0.2 * (i + 1));
    b->set_name(std::to_string(0.2 * i).substr(0, 3) + "-" + std::to_string(0.2 * (i + 1)).substr(0, 3));
  }
  vis::ColorBucket* grey = meta->add_legend();
  grey->set_color("#C7C7C7");
  grey->set_unmatched(true);
  grey->set_name("unmatched");
}

void WriteCompare(const std::string& path, const FixtureGraph& g, const FixtureOptions& options) {
  auto writer = vis::VisWriter::Create(path);
  if (!writer.ok()) throw std::runtime_error(writer.error().ToString());
  const bool compare = options.kind == vis::GRAPH_COMPARE;
  const uint32_t n = static_cast<uint32_t>(g.nodes.size());
  std::set<std::string> unmatched(options.unmatched.begin(), options.unmatched.end());

  std::vector<int32_t> micro(n, -1);
  uint32_t first_level = 0;
  for (uint32_t i = 1; i < n; ++i) {
    if (g.nodes[i].parent != 0) continue;
    micro[i] = options.micro_steps > 1 ? static_cast<int32_t>(first_level * options.micro_steps / 20) : 0;
    micro[i] = std::min<int32_t>(micro[i], static_cast<int32_t>(options.micro_steps) - 1);
    ++first_level;
  }

  vis::FileMeta meta;
  meta.set_format_version(vis::kFormatVersion);
  meta.set_writer("service test fixture");
  meta.set_kind(options.kind);
  meta.set_mode(compare ? options.mode : vis::MODE_NONE);
  meta.set_task(options.mode == vis::MODE_MD5 ? "md5" : "summary");
  meta.set_micro_steps(options.micro_steps);
  meta.mutable_npu()->set_root("DefaultModel");
  meta.mutable_npu()->set_node_count(n);
  if (compare) {
    meta.mutable_bench()->set_root("DefaultModel");
    meta.mutable_bench()->set_node_count(n);
    StatisticsLegend(&meta);
    if (options.grades) {
      compare::SetGradeLegend(&meta);
      meta.set_grading(vis::GRADING_26);
    }
  }
  if (!options.divergent.empty()) {
    vis::DivergenceRanking ranking;
    for (const std::string& name : options.divergent) {
      vis::DivergenceEntry* e = ranking.add_entry();
      e->set_node(static_cast<uint32_t>(g.Find(name)));
      e->set_reason(vis::DIVERGENCE_OUTPUTS);
      e->set_output_error(0.5);
    }
    Check((*writer)->WriteDivergence(ranking));
    meta.set_divergence_ranked(true);
    meta.set_divergence_count(static_cast<uint32_t>(options.divergent.size()));
    meta.set_first_divergence(options.first_divergence.empty() ? options.divergent[0] : options.first_divergence);
    meta.set_first_divergence_reason(vis::DIVERGENCE_OUTPUTS);
    meta.set_first_divergence_is_communication(options.first_is_communication);
    for (int32_t r : options.first_peers) meta.add_first_divergence_peers(r);
  }
  Check((*writer)->WriteMeta(meta));

  // Details first: the NPU precision comes from ComparePair, as the builder's.
  std::vector<vis::NodeDetail> npu_detail(n), bench_detail(n);
  std::vector<double> precision(n, std::numeric_limits<double>::quiet_NaN());
  std::vector<double> grade(n, std::numeric_limits<double>::quiet_NaN());
  std::vector<bool> matched(n, false);
  for (uint32_t i = 0; i < n; ++i) {
    const std::string& name = g.nodes[i].name;
    double r = 0.05 + (i % 10) / 10.0;
    npu_detail[i] = MakeDetail(name, 1.0 + r, static_cast<int32_t>(i % 2));
    bench_detail[i] = MakeDetail(name, 1.0, static_cast<int32_t>(i % 2));
    matched[i] = compare && !unmatched.count(name);
    if (matched[i] && i != 0) {
      compare::PairVerdict v = compare::ComparePair(options.mode, name, &npu_detail[i], bench_detail[i], nullptr);
      if (v.has_precision) precision[i] = v.precision_index;
      if (options.grades) grade[i] = (i % 3) / 2.0;  // pass, warning, error in turn
    }
  }

  std::vector<std::vector<uint32_t>> children(n);
  for (uint32_t k = 1; k < n; ++k) children[static_cast<size_t>(g.nodes[k].parent)].push_back(k);

  for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
    if (side == vis::SIDE_BENCH && !compare) break;
    // Two index chunks, detail blocks of 16 nodes, one stack chunk.
    for (uint32_t first : {0u, 30u}) {
      uint32_t end = first == 0 ? std::min(30u, n) : n;
      if (first >= end) continue;
      vis::NodeIndexChunk c;
      c.set_first(first);
      for (uint32_t i = first; i < end; ++i) {
        const FixtureNode& node = g.nodes[i];
        c.add_name(node.name);
        c.add_node_type(node.type);
        c.add_parent(node.parent);
        for (uint32_t k : children[i]) c.add_children(k);
        c.add_child_count(static_cast<uint32_t>(children[i].size()));
        c.add_micro_step(micro[i]);
        c.add_precision_index(side == vis::SIDE_NPU ? precision[i] : std::numeric_limits<double>::quiet_NaN());
        if (options.grades) c.add_grade_index(side == vis::SIDE_NPU ? grade[i] : std::nan(""));
        c.add_overflow_level(node.overflow);
        c.add_matched(matched[i] ? static_cast<int32_t>(i) : -1);
        c.add_flags(vis::FLAG_HAS_DATA);
      }
      Check((*writer)->WriteIndexChunk(side, c));
    }
    for (uint32_t first = 0; first < n; first += 16) {
      vis::NodeDetailBlock b;
      b.set_first(first);
      for (uint32_t i = first; i < std::min(n, first + 16); ++i) {
        *b.add_detail() = side == vis::SIDE_NPU ? npu_detail[i] : bench_detail[i];
      }
      Check((*writer)->WriteDetailBlock(side, b));
    }
    vis::StackChunk s;
    s.set_first(0);
    s.add_stack()->add_frame("File \"train.py\", line 10, in forward");
    s.add_stack()->add_frame("File \"model.py\", line 42, in forward");
    Check((*writer)->WriteStackChunk(side, s));
  }
  Check((*writer)->Commit());
}

void RewriteToc(const std::string& path, const std::function<void(vis::TableOfContents*)>& edit) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto le64 = [&](size_t at) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + static_cast<size_t>(i)]);
    return v;
  };
  const size_t trailer = bytes.size() - vis::kTrailerSize;
  const uint64_t toc_at = le64(trailer), toc_size = le64(trailer + 8);
  std::string packed = bytes.substr(static_cast<size_t>(toc_at), static_cast<size_t>(toc_size));
  std::string plain(ZSTD_getFrameContentSize(packed.data(), packed.size()), '\0');
  ZSTD_decompress(plain.data(), plain.size(), packed.data(), packed.size());
  vis::TableOfContents toc;
  if (!toc.ParseFromString(plain)) throw std::runtime_error(path + ": no table of contents");
  edit(&toc);
  plain = toc.SerializeAsString();
  packed.assign(ZSTD_compressBound(plain.size()), '\0');
  packed.resize(ZSTD_compress(packed.data(), packed.size(), plain.data(), plain.size(), 3));
  std::string out = bytes.substr(0, static_cast<size_t>(toc_at)) + packed;
  std::string tail(vis::kTrailerSize, '\0');
  for (int i = 0; i < 8; ++i) {
    tail[static_cast<size_t>(i)] = static_cast<char>((toc_at >> (8 * i)) & 0xFF);
    tail[static_cast<size_t>(8 + i)] = static_cast<char>((packed.size() >> (8 * i)) & 0xFF);
  }
  std::copy(vis::kTrailerMagic, vis::kTrailerMagic + 8, tail.begin() + 16);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << out << tail;
}

TempDir::TempDir() {
  std::string tmpl = std::filesystem::temp_directory_path().string() + "/ga-service-test-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void InProcessService::Start(const ServiceOptions& options, const std::string& socket_path) {
  auto impl = GraphServiceImpl::Create(options);
  ASSERT_TRUE(impl.ok()) << impl.error().ToString();
  impl_ = std::move(*impl);
  grpc::ServerBuilder builder;
  std::string address = "unix:" + socket_path;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials());
  builder.RegisterService(impl_.get());
  server_ = builder.BuildAndStart();
  ASSERT_NE(server_, nullptr);
  stub_ = GraphService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

InProcessService::~InProcessService() {
  if (server_) server_->Shutdown();
}

std::string MsprobeOutput(const std::string& name) {
  const char* src = getenv("GA_SOURCE_DIR");
  return std::string(src != nullptr ? src : ".") + "/tests/data/msprobe_outputs/" + name;
}

void ExecSql(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(h);
}

}  // namespace graph_ascend::service::testing
