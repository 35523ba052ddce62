#include "analyzer/model/position_grid.h"

#include <algorithm>
#include <set>
#include <utility>

#include "analyzer/model/describe.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace analysis {

const char* GridCellName(GridCell cell) {
  switch (cell) {
    case GridCell::kDone:
      return "done";
    case GridCell::kRunning:
      return "on GPU";
    case GridCell::kEnqueued:
      return "enqueued";
    case GridCell::kNever:
      return "never enqueued";
    case GridCell::kUnknown:
      break;
  }
  return "unknown";
}

namespace {

GridCell CellOf(const JobIndex& index, int32_t group, const GridMember& m, uint64_t op) {
  const int32_t rank = m.rank;
  if (m.process < 0) return GridCell::kUnknown;
  if (const OpRecord* r = index.FindColl(group, rank, op)) {
    if (r->state >= format::kOpDone) return GridCell::kDone;
    return r->state == format::kOpRunning ? GridCell::kRunning : GridCell::kEnqueued;
  }
  // A windowed load keeps every op not done in full: a signature alone is
  // an op that finished (record_window.h).
  CollSig sig;
  if (index.FindCollSig(group, rank, op, &sig)) return GridCell::kDone;
  if (op < index.FirstCollIndex(group, rank)) return GridCell::kUnknown;
  // Newer than the oldest held: never enqueued, unless a newer op is held
  // (the record in between was torn).
  const bool newer = m.newest >= 0 && static_cast<uint64_t>(m.newest) > op;
  return newer ? GridCell::kUnknown : GridCell::kNever;
}

// The member's newest done and newest held collective of the comm.
void ScanMember(const JobIndex& index, int32_t group, GridMember* m) {
  index.ForEachCollSig(group, m->rank, [&](uint64_t i, const CollSig&) {
    m->newest = std::max<int64_t>(m->newest, static_cast<int64_t>(i));
  });
  // Signatures are done ops; full records say for themselves.
  const CommSnapshot& c = index.Comm(index.groups()[group].members[m->rank]);
  if (!c.history.empty()) {
    m->done_upto = static_cast<int64_t>(c.history_first + c.history.LastHeld());
  }
  index.ForEachColl(group, m->rank, [&](const OpRecord& r) {
    if (r.state >= format::kOpDone) {
      m->done_upto = std::max<int64_t>(m->done_upto, static_cast<int64_t>(r.op_index));
    }
  });
}

// The rank of a process in its widest communicator.
void Identify(const ProcessSnapshot& p, GridMember* m) {
  const CommSnapshot* widest = WidestComm(p);
  m->host = p.host;
  m->pid = p.pid;
  if (widest != nullptr) {
    m->global_rank = widest->rank;
    m->widest_comm = widest->name;
  }
}

bool IsCulprit(const Analysis& analysis, int32_t group, const GridMember& m) {
  for (const Culprit& c : analysis.culprits) {
    if (m.process >= 0 ? c.process == m.process : (c.group == group && c.rank == m.rank)) {
      return true;
    }
  }
  return false;
}

// The comm's oldest collective that some member has not finished; without
// one, the newest any member holds.
uint64_t OldestPending(const JobIndex& index, int32_t group) {
  uint64_t oldest = UINT64_MAX, newest = 0;
  for (int32_t rank = 0; rank < static_cast<int32_t>(index.groups()[group].members.size());
       ++rank) {
    index.ForEachColl(group, rank, [&](const OpRecord& r) {
      newest = std::max(newest, r.op_index);
      if (r.state < format::kOpDone) oldest = std::min(oldest, r.op_index);
    });
  }
  return oldest != UINT64_MAX ? oldest : newest;
}

}  // namespace

PositionGrid BuildPositionGrid(const JobIndex& index, const Analysis& analysis,
                               const JobProgress& progress, int32_t group, uint64_t op_index) {
  PositionGrid grid;
  grid.group = group;
  const CommGroup& g = index.groups()[group];
  for (int32_t rank = 0; rank < static_cast<int32_t>(g.members.size()); ++rank) {
    GridMember m;
    m.rank = rank;
    m.process = g.members[rank].process;
    if (m.process >= 0) {
      Identify(index.processes()[m.process], &m);
      ScanMember(index, group, &m);
      if (static_cast<size_t>(m.process) < progress.processes.size()) {
        const ProcessProgress& pp = progress.processes[m.process];
        m.dead = pp.dead;
        if (pp.blocked() && index.GroupOf(m.process, pp.blocked_comm) != group) {
          const ProcessSnapshot& p = index.processes()[m.process];
          const int32_t other = index.GroupOf(m.process, pp.blocked_comm);
          m.blocked_elsewhere = OpLabel(OpOf(p.comms[pp.blocked_comm].records[pp.blocked_record])) +
                                " on " +
                                (other >= 0 ? CommLabel(index.groups()[other]) : "another comm");
        }
      }
    }
    m.culprit = IsCulprit(analysis, group, m);
    grid.members.push_back(std::move(m));
  }
  // Columns: a few ops either side, none past the newest any member holds
  // (a column of "never enqueued" says nothing) except the stuck op itself.
  int64_t newest = -1;
  for (const GridMember& m : grid.members) newest = std::max(newest, m.newest);
  const uint64_t first = op_index > kGridOpsBefore ? op_index - kGridOpsBefore : 0;
  // Op indices come from files: no wrap at the top of the range.
  uint64_t last = op_index > UINT64_MAX - kGridOpsAfter ? UINT64_MAX : op_index + kGridOpsAfter;
  if (newest >= 0) last = std::min(last, std::max(op_index, static_cast<uint64_t>(newest)));
  for (uint64_t k = 0; k <= last - first; ++k) {
    const uint64_t i = first + k;
    GridColumn col;
    col.index = i;
    for (int32_t rank = 0; rank < static_cast<int32_t>(g.members.size()); ++rank) {
      if (const OpRecord* r = index.FindColl(group, rank, i)) {
        col.func = r->func;
        col.func_known = true;
        col.user_tag = r->user_tag;
        if (i == op_index) grid.op = OpOf(*r);
        break;
      }
    }
    if (i == op_index) grid.focus = grid.columns.size();
    grid.columns.push_back(col);
  }
  if (!grid.op.valid) {
    grid.op.valid = true;
    grid.op.index = op_index;
    grid.op.func = grid.columns[grid.focus].func;
  }
  for (GridMember& m : grid.members) {
    for (const GridColumn& col : grid.columns) {
      m.cells.push_back(CellOf(index, group, m, col.index));
    }
  }
  return grid;
}

std::vector<PositionGrid> RootCauseGrids(const JobIndex& index, const Analysis& analysis,
                                         const JobProgress& progress, size_t max_grids) {
  std::vector<PositionGrid> grids;
  std::set<std::pair<int32_t, uint64_t>> drawn;
  auto add = [&](const Finding& f) {
    if (f.group < 0 || f.group >= static_cast<int32_t>(index.groups().size())) return;
    if (grids.size() >= max_grids) return;
    const uint64_t op = f.op.valid && !f.op.p2p ? f.op.index : OldestPending(index, f.group);
    if (!drawn.insert({f.group, op}).second) return;
    grids.push_back(BuildPositionGrid(index, analysis, progress, f.group, op));
  };
  for (const Finding& f : analysis.findings) {
    if (f.root_cause) add(f);
  }
  if (grids.empty()) {
    for (const Finding& f : analysis.findings) {
      if (grids.empty()) add(f);
    }
  }
  return grids;
}

}  // namespace analysis
}  // namespace flightrec
