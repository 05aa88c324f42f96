# Compile options shared by every edgeattn target, as an interface library.
add_library(edgeattn_flags INTERFACE)
# Highway 1.0.3 compiles the AVX3_DL target (AVX512-VNNI, Ice Lake and Zen 4) only on request.
target_compile_definitions(edgeattn_flags INTERFACE HWY_WANT_AVX3_DL)
# -ffp-contract=off: g++ otherwise fuses a * b + c in plain C++ inside the per-target code of
# FMA targets only, so the same source would round differently per target. Kernels fuse
# explicitly where they mean to (MulAdd).
target_compile_options(edgeattn_flags INTERFACE -Wall -Wextra -ffp-contract=off)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  # g++ 12 marks Highway's EMU128 target broken, which leaves HWY_SCALAR as the baseline and it
  # lacks ops we need. An SSE4.2 baseline (every x86-64 CPU since 2009) removes SCALAR; AVX2 and
  # AVX-512 are still chosen at run time by dynamic dispatch.
  target_compile_options(edgeattn_flags INTERFACE -march=x86-64-v2)
endif()

# The program and the tests outside the kernels spend their time in the library: -O2 compiles
# them about a fifth faster than Release's -O3 (the CLI 25%, those tests 15% of CPU time, g++ 12)
# and CI builds them in four configurations. The library and the kernel tests keep -O3.
function(edgeattn_compile_for_build_time target)
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-O2>)
endfunction()
