// dump.json's "data" read in parts on several threads (dump/dump_parts.cc):
// the same arrays and pool ids as one thread, for every real dump of
// samples/, a key repeated across parts, a layout without line breaks and a
// damaged part.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "base/string_pool.h"
#include "dump/dump_data.h"
#include "test_files.h"

namespace graph_ascend::dump {
namespace {

using graph_ascend::testing::SourceDir;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::WriteFile;

struct Read {
  StringPool pool;
  Result<DumpData> data = Error{"", "", "not read"};
};

void ReadWith(const std::string& path, int threads, Read* r) {
  DumpOptions options;
  options.threads = threads;
  options.part_bytes = 1;  // the samples are small: a part per thread
  options.overflow_check = true;
  r->data = ReadDumpJson(path, &r->pool, options);
}

// Everything one read holds, ids included, against the other.
void ExpectSame(Read& a, Read& b, const std::string& what) {
  ASSERT_TRUE(a.data.ok()) << what << ": " << a.data.error().ToString();
  ASSERT_TRUE(b.data.ok()) << what << ": " << b.data.error().ToString();
  ASSERT_EQ(a.pool.size(), b.pool.size()) << what;
  for (uint32_t i = 0; i < a.pool.size(); ++i) ASSERT_EQ(a.pool.Get(i), b.pool.Get(i)) << what << " string " << i;
  const DumpData& x = *a.data;
  const DumpData& y = *b.data;
  EXPECT_EQ(x.task, y.task) << what;
  EXPECT_EQ(x.framework, y.framework) << what;
  EXPECT_EQ(x.detected_framework, y.detected_framework) << what;
  EXPECT_EQ(x.summary_md5, y.summary_md5) << what;
  ASSERT_EQ(x.entries.size(), y.entries.size()) << what;
  for (size_t e = 0; e < x.entries.size(); ++e) {
    const DumpEntry &p = x.entries[e], &q = y.entries[e];
    ASSERT_TRUE(p.name == q.name && p.first_item == q.first_item && p.input_count == q.input_count &&
                p.output_count == q.output_count && p.first_p2p == q.first_p2p && p.p2p_count == q.p2p_count &&
                p.overflow == q.overflow && p.has_md5 == q.has_md5)
        << what << " entry " << e << " " << a.pool.Get(p.name);
    EXPECT_EQ(x.entry_of.Get(p.name), y.entry_of.Get(q.name)) << what;
  }
  ASSERT_EQ(x.items.size(), y.items.size()) << what;
  ASSERT_EQ(0, memcmp(x.items.data(), y.items.data(), x.items.size() * sizeof(DumpItem))) << what;
  ASSERT_EQ(x.fields.size(), y.fields.size()) << what;
  for (size_t f = 0; f < x.fields.size(); ++f) {
    const Field &p = x.fields[f], &q = y.fields[f];
    ASSERT_TRUE(p.name == q.name && p.value.kind == q.value.kind) << what << " field " << f;
    bool same = true;
    switch (p.value.kind) {
      case ValueKind::kNull: break;
      case ValueKind::kBool: same = p.value.boolean == q.value.boolean; break;
      case ValueKind::kInteger: same = p.value.integer == q.value.integer; break;
      case ValueKind::kNumber: same = memcmp(&p.value.number, &q.value.number, sizeof(double)) == 0; break;
      case ValueKind::kString:
      case ValueKind::kJson: same = p.value.string == q.value.string; break;
    }
    ASSERT_TRUE(same) << what << " field " << f << " " << a.pool.Get(p.name);
  }
  ASSERT_EQ(x.p2p.size(), y.p2p.size()) << what;
  for (size_t i = 0; i < x.p2p.size(); ++i) {
    EXPECT_TRUE(x.p2p[i].op == y.p2p[i].op && x.p2p[i].peer == y.p2p[i].peer && x.p2p[i].group_id == y.p2p[i].group_id)
        << what;
  }
}

TEST(DumpPartsTest, EverySampleReadsTheSameOnAnyNumberOfThreads) {
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(SourceDir() + "/samples")) {
    if (e.path().filename() != "dump.json") continue;
    std::string path = e.path().string();
    Read one;
    ReadWith(path, 1, &one);
    if (!one.data.ok()) continue;  // the samples of bad input: their errors are dump_reader_test's
    ASSERT_EQ(one.data->parts, 1u);
    for (int threads : {2, 3, 7}) {
      Read many;
      ReadWith(path, threads, &many);
      ExpectSame(one, many, path + " on " + std::to_string(threads) + " threads");
      // A file of more than a few entries in json.dump's layout is read in parts.
      if (one.data->entries.size() >= 16) EXPECT_GT(many.data->parts, 1u) << path;
    }
    ++files;
  }
  EXPECT_GE(files, 20);
}

// msprobe's layout (indent=1) of `count` entries; entry `repeat` is named
// again at the end, with other values (the last one wins).
std::string LaidOutDump(int count, int repeat) {
  std::string s = "{\n \"task\": \"statistics\",\n \"level\": \"mix\",\n \"framework\": \"pytorch\",\n \"data\": {";
  auto entry = [&](const std::string& name, int value, bool first) {
    s += first ? "\n" : ",\n";
    s += "  \"" + name + "\": {\n   \"input_args\": [\n    {\n     \"type\": \"torch.Tensor\",\n";
    s += "     \"dtype\": \"torch.float32\",\n     \"shape\": [\n      " + std::to_string(value % 7 + 1) + "\n     ],\n";
    s += "     \"Max\": " + std::to_string(value) + ".5,\n     \"Min\": -1,\n     \"Mean\": 0.25,\n";
    s += "     \"Norm\": " + std::to_string(value * 3) + ".0,\n     \"requires_grad\": false,\n";
    s += "     \"data_name\": \"" + name + ".input.0." + std::to_string(value % 5) + ".pt\"\n    }\n   ],\n";
    s += "   \"output\": [\n    {\n     \"type\": \"int\",\n     \"value\": " + std::to_string(value) + "\n    }\n   ]\n  }";
  };
  for (int i = 0; i < count; ++i) entry("Torch.op_" + std::to_string(i % 37) + "." + std::to_string(i) + ".forward", i, i == 0);
  entry("Torch.op_" + std::to_string(repeat % 37) + "." + std::to_string(repeat) + ".forward", 100000, false);
  s += "\n }\n}";
  return s;
}

TEST(DumpPartsTest, AKeyRepeatedInALaterPartKeepsItsFirstPlace) {
  TempDir dir;
  WriteFile(dir / "dump.json", LaidOutDump(400, 3));
  Read one, four;
  ReadWith(dir / "dump.json", 1, &one);
  ReadWith(dir / "dump.json", 4, &four);
  ExpectSame(one, four, "repeated key");
  ASSERT_TRUE(four.data.ok());
  EXPECT_EQ(four.data->parts, 4u);
  EXPECT_EQ(four.data->entries.size(), 400u);
}

TEST(DumpPartsTest, ALayoutWithoutLineBreaksIsReadByOneThread) {
  TempDir dir;
  std::string text = LaidOutDump(300, 0);
  std::string flat;
  for (char c : text) {
    if (c != '\n') flat += c;
  }
  WriteFile(dir / "dump.json", flat);
  Read one, four;
  ReadWith(dir / "dump.json", 1, &one);
  ReadWith(dir / "dump.json", 4, &four);
  ExpectSame(one, four, "no line breaks");
  EXPECT_EQ(four.data->parts, 1u);
}

// Each entry holds an object closed by the bytes that close an entry in
// json.dump's layout: the parts' starts are guessed inside entries, the
// first part passes the second's start, and one thread reads it all.
TEST(DumpPartsTest, AWrongGuessIsReadByOneThread) {
  TempDir dir;
  std::string text = LaidOutDump(300, 0);
  for (size_t at = 0; (at = text.find("   \"output\": [", at)) != std::string::npos;) {
    static const std::string kDecoy = "   \"decoy\": {\n   \"k\": 1\n  },\n  \"z\": 0,\n";
    text.insert(at, kDecoy);
    at += kDecoy.size() + 1;
  }
  WriteFile(dir / "dump.json", text);
  Read one, four;
  ReadWith(dir / "dump.json", 1, &one);
  ReadWith(dir / "dump.json", 4, &four);
  ExpectSame(one, four, "wrong guess");
  ASSERT_TRUE(four.data.ok());
  EXPECT_EQ(four.data->parts, 1u);
  EXPECT_EQ(four.data->entries.size(), 300u);
}

TEST(DumpPartsTest, DamageInALaterPartIsReportedAsOneThreadReportsIt) {
  TempDir dir;
  std::string text = LaidOutDump(400, 0);
  size_t at = text.find("\"Torch.op_17.350.forward\"");  // 350 % 37
  ASSERT_NE(at, std::string::npos);
  text.insert(text.find("\"Max\"", at), "\"Max\" 1,\n     ");  // a member without its colon
  WriteFile(dir / "dump.json", text);
  Read one, four;
  ReadWith(dir / "dump.json", 1, &one);
  ReadWith(dir / "dump.json", 4, &four);
  ASSERT_FALSE(one.data.ok());
  ASSERT_FALSE(four.data.ok());
  EXPECT_EQ(one.data.error().ToString(), four.data.error().ToString());
}

}  // namespace
}  // namespace graph_ascend::dump
