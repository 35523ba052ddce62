# Warnings for our own targets. Call flightrec_warnings(<target>).
function(flightrec_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter
    -Wformat=2 -Wnon-virtual-dtor)
  if(FLIGHTREC_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(FLIGHTREC_SANITIZE STREQUAL "address")
    # At -O1 with ASan, g++ 12 reports maybe-uninitialized inside libstdc++
    # (std::regex's NFA states): the sanitizer's checks defeat the flow
    # analysis the warning needs. The release build (-O2) keeps it.
    target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>)
  endif()
  if(FLIGHTREC_SANITIZE STREQUAL "thread")
    # g++ warns that TSan does not model atomic_thread_fence. Our seqlock
    # fences are proven by the kill-point and concurrency tests instead.
    target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-tsan>)
  endif()
endfunction()

if(FLIGHTREC_SANITIZE STREQUAL "address")
  # A Debug build keeps its assertions but is optimized at -O1, as ASan's
  # documentation advises: at -O0 the instrumented code runs slower (the
  # analyzer's robustness test: 81 s against 55 s), and the emulated jobs of
  # the tests run it in every rank.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
                      $<$<CONFIG:Debug>:-O1>)
  add_link_options(-fsanitize=address,undefined)
elseif(FLIGHTREC_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT FLIGHTREC_SANITIZE STREQUAL "")
  message(FATAL_ERROR "FLIGHTREC_SANITIZE must be '', 'address' or 'thread'")
endif()
if(NOT FLIGHTREC_SANITIZE STREQUAL "")
  # Sanitizer executables are linked as position-dependent executables: a
  # PIE ASan binary applies ~16 MB of dynamic relocations at every start
  # (`flightrec --help`: 10,600 page faults and 0.19 s of CPU, against 6,200
  # and 0.13 s), and the tests start thousands of them (each rank of an
  # emulated job, each CLI run). The shared libraries stay PIC.
  add_link_options($<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:-no-pie>)
endif()
