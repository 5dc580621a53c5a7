
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/tests/unit/async_for_test.cc" "tests/CMakeFiles/strads_unit_tests.dir/unit/async_for_test.cc.o" "gcc" "tests/CMakeFiles/strads_unit_tests.dir/unit/async_for_test.cc.o.d"
  "/work/main/tests/unit/main.cc" "tests/CMakeFiles/strads_unit_tests.dir/unit/main.cc.o" "gcc" "tests/CMakeFiles/strads_unit_tests.dir/unit/main.cc.o.d"
  "/work/main/tests/unit/schedule_test.cc" "tests/CMakeFiles/strads_unit_tests.dir/unit/schedule_test.cc.o" "gcc" "tests/CMakeFiles/strads_unit_tests.dir/unit/schedule_test.cc.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/main/build-dmap/core/CMakeFiles/strads_core.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
