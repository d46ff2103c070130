#include "layout.h"

#include <algorithm>

namespace graph_ascend::service {
namespace {

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Python's a // b for b > 0.
int32_t FloorDiv2(int32_t a) { return a >= 0 ? a / 2 : -((-a + 1) / 2); }

int32_t TextWidth(const std::string& s) {
  int32_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;  // code points, as Python's len()
  return kCharWidth * chars;
}

}  // namespace

std::string Label(const SideGraph& g, uint32_t node) {
  std::string_view name = g.name(node);
  if (node == 0 || g.parent(node) == 0) return std::string(name);
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t p = name.find('.', start);
    parts.push_back(name.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start));
    if (p == std::string_view::npos) break;
    start = p + 1;
  }
  size_t keep = 0, n = parts.size();
  if (g.node_type(node) == 0) {
    if (n < 4) return std::string(name);
    keep = !IsDigits(parts[n - 4]) ? 4 : (n > 4 ? 5 : n);
  } else {
    if (n < 2) return std::string(name);
    keep = !IsDigits(parts[n - 2]) ? 2 : (n > 2 ? 3 : n);
  }
  std::string out;
  for (size_t i = n - keep; i < n; ++i) {
    if (!out.empty() || i > n - keep) out += '.';
    out += parts[i];
  }
  return out;
}

uint32_t LayoutType(const SideGraph& g, uint32_t node) {
  if (g.child_count(node) == 0) return 1;
  uint32_t t = g.node_type(node);
  return t == 1 ? 0 : t;
}

bool ViewState::InMicroStep(const SideGraph& g, uint32_t node) const {
  if (micro_step_ < 0 || node == 0) return true;
  int32_t m = g.effective_micro_step(node);
  return m < 0 || m == micro_step_;
}

Status ViewState::CheckNode(const SideGraph& g, uint32_t node) const {
  if (!g.valid(node)) return MakeError("", "node " + std::to_string(node), "no such node");
  if (!g.reachable(node)) {
    return MakeError("", "node " + std::to_string(node), "node is not under the root (an orphan of the dump)");
  }
  if (!InMicroStep(g, node)) {
    return MakeError("", "node " + std::to_string(node),
                     "node belongs to micro step " + std::to_string(g.effective_micro_step(node)) +
                         ", the view shows micro step " + std::to_string(micro_step_));
  }
  return Status::Ok();
}

Status ViewState::Reveal(const SideGraph& g, uint32_t node) {
  GA_RETURN_IF_ERROR(CheckNode(g, node));
  for (uint32_t a : g.Ancestors(node)) {
    if (expanded_.insert(a).second) stale_ = true;
  }
  return Status::Ok();
}

Status ViewState::Expand(const SideGraph& g, uint32_t node) {
  GA_RETURN_IF_ERROR(Reveal(g, node));
  if (g.child_count(node) > 0 && expanded_.insert(node).second) stale_ = true;
  return Status::Ok();
}

Status ViewState::Collapse(const SideGraph& g, uint32_t node) {
  GA_RETURN_IF_ERROR(CheckNode(g, node));
  if (node == 0 || !expanded_.count(node)) return Status::Ok();
  // Forget the expansion of every descendant, as the reference prunes them.
  for (auto it = expanded_.begin(); it != expanded_.end();) {
    bool below = false;
    for (int32_t p = static_cast<int32_t>(*it); p >= 0; p = g.parent(static_cast<uint32_t>(p))) {
      if (static_cast<uint32_t>(p) == node) {
        below = true;
        break;
      }
    }
    it = below ? expanded_.erase(it) : std::next(it);
  }
  stale_ = true;
  return Status::Ok();
}

const std::vector<LayoutBox>& ViewState::Layout(const SideGraph& g) {
  if (!stale_) return boxes_;
  boxes_.clear();
  // Pre-order walk of the visible tree.
  LayoutBox root;
  root.node = 0;
  root.expandable = g.child_count(0) > 0;
  root.expanded = true;
  boxes_.push_back(root);
  std::vector<std::pair<uint32_t, uint32_t>> stack = {{0, 0}};  // box, next child
  while (!stack.empty()) {
    auto& [b, k] = stack.back();
    const uint32_t node = boxes_[b].node;
    if (boxes_[b].expanded && k < g.child_count(node)) {
      const uint32_t c = g.children(node)[k++];
      if (node == 0 && !InMicroStep(g, c)) continue;
      LayoutBox box;
      box.node = c;
      box.parent_box = static_cast<int32_t>(b);
      box.depth = boxes_[b].depth + 1;
      box.expandable = g.child_count(c) > 0;
      box.expanded = box.expandable && expanded_.count(c) != 0;
      const uint32_t cb = static_cast<uint32_t>(boxes_.size());
      boxes_.push_back(box);
      stack.emplace_back(cb, 0);
    } else {
      boxes_[b].end = static_cast<uint32_t>(boxes_.size());
      stack.pop_back();
    }
  }
  // Size pass (§6.5): children come after their parent, so go backwards.
  for (size_t i = boxes_.size(); i-- > 0;) {
    LayoutBox& box = boxes_[i];
    if (!box.expandable) {
      box.width = kLeafWidth;
      box.height = kHeaderHeight;
      continue;
    }
    const int32_t label_width = TextWidth(Label(g, box.node)) + 10;
    if (!box.expanded) {
      box.width = label_width;
      box.height = kHeaderHeight;
      continue;
    }
    int32_t total = kHeaderHeight, max_w = 0;
    uint32_t c = static_cast<uint32_t>(i) + 1;
    while (c < box.end) {
      const uint32_t type = LayoutType(g, boxes_[c].node);
      int32_t count = 0, sum_w = 0, max_child_w = 0, sum_h = 0;
      while (c < box.end && LayoutType(g, boxes_[c].node) == type) {
        ++count;
        sum_w += boxes_[c].width;
        sum_h += boxes_[c].height;
        max_child_w = std::max(max_child_w, boxes_[c].width);
        c = boxes_[c].end;
      }
      if (type == 1) {
        int32_t rows = (count + kMaxPerRow - 1) / kMaxPerRow;
        if (rows > 1) {
          max_w = std::max(max_w, kMaxPerRow * kLeafWidth + (kMaxPerRow - 1) * kHorizontalSpacing);
          total += (kHeaderHeight + kVerticalSpacing) * rows;
        } else {
          max_w = std::max(max_w, sum_w + kHorizontalSpacing * (count - 1));
          total += kHeaderHeight + kVerticalSpacing;
        }
      } else {
        max_w = std::max(max_w, max_child_w);
        total += sum_h + kVerticalSpacing * count;
      }
    }
    box.width = std::max(max_w + 10, label_width);
    box.height = total + 10;
  }
  // Position pass (§6.6): parents before children.
  for (size_t i = 0; i < boxes_.size(); ++i) {
    const LayoutBox& box = boxes_[i];
    if (!box.expanded) continue;
    int32_t cy = box.y + kHeaderHeight + kVerticalSpacing;
    uint32_t c = static_cast<uint32_t>(i) + 1;
    while (c < box.end) {
      const uint32_t type = LayoutType(g, boxes_[c].node);
      if (type == 1) {
        while (c < box.end && LayoutType(g, boxes_[c].node) == 1) {
          uint32_t row[kMaxPerRow];
          int32_t n = 0, row_w = 0, row_h = 0;
          while (n < kMaxPerRow && c < box.end && LayoutType(g, boxes_[c].node) == 1) {
            row[n++] = c;
            row_w += boxes_[c].width;
            row_h = std::max(row_h, boxes_[c].height);
            c = boxes_[c].end;
          }
          row_w += kHorizontalSpacing * (n - 1);
          int32_t x = box.x + FloorDiv2(box.width - row_w);
          for (int32_t r = 0; r < n; ++r) {
            boxes_[row[r]].x = x;
            boxes_[row[r]].y = cy;
            x += boxes_[row[r]].width + kHorizontalSpacing;
          }
          cy += row_h + kVerticalSpacing;
        }
      } else {
        while (c < box.end && LayoutType(g, boxes_[c].node) == type) {
          boxes_[c].x = box.x + FloorDiv2(box.width - boxes_[c].width);
          boxes_[c].y = cy;
          cy += boxes_[c].height + kVerticalSpacing;
          c = boxes_[c].end;
        }
      }
    }
  }
  stale_ = false;
  return boxes_;
}

std::vector<uint32_t> ViewState::Cut(const Viewport& v) const {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < boxes_.size();) {
    if (v.Intersects(boxes_[i])) {
      out.push_back(i);
      ++i;
    } else {
      i = boxes_[i].end;
    }
  }
  return out;
}

}  // namespace graph_ascend::service
