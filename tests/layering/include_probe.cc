// Included by the layering tests with FLIGHTREC_LAYERING_INCLUDE naming a
// header the probing library must not see (tests/layering/CMakeLists.txt).
#include FLIGHTREC_LAYERING_INCLUDE
