#include "analyzer/report/html_position_grid.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "analyzer/model/describe.h"
#include "analyzer/report/html_text.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace report {

const char* const kPositionGridStyle =
    "table.grid{border-collapse:separate;border-spacing:2px;margin:.5em 0}"
    "table.grid td,table.grid th{border:none;padding:3px 6px;font-size:.85em}"
    "table.grid th{background:#f2f2f2;text-align:center;font-weight:normal}"
    "table.grid th.focus{background:#333;color:#fff;font-weight:bold}"
    "table.grid .fn{font-size:.85em}table.grid .sub{font-size:.85em;color:#666}"
    ".grid-title{margin-top:1.2em}"
    "table.grid td.host{background:#f7f7f7;font-family:monospace;white-space:nowrap}"
    "table.grid td.who{font-family:monospace;white-space:nowrap}"
    "table.grid td.pos{color:#444;white-space:nowrap}"
    "table.grid td.c{text-align:center;min-width:4.5em;font-size:.8em}"
    ".c.done{background:#5cb85c;color:#fff}.c.gpu{background:#f0ad4e;color:#222}"
    ".c.enq{background:#d9534f;color:#fff}.c.never{background:#fff;color:#999;"
    "outline:1px dashed #999;outline-offset:-1px}.c.unknown{background:#ddd;color:#666}"
    "table.grid td.c.focus{box-shadow:inset 0 0 0 2px #333}"
    "table.grid tr.culprit td.who,table.grid tr.culprit td.pos{background:#fde2e2;color:#a00;"
    "font-weight:bold}table.grid tr.culprit td.who{border-left:5px solid #c00}"
    "table.grid tr.agg td.who{font-style:italic}"
    ".badge{background:#c00;color:#fff;border-radius:3px;padding:0 4px;margin-right:4px;"
    "font-size:.85em;font-family:sans-serif;font-style:normal}"
    ".culprit-line{font-size:1.05em}"
    ".swatch{display:inline-block;width:1em;height:1em;vertical-align:middle;margin:0 3px 0 10px}";

namespace {

using analysis::GridCell;
using analysis::GridMember;
using analysis::PositionGrid;

const char* CellClass(GridCell c) {
  switch (c) {
    case GridCell::kDone:
      return "done";
    case GridCell::kRunning:
      return "gpu";
    case GridCell::kEnqueued:
      return "enq";
    case GridCell::kNever:
      return "never";
    case GridCell::kUnknown:
      break;
  }
  return "unknown";
}

// A cell's word: the model's name, shortened where the column is narrow.
const char* CellText(GridCell c) {
  if (c == GridCell::kNever) return "never";
  if (c == GridCell::kUnknown) return "?";
  return analysis::GridCellName(c);
}

// "global rank 6", or the comm rank when the process is unknown.
std::string RankText(const GridMember& m) {
  if (m.global_rank >= 0) return "rank " + std::to_string(m.global_rank);
  return "comm rank " + std::to_string(m.rank) + " (no file)";
}

// "0–4, 6, 8–1023", at most `max_ranges` ranges then "… (N more)".
// Evenly spaced ranks (a DP comm's members) read "4, 12, …, 1020 (step 8)",
// with up to 3 holes named ("step 8, not 700").
std::string Ranges(std::vector<int32_t> ranks, size_t max_ranges = 6) {
  std::sort(ranks.begin(), ranks.end());
  if (ranks.size() > 3 && ranks[1] - ranks[0] > 1) {
    const int64_t step = static_cast<int64_t>(ranks[1]) - ranks[0];
    std::vector<int64_t> holes;
    bool even = true;
    for (size_t i = 2; i < ranks.size() && even; ++i) {
      const int64_t gap = static_cast<int64_t>(ranks[i]) - ranks[i - 1];
      even = gap % step == 0 && gap > 0 && holes.size() + static_cast<size_t>(gap / step) <= 4;
      for (int64_t h = ranks[i - 1] + step; even && h < ranks[i]; h += step) holes.push_back(h);
    }
    if (even) {
      std::string s = std::to_string(ranks[0]) + ", " + std::to_string(ranks[1]) + ", …, " +
                      std::to_string(ranks.back()) + " (step " + std::to_string(step);
      for (size_t h = 0; h < holes.size(); ++h) {
        s += (h == 0 ? ", not " : ", ") + std::to_string(holes[h]);
      }
      return s + ")";
    }
  }
  std::string s;
  size_t ranges = 0, shown = 0;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (ranges == max_ranges) {
      s += ", … (" + std::to_string(ranks.size() - shown) + " more)";
      break;
    }
    if (!s.empty()) s += ", ";
    s += std::to_string(ranks[i]);
    if (j > i) s += "\u2013" + std::to_string(ranks[j]);
    ++ranges;
    shown += j - i + 1;
    i = j + 1;
  }
  return s;
}

// Where a member is, in words, for the last column.
std::string Position(const GridMember& m, bool detail) {
  if (m.process < 0) return "no file";
  std::string s = m.done_upto >= 0 ? "done up to #" + std::to_string(m.done_upto) : "nothing done";
  if (m.newest > m.done_upto) s += ", enqueued up to #" + std::to_string(m.newest);
  if (!m.blocked_elsewhere.empty()) {
    s += detail ? "; blocked in " + m.blocked_elsewhere : "; blocked in another comm";
  }
  if (m.dead) s += "; process dead";
  return s;
}

// Members in one position share a key (aggregated rows).
std::string Key(const GridMember& m) {
  std::string k;
  for (GridCell c : m.cells) k += static_cast<char>('a' + static_cast<int>(c));
  return k + "|" + Position(m, false);
}

struct Row {
  std::vector<size_t> members;  // indices into grid.members, the first leads
};

class Renderer {
 public:
  Renderer(const analysis::JobIndex& index, const PositionGrid& grid) : index_(index), g_(grid) {
    Order();
  }

  std::string Html() {
    std::string s = Caption();
    s += "<table class=\"grid\">\n<thead><tr><th>host</th><th>global rank</th>";
    for (size_t c = 0; c < g_.columns.size(); ++c) s += ColumnHead(c);
    s += "<th>position</th></tr></thead>\n<tbody>\n";
    const std::vector<Row> rows = Rows();
    const size_t drawn = std::min(rows.size(), kGridMaxRows);
    for (size_t r = 0; r < drawn; ++r) {
      s += rows[r].members.size() == 1 ? Individual(rows, r) : Aggregate(rows[r]);
    }
    if (drawn < rows.size()) {
      size_t ranks = 0;
      for (size_t r = drawn; r < rows.size(); ++r) ranks += rows[r].members.size();
      s += "<tr class=\"agg\"><td colspan=\"" + std::to_string(g_.columns.size() + 3) + "\">… " +
           std::to_string(ranks) + " more ranks in " + std::to_string(rows.size() - drawn) +
           " other positions, not drawn (the JSON report lists every finding)</td></tr>\n";
    }
    s += "</tbody></table>\n";
    return s;
  }

 private:
  // Members by host (hosts in the order of their lowest global rank), then
  // by global rank; members without a file last.
  void Order() {
    std::map<std::string, int64_t> host_first;
    for (const GridMember& m : g_.members) {
      if (m.process < 0) continue;
      auto it = host_first.find(m.host);
      const int64_t r = m.global_rank >= 0 ? m.global_rank : m.rank;
      if (it == host_first.end() || r < it->second) host_first[m.host] = r;
    }
    auto key = [&](const GridMember& m) {
      const int64_t host = m.process < 0 ? INT64_MAX : host_first[m.host];
      return std::make_tuple(host, m.host, m.global_rank >= 0 ? m.global_rank : m.rank, m.rank);
    };
    for (size_t i = 0; i < g_.members.size(); ++i) order_.push_back(i);
    std::stable_sort(order_.begin(), order_.end(),
                     [&](size_t a, size_t b) { return key(g_.members[a]) < key(g_.members[b]); });
  }

  std::vector<Row> Rows() const {
    std::vector<Row> rows;
    if (g_.members.size() <= kGridIndividualRows) {
      for (size_t i : order_) rows.push_back({{i}});
      return rows;
    }
    std::map<std::string, size_t> row_of;  // key -> row
    for (size_t i : order_) {
      const GridMember& m = g_.members[i];
      if (m.culprit) {
        rows.push_back({{i}});
        continue;
      }
      auto it = row_of.emplace(Key(m), rows.size());
      if (it.second) {
        rows.push_back({{i}});
      } else {
        rows[it.first->second].members.push_back(i);
      }
    }
    return rows;
  }

  std::string Caption() const {
    const analysis::CommGroup& group = index_.groups()[g_.group];
    std::string s = "<p class=\"grid-title\">" + HtmlText(analysis::CommLabel(group)) + " (" +
                    std::to_string(g_.members.size()) + " ranks) around " +
                    HtmlText(analysis::OpLabel(g_.op)) + ".";
    for (const GridMember& m : g_.members) {
      if (!m.culprit) continue;
      s += "<br><span class=\"culprit-line\"><span class=\"badge\">culprit</span><b>" +
           HtmlEscape(m.host.empty() ? std::string("host unknown") : m.host) + ", global " +
           HtmlEscape(RankText(m)) + "</b>";
      if (m.process >= 0) s += " (pid " + std::to_string(m.pid) + Member(m) + ")";
      s += "</span>";
    }
    return s + "</p>\n";
  }

  // "; tp1 rank 2" when the grid's comm is not the member's widest.
  std::string Member(const GridMember& m) const {
    const analysis::CommGroup& group = index_.groups()[g_.group];
    if (m.global_rank == m.rank && m.widest_comm == group.name) return "";
    return "; " + HtmlEscape(group.name.empty() ? analysis::HexId(group.comm_id) : group.name) +
           " rank " + std::to_string(m.rank);
  }

  // " (tp1 rank 2)" beside the global rank, when it says something.
  std::string CommRank(const GridMember& m) const {
    const std::string member = m.process >= 0 ? Member(m) : "";
    if (member.empty()) return "";
    return " <span class=\"sub\">(" + member.substr(2) + ")</span>";
  }

  std::string ColumnHead(size_t c) const {
    const analysis::GridColumn& col = g_.columns[c];
    std::string title = "op #" + std::to_string(col.index);
    if (col.user_tag != 0) title += ", user tag " + std::to_string(col.user_tag);
    std::string s = std::string("<th") + (c == g_.focus ? " class=\"focus\"" : "") + " title=\"" +
                    HtmlEscape(title) + "\">#" + std::to_string(col.index);
    s += "<br><span class=\"fn\">" + HtmlEscape(col.func_known ? format::FuncName(col.func) : "?") +
         "</span>";
    if (c == g_.focus) s += "<br><span class=\"fn\">stuck op</span>";
    return s + "</th>";
  }

  std::string Cells(const GridMember& m, const std::string& who) const {
    std::string s;
    for (size_t c = 0; c < m.cells.size(); ++c) {
      s += std::string("<td class=\"c ") + CellClass(m.cells[c]) + (c == g_.focus ? " focus" : "") +
           "\" title=\"" +
           HtmlEscape(who + ", #" + std::to_string(g_.columns[c].index) + ": " +
                      analysis::GridCellName(m.cells[c])) +
           "\">" + CellText(m.cells[c]) + "</td>";
    }
    return s;
  }

  std::string Individual(const std::vector<Row>& rows, size_t r) const {
    const GridMember& m = g_.members[rows[r].members.front()];
    std::string s = std::string("<tr") + (m.culprit ? " class=\"culprit\"" : "") + ">";
    // Rows of one host share its cell.
    const std::string host = m.process < 0 ? "no file" : m.host.empty() ? "?" : m.host;
    auto same_host = [&](size_t k) {
      if (k >= rows.size() || rows[k].members.size() != 1) return false;
      const GridMember& o = g_.members[rows[k].members.front()];
      return (o.process < 0) == (m.process < 0) && o.host == m.host;
    };
    if (r == 0 || !same_host(r - 1)) {
      size_t span = 1;
      while (r + span < std::min(rows.size(), kGridMaxRows) && same_host(r + span)) ++span;
      s += "<td class=\"host\"" + (span > 1 ? " rowspan=\"" + std::to_string(span) + "\"" : "") +
           ">" + HtmlEscape(host) + "</td>";
    }
    s += "<td class=\"who\">" +
         std::string(m.culprit ? "<span class=\"badge\">culprit</span>" : "") +
         HtmlEscape(RankText(m)) + CommRank(m) + "</td>";
    s +=
        Cells(m, RankText(m)) + "<td class=\"pos\">" + HtmlText(Position(m, true)) + "</td></tr>\n";
    return s;
  }

  std::string Aggregate(const Row& row) const {
    std::vector<int32_t> ranks;
    std::set<std::string> hosts;
    bool global = true;
    for (size_t i : row.members) {
      const GridMember& m = g_.members[i];
      global = global && m.global_rank >= 0;
      if (m.process >= 0) hosts.insert(m.host);
    }
    for (size_t i : row.members) {
      const GridMember& m = g_.members[i];
      ranks.push_back(global ? m.global_rank : m.rank);
    }
    const std::string who = std::string(global ? "ranks " : "comm ranks ") + Ranges(ranks);
    std::string label = who;
    if (!hosts.empty()) {
      label += " on " + std::to_string(hosts.size()) + (hosts.size() == 1 ? " host" : " hosts");
    }
    label += ": identical";
    const GridMember& lead = g_.members[row.members.front()];
    return "<tr class=\"agg\"><td class=\"who\" colspan=\"2\">" + HtmlEscape(label) + "</td>" +
           Cells(lead, who) + "<td class=\"pos\">" + HtmlText(Position(lead, false)) +
           "</td></tr>\n";
  }

  const analysis::JobIndex& index_;
  const PositionGrid& g_;
  std::vector<size_t> order_;
};

}  // namespace

std::string PositionGridHtml(const analysis::JobIndex& index, const PositionGrid& grid) {
  return Renderer(index, grid).Html();
}

std::string PositionGridLegend() {
  std::string s = "<p class=\"legend\">";
  for (GridCell c : {GridCell::kDone, GridCell::kRunning, GridCell::kEnqueued, GridCell::kNever,
                     GridCell::kUnknown}) {
    s += std::string("<span class=\"swatch c ") + CellClass(c) + "\"></span>" +
         HtmlEscape(analysis::GridCellName(c));
  }
  s += ". Columns: the comm's collectives by op index; rows: its ranks by host, global rank = "
       "rank in the process's widest communicator.</p>\n";
  return s;
}

}  // namespace report
}  // namespace flightrec
