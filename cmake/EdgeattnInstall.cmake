# install rules: the library, its public headers, a CMake package (find_package(edgeattn) ->
# edgeattn::edgeattn) and a pkg-config file.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS edgeattn EXPORT edgeattnTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/edgeattn
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/edgeattn/version.h
              ${PROJECT_BINARY_DIR}/include/edgeattn/build_config.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/edgeattn)
set(EDGEATTN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/edgeattn)
install(EXPORT edgeattnTargets NAMESPACE edgeattn:: DESTINATION ${EDGEATTN_CMAKE_DIR})
# A static libedgeattn links Highway, threads and (unless EDGEATTN_WITH_TBB is OFF) oneTBB into
# the app; a shared one has linked them itself.
set(EDGEATTN_CONFIG_DEPENDENCIES "")
if(NOT BUILD_SHARED_LIBS)
  set(EDGEATTN_CONFIG_DEPENDENCIES "find_dependency(Threads)\nfind_dependency(hwy)")
  if(EDGEATTN_WITH_TBB)
    string(APPEND EDGEATTN_CONFIG_DEPENDENCIES "\nfind_dependency(TBB)")
  endif()
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/edgeattnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/edgeattnConfig.cmake INSTALL_DESTINATION ${EDGEATTN_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/edgeattnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/edgeattnConfig.cmake
              ${PROJECT_BINARY_DIR}/edgeattnConfigVersion.cmake
  DESTINATION ${EDGEATTN_CMAKE_DIR})
set(EDGEATTN_PC_REQUIRES_PRIVATE "libhwy")
if(EDGEATTN_WITH_TBB)
  string(APPEND EDGEATTN_PC_REQUIRES_PRIVATE " tbb")
endif()
file(RELATIVE_PATH EDGEATTN_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/edgeattn.pc.in ${PROJECT_BINARY_DIR}/edgeattn.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/edgeattn.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(TARGET edgeattn_cli)
  install(TARGETS edgeattn_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
