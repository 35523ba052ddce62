// Text from files and from the analysis, made safe for HTML: every
// character that could start markup is escaped, and the Markdown code spans
// the shared summaries use ("comm `tp1`") become <code> elements.
#ifndef FLIGHTREC_ANALYZER_REPORT_HTML_TEXT_H_
#define FLIGHTREC_ANALYZER_REPORT_HTML_TEXT_H_

#include <string>

namespace flightrec {
namespace report {

// & < > " ' escaped: safe in element content and in quoted attributes.
std::string HtmlEscape(const std::string& s);
// HtmlEscape, with each `span` (a backtick pair) as <code>span</code>; a
// lone backtick stays as it is.
std::string HtmlText(const std::string& s);

}  // namespace report
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_REPORT_HTML_TEXT_H_
