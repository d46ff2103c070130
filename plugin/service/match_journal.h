// Unsaved manual match edits, made durable: every Match, Unmatch and
// LoadMatches appends the pairs it changed to a journal in the cache folder
// (one JSON line a pair, fsync'd before the reply), and a file opened on a
// fresh server (after a crash, a kill -9, a TensorBoard restart) replays it,
// so no session loses its edits to a restart. Saving the config removes it.
//
//   {"journal":1,"file":"x/run/compare.vis","base":"x/run/compare.vis.config"}
//   {"op":"match","npu":"Module.fc.Linear.forward.0","bench":"Module.fc.Linear.forward.0"}
//   {"op":"unmatch","npu":"...","bench":"..."}
//
// "base": the saved config the edits follow ("" for the file as built): a
// journal started after a save continues from the saved matches.
//
// Bounded: once it passes a size, the journal is rewritten (temporary file,
// fsync, rename: a crash leaves the old journal or the new one, both giving
// the same matches) as the file's current edits from the file as built,
// base "": the automatic pairs unmatched, then the manual matches. The
// service rewrites it again each time it doubles: it stays in proportion to
// the edits that stand, and the rewrites cost O(1) a line.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "manual_match.h"

namespace graph_ascend::service {

class OpenGraph;

struct Journal {
  std::string base;
  std::vector<PairEdit> entries;  // ReplayEdits replays them
  // Lines skipped: a torn last line (the server died mid-write), a damaged one.
  std::vector<std::string> warnings;
};

// The journal of the file `relative` (its canonical name) of the log
// directory `logdir_root`, in `dir` (<cache root>/edits): a hash of both, so
// that two log directories never share one, then the file's name.
std::string JournalPath(const std::string& dir, const std::string& logdir_root, const std::string& relative);

// Appends the changed pairs of `outcomes` (the ok ones) as `match` or unmatch
// lines, after a header naming `relative` and `base` when the journal is new;
// one write, then fsync. Creates `dir` (0700) when missing. `size`: the
// journal's size after the append (untouched when nothing was appended).
Status AppendToJournal(const std::string& path, const std::string& relative, const std::string& base, bool match,
                       const std::vector<PairOutcome>& outcomes, size_t* size = nullptr);

// The edits that give `f`'s current matches when replayed on the file as
// built: unmatch of each automatic pair removed, then each manual match.
std::vector<PairEdit> CurrentEdits(const OpenGraph& f);

// Rewrites the journal atomically as a header (base "") and `edits`; its new size.
Result<size_t> CompactJournal(const std::string& path, const std::string& relative,
                              const std::vector<PairEdit>& edits);

// Reads the journal at `path` (missing: an empty journal). A torn last line is
// a warning, and the file is cut back to its last whole line so that the next
// append starts on a line of its own; a damaged line is a warning and skipped.
Result<Journal> RecoverJournal(const std::string& path);

// Removes the journal (after a save); a missing one is fine.
Status RemoveJournal(const std::string& path);

}  // namespace graph_ascend::service
