# cmake -DFLIGHTREC=... -DARGS=a;b;c -DEXPECTED=file -P compare.cmake
# Runs flightrec with ARGS and fails when stdout differs from EXPECTED.
execute_process(COMMAND ${FLIGHTREC} ${ARGS} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
file(READ ${EXPECTED} want)
if(NOT out STREQUAL want)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/golden-actual.txt "${out}")
  message(FATAL_ERROR "flightrec ${ARGS} (exit ${rc}) differs from ${EXPECTED}; actual output in "
                      "${CMAKE_CURRENT_BINARY_DIR}/golden-actual.txt (diff them; if the change is "
                      "intended, run tests/golden/regenerate.sh)")
endif()
