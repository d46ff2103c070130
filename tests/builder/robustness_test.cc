// Issue 17: readers never abort on bad input. Each test feeds one damaged
// input the independent probe found (or one of its kind) to a reader and
// checks the Error: the file, the place, what is wrong.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "base/mapped_file.h"
#include "base/parallel.h"
#include "base/string_pool.h"
#include "base/temp_files.h"
#include "compare/tensor_compare.h"
#include "dump/dump_data.h"
#include "json/json_reader.h"
#include "match/layer_mapping.h"
#include "test_files.h"
#include "thread_limit.h"
#include "vis/protobuf_log.h"
#include "vis/vis_file.h"
#include "vis/vis_index.h"

namespace graph_ascend {
namespace {

using testing::ReadFile;
using testing::SourceDir;
using testing::TempDir;
using testing::WriteFile;

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

// ---------------------------------------------------------------- 1a yaml

TEST(LayerMappingYamlTest, NonScalarKeysAreErrorsWithLineAndColumn) {
  struct Case {
    const char* text;
    const char* where;
  };
  for (const Case& c : {Case{"[a, b]: {x: y}\n", "line 1, column 1"}, Case{"{a: b}: {x: y}\n", "line 1, column 1"},
                        Case{"? - a\n: ~\n", "line 1, column 3"},
                        Case{"GPTModel:\n  [a]: b\n", "line 2, column 3"},
                        Case{"GPTModel:\n  a: [b]\n", "line 2, column 3"}}) {
    Status st = match::CheckLayerMappingYaml("m.yaml", c.text);
    ASSERT_FALSE(st.ok()) << c.text;
    EXPECT_EQ(st.error().file, "m.yaml");
    EXPECT_TRUE(Contains(st.error().where, c.where)) << c.text << " -> " << st.error().ToString();
  }
}

TEST(LayerMappingYamlTest, SyntaxErrorsNameTheLineAndColumn) {
  Status st = match::CheckLayerMappingYaml("m.yaml", "GPTModel:\n  a: b\n c: [\n");
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.error().where, "line ")) << st.error().ToString();
  EXPECT_TRUE(Contains(st.error().where, "column ")) << st.error().ToString();
}

TEST(LayerMappingYamlTest, TheSampleMappingIsAccepted) {
  std::string path = SourceDir() + "/samples/layer_mapping/layer_mapping.yaml";
  EXPECT_TRUE(match::CheckLayerMappingYaml(path, ReadFile(path)).ok());
  EXPECT_TRUE(match::CheckLayerMappingYaml("empty.yaml", "").ok());
}

// ---------------------------------------------------------------- 1b .pt views

std::string Crafted(const std::string& name) { return SourceDir() + "/tests/builder/testdata/pt/" + name; }

TEST(PtViewTest, AValidNonContiguousViewStillReads) {
  auto t = compare::ReadPt(Crafted("transposed.pt"));
  ASSERT_TRUE(t.ok()) << t.error().ToString();
  EXPECT_EQ(t->shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(t->values, (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(PtViewTest, ViewsThatDoNotFitTheirStorageAreRefusedBeforeAllocating) {
  struct Case {
    const char* file;
    const char* message;
  };
  for (const Case& c : {Case{"expand_huge.pt", "a view of 16777216000 elements over a storage of 1000"},
                        Case{"stride0_long.pt", "a view of 268435456 elements over a storage of 1000"},
                        Case{"negative_stride.pt", "negative stride -1"},
                        Case{"offset_past_end.pt", "reaches element 4 of a storage of 4"},
                        Case{"extent_past_end.pt", "reaches element 1800 of a storage of 1000"},
                        Case{"extent_overflow.pt", "extent overflows"},
                        Case{"complex_storage.pt", "unsupported storage type ComplexFloatStorage"}}) {
    auto t = compare::ReadPt(Crafted(c.file));
    ASSERT_FALSE(t.ok()) << c.file;
    EXPECT_EQ(t.error().file, Crafted(c.file));
    EXPECT_EQ(t.error().where, "data.pkl");
    EXPECT_TRUE(Contains(t.error().message, c.message)) << c.file << ": " << t.error().ToString();
  }
}

// Found by `scripts/fuzz.sh 60 --seed 2` (target pt, run 105851): a TUPLE whose
// MARK lies above the stack after a REDUCE in between (`( R t`) made
// std::vector throw length_error (an abort of the builder).
TEST(PtViewTest, ATupleBelowItsMarkIsAnError) {
  auto t = compare::ReadPt(Crafted("fuzz_tuple_below_mark.pt"));
  ASSERT_FALSE(t.ok());
  // torch_save's unpickler names the byte: "data.pkl byte 148: pickle stack underflow".
  EXPECT_EQ(t.error().where, "data.pkl byte 148");
  EXPECT_TRUE(Contains(t.error().message, "pickle stack underflow")) << t.error().ToString();
}

TEST(PtViewTest, ADamagedTensorFileIsDamageAMissingOneIsNot) {
  TempDir npu, bench;
  WriteFile(npu / "dump_tensor_data/x.pt", ReadFile(Crafted("expand_huge.pt")));
  compare::DumpTensorSource source(npu.path(), bench.path());
  EXPECT_FALSE(source.Load(vis::SIDE_BENCH, "x.pt").ok());
  EXPECT_TRUE(source.damage().ok()) << "a missing file compares as unsupported";
  EXPECT_FALSE(source.Load(vis::SIDE_NPU, "x.pt").ok());
  ASSERT_FALSE(source.damage().ok());
  EXPECT_EQ(source.damage().error().file, npu / "dump_tensor_data/x.pt");
}

// ---------------------------------------------------------------- 1c .vis sizes and columns

// Writes a .vis by hand: header, zstd sections, table of contents, trailer.
class CraftedVis {
 public:
  CraftedVis() { bytes_.assign(vis::kMagic, sizeof(vis::kMagic)) += std::string("\x01\0\0\0\0\0\0\0", 8); }

  // Appends a section and its table-of-contents entry; returns the entry.
  vis::SectionRef* Add(vis::SectionKind kind, vis::Side side, const google::protobuf::MessageLite& msg,
                       uint32_t first = 0, uint32_t count = 0) {
    std::string raw = msg.SerializeAsString();
    std::string packed = Pack(raw);
    vis::SectionRef* ref = toc_.add_sections();
    ref->set_kind(kind);
    ref->set_side(side);
    ref->set_offset(bytes_.size());
    ref->set_compressed_size(packed.size());
    ref->set_raw_size(raw.size());
    ref->set_first(first);
    ref->set_count(count);
    bytes_ += packed;
    return ref;
  }
  uint64_t toc_offset() const { return bytes_.size(); }
  // The file; `toc_size` (when set) replaces the trailer's size of the table of contents.
  std::string Bytes(uint64_t toc_size = 0) const {
    std::string out = bytes_;
    std::string toc = Pack(toc_.SerializeAsString());
    uint64_t at = out.size();
    out += toc;
    char trailer[vis::kTrailerSize];
    uint64_t size = toc_size != 0 ? toc_size : toc.size();
    for (int i = 0; i < 8; ++i) trailer[i] = static_cast<char>(at >> (8 * i));
    for (int i = 0; i < 8; ++i) trailer[8 + i] = static_cast<char>(size >> (8 * i));
    memcpy(trailer + 16, vis::kTrailerMagic, 8);
    return out.append(trailer, sizeof(trailer));
  }

 private:
  static std::string Pack(const std::string& raw) {
    std::string packed(ZSTD_compressBound(raw.size()), '\0');
    packed.resize(ZSTD_compress(packed.data(), packed.size(), raw.data(), raw.size(), 1));
    return packed;
  }
  std::string bytes_;
  vis::TableOfContents toc_;
};

// A build .vis of a root with two children (the columns can be damaged).
vis::NodeIndexChunk ThreeNodes() {
  vis::NodeIndexChunk c;
  c.set_first(0);
  for (const char* n : {"DefaultModel", "Module.a.A.forward.0", "Module.b.B.forward.0"}) c.add_name(n);
  for (int parent : {-1, 0, 0}) c.add_parent(parent);
  for (uint32_t count : {2u, 0u, 0u}) c.add_child_count(count);
  c.add_children(1);
  c.add_children(2);
  for (int i = 0; i < 3; ++i) {
    c.add_node_type(vis::NODE_MODULE);
    c.add_micro_step(-1);
    c.add_precision_index(0);
    c.add_overflow_level(vis::OVERFLOW_NONE);
    c.add_matched(-1);
    c.add_flags(0);
  }
  return c;
}

Result<vis::SideIndex> LoadCrafted(const TempDir& dir, const vis::NodeIndexChunk& chunk) {
  CraftedVis v;
  v.Add(vis::SECTION_META, vis::SIDE_NPU, vis::FileMeta());
  v.Add(vis::SECTION_NODE_INDEX, vis::SIDE_NPU, chunk, 0, static_cast<uint32_t>(chunk.name_size()));
  WriteFile(dir / "c.vis", v.Bytes());
  auto reader = vis::VisReader::Open(dir / "c.vis");
  if (!reader.ok()) return reader.error();
  return vis::LoadSideIndex(**reader, vis::SIDE_NPU);
}

TEST(VisSizeTest, TheCraftedFileReads) {
  TempDir dir;
  auto idx = LoadCrafted(dir, ThreeNodes());
  ASSERT_TRUE(idx.ok()) << idx.error().ToString();
  EXPECT_EQ(idx->size(), 3u);
}

TEST(VisSizeTest, TableOfContentsSizeThatWrapsIsAnError) {
  TempDir dir;
  CraftedVis v;
  v.Add(vis::SECTION_META, vis::SIDE_NPU, vis::FileMeta());
  uint64_t toc_at = v.toc_offset();
  std::string bytes = v.Bytes(~uint64_t{0} - toc_at + 17);  // offset + size == 16 (mod 2^64)
  WriteFile(dir / "wrap.vis", bytes);
  auto r = vis::VisReader::Open(dir / "wrap.vis");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().file, dir / "wrap.vis");
  EXPECT_TRUE(Contains(r.error().message, "table of contents out of range")) << r.error().ToString();
}

TEST(VisSizeTest, SectionSizeThatWrapsIsAnError) {
  TempDir dir;
  CraftedVis v;
  v.Add(vis::SECTION_META, vis::SIDE_NPU, vis::FileMeta());
  vis::SectionRef* ref = v.Add(vis::SECTION_NODE_INDEX, vis::SIDE_NPU, ThreeNodes(), 0, 3);
  ref->set_compressed_size(~uint64_t{0} - ref->offset() + 17);  // offset + size == 16 (mod 2^64)
  WriteFile(dir / "wrap.vis", v.Bytes());
  auto r = vis::VisReader::Open(dir / "wrap.vis");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().where, "table of contents entry 1");
  EXPECT_TRUE(Contains(r.error().message, "node index section out of range")) << r.error().ToString();
}

TEST(VisSizeTest, HugeRawSizeOrCountIsAnError) {
  TempDir dir;
  for (int which = 0; which < 2; ++which) {
    CraftedVis v;
    v.Add(vis::SECTION_META, vis::SIDE_NPU, vis::FileMeta());
    vis::SectionRef* ref = v.Add(vis::SECTION_NODE_INDEX, vis::SIDE_BENCH, ThreeNodes(), 0, 3);
    if (which == 0) ref->set_raw_size(uint64_t{1} << 40);
    if (which == 1) ref->set_count(4000000000u);
    WriteFile(dir / "huge.vis", v.Bytes());
    auto r = vis::VisReader::Open(dir / "huge.vis");
    ASSERT_FALSE(r.ok()) << which;
    EXPECT_EQ(r.error().where, "table of contents entry 1");
    EXPECT_TRUE(Contains(r.error().message, "damaged .vis file (node index section of")) << r.error().ToString();
  }
}

TEST(VisColumnTest, OutOfRangeColumnsAreErrorsNamingTheNode) {
  TempDir dir;
  struct Case {
    std::function<void(vis::NodeIndexChunk*)> damage;
    const char* where;
    const char* message;
  };
  std::vector<Case> cases = {
      {[](vis::NodeIndexChunk* c) { c->set_overflow_level(1, 255); }, "node 1", "overflow level 255"},
      {[](vis::NodeIndexChunk* c) { c->set_node_type(2, 7); }, "node 2", "node type 7"},
      {[](vis::NodeIndexChunk* c) { c->set_matched(0, -5); }, "node 0", "negative matched node"},
      {[](vis::NodeIndexChunk* c) { c->set_parent(2, 1); }, "node 2", "naming another parent"},
      {[](vis::NodeIndexChunk* c) { c->set_children(1, 1); }, "node 1", "listed twice"},
      // 1 and 2 are each other's parent and child: a cycle with consistent lists.
      {[](vis::NodeIndexChunk* c) {
         c->set_child_count(0, 0);
         c->set_child_count(1, 1);
         c->set_child_count(2, 1);
         c->set_children(0, 2);
         c->set_children(1, 1);
         c->set_parent(1, 2);
         c->set_parent(2, 1);
       },
       "node 1", "the parents form a cycle"},
  };
  for (const Case& c : cases) {
    vis::NodeIndexChunk chunk = ThreeNodes();
    c.damage(&chunk);
    auto idx = LoadCrafted(dir, chunk);
    ASSERT_FALSE(idx.ok()) << c.message;
    EXPECT_EQ(idx.error().where, c.where) << idx.error().ToString();
    EXPECT_TRUE(Contains(idx.error().message, c.message)) << idx.error().ToString();
  }
}

// ---------------------------------------------------------------- 1d special files

TEST(SpecialFileTest, DevicesAndFifosAreRefusedWithoutReadingOrBlocking) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  for (const std::string& path : {std::string("/dev/zero"), dir / "fifo"}) {
    auto text = ReadFileToString(path);
    ASSERT_FALSE(text.ok()) << path;
    EXPECT_EQ(text.error().file, path);
    EXPECT_TRUE(Contains(text.error().message, "not a regular file")) << text.error().ToString();
    auto mapped = MappedFile::Open(path);
    ASSERT_FALSE(mapped.ok()) << path;
    EXPECT_TRUE(Contains(mapped.error().message, "not a regular file")) << mapped.error().ToString();
    auto vis = vis::VisReader::Open(path);
    EXPECT_FALSE(vis.ok()) << path;
  }
}

TEST(SpecialFileTest, SmallFilesHaveASizeCap) {
  TempDir dir;
  WriteFile(dir / "big.json", std::string(5000, ' '));
  auto text = ReadFileToString(dir / "big.json", 4096);
  ASSERT_FALSE(text.ok());
  EXPECT_TRUE(Contains(text.error().message, "5000 bytes is over the limit of 4096")) << text.error().ToString();
  EXPECT_TRUE(ReadFileToString(dir / "big.json", 5000).ok());
}

// ---------------------------------------------------------------- 2a UTF-8

Error StringError(const std::string& json) {
  json::JsonReader r(json, "f.json");
  auto s = r.ReadString();
  EXPECT_FALSE(s.ok()) << json;
  return s.ok() ? Error{} : s.error();
}

TEST(Utf8Test, InvalidStringsAreErrorsAtTheirByte) {
  EXPECT_EQ(StringError("\"ab\xff\"").where, "line 1, column 4 (byte 3)");
  EXPECT_EQ(StringError("\"a\\n\xc0\x80\"").where, "line 1, column 5 (byte 4)");  // overlong, after an escape
  EXPECT_EQ(StringError("\"\xed\xa0\x80\"").where, "line 1, column 2 (byte 1)");  // an encoded surrogate
  EXPECT_EQ(StringError("\"\xe4\xb8\"").where, "line 1, column 2 (byte 1)");      // cut short
  Error lone = StringError("\"x\\ud800y\"");
  EXPECT_EQ(lone.where, "line 1, column 3 (byte 2)");
  EXPECT_TRUE(Contains(lone.message, "unpaired surrogate")) << lone.ToString();
  EXPECT_TRUE(Contains(StringError("\"\\udc00\\ud800\"").message, "unpaired surrogate"));
}

TEST(Utf8Test, ValidStringsStillRead) {
  for (const char* json :
       {"\"\xe4\xb8\xad\xe6\x96\x87\"", "\"\\u4e2d\\u6587\"", "\"\\ud83d\\ude00 \xf0\x9f\x98\x80\""}) {
    json::JsonReader r(json, "f.json");
    auto s = r.ReadString();
    ASSERT_TRUE(s.ok()) << s.error().ToString();
  }
  json::JsonReader r("\"\\ud83d\\ude00\"", "f.json");
  auto smile = r.ReadString();
  ASSERT_TRUE(smile.ok());
  EXPECT_EQ(*smile, "\xf0\x9f\x98\x80");
}

// ---------------------------------------------------------------- 2c wrong-typed dump fields

TEST(DumpFieldTypeTest, ACategoryThatIsNotAListOrObjectIsAnError) {
  TempDir dir;
  for (const char* value : {"\"oops\"", "3", "true"}) {
    WriteFile(dir / "dump.json", testing::DumpJson(std::string(R"("Torch.add.0.forward": {"input_args": )") + value +
                                                   R"(, "output": []})"));
    StringPool pool;
    auto d = dump::ReadDumpJson(dir / "dump.json", &pool, {});
    ASSERT_FALSE(d.ok()) << value;
    EXPECT_EQ(d.error().file, dir / "dump.json");
    EXPECT_TRUE(Contains(d.error().message, "key data.Torch.add.0.forward.input_args: expected a list or an object"))
        << d.error().ToString();
    EXPECT_TRUE(Contains(d.error().where, "line 1")) << d.error().ToString();
  }
  WriteFile(dir / "dump.json", testing::DumpJson(R"("Torch.add.0.forward": {"input_args": null, "output": []})"));
  StringPool pool;
  EXPECT_TRUE(dump::ReadDumpJson(dir / "dump.json", &pool, {}).ok());
}

// ---------------------------------------------------------------- 2a/2e protobuf strings and log

TEST(ProtobufStringTest, ANameThatIsNotUtf8IsNeverWritten) {
  TempDir dir;
  vis::NodeIndexChunk chunk = ThreeNodes();
  chunk.set_name(1, "Module.\xff.A.forward.0");
  ::testing::internal::CaptureStderr();
  {
    auto w = vis::VisWriter::Create(dir / "bad.vis");
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->WriteMeta(vis::FileMeta()).ok());
    Status st = (*w)->WriteIndexChunk(vis::SIDE_NPU, chunk);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().file, dir / "bad.vis");
    EXPECT_EQ(st.error().where, "node index section");
    EXPECT_TRUE(Contains(st.error().message, "invalid UTF-8")) << st.error().ToString();
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "protobuf's log goes into the error";
  EXPECT_EQ(Files(dir.path()).size(), 0u) << "the temporary file is removed";
}

TEST(ProtobufStringTest, ReadingANameThatIsNotUtf8GivesOneError) {
  TempDir dir;
  vis::NodeIndexChunk chunk = ThreeNodes();
  chunk.set_name(1, "Module.\xff.A.forward.0");
  CraftedVis v;
  v.Add(vis::SECTION_META, vis::SIDE_NPU, vis::FileMeta());
  {
    vis::ProtobufLogCapture quiet;  // crafting it logs too
    v.Add(vis::SECTION_NODE_INDEX, vis::SIDE_NPU, chunk, 0, 3);
  }
  WriteFile(dir / "bad.vis", v.Bytes());
  ::testing::internal::CaptureStderr();
  auto reader = vis::VisReader::Open(dir / "bad.vis");
  ASSERT_TRUE(reader.ok()) << reader.error().ToString();
  auto idx = vis::LoadSideIndex(**reader, vis::SIDE_NPU);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ASSERT_FALSE(idx.ok());
  EXPECT_TRUE(Contains(idx.error().message, "damaged node index section (protobuf: String field"))
      << idx.error().ToString();
  EXPECT_TRUE(Contains(idx.error().message, "invalid UTF-8")) << idx.error().ToString();
}

// ---------------------------------------------------------------- 2d signals

// A child process writing a .vis is killed by `sig`: the temporary file
// goes with it and the child dies of the signal.
void ExpectSignalRemovesTemporary(int sig) {
  TempDir dir;
  std::string target = dir / "out.vis";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    RemoveTemporariesOnSignals();
    auto w = vis::VisWriter::Create(target);
    if (!w.ok() || !(*w)->WriteMeta(vis::FileMeta()).ok()) _exit(3);
    (void)!write(ready[1], "x", 1);
    for (;;) pause();  // killed by the parent
  }
  close(ready[1]);
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  std::string tmp = target + ".tmp-" + std::to_string(pid);
  EXPECT_EQ(access(tmp.c_str(), F_OK), 0) << "the child is writing " << tmp;
  kill(pid, sig);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), sig);
  EXPECT_EQ(Files(dir.path()), std::vector<std::string>{}) << "no temporary left";
}

TEST(SignalTest, SigtermRemovesTheTemporaryFile) { ExpectSignalRemovesTemporary(SIGTERM); }
TEST(SignalTest, SigintRemovesTheTemporaryFile) { ExpectSignalRemovesTemporary(SIGINT); }

TEST(SignalTest, ManyTemporariesAtOnceAreAllTracked) {
  TempDir dir;
  std::vector<std::unique_ptr<TemporaryFile>> open;
  for (int i = 0; i < 100; ++i) open.push_back(std::make_unique<TemporaryFile>(dir / std::to_string(i)));
  open.clear();  // slots are given back: a later writer is tracked again
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    RemoveTemporariesOnSignals();
    WriteFile(dir / "t", "x");
    TemporaryFile t(dir / "t");
    raise(SIGTERM);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(access((dir / "t").c_str(), F_OK), -1);
}

// ---------------------------------------------------------------- 1c threads

// Work on a thread of its own: an exception there is an Error of the join
// (std::bad_alloc would otherwise end the process), and work whose thread
// cannot be started runs on the joining thread.
TEST(BackgroundWorkTest, AnExceptionOnTheThreadIsAnErrorOfTheJoin) {
  BackgroundWork oom([] { throw std::bad_alloc(); });
  Status st = oom.Join("x/dump.json");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().ToString(), "x/dump.json: out of memory (std::bad_alloc)");
  BackgroundWork other([] { throw std::length_error("vector::reserve"); });
  st = other.Join();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message, "failed: vector::reserve");
  int runs = 0;
  BackgroundWork fine([&] { ++runs; });
  EXPECT_TRUE(fine.Join().ok());
  EXPECT_EQ(runs, 1);
}

TEST(BackgroundWorkTest, WorkWhoseThreadCannotStartRunsInJoin) {
  std::thread::id ran_on;
  std::unique_ptr<BackgroundWork> work;
  {
    testing::NoNewThreads limit;
    ASSERT_TRUE(limit.ok());
    EXPECT_THROW(std::thread([] {}).join(), std::system_error);  // the limit holds
    work = std::make_unique<BackgroundWork>([&] { ran_on = std::this_thread::get_id(); });
  }
  EXPECT_EQ(ran_on, std::thread::id()) << "not run before Join()";
  EXPECT_TRUE(work->Join().ok());
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(BackgroundWorkTest, WorkIsJoinedWhenTheCallerLeavesByAnException) {
  std::atomic<bool> done{false};
  try {
    BackgroundWork work([&] { done = true; });
    throw std::runtime_error("the caller's own failure");
  } catch (const std::runtime_error&) {
  }
  EXPECT_TRUE(done);  // joined, not std::terminate() on a joinable thread
}

TEST(RunOnThreadsTest, ExceptionsComeBackToTheCallerAndMissingThreadsRunHere) {
  std::vector<int> calls(4, 0);
  EXPECT_THROW(RunOnThreads(4,
                            [&](int t) {
                              ++calls[t];
                              if (t == 2) throw std::bad_alloc();
                            }),
               std::bad_alloc);
  EXPECT_EQ(calls, (std::vector<int>{1, 1, 1, 1}));  // every call ran, the others to the end
  testing::NoNewThreads limit;
  ASSERT_TRUE(limit.ok());
  std::vector<std::thread::id> on(4);
  RunOnThreads(4, [&](int t) { on[t] = std::this_thread::get_id(); });
  for (const std::thread::id& id : on) EXPECT_EQ(id, std::this_thread::get_id());
}

}  // namespace
}  // namespace graph_ascend
