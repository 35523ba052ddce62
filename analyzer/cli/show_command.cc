// `flightrec show FILE... [--json] [--records N] [--explain]`: prints what one
// or more ring files or dumps hold; the rendering is analyzer/report/show_report.h.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyzer/cli/commands.h"
#include "analyzer/reader/snapshot_reader.h"
#include "analyzer/report/show_report.h"

namespace flightrec {
namespace cli {
namespace {

struct ShowOptions {
  std::vector<std::string> files;
  bool json = false;
  bool explain = false;
  int64_t records = -1;  // last N per communicator; -1 = all
};

int RunShow(const ShowOptions& opt) {
  int rc = 0;
  std::string text;
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const std::string& path : opt.files) {
    ReadResult r = ReadSnapshotFile(path);
    if (!r.ok) {
      std::fprintf(stderr, "flightrec show: %s\n", r.error.c_str());
      rc = 2;
      continue;
    }
    if (opt.json) {
      all.push_back(report::ShowJson(r.snapshot, opt.records));
    } else {
      report::AppendShowText(r.snapshot, opt.explain, opt.records, &text);
    }
  }
  if (opt.json) {
    // One file: one object (when it was readable); several: an array.
    if (opt.files.size() != 1) {
      text = all.dump(2) + "\n";
    } else if (!all.empty()) {
      text = all[0].dump(2) + "\n";
    }
  }
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  return rc;
}

}  // namespace

void AddShowCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<ShowOptions>();
  CLI::App* show = app.add_subcommand("show", "Print what ring files and dumps hold");
  show->add_option("files", opt->files, "Ring files (.ring) or zstd dumps")->required();
  show->add_flag("--json", opt->json, "Emit JSON (schema flightrec.show/1)");
  show->add_option("--records", opt->records, "Show only the last N records per communicator")
      ->check(CLI::NonNegativeNumber);
  show->add_flag("--explain", opt->explain, "Print and explain every header field");
  show->callback([opt, exit_code]() { *exit_code = RunShow(*opt); });
}

}  // namespace cli
}  // namespace flightrec
