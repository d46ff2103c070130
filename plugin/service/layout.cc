#include "layout.h"

#include <algorithm>

namespace graph_ascend::service {
namespace {

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Python's a // 2.
int32_t FloorDiv2(int32_t a) { return a >= 0 ? a / 2 : -((-a + 1) / 2); }

int32_t TextWidth(std::string_view s) {
  int32_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;  // code points, as Python's len()
  return kCharWidth * chars;
}

// The dot-separated part `k` from the end (1 = last) of `name`, and where it starts.
std::string_view PartFromEnd(std::string_view name, size_t k, size_t* start) {
  size_t end = name.size();
  for (size_t i = 1; i < k; ++i) end = name.rfind('.', end - 1);
  size_t dot = end == 0 ? std::string_view::npos : name.rfind('.', end - 1);
  *start = dot == std::string_view::npos ? 0 : dot + 1;
  return name.substr(*start, end - *start);
}

}  // namespace

std::string_view Label(const SideGraph& g, uint32_t node) {
  std::string_view name = g.name(node);
  if (node == 0 || g.parent(node) == 0) return name;
  const size_t parts = static_cast<size_t>(std::count(name.begin(), name.end(), '.')) + 1;
  const bool module = g.node_type(node) == 0;
  const size_t base = module ? 4 : 2;
  if (parts < base) return name;
  size_t start = 0;
  size_t keep = base;
  if (IsDigits(PartFromEnd(name, base, &start))) {
    if (parts <= base) return name;
    keep = base + 1;
  }
  PartFromEnd(name, keep, &start);
  return name.substr(start);
}

uint32_t LayoutType(const SideGraph& g, uint32_t node) {
  if (g.child_count(node) == 0) return 1;
  uint32_t t = g.node_type(node);
  return t == 1 ? 0 : t;
}

ViewState::ViewState(int32_t micro_step) : micro_step_(micro_step) { blocks_[0]; }

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

void ViewState::Invalidate(const SideGraph& g, uint32_t node) {
  for (int32_t p = static_cast<int32_t>(node); p >= 0; p = g.parent(static_cast<uint32_t>(p))) {
    auto it = blocks_.find(static_cast<uint32_t>(p));
    if (it != blocks_.end()) it->second.valid = false;
  }
}

Status ViewState::Reveal(const SideGraph& g, uint32_t node) {
  GA_RETURN_IF_ERROR(CheckNode(g, node));
  bool changed = false;
  for (int32_t p = g.parent(node); p >= 0; p = g.parent(static_cast<uint32_t>(p))) {
    changed |= blocks_.try_emplace(static_cast<uint32_t>(p)).second;
  }
  if (changed) Invalidate(g, node);
  return Status::Ok();
}

Status ViewState::Expand(const SideGraph& g, uint32_t node) {
  GA_RETURN_IF_ERROR(Reveal(g, node));
  if (g.child_count(node) > 0 && blocks_.try_emplace(node).second) Invalidate(g, node);
  return Status::Ok();
}

Status ViewState::Collapse(const SideGraph& g, uint32_t node) {
  GA_RETURN_IF_ERROR(CheckNode(g, node));
  if (node == 0 || !blocks_.count(node)) return Status::Ok();
  // Forget the expansion of the node and every descendant, as the reference prunes them.
  for (auto it = blocks_.begin(); it != blocks_.end();) {
    bool below = false;
    for (int32_t p = static_cast<int32_t>(it->first); p >= 0; p = g.parent(static_cast<uint32_t>(p))) {
      if (static_cast<uint32_t>(p) == node) {
        below = true;
        break;
      }
    }
    it = below ? blocks_.erase(it) : std::next(it);
  }
  Invalidate(g, node);
  return Status::Ok();
}

// The size pass (§6.5) and position pass (§6.6) of one expanded node, given
// the sizes of its children (their blocks are valid).
void ViewState::Compute(const SideGraph& g, uint32_t node, Block* block) {
  std::vector<Placed>& kids = block->kids;
  kids.clear();
  block->visible = 1;
  const uint32_t* children = g.children(node);
  for (uint32_t k = 0; k < g.child_count(node); ++k) {
    const uint32_t c = children[k];
    if (node == 0 && !InMicroStep(g, c)) continue;
    Placed p{c, 0, 0, kLeafWidth, kHeaderHeight};
    if (g.child_count(c) > 0) {
      auto it = blocks_.find(c);
      if (it != blocks_.end()) {
        p.width = it->second.width;
        p.height = it->second.height;
        block->visible += it->second.visible;
      } else {
        p.width = TextWidth(Label(g, c)) + 10;
        block->visible += 1;
      }
    } else {
      block->visible += 1;
    }
    kids.push_back(p);
  }
  const size_t n = kids.size();
  // Size: runs of equal layout type; leaf runs in rows of 5, other runs stacked.
  int32_t total = kHeaderHeight, max_w = 0;
  for (size_t i = 0; i < n;) {
    const uint32_t type = LayoutType(g, kids[i].node);
    int32_t count = 0, sum_w = 0, max_child_w = 0, sum_h = 0;
    for (; i < n && LayoutType(g, kids[i].node) == type; ++i) {
      ++count;
      sum_w += kids[i].width;
      sum_h += kids[i].height;
      max_child_w = std::max(max_child_w, kids[i].width);
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
  const int32_t w = std::max(max_w + 10, TextWidth(Label(g, node)) + 10);
  block->width = w;
  block->height = total + 10;
  // Positions, relative to the node's corner.
  int32_t cy = kHeaderHeight + kVerticalSpacing;
  for (size_t i = 0; i < n;) {
    const uint32_t type = LayoutType(g, kids[i].node);
    if (type == 1) {
      while (i < n && LayoutType(g, kids[i].node) == 1) {
        size_t first = i;
        int32_t row_w = 0, row_h = 0;
        for (; i < n && i - first < static_cast<size_t>(kMaxPerRow) && LayoutType(g, kids[i].node) == 1; ++i) {
          row_w += kids[i].width;
          row_h = std::max(row_h, kids[i].height);
        }
        row_w += kHorizontalSpacing * static_cast<int32_t>(i - first - 1);
        int32_t x = FloorDiv2(w - row_w);
        for (size_t r = first; r < i; ++r) {
          kids[r].x = x;
          kids[r].y = cy;
          x += kids[r].width + kHorizontalSpacing;
        }
        cy += row_h + kVerticalSpacing;
      }
    } else {
      for (; i < n && LayoutType(g, kids[i].node) == type; ++i) {
        kids[i].x = FloorDiv2(w - kids[i].width);
        kids[i].y = cy;
        cy += kids[i].height + kVerticalSpacing;
      }
    }
  }
  block->valid = true;
}

void ViewState::Update(const SideGraph& g) {
  // Post-order over the invalid blocks: a block is computed after its expanded children.
  std::vector<std::pair<uint32_t, bool>> stack = {{0, false}};
  while (!stack.empty()) {
    auto [node, children_done] = stack.back();
    stack.pop_back();
    Block& block = blocks_[node];
    if (block.valid) continue;
    if (children_done) {
      Compute(g, node, &block);
      continue;
    }
    stack.emplace_back(node, true);
    const uint32_t* children = g.children(node);
    for (uint32_t k = 0; k < g.child_count(node); ++k) {
      auto it = blocks_.find(children[k]);
      if (it != blocks_.end() && !it->second.valid) stack.emplace_back(children[k], false);
    }
  }
}

uint32_t ViewState::total_visible() const { return blocks_.at(0).visible; }
int32_t ViewState::width() const { return blocks_.at(0).width; }
int32_t ViewState::height() const { return blocks_.at(0).height; }

std::vector<LayoutBox> ViewState::Boxes(const SideGraph& g, const Viewport* v) {
  Update(g);
  std::vector<LayoutBox> out;
  const Block& root_block = blocks_.at(0);
  LayoutBox root;
  root.width = root_block.width;
  root.height = root_block.height;
  root.expandable = g.child_count(0) > 0;
  root.expanded = true;
  if (v != nullptr && !v->Intersects(root)) return out;
  out.push_back(root);
  struct Frame {
    const Block* block;
    int32_t x, y, depth;
    uint32_t box;
    size_t k, end;
  };
  auto frame = [&](const Block* b, int32_t x, int32_t y, int32_t depth, uint32_t box) {
    Frame f{b, x, y, depth, box, 0, b->kids.size()};
    if (v != nullptr) {
      // Children go down the page in order: their tops and bottoms never decrease.
      const auto& kids = b->kids;
      // In 64 bits, as Viewport::Intersects.
      auto above = [&](const Placed& p) { return int64_t{y} + p.y + p.height <= v->y; };
      auto starts_above_bottom = [&](const Placed& p) { return int64_t{y} + p.y < int64_t{v->y} + v->height; };
      f.k = static_cast<size_t>(std::partition_point(kids.begin(), kids.end(), above) - kids.begin());
      f.end = static_cast<size_t>(std::partition_point(kids.begin(), kids.end(), starts_above_bottom) - kids.begin());
      f.end = std::max(f.end, f.k);
    }
    return f;
  };
  std::vector<Frame> stack = {frame(&root_block, 0, 0, 0, 0)};
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.k >= f.end) {
      out[f.box].end = static_cast<uint32_t>(out.size());
      stack.pop_back();
      continue;
    }
    const Placed& p = f.block->kids[f.k++];
    LayoutBox box;
    box.node = p.node;
    box.parent_box = static_cast<int32_t>(f.box);
    box.depth = f.depth + 1;
    box.x = f.x + p.x;
    box.y = f.y + p.y;
    box.width = p.width;
    box.height = p.height;
    box.expandable = g.child_count(p.node) > 0;
    if (v != nullptr && !v->Intersects(box)) continue;
    auto it = box.expandable ? blocks_.find(p.node) : blocks_.end();
    box.expanded = it != blocks_.end();
    const uint32_t index = static_cast<uint32_t>(out.size());
    out.push_back(box);
    if (box.expanded) {
      Frame child = frame(&it->second, box.x, box.y, box.depth, index);
      stack.push_back(child);  // may move `f`; it is not used again in this round
    } else {
      out.back().end = index + 1;
    }
  }
  return out;
}

std::vector<LayoutBox> ViewState::Layout(const SideGraph& g) { return Boxes(g, nullptr); }

std::vector<LayoutBox> ViewState::Cut(const SideGraph& g, const Viewport& v) { return Boxes(g, &v); }

size_t ViewState::MemoryBytes() const {
  size_t bytes = sizeof(*this);
  for (const auto& [node, block] : blocks_) bytes += sizeof(block) + 32 + block.kids.capacity() * sizeof(Placed);
  return bytes;
}

bool ViewState::Locate(const SideGraph& g, uint32_t node, LayoutBox* out) {
  if (!g.valid(node) || !g.reachable(node)) return false;
  Update(g);
  std::vector<uint32_t> path = g.Ancestors(node);
  path.push_back(node);
  LayoutBox box;
  box.width = width();
  box.height = height();
  box.expandable = g.child_count(0) > 0;
  box.expanded = true;
  for (size_t i = 1; i < path.size(); ++i) {
    auto it = blocks_.find(path[i - 1]);
    if (it == blocks_.end()) return false;
    const auto& kids = it->second.kids;
    auto kid = std::find_if(kids.begin(), kids.end(), [&](const Placed& p) { return p.node == path[i]; });
    if (kid == kids.end()) return false;
    box.node = kid->node;
    box.x += kid->x;
    box.y += kid->y;
    box.width = kid->width;
    box.height = kid->height;
    box.depth = static_cast<int32_t>(i);
    box.expandable = g.child_count(kid->node) > 0;
    box.expanded = blocks_.count(kid->node) != 0;
  }
  *out = box;
  return true;
}

}  // namespace graph_ascend::service
