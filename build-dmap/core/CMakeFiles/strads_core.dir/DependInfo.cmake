
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/core/src/async_loop.cc" "core/CMakeFiles/strads_core.dir/src/async_loop.cc.o" "gcc" "core/CMakeFiles/strads_core.dir/src/async_loop.cc.o.d"
  "/work/main/core/src/collectives.cc" "core/CMakeFiles/strads_core.dir/src/collectives.cc.o" "gcc" "core/CMakeFiles/strads_core.dir/src/collectives.cc.o.d"
  "/work/main/core/src/dds.cc" "core/CMakeFiles/strads_core.dir/src/dds.cc.o" "gcc" "core/CMakeFiles/strads_core.dir/src/dds.cc.o.d"
  "/work/main/core/src/dmap.cc" "core/CMakeFiles/strads_core.dir/src/dmap.cc.o" "gcc" "core/CMakeFiles/strads_core.dir/src/dmap.cc.o.d"
  "/work/main/core/src/driver_access_hook.cc" "core/CMakeFiles/strads_core.dir/src/driver_access_hook.cc.o" "gcc" "core/CMakeFiles/strads_core.dir/src/driver_access_hook.cc.o.d"
  "/work/main/core/src/in_process_transport.cc" "core/CMakeFiles/strads_core.dir/src/in_process_transport.cc.o" "gcc" "core/CMakeFiles/strads_core.dir/src/in_process_transport.cc.o.d"
  "/work/main/core/src/live_ordering_policy.cc" "core/CMakeFiles/strads_core.dir/src/live_ordering_policy.cc.o" "gcc" "core/CMakeFiles/strads_core.dir/src/live_ordering_policy.cc.o.d"
  "/work/main/core/src/mpi_transport.cc" "core/CMakeFiles/strads_core.dir/src/mpi_transport.cc.o" "gcc" "core/CMakeFiles/strads_core.dir/src/mpi_transport.cc.o.d"
  "/work/main/core/src/operators.cc" "core/CMakeFiles/strads_core.dir/src/operators.cc.o" "gcc" "core/CMakeFiles/strads_core.dir/src/operators.cc.o.d"
  "/work/main/core/src/recon_hook.cc" "core/CMakeFiles/strads_core.dir/src/recon_hook.cc.o" "gcc" "core/CMakeFiles/strads_core.dir/src/recon_hook.cc.o.d"
  "/work/main/core/src/run.cc" "core/CMakeFiles/strads_core.dir/src/run.cc.o" "gcc" "core/CMakeFiles/strads_core.dir/src/run.cc.o.d"
  "/work/main/core/src/runtime.cc" "core/CMakeFiles/strads_core.dir/src/runtime.cc.o" "gcc" "core/CMakeFiles/strads_core.dir/src/runtime.cc.o.d"
  "/work/main/core/src/schedule.cc" "core/CMakeFiles/strads_core.dir/src/schedule.cc.o" "gcc" "core/CMakeFiles/strads_core.dir/src/schedule.cc.o.d"
  "/work/main/core/src/thread_pool.cc" "core/CMakeFiles/strads_core.dir/src/thread_pool.cc.o" "gcc" "core/CMakeFiles/strads_core.dir/src/thread_pool.cc.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
