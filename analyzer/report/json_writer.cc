#include "analyzer/report/json_writer.h"

#include <charconv>
#include <nlohmann/json.hpp>

namespace flightrec {
namespace report {
namespace {

// Plain printable ASCII needs no escaping: true for the names the analyzer
// makes itself (op labels, enum names), the common case by far.
bool IsPlain(std::string_view s) {
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  }
  return true;
}

}  // namespace

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.back()) out_ += ',';
  first_.back() = false;
}

void JsonWriter::BeginObject() {
  Separate();
  out_ += '{';
  first_.push_back(true);
}

void JsonWriter::EndObject() {
  first_.pop_back();
  out_ += '}';
}

void JsonWriter::BeginArray() {
  Separate();
  out_ += '[';
  first_.push_back(true);
}

void JsonWriter::EndArray() {
  first_.pop_back();
  out_ += ']';
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  String(key);
  out_ += ':';
  after_key_ = true;
  return *this;
}

void JsonWriter::String(std::string_view value) {
  Separate();
  if (IsPlain(value)) {
    out_ += '"';
    out_ += value;
    out_ += '"';
    return;
  }
  // Escapes, control characters and UTF-8 repair: nlohmann's rules, so the
  // trace says what the JSON reports say for the same bytes.
  out_ += nlohmann::json(std::string(value))
              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void JsonWriter::Int(int64_t value) {
  Separate();
  AppendNumber(value);
}

void JsonWriter::Uint(uint64_t value) {
  Separate();
  AppendNumber(value);
}

void JsonWriter::Bool(bool value) {
  Separate();
  out_ += value ? "true" : "false";
}

void JsonWriter::Micros(uint64_t ns) {
  Separate();
  AppendNumber(ns / 1000);
  const uint64_t frac = ns % 1000;
  const char digits[4] = {'.', static_cast<char>('0' + frac / 100),
                          static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
  out_.append(digits, sizeof(digits));
}

template <typename Integer>
void JsonWriter::AppendNumber(Integer value) {
  char buf[24];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), value);
  out_.append(buf, r.ptr);
}

bool JsonWriter::TakeIfLarger(size_t bytes, std::string* chunk) {
  if (out_.empty() || out_.size() < bytes) return false;
  chunk->swap(out_);
  out_.clear();
  return true;
}

}  // namespace report
}  // namespace flightrec
