// Key content of every report format, and the timeline trace's events.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "analyzer/model/describe.h"
#include "analyzer/model/inputs.h"
#include "analyzer/model/progress.h"
#include "analyzer/report/next_step.h"
#include "analyzer/report/output.h"
#include "analyzer/report/report.h"
#include "flightrec/version.h"
#include "support/files.h"
#include "unit/analyzer/analyzer_test_util.h"

namespace flightrec {
namespace testing {
namespace {

using nlohmann::json;

struct Reported {
  explicit Reported(const JobSpec& spec) : Reported(MakeJob(spec)) {}
  explicit Reported(std::vector<ProcessSnapshot> procs) : job(std::move(procs)) {
    for (const ProcessSnapshot& p : job.procs) inputs.read.push_back(p.path);
    inputs.rejected.push_back({"/synthetic/garbage.ring", "bad magic"});
    inputs.job_id = "job-1";
  }
  report::ReportInput In() const { return {inputs, job.index, job.result}; }
  analysis::JobProgress Progress() const { return analysis::ComputeProgress(job.index, {}); }

  Analyzed job;
  analysis::Inputs inputs;
};

JobSpec Stuck() {
  JobSpec spec;
  spec.fault = Fault::kStuckBeforeOp;
  spec.op = 6;
  return spec;
}

TEST(ReportTest, TextPutsTheVerdictFirstAndNamesTheCulprit) {
  Reported r(Stuck());
  const std::string text = report::TextReport(r.In());
  EXPECT_EQ(text.rfind("HANG: host-0 pid 4005 (world rank 5) never enqueued AllReduce #2; ", 0), 0u)
      << text;
  EXPECT_NE(text.find("; lagging_rank on comm `tp1` (rank 1 of 4)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    rank 1 (host-0 pid 4005, world rank 5) is 1 collective behind on comm "
                      "`tp1`: it never enqueued AllReduce #2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Root cause:\n  host-0 pid 4005 (world rank 5, tp1 rank 1, dp1 rank 1)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Consequences"), std::string::npos);
  EXPECT_NE(text.find("rejected /synthetic/garbage.ring: bad magic"), std::string::npos);
}

// The headline leads with what a stranger can find (host, pid, global
// rank), then the op with its step and how long ranks waited; the
// sub-communicator detail comes after. Every format carries the same line.
TEST(ReportTest, HeadlineLeadsWithHostPidAndGlobalRankInEveryFormat) {
  Reported r(Stuck());
  r.job.result.findings[0].op.user_tag = 77;
  const std::string lead =
      "HANG: host-0 pid 4005 (world rank 5) never enqueued AllReduce #2 (user tag 77); ";
  const std::string headline = report::Headline(r.In());
  EXPECT_EQ(headline.rfind(lead, 0), 0u) << headline;
  // How long: ranks waiting for a duration, since an ISO 8601 UTC time.
  EXPECT_TRUE(std::regex_search(
      headline, std::regex("; [0-9]+ ranks waiting [0-9.]+ (s|ms|us) \\(since "
                           "20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9:]+Z\\); lagging_rank on "
                           "comm `tp1` \\(rank 1 of 4\\)$")))
      << headline;
  EXPECT_LT(headline.find("world rank 5"), headline.find("`tp1`")) << headline;
  EXPECT_EQ(report::TextReport(r.In()).rfind(lead, 0), 0u);
  EXPECT_NE(report::MarkdownReport(r.In()).find("\n**" + lead), std::string::npos);
  EXPECT_NE(report::HtmlReport(r.In(), r.Progress()).find("<p class=\"verdict\">" + lead),
            std::string::npos);
  const json j = json::parse(report::JsonReport(r.In()));
  EXPECT_EQ(j["headline"], headline);
}

// A GPU hang in which world rank 3 never started the hung op on its GPU
// while the other 7 ranks did: the records single it out.
std::vector<ProcessSnapshot> NeverStartedOnRank3() {
  JobSpec spec;
  spec.fault = Fault::kGpuHang;
  std::vector<ProcessSnapshot> procs = MakeJob(spec);
  for (OpRecord& r : procs[3].comms[0].records) {
    if (r.state != format::kOpDone) {
      r.gpu_start_ns = r.gpu_start_raw = 0;
      r.channels_started = 0;
    }
  }
  return procs;
}

// all_stuck with a rank the records single out leads with that rank (host,
// pid, world rank) and what sets it apart, in every format; with none singled
// out it names nobody.
TEST(ReportTest, AllStuckHeadlineLeadsWithTheRankThatNeverStartedIt) {
  Reported r(NeverStartedOnRank3());
  const analysis::Finding* f = r.job.First(analysis::FindingKind::kAllStuck);
  ASSERT_NE(f, nullptr);
  const std::string who = "host-0 pid 4003 (world rank 3) never started " +
                          analysis::OpLabel(f->op) + " on its GPU while the other 7 ranks of comm ";
  const std::string lead = "HANG: " + who + "`world` are inside it; ";
  const std::string headline = report::Headline(r.In());
  EXPECT_EQ(headline.rfind(lead, 0), 0u) << headline;
  const std::string detail = "; all_stuck on comm `world` (rank 3 of 8)";
  ASSERT_GT(headline.size(), detail.size());
  EXPECT_EQ(headline.substr(headline.size() - detail.size()), detail) << headline;
  EXPECT_EQ(report::TextReport(r.In()).rfind(lead, 0), 0u);
  EXPECT_NE(report::MarkdownReport(r.In()).find("\n**" + lead), std::string::npos);
  EXPECT_NE(report::HtmlReport(r.In(), r.Progress()).find("<p class=\"verdict\">HANG: " + who),
            std::string::npos);
  const json j = json::parse(report::JsonReport(r.In()));
  EXPECT_EQ(j["headline"], headline);
  EXPECT_EQ(j["title"], "HANG in job job-1: " + who + "`world` are inside it");
  ASSERT_EQ(j["culprits"].size(), 1u) << j["culprits"];
  EXPECT_EQ(j["culprits"][0]["pid"], 4003);
  EXPECT_NE(j["findings"][0]["next_step"]["action"].get<std::string>().find(
                "check the GPU of that rank on host-0 (pid 4003)"),
            std::string::npos)
      << j["findings"][0]["next_step"];

  JobSpec spec;
  spec.fault = Fault::kGpuHang;  // every rank started it: nobody is named
  Reported none(spec);
  const std::string nobody = report::Headline(none.In());
  EXPECT_EQ(nobody.rfind("HANG: all 8 ranks of comm `world` (all on host-0) are inside ", 0), 0u)
      << nobody;
  EXPECT_EQ(nobody.find("pid"), std::string::npos) << nobody;
  EXPECT_TRUE(json::parse(report::JsonReport(none.In()))["culprits"].empty());
}

// What a ticket system needs: a short title and a one-paragraph summary,
// added beside the flightrec.report/1 fields (none of which changes).
TEST(ReportTest, JsonHasATicketTitleAndSummary) {
  Reported r(Stuck());
  const json j = json::parse(report::JsonReport(r.In()));
  EXPECT_EQ(j["title"],
            "HANG in job job-1: host-0 pid 4005 (world rank 5) never enqueued AllReduce #2");
  const std::string summary = j["summary"];
  EXPECT_EQ(summary.find('\n'), std::string::npos);
  EXPECT_EQ(summary.rfind(j["headline"].get<std::string>() + ". Evidence: rank 1 (host-0 pid "
                                                             "4005, world rank 5) is 1 collective",
                          0),
            0u)
      << summary;
  EXPECT_NE(summary.find("Root cause: host-0 pid 4005 (world rank 5, tp1 rank 1, dp1 rank 1)."),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("Next step: see where the process is stuck in its own code: `py-spy dump "
                         "--pid 4005`"),
            std::string::npos)
      << summary;
  EXPECT_EQ(j["schema"], "flightrec.report/1");
  EXPECT_TRUE(j["headline"].is_string());
  EXPECT_TRUE(j["findings"].is_array());
}

// Job id, analysis time with its zone, the analyzed paths and the tool
// version, in every format.
TEST(ReportTest, EveryFormatSaysWhatWasAnalyzedWhenAndByWhat) {
  Reported r(Stuck());
  r.inputs.paths = {"/collected/job-1", "/extra/rank9.ring"};
  r.inputs.analyzed_wall_ns = kBaseWallNs + 1500000000ULL;  // 2023-11-14T22:13:21.500Z
  const std::string facts =
      std::string("job job-1; analyzed 2023-11-14T22:13:21.500Z by flightrec ") + kVersion +
      "; paths: /collected/job-1, /extra/rank9.ring";
  EXPECT_NE(report::TextReport(r.In()).find("\n" + facts + "\n"), std::string::npos)
      << report::TextReport(r.In());
  EXPECT_NE(report::MarkdownReport(r.In()).find(facts), std::string::npos);
  EXPECT_NE(report::HtmlReport(r.In(), r.Progress()).find(facts), std::string::npos);
  const json j = json::parse(report::JsonReport(r.In()));
  EXPECT_EQ(j["job_id"], "job-1");
  EXPECT_EQ(j["analyzed_at"], "2023-11-14T22:13:21.500Z");
  EXPECT_EQ(j["tool"]["name"], "flightrec");
  EXPECT_EQ(j["tool"]["version"], kVersion);
  EXPECT_EQ(j["inputs"]["paths"], json::array({"/collected/job-1", "/extra/rank9.ring"}));
  EXPECT_NE(j["summary"].get<std::string>().find(facts), std::string::npos);
}

// No time in any report is a bare clock time: each carries its zone (Z).
TEST(ReportTest, TimesCarryTheirZone) {
  for (const Fault fault : {Fault::kStuckBeforeOp, Fault::kGpuHang, Fault::kKilled}) {
    JobSpec spec = Stuck();
    spec.fault = fault;
    Reported r(spec);
    const std::string text = report::TextReport(r.In());
    std::smatch m;
    // hh:mm:ss not followed by a fraction or Z is a clock time without zone.
    EXPECT_FALSE(
        std::regex_search(text, m, std::regex("[0-9][0-9]:[0-9][0-9]:[0-9][0-9]([^.0-9Z]|$)")))
        << m.str() << " in\n"
        << text;
    EXPECT_TRUE(std::regex_search(text, std::regex("T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z"))) << text;
  }
}

// Ranks of one host talk through shared memory and NVLink: "network moved
// 0 bytes" says nothing there and is left out; across hosts it stays.
// The hung op's kernels made progress once (channels started), none over
// the network.
std::vector<ProcessSnapshot> StartedButNoBytes(const JobSpec& spec) {
  std::vector<ProcessSnapshot> procs = MakeJob(spec);
  for (ProcessSnapshot& p : procs) {
    for (CommSnapshot& c : p.comms) {
      for (OpRecord& r : c.records) {
        if (r.state < format::kOpDone && r.gpu_start_ns != 0) {
          r.t_last_progress_ns = r.gpu_start_ns + 1000;
        }
      }
    }
  }
  return procs;
}

TEST(ReportTest, ZeroNetworkTotalIsOmittedOnOneHost) {
  JobSpec spec;
  spec.fault = Fault::kGpuHang;
  Analyzed one_host(StartedButNoBytes(spec));  // 8 ranks, all on host-0
  const analysis::Finding* f = one_host.First(analysis::FindingKind::kAllStuck);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->summary.find("network moved 0 bytes"), std::string::npos) << f->summary;
  EXPECT_NE(f->summary.find("last progress at"), std::string::npos) << f->summary;
  spec.nranks = 16;  // host-0 and host-1
  Analyzed two_hosts(StartedButNoBytes(spec));
  f = two_hosts.First(analysis::FindingKind::kAllStuck);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("network moved 0 bytes"), std::string::npos) << f->summary;
}

std::string ReadRunbook() {
  std::ifstream in(FLIGHTREC_RUNBOOK);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every finding of every fault carries the runbook's next step: an action
// and a section that exists in docs/runbook.md.
TEST(ReportTest, EveryFindingHasTheRunbooksNextStep) {
  const std::string runbook = ReadRunbook();
  ASSERT_FALSE(runbook.empty()) << FLIGHTREC_RUNBOOK;
  for (const std::string& anchor : report::RunbookAnchors()) {
    const std::string id = anchor.substr(anchor.find('#') + 1);
    EXPECT_NE(runbook.find("<a id=\"" + id + "\"></a>"), std::string::npos) << anchor;
  }
  const Fault faults[] = {Fault::kStuckBeforeOp, Fault::kSkipOp,      Fault::kMismatch,
                          Fault::kKilled,        Fault::kMissingFile, Fault::kGpuHang,
                          Fault::kSlowRank,      Fault::kDeadlock};
  for (const Fault fault : faults) {
    JobSpec spec = Stuck();
    spec.fault = fault;
    spec.count_period = fault == Fault::kSkipOp ? 3 : 0;
    Reported r(spec);
    const size_t findings = r.job.result.findings.size();
    ASSERT_GT(findings, 0u) << static_cast<int>(fault);
    const json j = json::parse(report::JsonReport(r.In()));
    for (const json& f : j["findings"]) {
      const std::string anchor = f["next_step"]["runbook"];
      EXPECT_EQ(anchor.rfind("docs/runbook.md#next-", 0), 0u) << anchor;
      EXPECT_NE(runbook.find("<a id=\"" + anchor.substr(anchor.find('#') + 1) + "\"></a>"),
                std::string::npos)
          << anchor;
      EXPECT_FALSE(f["next_step"]["action"].get<std::string>().empty());
    }
    const std::string text = report::TextReport(r.In());
    size_t lines = 0;
    for (size_t at = text.find("\n    next: "); at != std::string::npos;
         at = text.find("\n    next: ", at + 1)) {
      ++lines;
    }
    size_t roots = 0;
    for (const analysis::Finding& f : r.job.result.findings) roots += f.root_cause ? 1 : 0;
    EXPECT_EQ(lines, roots + std::min<size_t>(findings - roots, 10)) << text;  // 10 shown
    const std::string md = report::MarkdownReport(r.In());
    EXPECT_NE(md.find("| next step |"), std::string::npos);
    EXPECT_NE(md.find("(`docs/runbook.md#next-"), std::string::npos) << md;
    const std::string html = report::HtmlReport(r.In(), r.Progress());
    EXPECT_NE(html.find("<th>next step</th>"), std::string::npos);
    EXPECT_NE(html.find("(<code>docs/runbook.md#next-"), std::string::npos) << html;
  }
}

TEST(ReportTest, HealthyTextSaysSo) {
  Reported r(JobSpec{});
  EXPECT_EQ(report::TextReport(r.In()).rfind("HEALTHY: no findings in 8 processes", 0), 0u);
}

TEST(ReportTest, MarkdownHasTheFindingsTable) {
  Reported r(Stuck());
  const std::string md = report::MarkdownReport(r.In());
  EXPECT_EQ(md.rfind("# flightrec report: hang\n", 0), 0u);
  EXPECT_NE(md.find("| root cause | lagging_rank | comm `tp1` | 1 | AllReduce #2 |"),
            std::string::npos)
      << md;
  // The root causes with the ranks the text report gives.
  EXPECT_NE(md.find("## Root causes\n\n- host-0 pid 4005 (world rank 5, tp1 rank 1, dp1 rank 1)\n"),
            std::string::npos)
      << md;
}

TEST(ReportTest, JsonFollowsTheSchema) {
  Reported r(Stuck());
  const json j = json::parse(report::JsonReport(r.In()));
  EXPECT_EQ(j["schema"], "flightrec.report/1");
  EXPECT_EQ(j["verdict"], "hang");
  EXPECT_EQ(j["exit_code"], 1);
  const json& f = j["findings"][0];
  EXPECT_EQ(f["kind"], "lagging_rank");
  EXPECT_EQ(f["comm"]["name"], "tp1");
  EXPECT_EQ(f["comm"]["nranks"], 4);
  EXPECT_EQ(f["comm"]["id"].get<std::string>().rfind("0x", 0), 0u);
  EXPECT_EQ(f["ranks"], json::array({1}));
  EXPECT_EQ(f["op"]["func"], "AllReduce");
  EXPECT_EQ(f["op"]["index"], 2);
  EXPECT_EQ(f["op"]["seq"], 2);
  EXPECT_EQ(f["details"][0]["where"], "outside_nccl");
  EXPECT_GT(f["confidence"].get<double>(), 0.9);
  ASSERT_EQ(f["processes"].size(), 1u);
  EXPECT_EQ(f["processes"][0]["pid"], 4005);
  EXPECT_EQ(f["processes"][0]["ranks"].size(), 3u);  // world, tp1, dp1
  ASSERT_EQ(j["culprits"].size(), 1u);
  EXPECT_EQ(j["culprits"][0]["host"], "host-0");
  EXPECT_EQ(j["inputs"]["read"].size(), 8u);
  EXPECT_EQ(j["inputs"]["rejected"][0]["path"], "/synthetic/garbage.ring");
  EXPECT_EQ(j["inputs"]["rejected"][0]["reason"], "bad magic");
}

TEST(ReportTest, JsonOpCarriesTheUserTagOnlyWhenThereIsOne) {
  Reported r(Stuck());
  EXPECT_FALSE(json::parse(report::JsonReport(r.In()))["findings"][0]["op"].contains("user_tag"));
  r.job.result.findings[0].op.user_tag = 77;
  const json j = json::parse(report::JsonReport(r.In()));
  EXPECT_EQ(j["findings"][0]["op"]["user_tag"], 77);
}

TEST(ReportTest, JsonNamesMissingRanksWithNullHost) {
  JobSpec spec = Stuck();
  spec.fault = Fault::kMissingFile;
  Reported r(spec);
  const json j = json::parse(report::JsonReport(r.In()));
  ASSERT_FALSE(j["culprits"].empty());
  EXPECT_TRUE(j["culprits"][0]["host"].is_null());
  EXPECT_EQ(j["findings"][0]["kind"], "missing_rank");
}

// Every format says which file each culprit's state came from, and carries
// the reader's clock warnings and the clock-skew note (the notes).
TEST(ReportTest, EveryFormatSaysWhereStateCameFromAndCarriesClockNotes) {
  std::vector<ProcessSnapshot> procs = MakeJob(Stuck());
  procs[2].warnings.push_back("wall clock stepped by 7 s since init; times use the dump's");
  const analysis::Inputs inputs = analysis::SelectSnapshots(procs, {});
  Analyzed a(inputs.processes);
  const report::ReportInput in{inputs, a.index, a.result};
  const std::string src = "dump /synthetic/rank5.dump: newest dump #1 (timeout) (no ring";
  const std::string step = "wall clock stepped by 7 s since init";
  const std::string text = report::TextReport(in);
  EXPECT_NE(text.find("    state from " + src), std::string::npos) << text;
  EXPECT_NE(text.find("state from 8 dumps and 0 rings"), std::string::npos) << text;
  EXPECT_NE(text.find(step), std::string::npos) << text;
  const std::string md = report::MarkdownReport(in);
  EXPECT_NE(md.find("  - state from " + src), std::string::npos) << md;
  EXPECT_NE(md.find(step), std::string::npos) << md;
  const std::string html = report::HtmlReport(in, analysis::ComputeProgress(a.index, {}));
  EXPECT_NE(html.find("state from " + src), std::string::npos) << html;
  EXPECT_NE(html.find(step), std::string::npos) << html;
  const json j = json::parse(report::JsonReport(in));
  ASSERT_EQ(j["inputs"]["sources"].size(), 8u);
  const json& culprit = j["culprits"][0];
  EXPECT_EQ(culprit["pid"], 4005);
  EXPECT_EQ(culprit["source"]["kind"], "dump");
  EXPECT_EQ(culprit["source"]["path"], "/synthetic/rank5.dump");
  EXPECT_NE(culprit["source"]["reason"].get<std::string>().find("no ring"), std::string::npos);
  EXPECT_TRUE(culprit["source"]["time"].is_string());
  EXPECT_NE(j["notes"].dump().find(step), std::string::npos) << j["notes"].dump();
}

TEST(ReportTest, HtmlIsOneSelfContainedFile) {
  Reported r(Stuck());
  const std::string html = report::HtmlReport(r.In(), r.Progress());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("http"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("<rect"), std::string::npos);
  EXPECT_NE(html.find("class=\"culprit\">host-0 pid 4005"), std::string::npos);
  EXPECT_NE(html.find("is 1 collective behind on comm <code>tp1</code>"), std::string::npos);
  EXPECT_EQ(html.find('`'), std::string::npos) << "Markdown left in the page";
}

TEST(ReportTest, TimelineIsAChromeTraceWithSlicesFlowsAndMarkers) {
  Reported r(Stuck());
  const json j = json::parse(report::TimelineTrace(r.job.index, r.Progress()));
  ASSERT_TRUE(j.is_object());
  ASSERT_TRUE(j["traceEvents"].is_array());
  int names = 0, slices = 0, unfinished = 0, starts = 0, finishes = 0, stuck = 0;
  bool rank5_named = false;
  for (const json& e : j["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "process_name") {
      ++names;
      rank5_named = rank5_named || e["args"]["name"] == "rank 5 (host-0 pid 4005)";
    } else if (ph == "X") {
      ++slices;
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      unfinished += e["args"].contains("unfinished") ? 1 : 0;
    } else if (ph == "s") {
      ++starts;
    } else if (ph == "f") {
      ++finishes;
      EXPECT_EQ(e["bp"], "e");
    } else if (ph == "i" && e["cat"] == "stuck") {
      ++stuck;
    }
  }
  EXPECT_EQ(names, 8);
  EXPECT_TRUE(rank5_named);
  EXPECT_GT(slices, 8 * 6);
  EXPECT_GT(unfinished, 0);
  EXPECT_GT(starts, 0);
  EXPECT_EQ(starts, finishes);
  EXPECT_EQ(stuck, 7);  // everyone but the culprit, who is outside NCCL
}

// -o FILE: a regular file appears whole or not at all; anything else is
// written in place (a rename once turned a root user's /dev/null into a
// plain file).
class OutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("output");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override { (void)std::system(("rm -rf '" + dir_ + "'").c_str()); }
  static std::string Slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  std::string dir_;
};

TEST_F(OutputTest, ARegularFileIsReplacedWhole) {
  const std::string path = dir_ + "/report.json";
  std::string error;
  ASSERT_TRUE(report::WriteOutput(path, "first", &error)) << error;
  ASSERT_TRUE(report::WriteOutput(path, "second", &error)) << error;
  EXPECT_EQ(Slurp(path), "second");
  EXPECT_NE(access((path + ".tmp").c_str(), F_OK), 0);
}

TEST_F(OutputTest, AnUncommittedStreamLeavesNothing) {
  const std::string path = dir_ + "/trace.json";
  {
    report::OutputStream out;
    std::string error;
    ASSERT_TRUE(out.Open(path, &error)) << error;
    ASSERT_TRUE(out.Write("{\"traceEvents\":[", &error)) << error;
  }
  EXPECT_NE(access(path.c_str(), F_OK), 0);
  EXPECT_NE(access((path + ".tmp").c_str(), F_OK), 0);
}

TEST_F(OutputTest, ASymlinkStaysALinkAndItsTargetGetsTheText) {
  const std::string target = dir_ + "/target.txt", link = dir_ + "/link.txt";
  std::string error;
  ASSERT_TRUE(report::WriteOutput(target, "old", &error)) << error;
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  ASSERT_TRUE(report::WriteOutput(link, "new", &error)) << error;
  struct stat st;
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(Slurp(target), "new");
}

TEST_F(OutputTest, AFifoIsWrittenInPlace) {
  const std::string fifo = dir_ + "/pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // so the writer's open returns
  ASSERT_GE(reader, 0);
  std::string error;
  ASSERT_TRUE(report::WriteOutput(fifo, "through the pipe", &error)) << error;
  char buf[64] = {};
  EXPECT_EQ(read(reader, buf, sizeof(buf)), 16);
  EXPECT_STREQ(buf, "through the pipe");
  close(reader);
  struct stat st;
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

}  // namespace
}  // namespace testing
}  // namespace flightrec
