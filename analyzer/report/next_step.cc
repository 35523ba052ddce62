#include "analyzer/report/next_step.h"

#include "analyzer/model/describe.h"
#include "analyzer/reader/fr_reader.h"

namespace flightrec {
namespace report {
namespace {

using analysis::Finding;
using analysis::FindingKind;
using analysis::RankNote;
using analysis::Whereabouts;

constexpr const char* kRunbook = "docs/runbook.md#";

// The runbook's sections, one per kind of next step (ids of <a> anchors).
enum Section {
  kLaggingOutside,
  kLaggingInside,
  kSkipped,
  kNotReached,
  kDeadRank,
  kDiedDuringInit,
  kMissingRank,
  kMismatch,
  kAllStuck,
  kDeadlock,
  kStraggler,
  kCommAborted,
  kSectionCount
};
constexpr const char* kAnchors[kSectionCount] = {
    "next-lagging-outside", "next-lagging-inside",   "next-skipped",      "next-not-reached",
    "next-dead-rank",       "next-died-during-init", "next-missing-rank", "next-mismatch",
    "next-all-stuck",       "next-deadlock",         "next-straggler",    "next-comm-aborted"};

// "on host-0 (pid 4005)", "" without a file.
std::string OnHost(const analysis::JobIndex& index, int32_t process) {
  if (process < 0) return "";
  const ProcessSnapshot& p = index.processes()[process];
  return " on " + (p.host.empty() ? std::string("its host") : p.host);
}

NextStep Step(Section section, std::string action) {
  return {std::move(action), std::string(kRunbook) + kAnchors[section]};
}

}  // namespace

NextStep NextStepFor(const analysis::JobIndex& index, const Finding& f) {
  const RankNote* first = f.ranks.empty() ? nullptr : &f.ranks.front();
  const int32_t process = first != nullptr ? first->process : -1;
  const std::string pid =
      process >= 0 ? std::to_string(index.processes()[process].pid) : std::string("PID");
  const std::string op = analysis::OpLabel(f.op);
  switch (f.kind) {
    case FindingKind::kLaggingRank:
      if (first->skipped) {
        return Step(kSkipped, "compare that rank's code path at " + op +
                                  " with the others' (an `if` or early `continue` around a "
                                  "collective, uneven batches)");
      }
      if (first->where == Whereabouts::kInsideNccl && first->behind > 0) {
        return Step(kLaggingInside, "act on the root cause it waits behind, not on this rank");
      }
      if (first->behind == 0) {
        return Step(kNotReached, "check that GPU" + OnHost(index, process) +
                                     ": `nvidia-smi -q`, Xid errors in `dmesg -T`");
      }
      if (process >= 0 && index.processes()[process].pytorch_fr &&
          index.processes()[process].pytorch_fr->path == index.processes()[process].path) {
        return Step(kLaggingOutside,
                    "see where " + analysis::ProcessLabel(index.processes()[process]) +
                        " is stuck in its own code after its last call (its Python stack "
                        "is in the report); `py-spy dump --pid PID` on its host");
      }
      return Step(kLaggingOutside,
                  "see where the process is stuck in its own code: `py-spy dump "
                  "--pid " +
                      pid + "` (or `gdb -p " + pid + "`)" + OnHost(index, process));
    case FindingKind::kDeadRank:
      if (f.group < 0) {
        return Step(kDiedDuringInit,
                    "the scheduler's exit reason and `dmesg -T` on that host around its start");
      }
      return Step(kDeadRank, "find why pid " + pid + " stopped: `dmesg -T` / `journalctl -k`" +
                                 OnHost(index, process) +
                                 " (OOM kill, segfault), the scheduler's exit reason, core files");
    case FindingKind::kMissingRank:
      return Step(kMissingRank,
                  "collect the files of that rank's node (runbook section 1) and analyze again; "
                  "if the node is gone, treat the rank as dead");
    case FindingKind::kMismatch:
      return Step(kMismatch, "compare the named ranks' code path at " + op +
                                 " with the others': they called it with other arguments");
    case FindingKind::kAllStuck:
      if (f.never_started > 0) {
        return Step(kAllStuck, "check the GPU of that rank" + OnHost(index, process) + " (pid " +
                                   pid +
                                   "): `nvidia-smi -q`, Xid errors in `dmesg -T`; then "
                                   "the network and GPUs of the communicator's other hosts");
      }
      return Step(kAllStuck,
                  "check the network and GPUs of every host of the communicator: NIC/IB "
                  "counters, `nvidia-smi -q`, Xid errors in `dmesg -T`");
    case FindingKind::kDeadlock:
      return Step(kDeadlock,
                  "make every rank issue the collectives of these communicators in the same order");
    case FindingKind::kStraggler:
      return Step(kStraggler, "check that host" + OnHost(index, process) +
                                  ": thermal throttling, a noisy neighbour, CPU pinning");
    case FindingKind::kCommAborted:
      if (f.root_cause) {
        return Step(kCommAborted, "find why that rank never reached " + op +
                                      OnHost(index, process) + " (pid " + pid +
                                      "): `py-spy dump`, or `dmesg -T` if it is gone; the "
                                      "framework ended the communicator because of it");
      }
      return Step(kCommAborted,
                  "read the framework's log for why it ended the communicator (its collective "
                  "timeout, an error on another communicator)");
  }
  return Step(kAllStuck, "");
}

std::vector<std::string> RunbookAnchors() {
  std::vector<std::string> out;
  for (const char* a : kAnchors) out.push_back(std::string(kRunbook) + a);
  return out;
}

}  // namespace report
}  // namespace flightrec
