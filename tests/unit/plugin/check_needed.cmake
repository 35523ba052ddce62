# cmake -DLIB=<plugin.so> -P check_needed.cmake
# The plugin may depend only on libc, libstdc++, libm, libgcc_s, libzstd and
# the dynamic loader: anything else could be missing or clash in the host.
execute_process(COMMAND readelf -d ${LIB}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d failed on ${LIB}: ${err}")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(needed "")
foreach(line IN LISTS lines)
  if(line MATCHES "\\(NEEDED\\).*\\[(.+)\\]")
    list(APPEND needed "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(NOT needed)
  message(FATAL_ERROR "${LIB}: no NEEDED entries found (is this a shared library?)")
endif()
foreach(lib IN LISTS needed)
  if(NOT lib MATCHES "^(libc|libstdc\\+\\+|libm|libgcc_s|libzstd|ld-linux[-_a-z0-9]*)\\.so(\\.[0-9]+)*$")
    message(FATAL_ERROR "${LIB}: NEEDED ${lib} is not allowed (allowed: libc, libstdc++, libm, libgcc_s, libzstd, ld-linux)")
  endif()
endforeach()
message(STATUS "${LIB}: NEEDED ${needed}")
