# Installs the libraries, their headers and a CMake package, so a user's project can do
#   find_package(cubesim CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE cubesim::cubesim)      # + cubesim::kernels for ours
# and build plugins or a cubesim of their own (cubesim_add_plugin, cubesim_add_cli:
# cmake/cubesim-functions.cmake).
# Headers keep their source paths under include/cubesim/ ("emu/time.hpp"), and the public
# entry point is <cubesim/cubesim.hpp>.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# (The target `cubesim` is the CLI; the library's umbrella target is exported as cubesim::cubesim.)
add_library(cubesim_api INTERFACE)
target_link_libraries(cubesim_api INTERFACE cubesim_triton)
add_library(cubesim::cubesim ALIAS cubesim_api)
set_target_properties(cubesim_api PROPERTIES EXPORT_NAME cubesim)

set(_cubesim_targets cubesim_api cubesim_emu cubesim_components cubesim_gemm_backends cubesim_triton
    cubesim_kernels cubesim_cli cubesim_warnings)
foreach(t IN LISTS _cubesim_targets)
  target_include_directories(${t} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/cubesim>)
endforeach()
set_target_properties(cubesim_emu PROPERTIES EXPORT_NAME emu)
set_target_properties(cubesim_components PROPERTIES EXPORT_NAME components)
set_target_properties(cubesim_gemm_backends PROPERTIES EXPORT_NAME gemm_backends)
set_target_properties(cubesim_triton PROPERTIES EXPORT_NAME triton)
set_target_properties(cubesim_kernels PROPERTIES EXPORT_NAME kernels)
set_target_properties(cubesim_warnings PROPERTIES EXPORT_NAME warnings)
set_target_properties(cubesim_cli PROPERTIES EXPORT_NAME cli)

install(TARGETS ${_cubesim_targets} EXPORT cubesim-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS cubesim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(dir emu components triton_emu kernels)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cubesim/${dir}
          FILES_MATCHING PATTERN "*.hpp" PATTERN "include" EXCLUDE)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/triton_emu/include/cubesim/cubesim.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cubesim)
install(FILES ${PROJECT_BINARY_DIR}/generated/cubesim/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cubesim)
install(FILES ${PROJECT_SOURCE_DIR}/tools/cubesim/cli_main.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cubesim/tools/cubesim)
set(CUBESIM_INSTALL_SPECS_DIR ${CMAKE_INSTALL_DATADIR}/cubesim/specs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/specs/ DESTINATION ${CUBESIM_INSTALL_SPECS_DIR})

install(EXPORT cubesim-targets NAMESPACE cubesim::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cubesim)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cubesim-config.cmake.in
  ${PROJECT_BINARY_DIR}/cubesim-config.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cubesim
  PATH_VARS CUBESIM_INSTALL_SPECS_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cubesim-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cubesim-config.cmake
              ${PROJECT_BINARY_DIR}/cubesim-config-version.cmake
              ${PROJECT_SOURCE_DIR}/cmake/cubesim-functions.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cubesim)
