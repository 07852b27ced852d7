# rkc_add_kernels(<target> SPECS <spec.mlir>... [DK <n>] [DV <n>]
#                 [ARCH <sm_90a>] [CHUNK_SIZE <tokens>] [PARAMS <name=value>...]
#                 [TUNING <db.jsonl>])
#
# Runs `rkc compile` on each spec at build time (again whenever the spec
# changes) and makes <target> a static library of the generated launchers,
# linked to rkc::runtime, whose include path has the generated headers
# (`#include "eda.h"`). A spec's files are named after its recurrence, which
# must match the file's stem (eda.mlir holds @eda).
#
# TUNING names a database of `rkc tune` (relative paths from the calling
# folder): each spec is then compiled with `rkc compile --tuning`, its
# launcher picking the schedule measured fastest for each call's shape
# bucket (again whenever the database changes). The public files stay
# NAME.h and NAME_launch.c; the variants it includes sit beside them.
function(rkc_add_kernels target)
  cmake_parse_arguments(ARG "" "DK;DV;ARCH;CHUNK_SIZE;TUNING" "SPECS;PARAMS"
                        ${ARGN})
  if(NOT ARG_SPECS)
    message(FATAL_ERROR "rkc_add_kernels(${target}): no SPECS given")
  endif()
  set(tuning_depends)
  if(ARG_TUNING)
    get_filename_component(tuning ${ARG_TUNING} ABSOLUTE
                           BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    if(NOT EXISTS ${tuning})
      message(FATAL_ERROR "rkc_add_kernels(${target}): no tuning database "
              "${tuning} (write one with `rkc tune`)")
    endif()
    set(tuning_depends ${tuning})
  endif()
  foreach(option DK DV)
    if(NOT ARG_${option})
      set(ARG_${option} 128)
    endif()
  endforeach()
  if(NOT ARG_ARCH)
    set(ARG_ARCH sm_90a)
  endif()
  set(extra)
  if(ARG_CHUNK_SIZE)
    list(APPEND extra --chunk-size ${ARG_CHUNK_SIZE})
  endif()
  foreach(param ${ARG_PARAMS})
    list(APPEND extra --param ${param})
  endforeach()
  if(ARG_TUNING)
    list(APPEND extra --tuning ${tuning})
  endif()
  # nvcc builds the kernels; without it the launchers would have none.
  find_package(CUDAToolkit REQUIRED)
  list(APPEND extra --nvcc ${CUDAToolkit_NVCC_EXECUTABLE})

  set(sources)
  set(includes)
  foreach(spec ${ARG_SPECS})
    get_filename_component(path ${spec} ABSOLUTE)
    get_filename_component(name ${spec} NAME_WE)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/rkc/${target}/${name})
    add_custom_command(
      OUTPUT ${out}/${name}_launch.c ${out}/${name}.h
      COMMAND ${RKC_EXECUTABLE} compile ${path} -o ${out} --arch ${ARG_ARCH}
              --dk ${ARG_DK} --dv ${ARG_DV} ${extra}
      DEPENDS ${path} ${RKC_EXECUTABLE} ${tuning_depends}
      COMMENT "rkc compile ${name} (dk ${ARG_DK}, dv ${ARG_DV}, ${ARG_ARCH})"
      VERBATIM)
    list(APPEND sources ${out}/${name}_launch.c)
    list(APPEND includes ${out})
  endforeach()
  add_library(${target} STATIC ${sources})
  set_target_properties(${target} PROPERTIES LINKER_LANGUAGE C)
  target_include_directories(${target} PUBLIC ${includes})
  target_link_libraries(${target} PUBLIC rkc::runtime)
endfunction()
