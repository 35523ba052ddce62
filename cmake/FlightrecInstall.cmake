# Install and export, the fmt way: namespaced targets, a config file, a
# config-version file, and a build-tree export for add_subdirectory users.
include(CMakePackageConfigHelpers)

install(DIRECTORY include/flightrec DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS flightrec_format EXPORT flightrecTargets)
if(TARGET nccl-profiler-flightrec)
  install(TARGETS nccl-profiler-flightrec LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
if(TARGET flightrec_cli)
  install(TARGETS flightrec_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
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
