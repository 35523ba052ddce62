# Install and export, the fmt way: namespaced targets, a config file, a
# config-version file, and a build-tree export for add_subdirectory users.

# What the package gives a consumer is written down in docs/packaging.md.
include(CMakePackageConfigHelpers)

# Installed binaries carry no debug info (the CLI's is tens of MB); their
# symbol tables stay, for backtraces and perf. The debug info goes to
# <dir>/.debug/<file>.debug with the `debug` component, which a plain install
# leaves out (`cmake --install build --component debug`); gdb finds it there
# through the .gnu_debuglink the stripped file carries.
function(flightrec_install_binary target kind destination)
  install(TARGETS ${target} ${kind} DESTINATION ${destination})
  if(NOT CMAKE_OBJCOPY)
    message(WARNING "flightrec: no objcopy, ${target} is installed with its debug info")
    return()
  endif()
  set(_file "$<TARGET_FILE_NAME:${target}>")
  set(_debug "${PROJECT_BINARY_DIR}/debug-info/${_file}.debug")
  set(_split "file(MAKE_DIRECTORY \"${PROJECT_BINARY_DIR}/debug-info\")
    execute_process(COMMAND \"${CMAKE_OBJCOPY}\" --only-keep-debug \"$<TARGET_FILE:${target}>\"
                            \"${_debug}\" COMMAND_ERROR_IS_FATAL ANY)")
  install(CODE "${_split}
    execute_process(COMMAND \"${CMAKE_OBJCOPY}\" --strip-debug \"--add-gnu-debuglink=${_debug}\"
      \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${destination}/${_file}\" COMMAND_ERROR_IS_FATAL ANY)")
  install(CODE "${_split}
    file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${destination}/.debug\" TYPE FILE
         FILES \"${_debug}\")" COMPONENT debug EXCLUDE_FROM_ALL)
endfunction()

install(DIRECTORY include/flightrec DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS flightrec_format EXPORT flightrecTargets)
if(TARGET nccl-profiler-flightrec)
  flightrec_install_binary(nccl-profiler-flightrec LIBRARY ${CMAKE_INSTALL_LIBDIR})
endif()
if(TARGET flightrec_cli)
  flightrec_install_binary(flightrec_cli RUNTIME ${CMAKE_INSTALL_BINDIR})
endif()
# Verdict hook examples (scripts/hooks/README.md): share/flightrec/hooks.
install(PROGRAMS scripts/hooks/post-to-chat.sh scripts/hooks/slurm-hold-and-requeue.sh
        DESTINATION ${CMAKE_INSTALL_DATADIR}/flightrec/hooks)
install(FILES scripts/hooks/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/flightrec/hooks)

set(_fr_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/flightrec)
install(EXPORT flightrecTargets NAMESPACE flightrec:: DESTINATION ${_fr_cmake_dir})
export(EXPORT flightrecTargets NAMESPACE flightrec::
       FILE ${PROJECT_BINARY_DIR}/flightrecTargets.cmake)
configure_package_config_file(cmake/flightrec-config.cmake.in
  ${PROJECT_BINARY_DIR}/flightrec-config.cmake INSTALL_DESTINATION ${_fr_cmake_dir}
  PATH_VARS CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/flightrec-config-version.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/flightrec-config.cmake
              ${PROJECT_BINARY_DIR}/flightrec-config-version.cmake
        DESTINATION ${_fr_cmake_dir})
