#include "vis/vis_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "vis/protobuf_log.h"

namespace graph_ascend::vis {
namespace {

void PutLE32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutLE64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint32_t GetLE32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint64_t GetLE64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// [offset, offset + compressed_size) lies within [begin, end), without wrapping.
bool InRange(const SectionRef& ref, uint64_t begin, uint64_t end) {
  return ref.offset() >= begin && ref.offset() <= end && ref.compressed_size() <= end - ref.offset();
}

std::string ByteWhere(uint64_t offset) { return "byte " + std::to_string(offset); }

Status ReadAt(int fd, const std::string& path, uint64_t offset, size_t n, char* out) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = pread(fd, out + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return MakeError(path, ByteWhere(offset + done), std::string("read failed: ") + strerror(errno));
    }
    if (r == 0) return MakeError(path, ByteWhere(offset + done), "unexpected end of file");
    done += static_cast<size_t>(r);
  }
  return Status::Ok();
}

const char* KindName(SectionKind kind) {
  switch (kind) {
    case SECTION_META: return "meta";
    case SECTION_NODE_INDEX: return "node index";
    case SECTION_NODE_DETAILS: return "node details";
    case SECTION_STACKS: return "stacks";
    case SECTION_DIVERGENCE: return "divergence";
    case SECTION_CKPT: return "checkpoint similarity";
    default: return "unknown";
  }
}

}  // namespace

// ---------------------------------------------------------------- writer

VisWriter::VisWriter(std::string path, std::string tmp, std::unique_ptr<TemporaryFile> temp, FILE* f, int level)
    : path_(std::move(path)), tmp_(std::move(tmp)), temp_(std::move(temp)), file_(f), level_(level) {}

VisWriter::~VisWriter() {
  if (zstd_ != nullptr) ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(zstd_));
  if (file_ != nullptr) fclose(file_);
  if (!committed_) unlink(tmp_.c_str());
  temp_->Release();
}

Result<std::unique_ptr<VisWriter>> VisWriter::Create(const std::string& path, int zstd_level) {
  std::string tmp = path + ".tmp-" + std::to_string(getpid());
  auto temp = std::make_unique<TemporaryFile>(tmp);  // before the file exists: no window without it
  FILE* f = fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    return MakeError(path, "", std::string("cannot create output file: ") + strerror(errno));
  }
  std::unique_ptr<VisWriter> w(new VisWriter(path, tmp, std::move(temp), f, zstd_level));
  char header[kHeaderSize] = {};
  memcpy(header, kMagic, sizeof(kMagic));
  PutLE32(header + 8, kFormatVersion);
  PutLE32(header + 12, 0);
  GA_RETURN_IF_ERROR(w->WriteBytes(header, sizeof(header)));
  return w;
}

Status VisWriter::WriteBytes(const void* data, size_t n) {
  if (n > 0 && fwrite(data, 1, n, file_) != n) {
    return MakeError(path_, "", std::string("write failed: ") + strerror(errno));
  }
  offset_ += n;
  return Status::Ok();
}

Status VisWriter::WriteSection(SectionKind kind, Side side, uint32_t first, uint32_t count,
                               const google::protobuf::MessageLite& msg) {
  buffer_.clear();
  ProtobufLogCapture log;
  if (!msg.SerializeToString(&buffer_)) {
    return MakeError(path_, KindName(kind), "cannot serialize section: " + log.Take());
  }
  // protobuf serializes a string that is not UTF-8 and only logs it; the
  // file would then be unreadable (parsing refuses it), so it is not written.
  if (std::string problem = log.Take(); !problem.empty()) {
    return MakeError(path_, KindName(kind) + std::string(" section"), "cannot be written: " + problem);
  }
  if (buffer_.size() > kMaxSectionBytes) {
    return MakeError(path_, KindName(kind),
                     "section of " + std::to_string(buffer_.size()) + " bytes is over the limit");
  }
  packed_.resize(ZSTD_compressBound(buffer_.size()));
  if (zstd_ == nullptr) zstd_ = ZSTD_createCCtx();
  size_t n = ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(zstd_), packed_.data(), packed_.size(), buffer_.data(),
                               buffer_.size(), level_);
  if (ZSTD_isError(n)) {
    return MakeError(path_, KindName(kind), std::string("zstd: ") + ZSTD_getErrorName(n));
  }
  return WritePacked(kind, side, first, count, buffer_.size(), std::string_view(packed_.data(), n));
}

Status VisWriter::WritePacked(SectionKind kind, Side side, uint32_t first, uint32_t count, size_t raw_size,
                              std::string_view packed) {
  SectionRef* ref = toc_.add_sections();
  ref->set_kind(kind);
  ref->set_side(side);
  ref->set_offset(offset_);
  ref->set_compressed_size(packed.size());
  ref->set_raw_size(raw_size);
  ref->set_first(first);
  ref->set_count(count);
  return WriteBytes(packed.data(), packed.size());
}

SectionPacker::SectionPacker(int zstd_level) : level_(zstd_level) {}

SectionPacker::~SectionPacker() {
  if (zstd_ != nullptr) ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(zstd_));
}

bool SectionPacker::Pack(std::string_view raw, std::string* out, std::string* error) {
  if (zstd_ == nullptr) zstd_ = ZSTD_createCCtx();
  // Compressed into a buffer kept by the thread, then copied: sizing `out` to
  // the bound would zero-fill about five times the bytes the frame takes.
  thread_local std::string bound;
  if (bound.size() < ZSTD_compressBound(raw.size())) bound.resize(ZSTD_compressBound(raw.size()));
  size_t n =
      ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(zstd_), bound.data(), bound.size(), raw.data(), raw.size(), level_);
  if (ZSTD_isError(n)) {
    *error = std::string("zstd: ") + ZSTD_getErrorName(n);
    return false;
  }
  out->assign(bound.data(), n);
  return true;
}

Status VisWriter::CopySection(const SectionRef& ref, const std::string& frame) {
  SectionRef* copy = toc_.add_sections();
  *copy = ref;
  copy->set_offset(offset_);
  copy->set_compressed_size(frame.size());
  return WriteBytes(frame.data(), frame.size());
}

Status VisWriter::WriteMeta(const FileMeta& meta) { return WriteSection(SECTION_META, SIDE_NPU, 0, 0, meta); }

Status VisWriter::WriteIndexChunk(Side side, const NodeIndexChunk& chunk) {
  return WriteSection(SECTION_NODE_INDEX, side, chunk.first(), chunk.name_size(), chunk);
}

Status VisWriter::WriteDetailBlock(Side side, const NodeDetailBlock& block) {
  return WriteSection(SECTION_NODE_DETAILS, side, block.first(), block.detail_size(), block);
}

Status VisWriter::WriteStackChunk(Side side, const StackChunk& chunk) {
  return WriteSection(SECTION_STACKS, side, chunk.first(), chunk.stack_size(), chunk);
}

Status VisWriter::WriteDivergence(const DivergenceRanking& ranking) {
  return WriteSection(SECTION_DIVERGENCE, SIDE_NPU, 0, static_cast<uint32_t>(ranking.entry_size()), ranking);
}

Status VisWriter::WriteCkpt(const CkptSimilarity& similarity) {
  return WriteSection(SECTION_CKPT, SIDE_NPU, 0, static_cast<uint32_t>(similarity.module_size()), similarity);
}

Status VisWriter::Commit() {
  uint64_t toc_offset = offset_;
  buffer_.clear();
  toc_.SerializeToString(&buffer_);
  packed_.resize(ZSTD_compressBound(buffer_.size()));
  size_t n = ZSTD_compress(packed_.data(), packed_.size(), buffer_.data(), buffer_.size(), level_);
  if (ZSTD_isError(n)) return MakeError(path_, "table of contents", ZSTD_getErrorName(n));
  GA_RETURN_IF_ERROR(WriteBytes(packed_.data(), n));
  char trailer[kTrailerSize];
  PutLE64(trailer, toc_offset);
  PutLE64(trailer + 8, n);
  memcpy(trailer + 16, kTrailerMagic, sizeof(kTrailerMagic));
  GA_RETURN_IF_ERROR(WriteBytes(trailer, sizeof(trailer)));
  if (fflush(file_) != 0 || (durable_ && fsync(fileno(file_)) != 0)) {
    return MakeError(path_, "", std::string("flush failed: ") + strerror(errno));
  }
  fclose(file_);
  file_ = nullptr;
  chmod(tmp_.c_str(), 0640);
  if (rename(tmp_.c_str(), path_.c_str()) != 0) {
    return MakeError(path_, "", std::string("cannot rename temporary file: ") + strerror(errno));
  }
  committed_ = true;
  temp_->Release();
  return Status::Ok();
}

// ---------------------------------------------------------------- reader

VisReader::~VisReader() {
  if (fd_ >= 0) close(fd_);
}

Result<std::unique_ptr<VisReader>> VisReader::Open(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO must not block
  if (fd < 0) return MakeError(path, "", std::string("cannot open: ") + strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return MakeError(path, "", "not a regular file");
  }
  std::unique_ptr<VisReader> r(new VisReader(path, fd, static_cast<uint64_t>(st.st_size)));
  if (r->size_ < kHeaderSize + kTrailerSize) {
    return MakeError(path, "", "not a graph-ascend .vis file (too short: " + std::to_string(r->size_) + " bytes)");
  }
  char header[kHeaderSize];
  GA_RETURN_IF_ERROR(ReadAt(fd, path, 0, sizeof(header), header));
  if (memcmp(header, kMagic, sizeof(kMagic)) != 0) {
    if (header[0] == '{') {
      return MakeError(path, ByteWhere(0),
                       "this is a JSON .vis of msprobe; graph-ascend reads its own protobuf .vis "
                       "(convert it with graph-ascend import)");
    }
    if (memcmp(header, "SQLite format 3", 15) == 0) {
      return MakeError(path, ByteWhere(0),
                       "this is an msprobe .vis.db; graph-ascend reads its own protobuf .vis "
                       "(convert it with graph-ascend import)");
    }
    return MakeError(path, ByteWhere(0), "not a graph-ascend .vis file (bad magic)");
  }
  uint32_t version = GetLE32(header + 8);
  if (version < kOldestFormatVersion || version > kFormatVersion) {
    return MakeError(path, ByteWhere(8),
                     "unsupported .vis format version " + std::to_string(version) + " (this build reads versions " +
                         std::to_string(kOldestFormatVersion) + " to " + std::to_string(kFormatVersion) + ")");
  }
  char trailer[kTrailerSize];
  uint64_t trailer_at = r->size_ - kTrailerSize;
  GA_RETURN_IF_ERROR(ReadAt(fd, path, trailer_at, sizeof(trailer), trailer));
  if (memcmp(trailer + 16, kTrailerMagic, sizeof(kTrailerMagic)) != 0) {
    return MakeError(path, ByteWhere(trailer_at + 16), "truncated or damaged .vis file (no trailer)");
  }
  SectionRef toc_ref;
  toc_ref.set_offset(GetLE64(trailer));
  toc_ref.set_compressed_size(GetLE64(trailer + 8));
  toc_ref.set_raw_size(0);
  if (!InRange(toc_ref, kHeaderSize, trailer_at)) {
    return MakeError(path, ByteWhere(trailer_at), "damaged .vis file (table of contents out of range)");
  }
  GA_RETURN_IF_ERROR(r->ReadSection(toc_ref, &r->toc_));
  for (int i = 0; i < r->toc_.sections_size(); ++i) {
    const SectionRef& s = r->toc_.sections(i);
    std::string where = "table of contents entry " + std::to_string(i);
    if (!InRange(s, kHeaderSize, toc_ref.offset())) {
      return MakeError(path, where,
                       std::string("damaged .vis file (") + KindName(s.kind()) + " section out of range: " +
                           std::to_string(s.compressed_size()) + " bytes at byte " + std::to_string(s.offset()) + ")");
    }
    // Every element of a repeated field takes at least one byte, so a count
    // beyond the raw size is damage, and sizes past the writer's limit are too
    // (readers reserve by them).
    if (s.raw_size() > kMaxSectionBytes || s.count() > s.raw_size()) {
      return MakeError(path, where,
                       std::string("damaged .vis file (") + KindName(s.kind()) + " section of " +
                           std::to_string(s.raw_size()) + " bytes holding " + std::to_string(s.count()) + " entries)");
    }
  }
  const SectionRef* meta = r->Find(SECTION_META, SIDE_NPU, 0);
  if (meta == nullptr) return MakeError(path, "", "damaged .vis file (no meta section)");
  GA_RETURN_IF_ERROR(r->ReadSection(*meta, &r->meta_));
  return r;
}

Status VisReader::ReadFrame(const SectionRef& ref, std::string* frame) const {
  // Checked again here (not only in Open) because callers may pass any ref.
  if (!InRange(ref, kHeaderSize, size_) || ref.compressed_size() > ZSTD_compressBound(kMaxSectionBytes)) {
    return MakeError(path_, ByteWhere(ref.offset()),
                     std::string("damaged ") + KindName(ref.kind()) + " section (" +
                         std::to_string(ref.compressed_size()) + " bytes out of range)");
  }
  frame->assign(ref.compressed_size(), '\0');
  return ReadAt(fd_, path_, ref.offset(), frame->size(), frame->data());
}

Status VisReader::ReadRaw(const SectionRef& ref, std::string* plain) const {
  std::string packed;
  GA_RETURN_IF_ERROR(ReadFrame(ref, &packed));
  unsigned long long raw = ZSTD_getFrameContentSize(packed.data(), packed.size());
  if (raw == ZSTD_CONTENTSIZE_ERROR || raw == ZSTD_CONTENTSIZE_UNKNOWN || raw > kMaxSectionBytes ||
      (ref.raw_size() != 0 && raw != ref.raw_size())) {
    return MakeError(path_, ByteWhere(ref.offset()), std::string("damaged ") + KindName(ref.kind()) + " section");
  }
  plain->assign(raw, '\0');
  size_t n = ZSTD_decompress(plain->data(), plain->size(), packed.data(), packed.size());
  if (ZSTD_isError(n) || n != raw) {
    return MakeError(path_, ByteWhere(ref.offset()),
                     std::string("damaged ") + KindName(ref.kind()) +
                         " section (zstd: " + (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size") + ")");
  }
  return Status::Ok();
}

Status VisReader::ReadSection(const SectionRef& ref, google::protobuf::MessageLite* msg) const {
  std::string plain;
  GA_RETURN_IF_ERROR(ReadRaw(ref, &plain));
  ProtobufLogCapture log;
  if (!msg->ParseFromString(plain)) {
    std::string problem = log.Take();
    return MakeError(path_, ByteWhere(ref.offset()),
                     std::string("damaged ") + KindName(ref.kind()) + " section (protobuf" +
                         (problem.empty() ? "" : ": " + problem) + ")");
  }
  return Status::Ok();
}

bool VisReader::has_side(Side side) const { return !Sections(SECTION_NODE_INDEX, side).empty(); }

std::vector<const SectionRef*> VisReader::Sections(SectionKind kind, Side side) const {
  std::vector<const SectionRef*> out;
  for (const SectionRef& s : toc_.sections()) {
    if (s.kind() == kind && (kind == SECTION_META || s.side() == side)) out.push_back(&s);
  }
  std::sort(out.begin(), out.end(), [](const SectionRef* a, const SectionRef* b) { return a->first() < b->first(); });
  return out;
}

const SectionRef* VisReader::Find(SectionKind kind, Side side, uint32_t index) const {
  for (const SectionRef& s : toc_.sections()) {
    if (s.kind() != kind) continue;
    if (kind == SECTION_META) return &s;
    if (s.side() == side && index >= s.first() && index - s.first() < s.count()) return &s;
  }
  return nullptr;
}

Status VisReader::ReadIndex(Side side, const std::function<Status(NodeIndexChunk&)>& visit,
                            const std::function<void(double)>& progress) const {
  auto sections = Sections(SECTION_NODE_INDEX, side);
  uint64_t total = 0, done = 0;
  for (const SectionRef* s : sections) total += s->compressed_size();
  uint32_t expect = 0;
  for (const SectionRef* s : sections) {
    NodeIndexChunk chunk;
    GA_RETURN_IF_ERROR(ReadSection(*s, &chunk));
    if (chunk.first() != expect || static_cast<uint32_t>(chunk.name_size()) != s->count()) {
      return MakeError(path_, ByteWhere(s->offset()), "damaged node index (chunks out of order)");
    }
    expect += s->count();
    GA_RETURN_IF_ERROR(visit(chunk));
    done += s->compressed_size();
    if (progress) progress(total ? static_cast<double>(done) / static_cast<double>(total) : 1.0);
  }
  return Status::Ok();
}

void ResolveKeys(std::string_view node_name, NodeDetail* detail) {
  for (auto* items : {detail->mutable_input(), detail->mutable_output()}) {
    for (Item& item : *items) {
      if (!item.has_key_suffix()) continue;
      std::string* key = item.mutable_key();
      key->reserve(node_name.size() + item.key_suffix().size());
      key->assign(node_name.data(), node_name.size()).append(item.key_suffix());
      item.clear_key_suffix();
    }
  }
}

void ResolveKeys(const NodeNames& names, NodeDetailBlock* block) {
  for (int i = 0; i < block->detail_size(); ++i) {
    NodeDetail* d = block->mutable_detail(i);
    bool stored = false;
    for (const auto* items : {&d->input(), &d->output()}) {
      for (const Item& item : *items) stored = stored || item.has_key_suffix();
    }
    if (stored) ResolveKeys(names(block->first() + static_cast<uint32_t>(i)), d);
  }
}

Result<NodeDetailBlock> VisReader::ReadStoredBlock(Side side, uint32_t node) const {
  const SectionRef* ref = Find(SECTION_NODE_DETAILS, side, node);
  if (ref == nullptr) return MakeError(path_, "", "no details for node " + std::to_string(node));
  NodeDetailBlock block;
  GA_RETURN_IF_ERROR(ReadSection(*ref, &block));
  if (block.first() != ref->first() || static_cast<uint32_t>(block.detail_size()) != ref->count()) {
    return MakeError(path_, ByteWhere(ref->offset()), "damaged node details block");
  }
  return block;
}

Result<NodeDetailBlock> VisReader::ReadDetailBlock(Side side, uint32_t node, const NodeNames& names) const {
  auto block = ReadStoredBlock(side, node);
  if (block.ok()) ResolveKeys(names, &*block);
  return block;
}

Result<NodeDetail> VisReader::ReadDetail(Side side, uint32_t node, std::string_view name) const {
  auto block = ReadStoredBlock(side, node);
  if (!block.ok()) return block.error();
  NodeDetail detail = std::move(*block->mutable_detail(static_cast<int>(node - block->first())));
  ResolveKeys(name, &detail);
  return detail;
}

Result<StackChunk> VisReader::ReadStackChunk(Side side, uint32_t id) const {
  const SectionRef* ref = Find(SECTION_STACKS, side, id);
  if (ref == nullptr) return MakeError(path_, "", "no stack " + std::to_string(id));
  StackChunk chunk;
  GA_RETURN_IF_ERROR(ReadSection(*ref, &chunk));
  if (chunk.first() != ref->first() || static_cast<uint32_t>(chunk.stack_size()) != ref->count()) {
    return MakeError(path_, ByteWhere(ref->offset()), "damaged stack chunk");
  }
  return chunk;
}

Result<Stack> VisReader::ReadStack(Side side, uint32_t id) const {
  auto chunk = ReadStackChunk(side, id);
  if (!chunk.ok()) return chunk.error();
  return std::move(*chunk->mutable_stack(static_cast<int>(id - chunk->first())));
}

Result<DivergenceRanking> VisReader::ReadDivergence() const {
  DivergenceRanking ranking;
  for (const SectionRef* ref : Sections(SECTION_DIVERGENCE, SIDE_NPU)) {
    GA_RETURN_IF_ERROR(ReadSection(*ref, &ranking));
    break;
  }
  return ranking;
}

Result<CkptSimilarity> VisReader::ReadCkpt() const {
  CkptSimilarity similarity;
  for (const SectionRef* ref : Sections(SECTION_CKPT, SIDE_NPU)) {
    GA_RETURN_IF_ERROR(ReadSection(*ref, &similarity));
    break;
  }
  return similarity;
}

const char* CompareModeName(CompareMode m) {
  switch (m) {
    case MODE_STATISTICS: return "statistics";
    case MODE_MD5: return "md5";
    case MODE_TENSOR: return "tensor";
    case MODE_STRUCTURE: return "structure";
    default: return "build";
  }
}

}  // namespace graph_ascend::vis
