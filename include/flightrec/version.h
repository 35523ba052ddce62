// The single source of flightrec's version (CMake parses this line).
#ifndef FLIGHTREC_VERSION_H_
#define FLIGHTREC_VERSION_H_

#define FLIGHTREC_VERSION_STRING "0.2.0"

namespace flightrec {
constexpr const char* kVersion = FLIGHTREC_VERSION_STRING;
}  // namespace flightrec

#endif  // FLIGHTREC_VERSION_H_
