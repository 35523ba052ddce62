# cmake -DLIB=<plugin.so> -P check_exports.cmake
# The plugin's defined dynamic symbols must be exactly ncclProfiler_v1..v7.
execute_process(COMMAND nm -D --defined-only ${LIB}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm -D failed on ${LIB}: ${err}")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(found "")
foreach(line IN LISTS lines)
  if(line MATCHES "^[0-9a-fA-F]* *[A-Za-z] (.+)$")
    list(APPEND found "${CMAKE_MATCH_1}")
  endif()
endforeach()
list(SORT found)
set(expected ncclProfiler_v1 ncclProfiler_v2 ncclProfiler_v3 ncclProfiler_v4
    ncclProfiler_v5 ncclProfiler_v6 ncclProfiler_v7)
if(NOT found STREQUAL expected)
  message(FATAL_ERROR "${LIB}: defined dynamic symbols are\n  ${found}\nexpected exactly\n  ${expected}")
endif()
message(STATUS "${LIB}: exports exactly ${found}")
