// TensorView: the element-level comparison of one item of a matched pair in a
// task "tensor" compare (issue 32 point 5, docs/API.md).
//
// The tensor files are found as the builder found them: the item's data_name
// field in "<dump>/dump_tensor_data/", where <dump> is the side's
// GraphMeta.dump_path (the folder the graph was built from). A file is read
// only when its real path, checked on the opened descriptor, lies inside the
// log directory (base/confine.h); it is read in chunks (compare/element_compare.h),
// so a tensor larger than memory costs the chunk buffers, not its size.
#include <stdlib.h>

#include <memory>

#include "base/confine.h"
#include "compare/element_compare.h"
#include "compare/pair_compare.h"
#include "graph_service.h"
#include "rpc_answers.h"

namespace graph_ascend::service {
namespace {

constexpr int kDefaultTopK = 20;
constexpr int kDefaultCells = 64;

// The item of `detail` whose key is `key`: its position in input-then-output order, or -1.
int FindItem(const vis::NodeDetail& detail, const std::string& key) {
  int at = 0;
  for (const auto* list : {&detail.input(), &detail.output()}) {
    for (const vis::Item& item : *list) {
      if (item.key() == key) return at;
      ++at;
    }
  }
  return -1;
}

const vis::Item& ItemAt(const vis::NodeDetail& detail, int at) {
  return at < detail.input_size() ? detail.input(at) : detail.output(at - detail.input_size());
}

// The item's tensor file name, "" when it has none (statistics dumps, null arguments, "-1").
std::string DataName(const vis::Item& item) {
  for (const vis::Field& f : item.field()) {
    if (f.name() == "data_name" && f.value().kind_case() == vis::Value::kText && f.value().text() != "-1") {
      return f.value().text();
    }
  }
  return "";
}

std::string RealPath(const std::string& path) {
  char* r = realpath(path.c_str(), nullptr);
  if (r == nullptr) return "";
  std::string out(r);
  free(r);
  return out;
}

void FillHistogram(const compare::ErrorHistogram& h, ErrorHistogram* out) {
  out->set_low_exponent(compare::ErrorHistogram::kLowExponent);
  out->set_per_decade(compare::ErrorHistogram::kPerDecade);
  for (uint64_t c : h.counts) out->add_counts(c);
  out->set_zero(h.zero);
  out->set_below(h.below);
  out->set_above(h.above);
}

void FillSide(const compare::SideCounts& c, const std::vector<int64_t>& shape, const std::string& dtype,
              TensorSide* out) {
  for (int64_t s : shape) out->add_shape(s);
  out->set_dtype(dtype);
  out->set_nan(c.nan);
  out->set_pos_inf(c.pos_inf);
  out->set_neg_inf(c.neg_inf);
  out->set_min(c.min);
  out->set_max(c.max);
}

std::vector<int64_t> IndexOf(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t k = shape.size(); k-- > 0;) {
    index[k] = shape[k] > 0 ? flat % shape[k] : 0;
    flat = shape[k] > 0 ? flat / shape[k] : 0;
  }
  return index;
}

}  // namespace

grpc::Status GraphServiceImpl::TensorView(grpc::ServerContext*, const TensorViewRequest* req, TensorViewReply* reply) {
  std::shared_ptr<OpenGraph> file;
  grpc::Status st = Open(req->file(), {}, &file);
  if (!st.ok()) return st;
  if (req->top_k() < 0 || req->top_k() > 1000) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, "top_k: between 0 and 1000, not " + std::to_string(req->top_k()));
  }
  // What the files are, taken under the file's lock; the files are read after it.
  vis::NodeDetail detail[2];
  std::string dump[2];
  {
    std::shared_lock<std::shared_mutex> lock(file->mutex());
    if (!file->is_compare()) {
      return Fail(grpc::StatusCode::FAILED_PRECONDITION,
                  req->file() + " is not a compare: a tensor view needs two runs");
    }
    const vis::Side side = req->side();
    const SideGraph* g = file->side(side);
    st = CheckNode(*file, side, *g, req->node());
    if (!st.ok()) return st;
    uint32_t n = static_cast<uint32_t>(req->node());
    if (g->matched(n) < 0) {
      return Fail(grpc::StatusCode::FAILED_PRECONDITION,
                  std::string(g->name(n)) + " is not matched: a tensor view compares a matched pair");
    }
    uint32_t node[2];
    node[side] = n;
    node[1 - side] = static_cast<uint32_t>(g->matched(n));
    for (int s = 0; s < 2; ++s) {
      auto d = file->Detail(static_cast<vis::Side>(s), node[s]);
      if (!d.ok()) return Fail(grpc::StatusCode::DATA_LOSS, d.error());
      detail[s] = std::move(*d);
    }
    dump[0] = file->meta().npu().dump_path();
    dump[1] = file->meta().bench().dump_path();
  }
  // The pair of items, as the builder's compare paired them.
  const vis::Side side = req->side();
  int at = FindItem(detail[side], req->item());
  if (at < 0) return Fail(grpc::StatusCode::NOT_FOUND, "the node has no item " + req->item());
  std::vector<const vis::Item*> paired = compare::PairedItems(detail[0], detail[1]);
  const vis::Item* item[2] = {nullptr, nullptr};
  if (side == vis::SIDE_NPU) {
    item[0] = &ItemAt(detail[0], at);
    item[1] = static_cast<size_t>(at) < paired.size() ? paired[static_cast<size_t>(at)] : nullptr;
  } else {
    item[1] = &ItemAt(detail[1], at);
    for (size_t k = 0; k < paired.size(); ++k) {
      if (paired[k] == item[1]) item[0] = &ItemAt(detail[0], static_cast<int>(k));
    }
  }
  if (item[0] == nullptr || item[1] == nullptr) {
    return Fail(grpc::StatusCode::FAILED_PRECONDITION, req->item() + " has no counterpart on the other side");
  }
  const std::string& root = logdir_.root();
  compare::TensorFile tensor[2];
  TensorSide* out_side[2] = {reply->mutable_npu(), reply->mutable_bench()};
  for (int s = 0; s < 2; ++s) {
    const char* which = s == 0 ? "NPU" : "Bench";
    std::string name = DataName(*item[s]);
    out_side[s]->set_item(item[s]->key());
    out_side[s]->set_data_name(name);
    if (name.empty()) {
      return Fail(grpc::StatusCode::FAILED_PRECONDITION,
                  item[s]->key() + " has no tensor file (" + which +
                      " side): tensor views need a task \"tensor\" dump, whose items name their data_name");
    }
    if (name.find('/') != std::string::npos || name == "." || name == "..") {
      return Fail(grpc::StatusCode::FAILED_PRECONDITION, "data_name " + name + " is not a plain file name");
    }
    if (dump[s].empty()) {
      return Fail(grpc::StatusCode::FAILED_PRECONDITION,
                  req->file() + " does not record the dump it was built from (written by msprobe or an older "
                                "graph-ascend): build it again with graph-ascend from a dump under the log directory");
    }
    const std::string real_dump = RealPath(dump[s]);
    if (real_dump.empty() || !PathInside(real_dump, root)) {
      return Fail(grpc::StatusCode::FAILED_PRECONDITION,
                  std::string("the ") + which + " dump of this graph (" + dump[s] +
                      ") is not reachable inside the log directory, and the service reads nothing outside it");
    }
    // A file that is missing, or whose real path leaves the log directory, gets one answer: nothing
    // tells whether a file outside exists.
    const std::string path = real_dump + "/dump_tensor_data/" + name;
    const std::string real = RealPath(path);
    auto absent = [&] {
      return Fail(grpc::StatusCode::FAILED_PRECONDITION,
                  std::string("no such tensor file inside the log directory (") + which + " side): " +
                      path.substr(root.size() + 1));
    };
    if (real.empty() || !PathInside(real, root)) return absent();
    auto opened = compare::TensorFile::Open(path, root);  // the extension of the name the dump gave
    if (!opened.ok()) {
      if (opened.error().message.find("leaves the log directory") != std::string::npos) return absent();
      return Fail(grpc::StatusCode::FAILED_PRECONDITION, opened.error());
    }
    tensor[s] = std::move(*opened);
    out_side[s]->set_path(real.substr(root.size() + 1));
  }

  compare::ElementOptions o;
  o.top_k = req->top_k() == 0 ? kDefaultTopK : req->top_k();
  o.max_cells = req->max_cells() == 0 ? kDefaultCells : req->max_cells();
  const int rank = static_cast<int>(tensor[0].shape().size());
  o.row_axis = req->has_row_axis() ? req->row_axis() : rank >= 2 ? rank - 2 : -1;
  o.col_axis = req->has_col_axis() ? req->col_axis() : rank >= 1 ? rank - 1 : -1;
  o.fixed.assign(req->fixed().begin(), req->fixed().end());
  const TensorMask& mask = req->mask();
  if (mask.kind() == "length") {
    o.mask = compare::ElementOptions::Mask::kLength;
  } else if (mask.kind() == "value") {
    o.mask = compare::ElementOptions::Mask::kValue;
  } else if (!mask.kind().empty()) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT,
                "mask kind: \"length\", \"value\" or \"\", not \"" + mask.kind() + "\"");
  }
  o.mask_axis = mask.axis();
  o.mask_length = mask.length();
  o.mask_value = mask.value();
  if (tensor[0].count() != tensor[1].count()) {
    return Fail(grpc::StatusCode::FAILED_PRECONDITION,
                "the tensors differ in size (" + std::to_string(tensor[0].count()) + " and " +
                    std::to_string(tensor[1].count()) + " elements): no element-wise comparison");
  }
  auto c = compare::CompareElements(tensor[0], tensor[1], o);
  if (!c.ok()) return Fail(grpc::StatusCode::INVALID_ARGUMENT, c.error().message);

  FillSide(c->npu, c->npu_shape, c->npu_dtype, reply->mutable_npu());
  FillSide(c->bench, c->bench_shape, c->bench_dtype, reply->mutable_bench());
  reply->set_elements(c->elements);
  reply->set_masked(c->masked);
  reply->set_compared(c->compared);
  reply->set_rows(c->rows);
  reply->set_masked_rows(c->masked_rows);
  reply->set_special_mismatch(c->special_mismatch);
  if (c->first_special_mismatch >= 0) {
    for (int64_t i : IndexOf(c->first_special_mismatch, c->npu_shape)) reply->add_first_special_mismatch(i);
  }
  reply->set_max_abs(c->max_abs);
  reply->set_max_rel(c->max_rel);
  reply->set_mean_abs(c->mean_abs);
  FillHistogram(c->abs_hist, reply->mutable_abs_hist());
  FillHistogram(c->rel_hist, reply->mutable_rel_hist());
  for (const compare::WorstElement& w : c->worst) {
    WorstElement* e = reply->add_worst();
    for (int64_t i : w.index) e->add_index(i);
    e->set_npu(w.npu);
    e->set_bench(w.bench);
    e->set_abs_err(w.abs_err);
    e->set_rel_err(w.rel_err);
  }
  const compare::SliceMap& m = c->slice;
  TensorSlice* slice = reply->mutable_slice();
  slice->set_row_axis(m.row_axis);
  slice->set_col_axis(m.col_axis);
  slice->set_rows(m.rows);
  slice->set_cols(m.cols);
  slice->set_cell_rows(m.cell_rows);
  slice->set_cell_cols(m.cell_cols);
  for (double d : m.diff) slice->add_diff(d);
  for (bool b : m.masked) slice->add_masked(b);
  for (int k = 0; k < rank; ++k) {
    bool own = k == m.row_axis || k == m.col_axis;
    slice->add_fixed(own || k >= static_cast<int>(o.fixed.size()) ? 0 : o.fixed[k]);
  }
  return grpc::Status::OK;
}

}  // namespace graph_ascend::service
