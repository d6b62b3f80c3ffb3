# CMake package of snowmint's C library, installed by scripts/install-c as
# <prefix>/@LIBDIR@/cmake/snowmint/snowmintConfig.cmake; the prefix is found
# relative to this file, so the installed tree can be moved.
#
#   find_package(snowmint 0.1 REQUIRED)
#   target_link_libraries(app PRIVATE snowmint::static)   # or snowmint::shared
#
# snowmint::snowmint is snowmint::shared.
include_guard(GLOBAL)
get_filename_component(_snowmint_prefix "${CMAKE_CURRENT_LIST_DIR}/../../@UP@" ABSOLUTE)
set(_snowmint_libdir "${_snowmint_prefix}/@LIBDIR@")

include(CMakeFindDependencyMacro)
find_dependency(Threads)

if(APPLE)
  # libsnowmint.@MAJOR@.dylib, install name @rpath/libsnowmint.@MAJOR@.dylib.
  set(_snowmint_shared_file "${_snowmint_libdir}/libsnowmint.@MAJOR@.dylib")
  set(_snowmint_soname "@rpath/libsnowmint.@MAJOR@.dylib")
  # What a Rust static library needs from the system on macOS.
  set(_snowmint_system_libs "Threads::Threads;System;c;m")
else()
  # libsnowmint.so.@VERSION@, SONAME libsnowmint.so.@MAJOR@.
  set(_snowmint_shared_file "${_snowmint_libdir}/libsnowmint.so.@VERSION@")
  set(_snowmint_soname "libsnowmint.so.@MAJOR@")
  # rustc's --print native-static-libs on Linux: -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc.
  set(_snowmint_system_libs "Threads::Threads;gcc_s;util;rt;m;${CMAKE_DL_LIBS}")
endif()

if(NOT TARGET snowmint::static)
  add_library(snowmint::static STATIC IMPORTED)
  set_target_properties(snowmint::static PROPERTIES
    IMPORTED_LOCATION "${_snowmint_libdir}/libsnowmint.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_snowmint_prefix}/include"
    INTERFACE_LINK_LIBRARIES "${_snowmint_system_libs}")

  add_library(snowmint::shared SHARED IMPORTED)
  set_target_properties(snowmint::shared PROPERTIES
    IMPORTED_LOCATION "${_snowmint_shared_file}"
    IMPORTED_SONAME "${_snowmint_soname}"
    INTERFACE_INCLUDE_DIRECTORIES "${_snowmint_prefix}/include")

  add_library(snowmint::snowmint INTERFACE IMPORTED)
  set_target_properties(snowmint::snowmint PROPERTIES INTERFACE_LINK_LIBRARIES snowmint::shared)
endif()

set(snowmint_VERSION "@VERSION@")
unset(_snowmint_prefix)
unset(_snowmint_libdir)
unset(_snowmint_shared_file)
unset(_snowmint_soname)
unset(_snowmint_system_libs)
