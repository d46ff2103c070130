#include "compare/legend.h"

#include <string>

namespace graph_ascend::compare {
namespace {

// Appendix A of the builder reference: the strings msprobe writes.
const char* const kStatisticsDesc =
    "此节点所有输入输出的统计量相对误差, 值越大代表测量值与标杆值的偏差越大, 相对误差计算方式:|(测量值-标杆值)/标杆值|";
const char* const kThousandthTip =
    "Tensor中的元素逐个与对应的标杆数据对比，相对误差小于千分之一的比例占总元素个数的比例，比例越接近1越好";
const char* const kFiveThousandthTip =
    "Tensor中的元素逐个与对应的标杆数据对比，相对误差小于千分之五的比例占总元素个数的比例，比例越接近1越好";
const char* const kUnmatchedDesc = "比对过程中节点未匹配上";

using Legend = google::protobuf::RepeatedPtrField<vis::ColorBucket>;

void Add(Legend* legend, const char* color, double lo, double hi, const std::string& desc, const char* name) {
  vis::ColorBucket* b = legend->Add();
  b->set_color(color);
  b->set_lo(lo);
  b->set_hi(hi);
  b->set_description(desc);
  b->set_name(name);
}

void Add(vis::FileMeta* meta, const char* color, double lo, double hi, const std::string& desc, const char* name) {
  Add(meta->mutable_legend(), color, lo, hi, desc, name);
}

void AddUnmatched(Legend* legend) {
  vis::ColorBucket* b = legend->Add();
  b->set_color("#C7C7C7");
  b->set_unmatched(true);
  b->set_description(kUnmatchedDesc);
  b->set_name("unmatched");
}

void Tip(vis::FileMeta* meta, const char* key, const char* text) {
  vis::Tooltip* t = meta->add_tooltips();
  t->set_key(key);
  t->set_text(text);
}

void TensorTips(vis::FileMeta* meta) {
  Tip(meta, "One Thousandth Err Ratio", kThousandthTip);
  Tip(meta, "Five Thousandths Err Ratio", kFiveThousandthTip);
  Tip(meta, "Cosine",
      "通过计算两个向量的余弦值来判断其相似度，数值越接近于1说明计算出的两个张量越相似，实际可接受阈值为大于0.99。"
      "在计算中可能会存在nan，主要由于可能会出现其中一个向量为0");
  Tip(meta, "MaxAbsErr", "当最大绝对误差越接近0表示其计算的误差越小，实际可接受阈值为小于0.001");
  Tip(meta, "MaxRelativeErr",
      "当最大相对误差越接近0表示其计算的误差越小。当dump数据中存在0或Nan时，比对结果中最大相对误差则出现inf或Nan的情况，"
      "属于正常现象");
}

}  // namespace

const char* TaskName(vis::CompareMode mode) {
  switch (mode) {
    case vis::MODE_STATISTICS: return "summary";
    case vis::MODE_MD5: return "md5";
    case vis::MODE_TENSOR: return "all";
    case vis::MODE_STRUCTURE: return "structure";
    default: return "";
  }
}

void SetLegendAndTooltips(vis::FileMeta* meta) {
  meta->clear_legend();
  meta->clear_tooltips();
  switch (meta->mode()) {
    case vis::MODE_STATISTICS:
      Add(meta, "#FFFCF3", 0, 0.2, kStatisticsDesc, "0-0.2");
      Add(meta, "#FFEDBE", 0.2, 0.4, kStatisticsDesc, "0.2-0.4");
      Add(meta, "#FFDC7F", 0.4, 0.6, kStatisticsDesc, "0.4-0.6");
      Add(meta, "#FFC62E", 0.6, 0.8, kStatisticsDesc, "0.6-0.8");
      Add(meta, "#FF704D", 0.8, 1, kStatisticsDesc, "0.8-1");
      AddUnmatched(meta->mutable_legend());
      Tip(meta, "Max diff", "NPU与标杆API统计信息比对，最大值的差值");
      Tip(meta, "Min diff", "NPU与标杆API统计信息比对，最小值的差值");
      Tip(meta, "Mean diff", "NPU与标杆API统计信息比对，平均值的差值");
      Tip(meta, "L2norm diff", "NPU与标杆API统计信息比对，2范数（平方根）的差值");
      break;
    case vis::MODE_TENSOR: {
      std::string desc =
          std::string("此节点所有输入的最小双千分之一和所有输出的最小双千分之一的差值的绝对值, 代表双千指标的变化情况, "
                      "值越大代表测量值与标杆值的偏差越大, 双千分之一指标计算方式：") +
          kThousandthTip;
      Add(meta, "#FFFCF3", 0, 0.05, desc, "0-0.05");
      Add(meta, "#FFEDBE", 0.05, 0.1, desc, "0.05-0.1");
      Add(meta, "#FFDC7F", 0.1, 0.15, desc, "0.1-0.15");
      Add(meta, "#FFC62E", 0.15, 0.2, desc, "0.15-0.2");
      Add(meta, "#FF704D", 0.2, 1, desc, "0.2-1");
      AddUnmatched(meta->mutable_legend());
      TensorTips(meta);
      break;
    }
    case vis::MODE_MD5:
      Add(meta, "#FFFCF3", 1, 1, "与标杆相比, 此节点所有输入输出的md5值相同", "pass");
      Add(meta, "#FF704D", 0, 0, "与标杆相比, 此节点任意输入输出的md5值不同", "different");
      AddUnmatched(meta->mutable_legend());
      Tip(meta, "md5", "数据MD5信息，用于比较两个数据信息是否完全一致");
      break;
    case vis::MODE_STRUCTURE:
      AddUnmatched(meta->mutable_legend());
      TensorTips(meta);
      break;
    default: break;
  }
}

void SetGradeLegend(vis::FileMeta* meta) {
  Legend* legend = meta->mutable_grade_legend();
  legend->Clear();
  if (meta->mode() == vis::MODE_NONE || meta->mode() == vis::MODE_STRUCTURE) return;
  std::string desc = meta->mode() == vis::MODE_TENSOR ? "此节点所有输入输出的 tensor 误差, 颜色越深代表调试侧与标杆侧的偏差越大"
                     : meta->mode() == vis::MODE_MD5  ? "与标杆相比, 此节点任意输入输出的md5值不同"
                                                      : "此节点所有输入输出的统计量误差, 颜色越深代表调试侧与标杆侧的偏差越大";
  Add(legend, "#FFFCF3", 0, 0.3, meta->mode() == vis::MODE_MD5 ? "与标杆相比, 此节点所有输入输出的md5值相同" : desc,
      "pass");
  Add(legend, "#FFDC7F", 0.3, 0.6, desc, "warning");
  Add(legend, "#FF704D", 0.6, 1, desc, "error");
  AddUnmatched(legend);
}

}  // namespace graph_ascend::compare
