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
if(edgeattn_disabled_targets_${EDGEATTN_TARGETS})
  # Highway reads HWY_DISABLED_TARGETS as an expression after it has defined the target bits.
  target_compile_definitions(edgeattn_flags INTERFACE
    "HWY_DISABLED_TARGETS=(${edgeattn_disabled_targets_${EDGEATTN_TARGETS}})")
endif()
