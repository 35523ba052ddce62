// The HTML report's position grid (analyzer/model/position_grid.h, its HTML
// in analyzer/report/html_position_grid.h) on synthetic jobs: every member's
// state around the stuck op, the culprit marked, and at 1,024 ranks the
// identical rows folded into one so the page stays small.
#include <gtest/gtest.h>

#include <string>

#include "analyzer/model/position_grid.h"
#include "analyzer/model/progress.h"
#include "analyzer/report/html_position_grid.h"
#include "analyzer/report/html_text.h"
#include "analyzer/report/report.h"
#include "unit/analyzer/analyzer_test_util.h"

namespace flightrec {
namespace testing {
namespace {

using analysis::GridCell;

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// Rank 5 (tp1 rank 1) never enqueues its TP AllReduce of step 2.
TEST(PositionGridTest, MarksTheCulpritNeverEnqueuedWhileItsPeersWait) {
  JobSpec spec;
  spec.fault = Fault::kStuckBeforeOp;
  spec.op = 6;
  Analyzed a(MakeJob(spec));
  const analysis::JobProgress progress = analysis::ComputeProgress(a.index, {});
  // Its comms: tp1 (where the others wait in the op), dp1 (where it is
  // behind too), each a grid.
  const auto grids = analysis::RootCauseGrids(a.index, a.result, progress);
  ASSERT_EQ(grids.size(), 2u);
  EXPECT_EQ(a.index.groups()[grids[1].group].name, "dp1");
  const analysis::PositionGrid& g = grids[0];
  EXPECT_EQ(a.index.groups()[g.group].name, "tp1");
  EXPECT_EQ(g.op.index, 2u);
  ASSERT_EQ(g.members.size(), 4u);
  ASSERT_LT(g.focus, g.columns.size());
  EXPECT_EQ(g.columns[g.focus].index, 2u);
  for (const analysis::GridMember& m : g.members) {
    EXPECT_EQ(m.global_rank, 4 + m.rank);
    EXPECT_EQ(m.host, "host-0");
    EXPECT_EQ(m.culprit, m.global_rank == 5);
    if (m.culprit) {
      EXPECT_EQ(m.cells[g.focus], GridCell::kNever);
      EXPECT_EQ(m.done_upto, 1);
    } else {
      EXPECT_TRUE(m.cells[g.focus] == GridCell::kEnqueued || m.cells[g.focus] == GridCell::kRunning)
          << analysis::GridCellName(m.cells[g.focus]);
    }
    EXPECT_EQ(m.cells[g.focus - 1], GridCell::kDone);
  }
  const std::string html = report::PositionGridHtml(a.index, g);
  // Eight ranks or fewer: a row each, the culprit's with host and global rank.
  EXPECT_EQ(Count(html, "<td class=\"who\""), 4u) << html;
  EXPECT_NE(html.find("<tr><td class=\"host\" rowspan=\"4\">host-0</td><td class=\"who\">rank 4"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<tr class=\"culprit\"><td class=\"who\"><span class=\"badge\">culprit</span>"
                      "rank 5 <span class=\"sub\">(tp1 rank 1)</span>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<b>host-0, global rank 5</b> (pid 4005; tp1 rank 1)"), std::string::npos)
      << html;
  EXPECT_NE(html.find("comm <code>tp1</code>"), std::string::npos) << html;
}

// 1,024 ranks on 128 hosts, one comm: rank 700 never enqueues the world op
// of step 3. Its row stands alone; the 1,023 others are one row.
TEST(PositionGridTest, ThousandRanksFoldIntoTheCulpritAndOneIdenticalRow) {
  JobSpec spec;
  spec.nranks = 1024;
  spec.tp = 0;
  spec.fault = Fault::kStuckBeforeOp;
  spec.rank = 700;
  spec.op = 3;
  Analyzed a(MakeJob(spec));
  const analysis::JobProgress progress = analysis::ComputeProgress(a.index, {});
  const auto grids = analysis::RootCauseGrids(a.index, a.result, progress);
  ASSERT_EQ(grids.size(), 1u);
  ASSERT_EQ(grids[0].members.size(), 1024u);
  const std::string html = report::PositionGridHtml(a.index, grids[0]);
  EXPECT_EQ(Count(html, "<tr class=\"culprit\">"), 1u) << html;
  EXPECT_EQ(Count(html, "<tr"), 3u) << html;  // head, culprit, the rest
  EXPECT_NE(html.find("ranks 0\u2013699, 701\u20131023 on 128 hosts: identical"), std::string::npos)
      << html;
  EXPECT_NE(html.find("<b>host-87, global rank 700</b>"), std::string::npos) << html;
  EXPECT_LT(html.size(), 8u * 1024) << "the grid grows with the ranks";

  // The whole page stays bounded too.
  analysis::Inputs inputs;
  const std::string page = report::HtmlReport({inputs, a.index, a.result}, progress);
  EXPECT_LT(page.size(), 256u * 1024);
}

// Ranks in many different positions: at most kGridMaxRows rows, the rest
// counted.
TEST(PositionGridTest, RowsAreCappedWhenPositionsDiffer) {
  JobSpec spec;
  spec.nranks = 64;
  spec.tp = 0;
  spec.fault = Fault::kStuckBeforeOp;
  spec.rank = 3;
  spec.op = 3;
  Analyzed a(MakeJob(spec));
  const analysis::JobProgress progress = analysis::ComputeProgress(a.index, {});
  auto grids = analysis::RootCauseGrids(a.index, a.result, progress);
  ASSERT_EQ(grids.size(), 1u);
  analysis::PositionGrid g = grids[0];
  // Every member a position of its own.
  for (analysis::GridMember& m : g.members) m.done_upto = 1000 + m.rank;
  const std::string html = report::PositionGridHtml(a.index, g);
  EXPECT_EQ(Count(html, "<td class=\"who\""), report::kGridMaxRows) << html;
  EXPECT_NE(html.find("… 24 more ranks in 24 other positions"), std::string::npos) << html;
}

// Op indices come from files: one at the top of the range draws its
// column and no other.
TEST(PositionGridTest, AnOpIndexAtTheTopOfTheRangeDoesNotWrap) {
  JobSpec spec;
  spec.fault = Fault::kStuckBeforeOp;
  spec.op = 6;
  Analyzed a(MakeJob(spec));
  const analysis::JobProgress progress = analysis::ComputeProgress(a.index, {});
  const analysis::PositionGrid g =
      analysis::BuildPositionGrid(a.index, a.result, progress, 0, UINT64_MAX);
  ASSERT_EQ(g.columns.size(), analysis::kGridOpsBefore + 1);
  EXPECT_EQ(g.columns[g.focus].index, UINT64_MAX);
  for (const analysis::GridMember& m : g.members) EXPECT_EQ(m.cells[g.focus], GridCell::kNever);
}

// 1,024 ranks, TP=8: rank 700 (tp87 rank 4, dp4 rank 87) never enqueues
// its TP AllReduce #2. In dp4 (128 ranks, every 8th) the others share a
// row named by their stride.
TEST(PositionGridTest, EvenlySpacedRanksAreNamedByTheirStep) {
  JobSpec spec;
  spec.nranks = 1024;
  spec.tp = 8;
  spec.fault = Fault::kStuckBeforeOp;
  spec.rank = 700;
  spec.op = 6;
  Analyzed a(MakeJob(spec));
  const analysis::JobProgress progress = analysis::ComputeProgress(a.index, {});
  const auto grids = analysis::RootCauseGrids(a.index, a.result, progress);
  ASSERT_EQ(grids.size(), 2u);
  EXPECT_EQ(a.index.groups()[grids[1].group].name, "dp4");
  const std::string html = report::PositionGridHtml(a.index, grids[1]);
  EXPECT_NE(html.find("ranks 4, 12, …, 1020 (step 8, not 700) on 127 hosts: identical"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<b>host-87, global rank 700</b> (pid 4700; dp4 rank 87)"), std::string::npos)
      << html;
}

TEST(HtmlTextTest, EscapesAndTurnsCodeSpansIntoCodeElements) {
  EXPECT_EQ(report::HtmlText("comm `tp1` <b>&'\""),
            "comm <code>tp1</code> &lt;b&gt;&amp;&#39;&quot;");
  EXPECT_EQ(report::HtmlText("`<script>` and a lone `"),
            "<code>&lt;script&gt;</code> and a lone `");
}

}  // namespace
}  // namespace testing
}  // namespace flightrec
