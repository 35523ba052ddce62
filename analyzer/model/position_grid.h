// Where every member of a communicator stands around one collective: for
// each member and each op index near the stuck op, whether that op is done,
// on the GPU, enqueued or never enqueued. The HTML report draws it
// (analyzer/report/html_position_grid.h, docs/analyzer.md "HTML report").
//
// Cost: one pass over each member's collectives of the comm (its newest done
// and enqueued indices) plus a lookup per cell; no copy of records.
#ifndef FLIGHTREC_ANALYZER_MODEL_POSITION_GRID_H_
#define FLIGHTREC_ANALYZER_MODEL_POSITION_GRID_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "analyzer/model/finding.h"
#include "analyzer/model/job_index.h"
#include "analyzer/model/progress.h"

namespace flightrec {
namespace analysis {

enum class GridCell : uint8_t {
  kDone,
  kRunning,   // on the GPU: a kernel or proxy op started, not finished
  kEnqueued,  // NCCL has it, the GPU has not started it
  kNever,     // not enqueued (newer than anything the member holds)
  kUnknown,   // no file, or the record was overwritten or torn
};
const char* GridCellName(GridCell cell);  // "done", "on GPU", "enqueued", ...

struct GridColumn {
  uint64_t index = 0;  // collective op index in the comm
  uint8_t func = 0;    // format::Func of any member's record, when known
  bool func_known = false;
  uint64_t user_tag = 0;  // the step, when a member's record carries one
};

struct GridMember {
  int32_t rank = -1;         // comm rank
  int32_t process = -1;      // index into the snapshots, -1: no file
  int32_t global_rank = -1;  // rank in its process's widest comm, -1 unknown
  std::string widest_comm;   // that comm's name ("" when unnamed or unknown)
  std::string host;          // "" when unknown
  int64_t pid = 0;
  bool culprit = false;         // a root cause of the analysis
  bool dead = false;            // JobProgress::dead
  std::vector<GridCell> cells;  // one per column
  int64_t done_upto = -1;       // newest collective of the comm it finished, -1 none
  int64_t newest = -1;          // newest collective of the comm it enqueued, -1 none
  // Blocked at an op of another comm: "AllReduce #45 on comm `dp1`", else "".
  std::string blocked_elsewhere;
};

struct PositionGrid {
  int32_t group = -1;               // JobIndex group
  OpRef op;                         // the stuck op (the root-cause finding's op)
  std::vector<GridColumn> columns;  // ascending op index
  size_t focus = 0;                 // column of `op`
  std::vector<GridMember> members;  // by comm rank
};

// Columns drawn before and after the stuck op.
constexpr uint64_t kGridOpsBefore = 3;
constexpr uint64_t kGridOpsAfter = 3;

// The grid of `group` around collective `op_index`.
PositionGrid BuildPositionGrid(const JobIndex& index, const Analysis& analysis,
                               const JobProgress& progress, int32_t group, uint64_t op_index);

// One grid per communicator of the root-cause findings (at most
// `max_grids`), around the finding's op; for a finding whose op is not a
// collective (a Send/Recv), around the comm's oldest collective not done
// anywhere. Without root causes, the first finding with a comm.
std::vector<PositionGrid> RootCauseGrids(const JobIndex& index, const Analysis& analysis,
                                         const JobProgress& progress, size_t max_grids = 4);

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_POSITION_GRID_H_
