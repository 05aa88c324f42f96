# Installs the edgeattn build tree BUILD_DIR into WORK_DIR/prefix and, against what it installed,
# builds and runs: the C++ consumer (tests/consumer) and the C-only one (tests/consumer/c) with
# the CMake package; natively also both with the pkg-config file (--static for a static
# library), and the exported symbols of the shared library or of a JNI-style shared library
# linking the static one (tools/check_exports.sh).
# Optional: TOOLCHAIN_FILE for a cross build, EMULATOR to run the result.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "failed (${result}): ${ARGN}")
  endif()
endfunction()

set(source ${CMAKE_CURRENT_LIST_DIR})
set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
file(GLOB shared_library ${prefix}/lib/libedgeattn.so)
file(GLOB static_library ${prefix}/lib/libedgeattn.a)
# Neither (installed to another libdir) would take a shared build for a static one below and
# check the exports of neither.
if(NOT shared_library AND NOT static_library)
  message(FATAL_ERROR "no libedgeattn.so or libedgeattn.a under ${prefix}/lib")
endif()

# Built without oneTBB: nothing installed may ask for it.
if(DEFINED WITH_TBB AND NOT WITH_TBB)
  file(GLOB_RECURSE package_files ${prefix}/lib/cmake/*.cmake ${prefix}/lib/pkgconfig/*.pc)
  # Files found elsewhere (another libdir) would leave nothing to look at: not a pass.
  if(NOT package_files MATCHES "edgeattnConfig[.]cmake" OR NOT package_files MATCHES "edgeattn[.]pc")
    message(FATAL_ERROR "no edgeattn package files under ${prefix}/lib: ${package_files}")
  endif()
  foreach(file ${package_files})
    file(STRINGS ${file} tbb_lines REGEX "[Tt][Bb][Bb]")
    if(tbb_lines)
      message(FATAL_ERROR "built without oneTBB, but ${file} names it: ${tbb_lines}")
    endif()
  endforeach()
endif()

foreach(project cxx c)
  set(project_source ${source})
  set(program consumer)
  if(project STREQUAL "c")
    set(project_source ${source}/c)
    set(program consumer_c)
  endif()
  set(configure_args -S ${project_source} -B ${WORK_DIR}/build-${project}
      -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
  if(TOOLCHAIN_FILE)
    list(APPEND configure_args -DCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN_FILE})
  endif()
  run(${CMAKE_COMMAND} ${configure_args})
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/build-${project})
  run(${EMULATOR} ${WORK_DIR}/build-${project}/${program})
endforeach()

if(TOOLCHAIN_FILE)
  return()
endif()
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
set(pc_args --cflags --libs edgeattn)
if(shared_library)
  set(rpath -Wl,-rpath,${prefix}/lib)
else()
  list(APPEND pc_args --static)
endif()
execute_process(COMMAND ${PKG_CONFIG} ${pc_args} OUTPUT_VARIABLE flags
                OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "pkg-config cannot resolve edgeattn")
endif()
message("pkg-config ${pc_args}: ${flags}")
separate_arguments(flags UNIX_COMMAND "${flags}")
run(c++ -std=c++17 ${source}/main.cc -o ${WORK_DIR}/consumer_pc ${flags} ${rpath})
run(${WORK_DIR}/consumer_pc)
run(cc -std=c99 ${source}/main.c -o ${WORK_DIR}/consumer_c_pc ${flags} ${rpath} -lm)
run(${WORK_DIR}/consumer_c_pc)

set(check_exports ${source}/../../tools/check_exports.sh)
if(shared_library)
  run(${check_exports} ${shared_library} ${source}/../../tools/exports/libedgeattn.txt)
else()
  run(${check_exports} ${WORK_DIR}/build-c/libjni_style.so
      ${source}/../../tools/exports/jni_style.txt)
endif()
