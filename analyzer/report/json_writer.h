// JSON text written as it is produced, for outputs too big to hold as a
// document: `flightrec timeline` of a 16k-rank job is millions of events,
// and an nlohmann::json tree of them costs ~10x their text in memory.
//
// The writer appends to a std::string the caller drains between values
// (TakeIfLarger), so memory stays at one chunk whatever the output size.
// Strings are escaped like nlohmann's dump with error_handler_t::replace
// (invalid UTF-8 becomes U+FFFD), so text from untrusted files stays valid.
#ifndef FLIGHTREC_ANALYZER_REPORT_JSON_WRITER_H_
#define FLIGHTREC_ANALYZER_REPORT_JSON_WRITER_H_

#include <stdint.h>

#include <string>
#include <string_view>
#include <vector>

namespace flightrec {
namespace report {

class JsonWriter {
 public:
  JsonWriter() = default;

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  // The key of the next value in the current object.
  JsonWriter& Key(std::string_view key);

  void String(std::string_view value);
  void Int(int64_t value);
  void Uint(uint64_t value);
  void Bool(bool value);
  // Nanoseconds as microseconds with three decimals ("12.345"): exact,
  // unlike a double, which prints 0.5099999999999999.
  void Micros(uint64_t ns);

  // Moves the text written so far into *chunk when it is at least `bytes`
  // long (0: always); false when nothing was moved.
  bool TakeIfLarger(size_t bytes, std::string* chunk);

 private:
  void Separate();  // the comma before a value that is not its container's first
  template <typename Integer>
  void AppendNumber(Integer value);
  std::string out_;
  std::vector<bool> first_{true};  // per open container: no value written yet
  bool after_key_ = false;
};

}  // namespace report
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_REPORT_JSON_WRITER_H_
