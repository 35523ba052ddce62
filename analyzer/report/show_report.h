// `flightrec show`: what one ring file or dump holds, exactly as the reader
// validated it, for people (text; --explain names every header field) and
// for programs (JSON, schema "flightrec.show/1", documented in
// docs/design/reader.md; change both together).
#ifndef FLIGHTREC_ANALYZER_REPORT_SHOW_REPORT_H_
#define FLIGHTREC_ANALYZER_REPORT_SHOW_REPORT_H_

#include <stdint.h>

#include <nlohmann/json.hpp>
#include <string>

#include "analyzer/reader/snapshot.h"

namespace flightrec {
namespace report {

constexpr const char* kShowSchema = "flightrec.show/1";

// Appends the file's header (every field with its meaning when `explain`),
// its drops, its communicators with the last `limit` records of each (-1:
// all) and its warnings to *out.
void AppendShowText(const ProcessSnapshot& s, bool explain, int64_t limit, std::string* out);

// The file as one flightrec.show/1 object, with the last `limit` records of
// each communicator (-1: all).
nlohmann::ordered_json ShowJson(const ProcessSnapshot& s, int64_t limit);

}  // namespace report
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_REPORT_SHOW_REPORT_H_
