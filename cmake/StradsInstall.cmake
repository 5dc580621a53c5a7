# `cmake --install`: the libraries a strads program links, the headers, the `strads` tool and a
# CMake package, so that another project builds with the README's consumer lines alone
# (find_package(strads REQUIRED), strads::strads, strads_add_dual_test; tests/install/ is one):
# strads::strads carries strads_core's usage requirements, C++20 and -ffp-contract=off.
#
# Layout: include/strads/*.h, lib/libstrads_*.a, bin/strads, lib/cmake/strads/, and the gdb
# plugin in share/strads/gdb-plugin/ (programs find it there by themselves: gdb-plugin/).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(STRADS_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/strads)

# The targets' include directories are source and build paths; installed, they are include/.
# (Wrapped here rather than in core/ and trace/ so that the install rules
# stay in one place.)
foreach(target strads_core strads_dual_file strads_trace)
  get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  set(wrapped "")
  foreach(dir IN LISTS dirs)
    list(APPEND wrapped "$<BUILD_INTERFACE:${dir}>")
  endforeach()
  list(APPEND wrapped "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
  set_property(TARGET ${target} PROPERTY INTERFACE_INCLUDE_DIRECTORIES ${wrapped})
endforeach()
# What programs link is strads::strads, installed as in the build tree. The recorder and the
# replayer are linked whole (they register their policies from static initialisers); export does
# not rename targets inside $<LINK_LIBRARY:...>, so the installed names are spelled out.
set_property(TARGET strads_all PROPERTY EXPORT_NAME strads)
set_property(TARGET strads_all PROPERTY INTERFACE_LINK_LIBRARIES
  strads_core
  "$<BUILD_INTERFACE:$<LINK_LIBRARY:WHOLE_ARCHIVE,strads_recorder>>"
  "$<INSTALL_INTERFACE:$<LINK_LIBRARY:WHOLE_ARCHIVE,strads::strads_recorder>>"
  "$<BUILD_INTERFACE:$<LINK_LIBRARY:WHOLE_ARCHIVE,strads_replayer>>"
  "$<INSTALL_INTERFACE:$<LINK_LIBRARY:WHOLE_ARCHIVE,strads::strads_replayer>>")

install(TARGETS strads_core strads_dual_file strads_trace strads_recorder strads_replayer strads_lz4
                strads_all
        EXPORT stradsTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS strads RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Headers: the user API (strads/), the ordering seam for third-party policies (strads/seam/),
# what the API's templates need (strads/internal/), and the trace library (strads/trace/).
# The recorder's and replayer's headers are theirs alone.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/strads ${PROJECT_SOURCE_DIR}/trace/include/strads
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT stradsTargets NAMESPACE strads:: DESTINATION ${STRADS_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/strads-config.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/strads-config.cmake
  INSTALL_DESTINATION ${STRADS_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/strads-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/strads-config.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/strads-config-version.cmake
              ${PROJECT_SOURCE_DIR}/cmake/StradsDualTest.cmake
        DESTINATION ${STRADS_INSTALL_CMAKEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/gdb-plugin/strads_gdb
        DESTINATION ${STRADS_GDB_INSTALL_DIR} FILES_MATCHING PATTERN "*.py")
install(FILES ${PROJECT_SOURCE_DIR}/gdb-plugin/strads_gdb_autoload.cc
        DESTINATION ${STRADS_GDB_INSTALL_DIR})
