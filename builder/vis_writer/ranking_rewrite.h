// The divergence ranking added to a written compare that holds its pairs'
// metrics but no ranking: msprobe's .vis.db and JSON .vis converted into a
// .vis (`graph-ascend import`, the service's conversions). The same rule as a
// build (divergence::RankFromDetails over the stored details, the noise rule
// in statistics mode), stored as a build stores it.
#pragma once

#include <string>

#include "base/status.h"

namespace graph_ascend::vis {

struct AddedRanking {
  bool ranked = false;
  std::string why_not;  // when not ranked: why, in full ("" for a build, which has nothing to rank)
};

// Rewrites the compare .vis at `path` (temporary file + rename, the other
// sections copied as they are) with SECTION_DIVERGENCE and FileMeta's summary
// (divergence_ranked, first_divergence..., overview), or, when no ranking can
// be computed (no matched pair, no details, structure mode), with
// FileMeta.divergence_unranked saying why. A build, and a file that already
// has a ranking, are left as they are.
Result<AddedRanking> AddRanking(const std::string& path);

}  // namespace graph_ascend::vis
