include(CMakePackageConfigHelpers)

set(ORDO_CMAKE_INSTALL_DIR "${CMAKE_INSTALL_DATADIR}/cmake/ordo")

# Two export sets, so that find_package(ordo COMPONENTS core) loads no Kokkos target.
install(TARGETS ordo_core EXPORT ordoCoreTargets)
install(EXPORT ordoCoreTargets NAMESPACE ordo:: DESTINATION "${ORDO_CMAKE_INSTALL_DIR}")
if(ORDO_WITH_KOKKOS)
  install(TARGETS ordo EXPORT ordoKernelsTargets)
  install(EXPORT ordoKernelsTargets NAMESPACE ordo:: DESTINATION "${ORDO_CMAKE_INSTALL_DIR}")
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
  if(ORDO_HAS_MPI)
    install(TARGETS ordo_mpi EXPORT ordoMpiTargets)
    install(EXPORT ordoMpiTargets NAMESPACE ordo:: DESTINATION "${ORDO_CMAKE_INSTALL_DIR}")
  endif()
else()
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/ordo/core" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/ordo")
  # The pure umbrellas: the planner and the 16-bit types (docs/precision.md: pure C++20).
  install(FILES "${PROJECT_SOURCE_DIR}/include/ordo/core.hpp" "${PROJECT_SOURCE_DIR}/include/ordo/precision.hpp"
          DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/ordo")
endif()

# Where the installed config looks for Kokkos first: the package ordo was built against.
set(ORDO_KOKKOS_HINT "")
if(ORDO_WITH_KOKKOS AND DEFINED Kokkos_DIR)
  set(ORDO_KOKKOS_HINT "${Kokkos_DIR}")
endif()
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/ordoConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/ordoConfig.cmake" INSTALL_DESTINATION "${ORDO_CMAKE_INSTALL_DIR}")
# Header-only, so any architecture may use the package.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/ordoConfigVersion.cmake"
  COMPATIBILITY SameMajorVersion ARCH_INDEPENDENT)
install(FILES "${PROJECT_BINARY_DIR}/ordoConfig.cmake" "${PROJECT_BINARY_DIR}/ordoConfigVersion.cmake"
  DESTINATION "${ORDO_CMAKE_INSTALL_DIR}")
