// The HTML report in a real browser (Debian's chromium, headless): the
// report of an 8-rank emulated hang loads with no console error, its DOM
// holds the position grid with the culprit's row (host and global rank), and
// a screenshot of it is kept for review in the artifacts directory
// ($FLIGHTREC_ARTIFACTS_DIR, else <build>/artifacts): report-8ranks.png and
// the page itself, report-8ranks.html.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "integration/ring_view.h"
#include "support/analyze_runner.h"
#include "support/time_scale.h"

#ifndef FLIGHTREC_CHROMIUM
#error "FLIGHTREC_CHROMIUM (the chromium binary) is set by tests/integration/CMakeLists.txt"
#endif

namespace flightrec {
namespace itest {
namespace {

std::string ArtifactsDir() {
  const char* env = std::getenv("FLIGHTREC_ARTIFACTS_DIR");
  const std::string dir =
      env != nullptr && env[0] != '\0' ? std::string(env) : BuildDir() + "/artifacts";
  RunShell("mkdir -p '" + dir + "'");
  return dir;
}

struct Browser {
  int exit_code = -1;
  std::string out;  // stdout (the DOM with --dump-dom)
  std::string err;  // stderr: chromium's log, console messages included
};

// Runs headless chromium on `page` with `mode` ("--dump-dom" or
// "--screenshot=PATH"), bounded in time, in a fresh profile; no network is
// needed or allowed (the page must be self-contained).
Browser RunChromium(const std::string& page, const std::string& mode) {
  const std::string dir = MakeTempDir("chromium");
  Browser b;
  b.exit_code = RunShell(
      "timeout -k 5 " + testing::ScaledSecondsText(60) +
      " '" FLIGHTREC_CHROMIUM
      "' --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars "
      "--disable-extensions --disable-background-networking --window-size=1280,1500 "
      "--proxy-server=127.0.0.1:9 --enable-logging=stderr --v=0 --user-data-dir='" +
      dir + "/profile' " + mode + " 'file://" + page + "' >'" + dir + "/out' 2>'" + dir + "/err'");
  b.out = ReadText(dir + "/out");
  b.err = ReadText(dir + "/err");
  RunShell("rm -rf '" + dir + "'");
  return b;
}

// Lines of chromium's log that report the page's console output or an
// uncaught error (a self-contained page with no script has none).
std::vector<std::string> ConsoleErrors(const std::string& log) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < log.size()) {
    size_t end = log.find('\n', at);
    if (end == std::string::npos) end = log.size();
    const std::string line = log.substr(at, end - at);
    if (line.find("CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos) {
      out.push_back(line);
    }
    at = end + 1;
  }
  return out;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

// The console check can fail: a page with a script error is caught.
TEST(ReportBrowser, AScriptErrorReachesTheLog) {
  const std::string dir = MakeTempDir("badpage");
  const std::string page = dir + "/bad.html";
  const std::string html =
      "<!DOCTYPE html><html><head><title>t</title></head><body><p>x</p>"
      "<script>undefinedFunction();</script></body></html>\n";
  ASSERT_TRUE(testing::WriteBytes(page, html.data(), html.size()));
  const Browser b = RunChromium(page, "--dump-dom");
  EXPECT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("<p>x</p>"), std::string::npos) << b.out;
  EXPECT_FALSE(ConsoleErrors(b.err).empty()) << b.err;
  RunShell("rm -rf '" + dir + "'");
}

// Rank 6 stops before op 185 of the schedule, a TP AllGather (comm tp1, where
// it is rank 2): the report's grid of tp1 marks its row with its host and
// global rank.
TEST(ReportBrowser, TheHtmlReportOfAHangShowsWhereEveryRankIs) {
  constexpr int kCulprit = 6;
  constexpr int kOp = 8 * 23 + 1;
  EmuJob job;
  {
    JobSlot slot;
    job = RunEmu("browser",
                 "--ranks 8 --tp 4 --ranks-per-node 4 --ops " + std::to_string(kOp + 48) +
                     " --step-us 20 --fault stuck:rank=" + std::to_string(kCulprit) +
                     ":op=" + std::to_string(kOp) + " --until-dumps 8 --hang-timeout-s " +
                     testing::ScaledSecondsText(20),
                 {{"NCCL_FLIGHTREC_TIMEOUT_S", testing::ScaledSecondsText(2)},
                  {"NCCL_FLIGHTREC_VERDICT", "0"}});
  }
  ASSERT_EQ(job.status, 4) << job.summary.dump(1).substr(0, 2000);
  const std::string host = job.summary["ranks"][kCulprit].value("host", "");
  ASSERT_FALSE(host.empty()) << job.summary.dump(1).substr(0, 2000);

  const testing::CliRun run = testing::RunAnalyzeCli("--format html", {job.ring_dir});
  ASSERT_TRUE(run.exited) << run.errors;
  EXPECT_EQ(run.code, 1) << run.errors;
  const std::string artifacts = ArtifactsDir();
  const std::string page = artifacts + "/report-8ranks.html";
  ASSERT_TRUE(testing::WriteBytes(page, run.report.data(), run.report.size()));

  const Browser dom = RunChromium(page, "--dump-dom");
  EXPECT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_TRUE(ConsoleErrors(dom.err).empty()) << Joined(ConsoleErrors(dom.err));
  // The grid, its stuck column, and the culprit's row: host and global rank.
  EXPECT_NE(dom.out.find("<table class=\"grid\">"), std::string::npos) << dom.out;
  // The grid of tp1 (its other comm, dp2, has one too; the two root causes
  // may come in either order).
  const size_t grid = dom.out.find("<p class=\"grid-title\">comm <code>tp1</code> (4 ranks)");
  ASSERT_NE(grid, std::string::npos) << dom.out;
  const size_t focus = dom.out.find("<th class=\"focus\"", grid);
  ASSERT_NE(focus, std::string::npos) << dom.out;
  EXPECT_NE(dom.out.substr(focus, dom.out.find("</th>", focus) - focus).find("AllGather"),
            std::string::npos)
      << dom.out;
  const size_t row = dom.out.find("<tr class=\"culprit\">", focus);
  ASSERT_NE(row, std::string::npos) << dom.out;
  const std::string culprit_row = dom.out.substr(row, dom.out.find("</tr>", row) - row);
  EXPECT_NE(culprit_row.find("</span>rank " + std::to_string(kCulprit) + " "), std::string::npos)
      << culprit_row;
  EXPECT_NE(dom.out.find("<b>" + host + ", global rank " + std::to_string(kCulprit) + "</b>"),
            std::string::npos)
      << dom.out;
  // Its cell at the stuck op: never enqueued; the other three wait in it.
  EXPECT_NE(culprit_row.find("class=\"c never focus\""), std::string::npos) << culprit_row;
  // No Markdown left in the page's text.
  EXPECT_EQ(dom.out.find('`'), std::string::npos) << dom.out;

  const std::string png = artifacts + "/report-8ranks.png";
  RunShell("rm -f '" + png + "'");
  const Browser shot = RunChromium(page, "--screenshot='" + png + "'");
  EXPECT_EQ(shot.exit_code, 0) << shot.err;
  EXPECT_TRUE(ConsoleErrors(shot.err).empty()) << Joined(ConsoleErrors(shot.err));
  const std::vector<uint8_t> bytes = testing::ReadBytes(png);
  ASSERT_GT(bytes.size(), 8u) << shot.err;
  EXPECT_EQ(std::string(bytes.begin() + 1, bytes.begin() + 4), "PNG");
  std::printf("screenshot: %s\npage: %s\n", png.c_str(), page.c_str());
  RunShell("rm -rf '" + job.dir + "'");
}

}  // namespace
}  // namespace itest
}  // namespace flightrec
