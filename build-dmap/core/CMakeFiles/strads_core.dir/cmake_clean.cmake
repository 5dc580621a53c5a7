file(REMOVE_RECURSE
  "CMakeFiles/strads_core.dir/src/async_loop.cc.o"
  "CMakeFiles/strads_core.dir/src/async_loop.cc.o.d"
  "CMakeFiles/strads_core.dir/src/collectives.cc.o"
  "CMakeFiles/strads_core.dir/src/collectives.cc.o.d"
  "CMakeFiles/strads_core.dir/src/dds.cc.o"
  "CMakeFiles/strads_core.dir/src/dds.cc.o.d"
  "CMakeFiles/strads_core.dir/src/dmap.cc.o"
  "CMakeFiles/strads_core.dir/src/dmap.cc.o.d"
  "CMakeFiles/strads_core.dir/src/driver_access_hook.cc.o"
  "CMakeFiles/strads_core.dir/src/driver_access_hook.cc.o.d"
  "CMakeFiles/strads_core.dir/src/in_process_transport.cc.o"
  "CMakeFiles/strads_core.dir/src/in_process_transport.cc.o.d"
  "CMakeFiles/strads_core.dir/src/live_ordering_policy.cc.o"
  "CMakeFiles/strads_core.dir/src/live_ordering_policy.cc.o.d"
  "CMakeFiles/strads_core.dir/src/mpi_transport.cc.o"
  "CMakeFiles/strads_core.dir/src/mpi_transport.cc.o.d"
  "CMakeFiles/strads_core.dir/src/operators.cc.o"
  "CMakeFiles/strads_core.dir/src/operators.cc.o.d"
  "CMakeFiles/strads_core.dir/src/recon_hook.cc.o"
  "CMakeFiles/strads_core.dir/src/recon_hook.cc.o.d"
  "CMakeFiles/strads_core.dir/src/run.cc.o"
  "CMakeFiles/strads_core.dir/src/run.cc.o.d"
  "CMakeFiles/strads_core.dir/src/runtime.cc.o"
  "CMakeFiles/strads_core.dir/src/runtime.cc.o.d"
  "CMakeFiles/strads_core.dir/src/schedule.cc.o"
  "CMakeFiles/strads_core.dir/src/schedule.cc.o.d"
  "CMakeFiles/strads_core.dir/src/thread_pool.cc.o"
  "CMakeFiles/strads_core.dir/src/thread_pool.cc.o.d"
  "libstrads_core.a"
  "libstrads_core.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/strads_core.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
