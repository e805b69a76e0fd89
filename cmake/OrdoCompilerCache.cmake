# ccache as the compiler launcher of ordo's own build, when ccache is installed and no launcher
# was chosen (CMAKE_CXX_COMPILER_LAUNCHER). Keyed so that a build of the same sources in another
# clone, in another folder, finds the cache of the first:
#   CCACHE_BASEDIR   paths under the source tree are hashed (and passed) relative to the build folder;
#   CCACHE_NOHASHDIR the build folder itself is not hashed (it would be, with -g, for debug info).
# The tests take their fixture folder from the environment, not a compile definition, for the
# same reason. -DORDO_USE_CCACHE=OFF turns it off.
option(ORDO_USE_CCACHE "Compile ordo's tests, examples and tools through ccache when it is found" ON)
if(NOT ORDO_USE_CCACHE OR CMAKE_CXX_COMPILER_LAUNCHER)
  return()
endif()
find_program(ORDO_CCACHE ccache)
if(NOT ORDO_CCACHE)
  message(STATUS "ordo: ccache not found (apt-get install ccache, or scripts/setup); compiling without a cache")
  return()
endif()
set(CMAKE_CXX_COMPILER_LAUNCHER
    "${CMAKE_COMMAND};-E;env;CCACHE_BASEDIR=${PROJECT_SOURCE_DIR};CCACHE_NOHASHDIR=1;${ORDO_CCACHE}")
message(STATUS "ordo: compiling through ${ORDO_CCACHE}")
