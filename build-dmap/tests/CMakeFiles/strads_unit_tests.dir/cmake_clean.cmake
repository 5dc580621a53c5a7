file(REMOVE_RECURSE
  "CMakeFiles/strads_unit_tests.dir/unit/async_for_test.cc.o"
  "CMakeFiles/strads_unit_tests.dir/unit/async_for_test.cc.o.d"
  "CMakeFiles/strads_unit_tests.dir/unit/main.cc.o"
  "CMakeFiles/strads_unit_tests.dir/unit/main.cc.o.d"
  "CMakeFiles/strads_unit_tests.dir/unit/schedule_test.cc.o"
  "CMakeFiles/strads_unit_tests.dir/unit/schedule_test.cc.o.d"
  "strads_unit_tests"
  "strads_unit_tests.pdb"
  "strads_unit_tests_tests-b858cb2.cmake"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/strads_unit_tests.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
