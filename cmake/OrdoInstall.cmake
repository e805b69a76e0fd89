include(CMakePackageConfigHelpers)

set(ORDO_CMAKE_INSTALL_DIR "${CMAKE_INSTALL_DATADIR}/cmake/ordo")

install(TARGETS ordo_core ordo EXPORT ordoTargets)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(EXPORT ordoTargets NAMESPACE ordo:: DESTINATION "${ORDO_CMAKE_INSTALL_DIR}")

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/ordoConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/ordoConfig.cmake" INSTALL_DESTINATION "${ORDO_CMAKE_INSTALL_DIR}")
# Header-only, so any architecture may use the package.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/ordoConfigVersion.cmake"
  COMPATIBILITY SameMajorVersion ARCH_INDEPENDENT)
install(FILES "${PROJECT_BINARY_DIR}/ordoConfig.cmake" "${PROJECT_BINARY_DIR}/ordoConfigVersion.cmake"
  DESTINATION "${ORDO_CMAKE_INSTALL_DIR}")
