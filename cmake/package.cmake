# Debian packages from one Release build: `./build.sh package` runs `cpack -G DEB` in build/
# and leaves the .deb files in build/packages/. One package per install component
# (cmake/install.cmake); each package's Depends on Debian's libraries come from
# dpkg-shlibdeps, and the packages depend on each other at the same version.
#   libsymbind       libsymbind.so.0, libmxnet.so.0 (MXNet's C and C predict APIs, mxnet-cpp)
#   libsymbind-dev   headers (symbind/, mxnet/, mxnet-cpp/, nnvm/, dmlc/), CMake config, .pc
#   symbind-tools    the symbind CLI and symbind-python
#   libsymbind-mpi   the MPI plugin for KVStore dist_* (pulls Open MPI; nothing else needs it)
#   libsymbind-onnx  ONNX import and export (pulls libonnx1 and libprotobuf through shlibdeps)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME symbind)
set(CPACK_PACKAGE_VENDOR "symbind developers")
set(CPACK_PACKAGE_CONTACT "symbind developers <symbind-dev@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev tools)
if(SYMBIND_MPI)
  list(APPEND CPACK_COMPONENTS_ALL mpi)
endif()
if(SYMBIND_ONNX)
  list(APPEND CPACK_COMPONENTS_ALL onnx)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Lets dpkg-shlibdeps resolve libsymbind.so.0 for the packages built on it.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR} ${CMAKE_BINARY_DIR}/capi)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libsymbind)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "symbind runtime: libsymbind (symbolic graphs, executor, kernels) and libmxnet (MXNet's C APIs over it)")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libsymbind-dev)
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
# The headers include TBB's; the CMake config finds TBB; symbind.pc requires tbb.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libtbb-dev, pkg-config")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "symbind development files: C++ headers, MXNet's C API and cpp-package headers, CMake and pkg-config files")
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME symbind-tools)
set(CPACK_COMPONENT_TOOLS_DEPENDS runtime)
if(SYMBIND_ONNX)
  list(APPEND CPACK_COMPONENT_TOOLS_DEPENDS onnx)  # the CLI links libsymbind_onnx
endif()
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "symbind command-line tool (run, shapes, summary, convert, ...) and symbind-python")
set(CPACK_DEBIAN_MPI_PACKAGE_NAME libsymbind-mpi)
set(CPACK_COMPONENT_MPI_DEPENDS runtime)
set(CPACK_COMPONENT_MPI_DESCRIPTION "symbind MPI plugin: KVStore dist_sync/dist_async across processes (Open MPI)")

set(CPACK_DEBIAN_ONNX_PACKAGE_NAME libsymbind-onnx)
set(CPACK_COMPONENT_ONNX_DEPENDS runtime)
set(CPACK_COMPONENT_ONNX_DESCRIPTION "symbind ONNX support: export MXNet models to ONNX, import ONNX models (libonnx)")

include(CPack)
