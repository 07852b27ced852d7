# RkcStaticLLVM.cmake -- link the RKC tools against the static LLVM/MLIR
# archives, so that they run where no LLVM is installed.
#
# Included from the top-level CMakeLists.txt when RKC_STATIC is ON, after
# find_package(MLIR) and HandleLLVMOptions and before any target is defined.
#
# Debian/apt.llvm.org LLVM is configured with LLVM_LINK_LLVM_DYLIB=ON: the
# exported MLIR (and a few LLVM) static targets then name `LLVM` (libLLVM.so)
# in their INTERFACE_LINK_LIBRARIES, sometimes as `$<LINK_ONLY:LLVM>`, instead
# of the LLVM components they use. This module
#   1. turns LLVM_LINK_LLVM_DYLIB / MLIR_LINK_MLIR_DYLIB off for this project
#      (so LINK_COMPONENTS of add_llvm_*/add_mlir_* map to static archives);
#   2. walks every imported target and rewrites its INTERFACE_LINK_LIBRARIES:
#        LLVM, $<LINK_ONLY:LLVM>  -> the static LLVM component archives of
#                                    RKC_STATIC_LLVM_COMPONENTS (their own
#                                    exported dependencies come along);
#        zstd::libzstd_shared     -> libzstd.a
#        ZLIB::ZLIB / libz.so     -> libz.a
#        libz3.so                 -> dropped (only LLVM's Z3 solver, which
#                                    MLIR never calls, uses it)
#      Walking all imported targets (not a fixed list) keeps MLIR libraries
#      added to the project later working with no change here;
#   3. links libstdc++/libgcc statically (RKC_STATIC_LIBSTDCXX, default ON) or
#      everything, glibc included (RKC_STATIC_FULL, default OFF);
#   4. puts the libraries of every executable inside
#      -Wl,--start-group ... -Wl,--end-group (RKC_STATIC_LINK_GROUP, ON), so
#      the order of the archives never matters.
#
# If a new MLIR library needs more of LLVM (undefined llvm:: symbols at link
# time, e.g. from MLIRTargetLLVMIRExport or the NVPTX back end), add the
# component names (as for `llvm-config --libs`) to RKC_STATIC_LLVM_COMPONENTS,
# e.g. -DRKC_STATIC_LLVM_COMPONENTS="Support;Demangle;Core;NVPTX".

include_guard(GLOBAL)

# Support/Demangle for MLIRSupport/MLIRIR; Remarks for MLIRRemarkStreamer (which
# MLIRPass pulls in). Found by linking rkc and rkc-opt.
set(RKC_STATIC_LLVM_COMPONENTS "Support;Demangle;Remarks" CACHE STRING
  "LLVM components (llvm-config names) linked statically in place of libLLVM.so")
option(RKC_STATIC_LIBSTDCXX "RKC_STATIC: link libstdc++ and libgcc statically" ON)
option(RKC_STATIC_FULL "RKC_STATIC: link fully statically (-static, glibc included)" OFF)
option(RKC_STATIC_LINK_GROUP "RKC_STATIC: wrap the link libraries in --start-group/--end-group" ON)

# 1. No dylib, from here on.
set(LLVM_LINK_LLVM_DYLIB OFF)
set(MLIR_LINK_MLIR_DYLIB OFF)
set(LLVM_BUILD_LLVM_DYLIB OFF)

# The static LLVM component archives that replace libLLVM.so.
llvm_map_components_to_libnames(_rkc_llvm_libs ${RKC_STATIC_LLVM_COMPONENTS})
foreach(_lib IN LISTS _rkc_llvm_libs)
  if(NOT TARGET ${_lib})
    message(FATAL_ERROR "RkcStaticLLVM: no imported target ${_lib} "
                        "(from RKC_STATIC_LLVM_COMPONENTS=${RKC_STATIC_LLVM_COMPONENTS})")
  endif()
  get_target_property(_type ${_lib} TYPE)
  if(NOT _type STREQUAL "STATIC_LIBRARY")
    message(FATAL_ERROR "RkcStaticLLVM: ${_lib} is a ${_type}, not a static archive")
  endif()
endforeach()

# Static zstd and zlib for LLVMSupport (libzstd-dev, zlib1g-dev).
find_library(RKC_ZSTD_STATIC NAMES libzstd.a)
find_library(RKC_ZLIB_STATIC NAMES libz.a)
foreach(_v RKC_ZSTD_STATIC RKC_ZLIB_STATIC)
  if(NOT ${_v})
    message(FATAL_ERROR "RkcStaticLLVM: ${_v} not found (install libzstd-dev / zlib1g-dev)")
  endif()
endforeach()
if(NOT TARGET rkc_static::zstd)
  add_library(rkc_static::zstd STATIC IMPORTED)
  set_target_properties(rkc_static::zstd PROPERTIES IMPORTED_LOCATION "${RKC_ZSTD_STATIC}")
  add_library(rkc_static::zlib STATIC IMPORTED)
  set_target_properties(rkc_static::zlib PROPERTIES IMPORTED_LOCATION "${RKC_ZLIB_STATIC}")
endif()
# LLVMSupport names zstd::libzstd_shared; define it if Findzstd did not, so the
# name always resolves (to the static archive, via the rewrite below anyway).
if(NOT TARGET zstd::libzstd_shared)
  add_library(zstd::libzstd_shared INTERFACE IMPORTED)
  set_target_properties(zstd::libzstd_shared PROPERTIES
    INTERFACE_LINK_LIBRARIES rkc_static::zstd)
endif()

# 2. Rewrite the link interface of every imported target.
#    IMPORTED_TARGETS lists those visible in this directory (CMake >= 3.21);
#    fall back on the exported-target lists of LLVM and MLIR.
if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.21)
  get_property(_rkc_imported DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" PROPERTY IMPORTED_TARGETS)
else()
  set(_rkc_imported ${LLVM_AVAILABLE_LIBS} ${MLIR_EXPORTED_TARGETS})
endif()

function(_rkc_static_map_item item self out)
  set(_res "")
  if(item STREQUAL "LLVM")
    list(REMOVE_ITEM _rkc_llvm_libs ${self})
    set(_res ${_rkc_llvm_libs})
  elseif(item STREQUAL "$<LINK_ONLY:LLVM>")
    list(REMOVE_ITEM _rkc_llvm_libs ${self})
    foreach(_l IN LISTS _rkc_llvm_libs)
      list(APPEND _res "$<LINK_ONLY:${_l}>")
    endforeach()
  elseif(item STREQUAL "zstd::libzstd_shared" OR item MATCHES "/libzstd\\.so(\\.[0-9.]*)?$")
    set(_res rkc_static::zstd)
  elseif(item STREQUAL "ZLIB::ZLIB" OR item MATCHES "/libz\\.so(\\.[0-9.]*)?$")
    set(_res rkc_static::zlib)
  elseif(item MATCHES "/libz3\\.so(\\.[0-9.]*)?$" OR item STREQUAL "z3::libz3")
    set(_res "")
  elseif(item MATCHES "^\\$<LINK_ONLY:(.*)>$")
    # $<LINK_ONLY:zstd::libzstd_shared> and the like.
    set(_inner "${CMAKE_MATCH_1}")
    _rkc_static_map_item("${_inner}" "${self}" _mapped)
    foreach(_l IN LISTS _mapped)
      if(_l MATCHES "^\\$<LINK_ONLY:")
        list(APPEND _res "${_l}")
      else()
        list(APPEND _res "$<LINK_ONLY:${_l}>")
      endif()
    endforeach()
  else()
    set(_res "${item}")
  endif()
  set(${out} "${_res}" PARENT_SCOPE)
endfunction()

set(_rkc_rewritten 0)
foreach(_tgt IN LISTS _rkc_imported)
  if(NOT TARGET ${_tgt})
    continue()
  endif()
  get_target_property(_type ${_tgt} TYPE)
  if(_type STREQUAL "EXECUTABLE")
    continue()
  endif()
  get_target_property(_old ${_tgt} INTERFACE_LINK_LIBRARIES)
  if(NOT _old)
    continue()
  endif()
  set(_new "")
  foreach(_item IN LISTS _old)
    _rkc_static_map_item("${_item}" "${_tgt}" _mapped)
    list(APPEND _new ${_mapped})
  endforeach()
  list(REMOVE_DUPLICATES _new)
  if(NOT "${_new}" STREQUAL "${_old}")
    set_property(TARGET ${_tgt} PROPERTY INTERFACE_LINK_LIBRARIES "${_new}")
    math(EXPR _rkc_rewritten "${_rkc_rewritten} + 1")
  endif()
endforeach()
message(STATUS "RKC_STATIC: rewrote the link interface of ${_rkc_rewritten} imported targets; "
               "libLLVM.so -> ${_rkc_llvm_libs}")

# 3. The C++ runtime. No run path either: there is no shared library of ours
#    or of LLVM's to find (AddLLVM would add $ORIGIN/../lib and LLVM's lib).
set(CMAKE_SKIP_RPATH ON)
if(RKC_STATIC_FULL)
  add_link_options(-static)
elseif(RKC_STATIC_LIBSTDCXX)
  add_link_options(-static-libstdc++ -static-libgcc)
endif()

# 4. Archive order: resolve cycles between the MLIR/LLVM archives by letting
#    the linker rescan the whole group.
if(RKC_STATIC_LINK_GROUP AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang"
   AND NOT APPLE)
  set(CMAKE_CXX_LINK_EXECUTABLE
    "<CMAKE_CXX_COMPILER> <FLAGS> <CMAKE_CXX_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> -Wl,--start-group <LINK_LIBRARIES> -Wl,--end-group")
endif()

unset(_rkc_imported)
unset(_rkc_rewritten)
