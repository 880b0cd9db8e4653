# Installs the library, public headers under include/symbind/, a CMake package config
# (find_package(symbind) -> symbind::symbind) and symbind.pc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Each file belongs to one component, one Debian package each (cmake/package.cmake):
# runtime (the shared libraries), dev (headers, the unversioned .so links, CMake and
# pkg-config files), tools (the CLI), mpi (the dist_* KVStore plugin).
install(TARGETS symbind EXPORT symbindTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(FILES ${CMAKE_SOURCE_DIR}/symbind.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/symbind COMPONENT dev)
install(FILES ${CMAKE_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/symbind COMPONENT runtime)
# Public headers only: ops/ (kernels and op helpers) and the executor's, io's and train's
# internals stay in the source tree. Custom operators register through core/op.h.
# tests/consumer_test.sh compiles every installed header on its own, so a public header that
# includes a private one fails the test.
foreach(m ${SYMBIND_MODULES})
  if(m STREQUAL "ops")
    continue()
  endif()
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/${m}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/symbind/${m}
          COMPONENT dev FILES_MATCHING PATTERN "*.h"
          PATTERN "bind_memory.h" EXCLUDE PATTERN "memory_plan.h" EXCLUDE
          PATTERN "task_graph.h" EXCLUDE PATTERN "mapped_file.h" EXCLUDE
          PATTERN "collective.h" EXCLUDE PATTERN "seed.h" EXCLUDE PATTERN "in_use_guard.h" EXCLUDE
          PATTERN "backward_plan.h" EXCLUDE PATTERN "kernel_call.h" EXCLUDE PATTERN "file_kind.h" EXCLUDE
          PATTERN "onnx_tensor.h" EXCLUDE PATTERN "huge_pages.h" EXCLUDE)
endforeach()

install(EXPORT symbindTargets NAMESPACE symbind:: FILE symbindTargets.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/symbind COMPONENT dev)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/symbindConfig.cmake.in
  ${CMAKE_BINARY_DIR}/symbindConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/symbind)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/symbindConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/symbindConfig.cmake ${CMAKE_BINARY_DIR}/symbindConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/symbind COMPONENT dev)

configure_file(${CMAKE_SOURCE_DIR}/cmake/symbind.pc.in ${CMAKE_BINARY_DIR}/symbind.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/symbind.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
