# `cmake --install`: the tools, the runtime (library, headers, tile library),
# the example specs, the PyTorch package, and a CMake package with
# rkc_add_kernels for projects that embed generated kernels.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(RKC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/rkc)
set(RKC_INSTALL_SPECSDIR ${CMAKE_INSTALL_DATADIR}/rkc/specs)

install(TARGETS rkc rkc-opt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS rkc_runtime EXPORT rkcTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${RKC_SOURCE_DIR}/runtime/include/rkc/runtime.h
              ${RKC_SOURCE_DIR}/runtime/include/rkc/tile.cuh
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rkc)
install(DIRECTORY ${RKC_SOURCE_DIR}/examples/specs/
        DESTINATION ${RKC_INSTALL_SPECSDIR} FILES_MATCHING PATTERN "*.mlir")
install(DIRECTORY ${RKC_SOURCE_DIR}/python/rkc_torch
        DESTINATION ${CMAKE_INSTALL_DATADIR}/rkc/python
        PATTERN "__pycache__" EXCLUDE)
install(EXPORT rkcTargets NAMESPACE rkc:: DESTINATION ${RKC_INSTALL_CMAKEDIR})
configure_package_config_file(
  ${RKC_SOURCE_DIR}/cmake/package/rkcConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/rkcConfig.cmake
  INSTALL_DESTINATION ${RKC_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_BINDIR RKC_INSTALL_SPECSDIR)
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/rkcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rkcConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/rkcConfigVersion.cmake
              ${RKC_SOURCE_DIR}/cmake/package/rkcKernels.cmake
        DESTINATION ${RKC_INSTALL_CMAKEDIR})
