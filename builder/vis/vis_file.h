// Reading and writing .vis files (docs/FORMAT.md).
//
// Layout: a 16-byte header (magic, format version), then sections, each one
// zstd frame holding one serialized message of vis.proto, then the table of
// contents (a zstd frame) and a 24-byte trailer that locates it. Sections may
// come in any order; the table of contents says where each one is.
//
// VisWriter writes to a temporary file beside the target and renames it on
// Commit(), so a failed or interrupted write never leaves a half-written
// .vis. VisReader reads the header, trailer, table of contents and FileMeta
// on Open(); everything else is read on demand.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/temp_files.h"
#include "vis.pb.h"

namespace graph_ascend::vis {

inline constexpr char kMagic[8] = {'\x89', 'G', 'A', 'V', 'I', 'S', '\r', '\n'};
inline constexpr char kTrailerMagic[8] = {'G', 'A', 'V', 'I', 'S', 'E', 'N', 'D'};
// Version 2 stores an item's key as its suffix after the node's name
// (Item.key_suffix); version 1 files are read as well.
inline constexpr uint32_t kFormatVersion = 2;
inline constexpr uint32_t kOldestFormatVersion = 1;
inline constexpr size_t kHeaderSize = 16;
inline constexpr size_t kTrailerSize = 24;
// Sections are kept well below protobuf's 64 MiB message limit.
inline constexpr size_t kMaxSectionBytes = 48u << 20;
// How writers chunk sections: index chunks by node count, detail blocks by
// node count or bytes (a node's details are read by decompressing one
// block), stacks by count.
inline constexpr uint32_t kIndexChunkNodes = 65536;
inline constexpr uint32_t kDetailBlockNodes = 128;
inline constexpr size_t kDetailBlockBytes = 1u << 20;
inline constexpr uint32_t kStackChunk = 4096;

// zstd level of every section. 1, not zstd's default 3: on the details'
// small frames level 3 took 16 % more instructions and gave no smaller files
// (docs/PERFORMANCE.md); readers do not depend on the level.
inline constexpr int kZstdLevel = 1;

// Whether a detail block of `nodes` nodes and `bytes` serialized bytes is
// written out (the next node starts a new block). One rule for every writer,
// so a rewritten file blocks its details as the first writer did.
inline bool DetailBlockFull(size_t nodes, size_t bytes) {
  return nodes >= kDetailBlockNodes || bytes >= kDetailBlockBytes;
}

// Compresses serialized sections, for writers that build sections on
// several threads (one SectionPacker per thread) and then hand them to
// VisWriter::WritePacked in file order.
class SectionPacker {
 public:
  explicit SectionPacker(int zstd_level);
  ~SectionPacker();
  SectionPacker(const SectionPacker&) = delete;
  SectionPacker& operator=(const SectionPacker&) = delete;

  // `raw` compressed into `out`; false with zstd's message in `error`.
  bool Pack(std::string_view raw, std::string* out, std::string* error);

 private:
  int level_;
  void* zstd_ = nullptr;  // ZSTD_CCtx
};

class VisWriter {
 public:
  // Creates "<path>.tmp-<pid>" in the target's directory.
  static Result<std::unique_ptr<VisWriter>> Create(const std::string& path, int zstd_level = kZstdLevel);
  ~VisWriter();  // removes the temporary file unless committed

  VisWriter(const VisWriter&) = delete;
  VisWriter& operator=(const VisWriter&) = delete;

  Status WriteMeta(const FileMeta& meta);
  Status WriteIndexChunk(Side side, const NodeIndexChunk& chunk);
  Status WriteDetailBlock(Side side, const NodeDetailBlock& block);
  Status WriteStackChunk(Side side, const StackChunk& chunk);
  Status WriteDivergence(const DivergenceRanking& ranking);
  Status WriteCkpt(const CkptSimilarity& similarity);
  // A section read with VisReader::ReadFrame, copied as it is (offset aside).
  Status CopySection(const SectionRef& ref, const std::string& frame);

  // A section serialized (`raw_size` bytes, at most kMaxSectionBytes) and
  // compressed by a SectionPacker of this writer's level.
  Status WritePacked(SectionKind kind, Side side, uint32_t first, uint32_t count, size_t raw_size,
                     std::string_view packed);

  int zstd_level() const { return level_; }

  // Writes the table of contents and trailer, flushes, renames onto the target.
  Status Commit();
  // Without durability Commit() does not fsync: for a file the process
  // writes again whenever it needs it (the service's opening screens).
  void set_durable(bool durable) { durable_ = durable; }

  const std::string& path() const { return path_; }

 private:
  VisWriter(std::string path, std::string tmp, std::unique_ptr<TemporaryFile> temp, FILE* f, int level);
  Status WriteSection(SectionKind kind, Side side, uint32_t first, uint32_t count,
                      const google::protobuf::MessageLite& msg);
  Status WriteBytes(const void* data, size_t n);

  std::string path_;
  std::string tmp_;
  std::unique_ptr<TemporaryFile> temp_;  // removes tmp_ if a signal ends the process
  FILE* file_;
  int level_;
  uint64_t offset_ = 0;
  bool committed_ = false;
  bool durable_ = true;
  TableOfContents toc_;
  std::string buffer_;    // reused serialization buffer
  std::string packed_;    // reused compression buffer
  void* zstd_ = nullptr;  // ZSTD_CCtx, reused: creating one per section costs more than small sections
};

// The compare mode as the command line and the report write it: "statistics", "md5", "tensor",
// "structure", or "build" for a build.
const char* CompareModeName(CompareMode m);

// The name of a node of one side.
using NodeNames = std::function<std::string_view(uint32_t node)>;

// Turns the keys of `detail`'s items as stored (a suffix after the node's
// name, version 2) into whole keys; items stored whole are left as they are.
// Every reader of details calls it before a key is used.
void ResolveKeys(std::string_view node_name, NodeDetail* detail);
// The same for every detail of a block.
void ResolveKeys(const NodeNames& names, NodeDetailBlock* block);

class VisReader {
 public:
  static Result<std::unique_ptr<VisReader>> Open(const std::string& path);
  ~VisReader();

  VisReader(const VisReader&) = delete;
  VisReader& operator=(const VisReader&) = delete;

  const std::string& path() const { return path_; }
  uint64_t file_size() const { return size_; }
  const FileMeta& meta() const { return meta_; }
  const TableOfContents& toc() const { return toc_; }
  bool has_side(Side side) const;

  // The sections of one kind and side, ordered by `first`.
  std::vector<const SectionRef*> Sections(SectionKind kind, Side side) const;

  // Reads every index chunk of a side in node order. `progress` (may be
  // empty) gets the fraction of index bytes read so far.
  Status ReadIndex(Side side, const std::function<Status(NodeIndexChunk&)>& visit,
                   const std::function<void(double)>& progress = {}) const;

  // Reads the detail block holding `node`, its items' keys whole: `names`
  // gives the name of each node of the block (ResolveKeys).
  Result<NodeDetailBlock> ReadDetailBlock(Side side, uint32_t node, const NodeNames& names) const;
  // Reads the details of `node`, whose name is `name`.
  Result<NodeDetail> ReadDetail(Side side, uint32_t node, std::string_view name) const;

  // Reads the chunk holding stack `id`.
  Result<StackChunk> ReadStackChunk(Side side, uint32_t id) const;
  Result<Stack> ReadStack(Side side, uint32_t id) const;

  // The divergence ranking; empty when the file has none (builds, files
  // written before it).
  Result<DivergenceRanking> ReadDivergence() const;
  // The checkpoint similarity (SECTION_CKPT); empty when the file has none.
  Result<CkptSimilarity> ReadCkpt() const;

  // Decompresses one section: its serialized message.
  Status ReadRaw(const SectionRef& ref, std::string* plain) const;
  // Decompresses and parses one section.
  Status ReadSection(const SectionRef& ref, google::protobuf::MessageLite* msg) const;
  // The zstd frame of one section, as stored.
  Status ReadFrame(const SectionRef& ref, std::string* frame) const;

 private:
  VisReader(std::string path, int fd, uint64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}
  const SectionRef* Find(SectionKind kind, Side side, uint32_t index) const;
  // The block holding `node` as stored (keys not resolved).
  Result<NodeDetailBlock> ReadStoredBlock(Side side, uint32_t node) const;

  std::string path_;
  int fd_;
  uint64_t size_;
  TableOfContents toc_;
  FileMeta meta_;
};

}  // namespace graph_ascend::vis
