# Configures the source tree SOURCE_DIR in WORK_DIR with build options that must be refused, and
# checks that each configure fails naming the option and what was wrong; then with a valid list
# of targets, which must configure (so that a check refusing everything fails here too).
# CXX_COMPILER: the compiler of the build that runs this, so that the trees are configured alike.
file(REMOVE_RECURSE ${WORK_DIR})

function(configure name expect_success expected_text)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/${name}
            -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DEDGEATTN_BUILD_TESTS=OFF
            -DEDGEATTN_BUILD_BENCH=OFF -DEDGEATTN_BUILD_CLI=OFF ${ARGN}
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REGEX REPLACE "[ \n]+" " " flat "${out}")  # CMake wraps its messages
  if(expect_success AND NOT result EQUAL 0)
    message(FATAL_ERROR "${name}: expected to configure, failed (${result}):\n${out}")
  elseif(NOT expect_success AND result EQUAL 0)
    message(FATAL_ERROR "${name}: expected a refusal, configured with ${ARGN}")
  endif()
  string(FIND "${flat}" "${expected_text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${name}: expected '${expected_text}' in:\n${out}")
  endif()
  message(STATUS "${name}: ${expected_text}")
endfunction()

configure(unknown_choice FALSE "EDGEATTN_TARGETS: expected all, server or phone, got 'tablet'"
          -DEDGEATTN_TARGETS=tablet)
configure(bad_form FALSE
          "EDGEATTN_DISABLED_TARGETS: expected Highway target names joined with '|'"
          -DEDGEATTN_DISABLED_TARGETS=avx3)
configure(unknown_target FALSE
          "EDGEATTN_DISABLED_TARGETS: 'HWY_NOT_A_TARGET' is not a target of Highway"
          "-DEDGEATTN_DISABLED_TARGETS=HWY_SSE4|HWY_NOT_A_TARGET")
configure(unknown_test_target FALSE
          "EDGEATTN_TEST_DISABLED_TARGETS: 'HWY_SVE3' is not a target of Highway"
          -DEDGEATTN_TEST_DISABLED_TARGETS=HWY_SVE3)
configure(known_targets TRUE "Configuring done"
          "-DEDGEATTN_DISABLED_TARGETS=HWY_SSE4|HWY_SCALAR" -DEDGEATTN_TEST_DISABLED_TARGETS=HWY_SVE)
