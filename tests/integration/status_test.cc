// `flightrec status` (docs/status.md) on real emulated jobs while they run:
//  * a healthy job: every process progressing and alive, with rates and a
//    last completed op per comm; `--watch` in a pipe prints successive
//    frames and ends cleanly on SIGINT;
//  * a job hung by `stuck:rank=5` before a tp1 Broadcast: tp1's other ranks
//    stalled at that Broadcast, the culprit idle with its last tp1 op the
//    one before, and the job summary naming the op;
//  * a rank SIGKILLed mid-run: dead, the others not; then every rank
//    killed at once: all dead (silent against the reading instant);
//  * the JSON carries exactly the fields docs/status.md documents;
//  * ring files that are garbage, truncated or half-made get a line with the
//    reason, two jobs in one directory are told apart (and `--job` picks
//    one), and status writes nothing into the directory.
// The jobs run in the background (the launcher forked here) and are ended
// with SIGTERM once status has been seen; waits are liveness bounds, never
// assertions on speed.
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "integration/ring_view.h"
#include "integration/spawned.h"

namespace flightrec {
namespace itest {
namespace {

using nlohmann::json;

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

CliRun RunStatus(const std::string& args) {
  const std::string dir = MakeTempDir("status-out");
  CliRun run;
  run.exit_code = RunShell("'" + BuildDir() + "/bin/flightrec' status " + args + " >'" + dir +
                           "/out' 2>'" + dir + "/err'");
  run.out = ReadText(dir + "/out");
  run.err = ReadText(dir + "/err");
  RunShell("rm -rf '" + dir + "'");
  return run;
}

json StatusJson(const std::string& args, CliRun* run) {
  *run = RunStatus("--json " + args);
  return json::parse(run->out, nullptr, false);
}

// An emulated job running in the background until Stop().
class LiveJob {
 public:
  LiveJob(const std::string& tag, const std::string& args,
          const std::map<std::string, std::string>& env = {}) {
    job_.dir = MakeTempDir(tag);
    job_.ring_dir = job_.dir + "/rings";
    mkdir(job_.ring_dir.c_str(), 0755);
    launcher_ = std::make_unique<Spawned>(EmuCommand(job_, args, env) + " >/dev/null 2>&1");
  }
  ~LiveJob() {
    Stop();
    RunShell("rm -rf '" + job_.dir + "'");
  }
  LiveJob(const LiveJob&) = delete;
  LiveJob& operator=(const LiveJob&) = delete;
  void Stop() { launcher_->Stop(SIGTERM, 120); }  // the launcher kills every rank
  const std::string& rings() const { return job_.ring_dir; }

 private:
  EmuJob job_;
  std::unique_ptr<Spawned> launcher_;
};

// Runs `flightrec status --json args` until `done(report)` holds (at most
// `bound_s`, a liveness bound); returns the last report.
json StatusUntil(const std::string& args, const std::function<bool(const json&)>& done,
                 int bound_s = 90) {
  json last;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(bound_s);
  while (std::chrono::steady_clock::now() < end) {
    CliRun run;
    last = StatusJson(args, &run);
    if (last.is_object() && done(last)) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  return last;
}

int RankIn(const json& process, const std::string& comm) {
  for (const json& r : process["ranks"]) {
    if (r["name"] == comm) return r["rank"].get<int>();
  }
  return -1;
}

const json* ByWorldRank(const json& report, int rank) {
  for (const json& p : report["processes"]) {
    if (RankIn(p, "world") == rank) return &p;
  }
  return nullptr;
}

const json* CommOf(const json& process, const std::string& name) {
  for (const json& c : process["comms"]) {
    if (c["name"] == name) return &c;
  }
  return nullptr;
}

size_t CountState(const json& report, const std::string& state) {
  size_t n = 0;
  for (const json& p : report["processes"]) n += p["state"] == state ? 1 : 0;
  return n;
}

// The field names docs/status.md lists per object: the first column of
// the table under each "## <Object>" heading.
std::map<std::string, std::set<std::string>> DocumentedFields() {
  std::ifstream in(std::string(FLIGHTREC_SOURCE_DIR) + "/docs/status.md");
  std::map<std::string, std::set<std::string>> out;
  std::string section, line;
  const std::regex row("^\\| `([a-z_]+)` \\|");
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) section = line.substr(3);
    std::smatch m;
    if (!section.empty() && std::regex_search(line, m, row)) out[section].insert(m[1]);
  }
  return out;
}

std::set<std::string> Keys(const json& object) {
  std::set<std::string> k;
  for (auto it = object.begin(); it != object.end(); ++it) k.insert(it.key());
  return k;
}

// Every object of the report has exactly the documented fields.
void ExpectDocumented(const json& report) {
  const auto doc = DocumentedFields();
  ASSERT_EQ(doc.count("Top level"), 1u) << "docs/status.md has no '## Top level' table";
  EXPECT_EQ(Keys(report), doc.at("Top level"));
  for (const json& j : report["jobs"]) EXPECT_EQ(Keys(j), doc.at("Job"));
  for (const json& p : report["processes"]) {
    EXPECT_EQ(Keys(p), doc.at("Process")) << p.dump();
    if (!p["pending"].is_null()) {
      EXPECT_EQ(Keys(p["pending"]), doc.at("Pending"));
    }
    for (const json& r : p["ranks"]) EXPECT_EQ(Keys(r), doc.at("Rank"));
    for (const json& c : p["comms"]) {
      EXPECT_EQ(Keys(c), doc.at("Comm"));
      if (!c["last_completed"].is_null()) {
        EXPECT_EQ(Keys(c["last_completed"]), doc.at("Last completed"));
      }
    }
  }
  for (const json& f : report["problems"]) EXPECT_EQ(Keys(f), doc.at("Problem"));
  EXPECT_EQ(report["schema"], "flightrec.status/1");
}

const char kJobArgs[] = "--ranks 8 --tp 4 --ranks-per-node 4 --step-us 200 --hang-timeout-s 120 ";

TEST(StatusLive, AHealthyJobIsProgressingEverywhereAndWatchPrintsFrames) {
  JobSlot slot;
  LiveJob job("status-healthy", std::string(kJobArgs) + "--ops 100000000 --job-id st-ok",
              {{"NCCL_FLIGHTREC_TIMEOUT_S", "600"}, {"NCCL_FLIGHTREC_POLL_MS", "100"}});
  const std::string dir = "'" + job.rings() + "' --window 2";
  // Progressing everywhere, and every comm past its first op: a process is
  // progressing as soon as one comm completes an op, and right after
  // start-up (slower under sanitizers, beside another emulated job) the
  // world and dp comms may not have completed one yet.
  const json report = StatusUntil(dir, [](const json& r) {
    if (r["processes"].size() != 8 || CountState(r, "progressing") != 8) return false;
    for (const json& p : r["processes"]) {
      for (const json& c : p["comms"]) {
        if (c["last_completed"].is_null()) return false;
      }
    }
    return true;
  });
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["processes"].size(), 8u) << report.dump(1).substr(0, 3000);
  EXPECT_EQ(CountState(report, "progressing"), 8u) << report.dump(1).substr(0, 3000);
  ASSERT_EQ(report["jobs"].size(), 1u);
  EXPECT_EQ(report["jobs"][0]["job_id"], "st-ok");
  EXPECT_EQ(report["jobs"][0]["counts"]["progressing"], 8);
  EXPECT_EQ(report["jobs"][0]["summary"], "8 progressing");
  std::set<int> world;
  for (const json& p : report["processes"]) {
    EXPECT_TRUE(p["alive"].get<bool>()) << p.dump();
    EXPECT_GT(p["ops_per_s"].get<double>(), 0) << p.dump();
    EXPECT_GT(p["bytes_per_s"].get<double>(), 0) << p.dump();
    EXPECT_EQ(p["comms"].size(), 3u) << p.dump();  // world, tp<g>, dp<g>
    for (const json& c : p["comms"]) EXPECT_FALSE(c["last_completed"].is_null()) << c.dump();
    const int w = RankIn(p, "world");
    world.insert(w);
    EXPECT_EQ(RankIn(p, "tp" + std::to_string(w / 4)), w % 4) << p.dump();
    EXPECT_EQ(RankIn(p, "dp" + std::to_string(w % 4)), w / 4) << p.dump();
  }
  EXPECT_EQ(world.size(), 8u);
  ExpectDocumented(report);

  CliRun text = RunStatus("'" + job.rings() + "' --window 2");
  EXPECT_NE(text.out.find("job st-ok (8 processes): "), std::string::npos) << text.out;

  // --watch into a pipe: successive frames, then SIGINT ends it with 0.
  // Bounded waits, not a fixed sleep: a loaded sanitizer build may take
  // seconds to start and to draw a frame.
  const std::string out = MakeTempDir("status-watch");
  const auto frames = [](const std::string& text) {
    size_t n = 0;
    for (size_t at = text.find("flightrec status  "); at != std::string::npos;
         at = text.find("flightrec status  ", at + 1)) {
      ++n;
    }
    return n;
  };
  {
    Spawned watch("'" + BuildDir() + "/bin/flightrec' status --watch --interval 0.3 '" +
                  job.rings() + "' >'" + out + "/out' 2>'" + out + "/err'");
    ASSERT_TRUE(watch.WaitBlocks(SIGINT, 60)) << ReadText(out + "/err");
    EXPECT_TRUE(WaitForText(out + "/out", 60, [&](const std::string& text) {
      return frames(text) >= 2;
    })) << ReadText(out + "/out");
    EXPECT_EQ(watch.Stop(SIGINT, 60), 0) << ReadText(out + "/err");
    EXPECT_FALSE(watch.signaled()) << "killed by SIGINT instead of exiting";
  }
  EXPECT_GE(frames(ReadText(out + "/out")), 2u) << ReadText(out + "/out");
  RunShell("rm -rf '" + out + "'");
}

TEST(StatusLive, AStuckRankLeavesItsCommStalledAtTheOpItNeverJoined) {
  JobSlot slot;
  // Op 300 is the period's TP Broadcast (op % 8 == 4): rank 5 never calls
  // it, so tp1's ranks 4, 6, 7 wait in it for ever.
  LiveJob job("status-stuck",
              std::string(kJobArgs) + "--ops 100000 --job-id st-hang --fault stuck:rank=5:op=300",
              {{"NCCL_FLIGHTREC_TIMEOUT_S", "600"}, {"NCCL_FLIGHTREC_POLL_MS", "100"}});
  const std::string args = "'" + job.rings() + "' --stalled-after 2 --window 2";
  const json report = StatusUntil(args, [](const json& r) {
    const json* culprit = ByWorldRank(r, 5);
    if (culprit == nullptr || (*culprit)["state"] != "idle") return false;
    for (int w : {4, 6, 7}) {
      const json* p = ByWorldRank(r, w);
      if (p == nullptr || (*p)["state"] != "stalled") return false;
    }
    return true;
  });
  ASSERT_TRUE(report.is_object());
  const json* culprit = ByWorldRank(report, 5);
  ASSERT_NE(culprit, nullptr) << report.dump(1).substr(0, 3000);
  EXPECT_EQ((*culprit)["state"], "idle") << culprit->dump(1);
  EXPECT_TRUE((*culprit)["alive"].get<bool>()) << culprit->dump(1);
  EXPECT_TRUE((*culprit)["pending"].is_null()) << culprit->dump(1);
  const json* culprit_tp = CommOf(*culprit, "tp1");
  ASSERT_NE(culprit_tp, nullptr);
  ASSERT_FALSE((*culprit_tp)["last_completed"].is_null());
  const uint64_t culprit_last = (*culprit_tp)["last_completed"]["op"]["index"].get<uint64_t>();
  for (int w : {4, 6, 7}) {
    const json* p = ByWorldRank(report, w);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ((*p)["state"], "stalled") << p->dump(1);
    EXPECT_TRUE((*p)["alive"].get<bool>()) << p->dump(1);
    const json& pending = (*p)["pending"];
    ASSERT_FALSE(pending.is_null()) << p->dump(1);
    EXPECT_EQ(pending["name"], "tp1");
    EXPECT_EQ(pending["op"]["func"], "Broadcast");
    // The op after the last one the culprit completed on tp1.
    EXPECT_EQ(pending["op"]["index"].get<uint64_t>(), culprit_last + 1) << p->dump(1);
    EXPECT_GE(pending["age_s"].get<double>(), 2.0);
    EXPECT_TRUE(pending["where"] == "gpu" || pending["where"] == "enqueued") << pending;
  }
  ExpectDocumented(report);
  const std::string op = "Broadcast #" + std::to_string(culprit_last + 1) + " on tp1";
  const std::string summary = report["jobs"][0]["summary"];
  EXPECT_NE(summary.find(op), std::string::npos) << summary;
  const CliRun text = RunStatus(args);
  EXPECT_EQ(text.exit_code, 1) << text.err;  // stalled processes
  EXPECT_NE(text.out.find("stalled at " + op), std::string::npos) << text.out;
}

TEST(StatusLive, ASigkilledRankIsDeadAndTheOthersAreNot) {
  JobSlot slot;
  LiveJob job("status-kill",
              std::string(kJobArgs) + "--ops 100000 --job-id st-kill --fault kill:rank=2:op=150",
              {{"NCCL_FLIGHTREC_TIMEOUT_S", "4"},
               {"NCCL_FLIGHTREC_POLL_MS", "100"},
               {"NCCL_FLIGHTREC_VERDICT", "0"}});
  const std::string args = "'" + job.rings() + "' --stalled-after 2 --window 2";
  const json report = StatusUntil(args, [](const json& r) {
    const json* victim = ByWorldRank(r, 2);
    return victim != nullptr && (*victim)["state"] == "dead" && r["processes"].size() == 8;
  });
  ASSERT_TRUE(report.is_object());
  const json* victim = ByWorldRank(report, 2);
  ASSERT_NE(victim, nullptr) << report.dump(1).substr(0, 3000);
  EXPECT_EQ((*victim)["state"], "dead") << victim->dump(1);
  EXPECT_FALSE((*victim)["alive"].get<bool>());
  EXPECT_GT((*victim)["silent_s"].get<double>(), (*victim)["dead_after_s"].get<double>());
  for (const json& p : report["processes"]) {
    if (RankIn(p, "world") == 2) continue;
    EXPECT_NE(p["state"], "dead") << p.dump(1);
    EXPECT_TRUE(p["alive"].get<bool>()) << p.dump(1);
  }
  EXPECT_EQ(report["jobs"][0]["counts"]["dead"], 1);
  ExpectDocumented(report);

  // The launcher SIGKILLs every rank: no heartbeat beats on, and the
  // reading instant is what they are silent against.
  job.Stop();
  const json after = StatusUntil(args, [](const json& r) { return CountState(r, "dead") == 8; });
  ASSERT_TRUE(after.is_object());
  EXPECT_EQ(CountState(after, "dead"), 8u) << after["jobs"].dump(1);
}

struct Listing {
  std::map<std::string, std::tuple<off_t, int64_t, int64_t>> files;  // size, mtime, ctime (ns)
  bool operator==(const Listing& o) const { return files == o.files; }
};

Listing List(const std::string& dir) {
  Listing l;
  for (const std::string& f : ListFiles(dir, "")) {
    if (f == dir + "/." || f == dir + "/..") continue;
    struct stat st;
    if (stat(f.c_str(), &st) != 0) continue;
    l.files[f] = {st.st_size, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
                  st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec};
  }
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    l.files[dir] = {0, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
                    st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec};
  }
  return l;
}

TEST(StatusFiles, BadFilesGetAReasonJobsAreToldApartAndNothingIsWritten) {
  const std::string rings = MakeTempDir("status-files");
  for (const char* id : {"st-a", "st-b"}) {
    JobSlot slot;
    const EmuJob job =
        RunEmu("status-files-job",
               "--ranks 2 --tp 2 --ranks-per-node 2 --ops 64 --job-id " + std::string(id),
               {{"NCCL_FLIGHTREC_DIR", rings}});
    ASSERT_EQ(job.status, 0) << job.stderr_text;
    RunShell("rm -rf '" + job.dir + "'");
  }
  const std::vector<std::string> good = ListFiles(rings, ".ring");
  ASSERT_EQ(good.size(), 4u);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  const std::string garbage = rings + "/garbage.ring";
  const std::string truncated = rings + "/flightrec-st-a-" + host + "-1.ring";
  const std::string dump_as_ring = rings + "/flightrec-st-b-" + host + "-2.ring";
  // A ring being created by a live process (this one): no header yet.
  const std::string init =
      rings + "/flightrec-st-a-" + host + "-" + std::to_string(getpid()) + ".ring.init";
  RunShell("head -c 20000 /dev/urandom > '" + garbage + "'; head -c 6000 '" + good[0] + "' > '" +
           truncated + "'; : > '" + init + "'; echo notes > '" + rings + "/notes.txt'; cp '" +
           ListFiles(rings, ".frdump").at(0) + "' '" + dump_as_ring + "'");
  const Listing before = List(rings);
  CliRun run;
  const json report = StatusJson("'" + rings + "'", &run);
  const CliRun text = RunStatus("'" + rings + "'");
  const CliRun only_b = RunStatus("--job st-b '" + rings + "'");
  EXPECT_TRUE(List(rings) == before) << "status changed the directory";

  ASSERT_TRUE(report.is_object()) << run.out << run.err;
  EXPECT_EQ(run.exit_code, 0) << run.err;  // exited jobs, nothing stalled
  ExpectDocumented(report);
  ASSERT_EQ(report["jobs"].size(), 2u) << report.dump(1);
  EXPECT_EQ(report["jobs"][0]["job_id"], "st-a");
  EXPECT_EQ(report["jobs"][1]["job_id"], "st-b");
  EXPECT_EQ(report["jobs"][1]["counts"]["exited"], 2);
  EXPECT_EQ(report["jobs"][0]["counts"]["exited"], 2);
  EXPECT_EQ(report["jobs"][0]["counts"]["starting"], 1);  // the `.ring.init`
  std::map<std::string, std::string> problems;
  for (const json& p : report["problems"]) problems[p["path"]] = p["reason"];
  ASSERT_EQ(problems.count(garbage), 1u) << report["problems"].dump(1);
  ASSERT_EQ(problems.count(truncated), 1u) << report["problems"].dump(1);
  ASSERT_EQ(problems.count(dump_as_ring), 1u) << report["problems"].dump(1);
  EXPECT_EQ(problems[garbage].rfind(garbage + ": ", 0), 0u) << problems[garbage];
  EXPECT_NE(problems[truncated].find("truncated"), std::string::npos) << problems[truncated];
  // notes.txt and the jobs' exit dumps, never opened.
  EXPECT_EQ(report["ignored_files"], ListFiles(rings, ".frdump").size() + 1);
  for (const std::string& f : {garbage, truncated, dump_as_ring}) {
    EXPECT_NE(text.out.find("skipped: " + f + ": "), std::string::npos) << text.out;
  }
  EXPECT_NE(text.out.find("job st-a (3 processes): 1 starting, 2 exited"), std::string::npos)
      << text.out;
  EXPECT_NE(only_b.out.find("job st-b (2 processes)"), std::string::npos) << only_b.out;
  EXPECT_EQ(only_b.out.find("job st-a ("), std::string::npos) << only_b.out;
  EXPECT_NE(only_b.out.find("other jobs here (--job to see one): st-a"), std::string::npos)
      << only_b.out;
  RunShell("rm -rf '" + rings + "'");
}

}  // namespace
}  // namespace itest
}  // namespace flightrec
