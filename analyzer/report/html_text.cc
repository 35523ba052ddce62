#include "analyzer/report/html_text.h"

namespace flightrec {
namespace report {

std::string HtmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string HtmlText(const std::string& s) {
  std::string out;
  size_t at = 0;
  while (at < s.size()) {
    const size_t open = s.find('`', at);
    const size_t close = open == std::string::npos ? open : s.find('`', open + 1);
    if (close == std::string::npos) {
      out += HtmlEscape(s.substr(at));
      break;
    }
    out += HtmlEscape(s.substr(at, open - at)) + "<code>" +
           HtmlEscape(s.substr(open + 1, close - open - 1)) + "</code>";
    at = close + 1;
  }
  return out;
}

}  // namespace report
}  // namespace flightrec
