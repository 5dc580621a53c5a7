file(REMOVE_RECURSE
  "CMakeFiles/sgdmf.dir/sgdmf.cc.o"
  "CMakeFiles/sgdmf.dir/sgdmf.cc.o.d"
  "sgdmf"
  "sgdmf.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/sgdmf.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
