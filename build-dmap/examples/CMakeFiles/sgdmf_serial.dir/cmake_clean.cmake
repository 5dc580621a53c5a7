file(REMOVE_RECURSE
  "CMakeFiles/sgdmf_serial.dir/sgdmf_serial.cc.o"
  "CMakeFiles/sgdmf_serial.dir/sgdmf_serial.cc.o.d"
  "sgdmf_serial"
  "sgdmf_serial.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/sgdmf_serial.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
