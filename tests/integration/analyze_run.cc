#include "integration/analyze_run.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "integration/ring_view.h"
#include "support/analyze_runner.h"

namespace flightrec {
namespace itest {

AnalyzeRun RunAnalyze(const std::vector<std::string>& paths, const std::string& options) {
  const testing::CliRun cli = testing::RunAnalyzeCli("--format json " + options, paths);
  AnalyzeRun run;
  run.exit_code = cli.exited ? cli.code : -1;
  run.output = cli.report + cli.errors;
  run.report = nlohmann::json::parse(cli.report, nullptr, false);
  return run;
}

int WorldRank(const nlohmann::json& process) {
  if (!process.is_object() || !process.contains("ranks")) return -1;
  for (const auto& r : process["ranks"]) {
    if (r.value("name", "") == "world") return r.value("rank", -1);
  }
  return -1;
}

std::vector<int> CulpritWorldRanks(const nlohmann::json& report) {
  std::vector<int> out;
  if (!report.is_object() || !report.contains("culprits")) return out;
  for (const auto& c : report["culprits"]) out.push_back(WorldRank(c));
  return out;
}

std::vector<nlohmann::json> FindingsOf(const nlohmann::json& report, const std::string& kind) {
  std::vector<nlohmann::json> out;
  if (!report.is_object() || !report.contains("findings")) return out;
  for (const auto& f : report["findings"]) {
    if (f.value("kind", "") == kind) out.push_back(f);
  }
  return out;
}

bool Names(const nlohmann::json& finding, int rank) {
  if (!finding.contains("processes")) return false;
  for (const auto& p : finding["processes"]) {
    if (WorldRank(p) == rank) return true;
  }
  return false;
}

std::string Describe(const AnalyzeRun& run) {
  if (!run.report.is_object()) return "no JSON report; output:\n" + run.output.substr(0, 2000);
  std::string s = "exit " + std::to_string(run.exit_code) + ", " +
                  run.report.value("headline", std::string("(no headline)")) + "\n";
  size_t shown = 0;
  for (const auto& f : run.report["findings"]) {
    if (shown++ == 12) {
      s += "  ...\n";
      break;
    }
    std::vector<int> world;
    for (const auto& p : f["processes"]) world.push_back(WorldRank(p));
    s += "  " + f.value("kind", "") + (f.value("root_cause", false) ? " (root)" : "") + " on " +
         (f["comm"].is_object() ? f["comm"].value("name", "") : std::string("-")) + ", world ranks";
    for (int w : world) s += " " + std::to_string(w);
    s += ": " + f.value("summary", "").substr(0, 300) + "\n";
  }
  s += "  culprits (world ranks):";
  for (int w : CulpritWorldRanks(run.report)) s += " " + std::to_string(w);
  return s + "\n";
}

namespace {

#ifndef FLIGHTREC_TEST_JOB_SLOTS_DEFAULT
#define FLIGHTREC_TEST_JOB_SLOTS_DEFAULT 1
#endif

int JobSlots() {
  const char* s = getenv("FLIGHTREC_TEST_JOB_SLOTS");
  const int n = s != nullptr ? atoi(s) : FLIGHTREC_TEST_JOB_SLOTS_DEFAULT;
  return n >= 1 && n <= 16 ? n : FLIGHTREC_TEST_JOB_SLOTS_DEFAULT;
}

// Slot i's lock file, shared by every test process of the machine.
int OpenSlot(int i) {
  const std::string path = "/tmp/flightrec-emulated-job-" + std::to_string(i) + ".lock";
  return open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
}

}  // namespace

JobSlot::JobSlot(int ranks) {
  for (int i = 0, slots = JobSlots(); i < slots; ++i) {
    const int fd = OpenSlot(i);
    if (fd >= 0) fds_.push_back(fd);  // a slot without its file does not bound
  }
  if (ranks >= kWholeMachineRanks) {
    // Every slot, in index order (a small job holds one slot and never
    // waits while holding it, so the order cannot deadlock).
    for (int fd : fds_) flock(fd, LOCK_EX);
    return;
  }
  // Any free slot, kept; the others closed. None free: look again in 20 ms.
  while (!fds_.empty()) {
    for (size_t i = 0; i < fds_.size(); ++i) {
      if (flock(fds_[i], LOCK_EX | LOCK_NB) != 0) continue;
      for (size_t j = 0; j < fds_.size(); ++j) {
        if (j != i) close(fds_[j]);
      }
      fds_ = {fds_[i]};
      return;
    }
    usleep(20 * 1000);
  }
}

JobSlot::~JobSlot() {
  for (int fd : fds_) {
    flock(fd, LOCK_UN);
    close(fd);
  }
}

}  // namespace itest
}  // namespace flightrec
