file(REMOVE_RECURSE
  "CMakeFiles/sgdmf_omp.dir/sgdmf_omp.cc.o"
  "CMakeFiles/sgdmf_omp.dir/sgdmf_omp.cc.o.d"
  "sgdmf_omp"
  "sgdmf_omp.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/sgdmf_omp.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
