# CMake package of snowmint's C library. Installed as
# <prefix>/lib/cmake/snowmint/snowmintConfig.cmake; the prefix is found
# relative to this file, so the installed tree can be moved.
#
#   find_package(snowmint 0.1 REQUIRED)
#   target_link_libraries(app PRIVATE snowmint::static)   # or snowmint::shared
#
# snowmint::snowmint is snowmint::shared.
include_guard(GLOBAL)
get_filename_component(_snowmint_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

include(CMakeFindDependencyMacro)
find_dependency(Threads)

add_library(snowmint::static STATIC IMPORTED)
set_target_properties(snowmint::static PROPERTIES
  IMPORTED_LOCATION "${_snowmint_prefix}/lib/libsnowmint.a"
  INTERFACE_INCLUDE_DIRECTORIES "${_snowmint_prefix}/include"
  # What a Rust static library needs from the system (rustc's
  # --print native-static-libs on Linux: -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc).
  INTERFACE_LINK_LIBRARIES "Threads::Threads;gcc_s;util;rt;m;${CMAKE_DL_LIBS}")

add_library(snowmint::shared SHARED IMPORTED)
set_target_properties(snowmint::shared PROPERTIES
  IMPORTED_LOCATION "${_snowmint_prefix}/lib/libsnowmint.so.@VERSION@"
  IMPORTED_SONAME "libsnowmint.so.@MAJOR@"
  INTERFACE_INCLUDE_DIRECTORIES "${_snowmint_prefix}/include")

add_library(snowmint::snowmint INTERFACE IMPORTED)
set_target_properties(snowmint::snowmint PROPERTIES INTERFACE_LINK_LIBRARIES snowmint::shared)

set(snowmint_VERSION "@VERSION@")
unset(_snowmint_prefix)
