// The view of one side of one file for one client: which nodes are expanded,
// and the containment layout of the visible nodes (docs/API.md, "Layout").
//
// The layout reproduces tb_graph_ascend's (plugin reference §6.3–§6.6) with
// the same integer arithmetic: boxes nest, a node's children are grouped
// into runs of equal type, leaf runs are laid in centred rows of at most 5,
// other runs are stacked and centred. It is computed over visible nodes only,
// iteratively (no recursion limit), and only after a change.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "side_graph.h"

namespace graph_ascend::service {

inline constexpr int32_t kLeafWidth = 50;
inline constexpr int32_t kHeaderHeight = 15;
inline constexpr int32_t kHorizontalSpacing = 5;
inline constexpr int32_t kVerticalSpacing = 10;
inline constexpr int32_t kMaxPerRow = 5;
inline constexpr int32_t kCharWidth = 6;

// One visible node, in pre-order (parents before children).
struct LayoutBox {
  uint32_t node = 0;
  int32_t parent_box = -1;  // index of the parent's box in the same answer
  uint32_t end = 0;         // one past the last box of this node's subtree in the same answer
  int32_t depth = 0;
  int32_t x = 0, y = 0, width = 0, height = 0;
  bool expandable = false;
  bool expanded = false;
};

// The display label of a node (§6.3): first-level nodes keep their name,
// deeper ones keep the last 4 (modules) or 2 (others) dot-separated parts,
// one more when that part is a number. Always a suffix of the name.
std::string_view Label(const SideGraph& g, uint32_t node);

// The layout type of a node (§6.1): its node type when it has children, else
// 1 (an unexpandable box). An API node with children counts as a module.
uint32_t LayoutType(const SideGraph& g, uint32_t node);

struct Viewport {
  int32_t x = 0, y = 0, width = 0, height = 0;
  // In 64 bits: a corner near INT32_MAX plus a size must not wrap.
  bool Intersects(const LayoutBox& b) const {
    return b.x < int64_t{x} + width && x < int64_t{b.x} + b.width && b.y < int64_t{y} + height &&
           y < int64_t{b.y} + b.height;
  }
};

// The layout is kept as one block per expanded node: its children's boxes
// relative to its own corner. A change recomputes only the blocks of the
// changed node and its ancestors (each in time linear in its children), and a
// viewport is cut by binary search (children's boxes go down the page in
// child order), so a node of 10^5 children costs once, not on every click.
class ViewState {
 public:
  // micro_step -1: every first-level node; else only those of that micro step
  // (and those without one).
  explicit ViewState(int32_t micro_step);

  int32_t micro_step() const { return micro_step_; }
  // Whether the node belongs to this view's micro step.
  bool InMicroStep(const SideGraph& g, uint32_t node) const;

  // Expands `node` after revealing it. A node without children stays as it is.
  Status Expand(const SideGraph& g, uint32_t node);
  // Collapses `node` and forgets the expansion of its descendants. The root stays expanded.
  Status Collapse(const SideGraph& g, uint32_t node);
  // Expands every ancestor of `node`.
  Status Reveal(const SideGraph& g, uint32_t node);
  bool IsExpanded(uint32_t node) const { return blocks_.count(node) != 0; }

  // Brings the layout up to date; the accessors below need it.
  void Update(const SideGraph& g);
  uint32_t total_visible() const;
  int32_t width() const;  // of the root box
  int32_t height() const;

  // Every visible box, in pre-order.
  std::vector<LayoutBox> Layout(const SideGraph& g);
  // The visible boxes intersecting `v` (and so their ancestors: boxes nest), in pre-order.
  std::vector<LayoutBox> Cut(const SideGraph& g, const Viewport& v);
  // The absolute box of a visible node; false when it is not visible.
  bool Locate(const SideGraph& g, uint32_t node, LayoutBox* out);

  // Bytes held by the layout (a view of 10^5 expanded children holds ~2 MB).
  size_t MemoryBytes() const;

 private:
  struct Placed {  // a child's box, relative to its parent's top-left corner
    uint32_t node;
    int32_t x, y, width, height;
  };
  struct Block {
    std::vector<Placed> kids;
    int32_t width = 0, height = 0;
    uint32_t visible = 1;  // visible nodes of the subtree, the node included
    bool valid = false;
  };

  Status CheckNode(const SideGraph& g, uint32_t node) const;
  void Invalidate(const SideGraph& g, uint32_t node);  // the node's block and its ancestors'
  void Compute(const SideGraph& g, uint32_t node, Block* block);
  std::vector<LayoutBox> Boxes(const SideGraph& g, const Viewport* v);

  int32_t micro_step_;
  std::unordered_map<uint32_t, Block> blocks_;  // exactly the expanded nodes
};

}  // namespace graph_ascend::service
