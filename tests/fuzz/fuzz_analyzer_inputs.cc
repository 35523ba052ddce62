// The fuzz harness of `flightrec analyze`'s whole input stage (harnesses.h).
#include "tests/fuzz/harnesses.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "analyzer/model/analyzer.h"
#include "analyzer/model/inputs.h"
#include "analyzer/model/job_index.h"
#include "analyzer/reader/snapshot_reader.h"
#include "analyzer/report/report.h"

namespace flightrec {
namespace fuzz {
namespace {

// Images above this are rejected before any allocation, as the CLI rejects
// 16 GiB ones: the fuzzer must not spend its memory on declared sizes.
constexpr uint64_t kFuzzMaxImage = 8ULL << 20;

// One scratch directory per process, reused by every input.
const std::string& ScratchDir() {
  static const std::string* dir = [] {
    const char* tmp = getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/fuzz-analyzer-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    const char* made = mkdtemp(buf.data());
    return new std::string(made != nullptr ? made : "");
  }();
  return *dir;
}

bool WriteFile(const std::string& path, const std::string& bytes) {
  FILE* f = fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = bytes.empty() || fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return fclose(f) == 0 && ok;
}

std::string CheckJson(const std::string& text, const char* what) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::string(what) + " is not a JSON object";
  return "";
}

}  // namespace

std::vector<std::string> SplitFiles(const uint8_t* data, size_t size) {
  std::vector<std::string> files;
  const char* p = reinterpret_cast<const char*>(data);
  const char* end = p + size;
  while (files.size() + 1 < kMaxFiles) {
    const char* sep = size == 0
                          ? nullptr
                          : static_cast<const char*>(memmem(p, static_cast<size_t>(end - p),
                                                            kFileSeparator, kFileSeparatorLen));
    if (sep == nullptr) break;
    files.emplace_back(p, sep);
    p = sep + kFileSeparatorLen;
  }
  files.emplace_back(p, end);
  return files;
}

std::string FuzzAnalyzerInputs(const uint8_t* data, size_t size) {
  const std::string& dir = ScratchDir();
  if (dir.empty()) return "cannot create a scratch directory";
  const std::vector<std::string> files = SplitFiles(data, size);
  for (size_t i = 0; i < kMaxFiles; ++i) {
    const std::string path = dir + "/rank" + std::to_string(i);
    if (i < files.size()) {
      if (!WriteFile(path, files[i])) return "cannot write " + path;
    } else {
      unlink(path.c_str());
    }
  }
  analysis::LoadOptions load;
  load.threads = 1;
  load.read = [](const std::string& path) {
    ReadLimits limits;
    limits.max_image_size = kFuzzMaxImage;
    return ReadSnapshotFile(path, limits);
  };
  const analysis::Inputs inputs = analysis::LoadInputs({dir}, load);
  if (inputs.processes.size() != inputs.read.size()) return "processes and read differ in size";
  if (inputs.processes.size() > files.size()) return "more processes than files";
  const analysis::JobIndex index(inputs.processes);
  const analysis::AnalyzeOptions options;
  const analysis::Analysis result = analysis::Analyze(index, options);
  const int code = analysis::ExitCodeFor(result);
  if (code < 0 || code > 2) return "exit code " + std::to_string(code) + " outside 0..2";
  if (inputs.processes.empty() && code != 2) return "no readable input but exit code != 2";
  const report::ReportInput in{inputs, index, result};
  if (report::Headline(in).empty()) return "empty headline";
  if (report::TextReport(in).empty()) return "empty text report";
  if (report::MarkdownReport(in).empty()) return "empty markdown report";
  const analysis::JobProgress progress = analysis::ComputeProgress(index, options.progress);
  if (report::HtmlReport(in, progress).empty()) return "empty html report";
  std::string bad = CheckJson(report::JsonReport(in), "the json report");
  if (bad.empty()) bad = CheckJson(report::TimelineTrace(index, progress), "the timeline trace");
  return bad;
}

}  // namespace fuzz
}  // namespace flightrec
