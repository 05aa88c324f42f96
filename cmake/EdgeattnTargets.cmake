# EDGEATTN_TARGETS: which ARM Highway targets the kernels are compiled for, by symbolic name, so
# that an app ships only the code its devices can run (each SVE target adds a full copy of the
# kernels). x86 builds compile the same targets whichever is chosen.
#   all    - every target Highway builds (default)
#   server - NEON (with the dot-product path) + the vector-length-agnostic SVE and SVE2
#   phone  - NEON (with the dot-product path) only: what Android and iOS devices run
# tools/binary_sizes.sh prints the aarch64 Release sizes of each choice.
set(EDGEATTN_TARGETS all CACHE STRING "Highway targets to compile: all, server or phone")
set_property(CACHE EDGEATTN_TARGETS PROPERTY STRINGS all server phone)
set(edgeattn_disabled_targets_all "")
set(edgeattn_disabled_targets_server "HWY_SVE_256|HWY_SVE2_128")
set(edgeattn_disabled_targets_phone "HWY_SVE|HWY_SVE2|HWY_SVE_256|HWY_SVE2_128")
if(NOT DEFINED edgeattn_disabled_targets_${EDGEATTN_TARGETS})
  message(FATAL_ERROR
          "EDGEATTN_TARGETS: expected all, server or phone, got '${EDGEATTN_TARGETS}'")
endif()
# EDGEATTN_DISABLED_TARGETS: further targets left out, by Highway's names joined with '|' (e.g.
# HWY_AVX3|HWY_SSE4), for test builds that need fewer copies of the kernels.
set(EDGEATTN_DISABLED_TARGETS "" CACHE STRING "Further Highway targets not to compile, e.g. HWY_AVX3|HWY_SSE4")
# EDGEATTN_TEST_DISABLED_TARGETS: targets left out of the test executables only (tests/), in the
# same form, for test builds whose runs never reach a target (e.g. SVE_256 where CI's qemu runs
# no 256-bit SVE): the library keeps every target, so its size, dispatch and compile stay as
# users get them, and no per-target test code is compiled that no run executes.
set(EDGEATTN_TEST_DISABLED_TARGETS "" CACHE STRING
    "Highway targets the test executables leave out (the library keeps them), e.g. HWY_SVE_256")
foreach(option EDGEATTN_DISABLED_TARGETS EDGEATTN_TEST_DISABLED_TARGETS)
  if(${option} AND NOT ${option} MATCHES "^HWY_[A-Z0-9_]+(\\|HWY_[A-Z0-9_]+)*$")
    message(FATAL_ERROR "${option}: expected Highway target names joined with '|' "
                        "(e.g. HWY_AVX3|HWY_SSE4), got '${${option}}'")
  endif()
endforeach()
set(edgeattn_disabled_targets "${edgeattn_disabled_targets_${EDGEATTN_TARGETS}}")
if(EDGEATTN_DISABLED_TARGETS)
  list(APPEND edgeattn_disabled_targets "${EDGEATTN_DISABLED_TARGETS}")
  list(JOIN edgeattn_disabled_targets "|" edgeattn_disabled_targets)
endif()
set(edgeattn_test_disabled_targets "${edgeattn_disabled_targets}")
if(EDGEATTN_TEST_DISABLED_TARGETS)
  list(APPEND edgeattn_test_disabled_targets "${EDGEATTN_TEST_DISABLED_TARGETS}")
  list(JOIN edgeattn_test_disabled_targets "|" edgeattn_test_disabled_targets)
endif()
if(edgeattn_test_disabled_targets)  # the library's list, and the tests' further ones
  if(NOT edgeattn_disabled_targets)
    set(edgeattn_disabled_targets 0)  # Highway's own default: none
  endif()
  # Highway reads HWY_DISABLED_TARGETS as an expression after it has defined the target bits.
  # The consuming target's directory tells a test executable from the library.
  set(edgeattn_in_tests "$<STREQUAL:$<TARGET_PROPERTY:SOURCE_DIR>,${PROJECT_SOURCE_DIR}/tests>")
  set(edgeattn_targets_off
      "$<IF:${edgeattn_in_tests},${edgeattn_test_disabled_targets},${edgeattn_disabled_targets}>")
  target_compile_definitions(edgeattn_flags INTERFACE "HWY_DISABLED_TARGETS=(${edgeattn_targets_off})")
endif()
