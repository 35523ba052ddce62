// The HTML report's picture of where every rank stands around the stuck op
// (analysis::PositionGrid): a <table> whose rows are the comm's ranks grouped
// by host and whose columns are op indices, each cell done / on GPU /
// enqueued / never enqueued, the culprit's row marked with its host and
// global rank. Up to kGridIndividualRows members get a row each; above,
// members in the same position share one row ("ranks 8–1023 on 128 hosts:
// identical") and at most kGridMaxRows rows are drawn, so the page stays
// small at any job size. Styles: kPositionGridStyle, inline in the page.
#ifndef FLIGHTREC_ANALYZER_REPORT_HTML_POSITION_GRID_H_
#define FLIGHTREC_ANALYZER_REPORT_HTML_POSITION_GRID_H_

#include <stddef.h>

#include <string>

#include "analyzer/model/job_index.h"
#include "analyzer/model/position_grid.h"

namespace flightrec {
namespace report {

constexpr size_t kGridIndividualRows = 32;
constexpr size_t kGridMaxRows = 40;

extern const char* const kPositionGridStyle;

std::string PositionGridHtml(const analysis::JobIndex& index, const analysis::PositionGrid& grid);
// What the colours mean, once under the grids.
std::string PositionGridLegend();

}  // namespace report
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_REPORT_HTML_POSITION_GRID_H_
