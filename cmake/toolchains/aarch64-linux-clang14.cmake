# aarch64-linux-clang.cmake with Debian's clang-14 and lld-14: the clang generation of Android
# NDKs before r26 (r23-r25 ship clang 12-14), for the preset aarch64-clang14.
set(EDGEATTN_CLANG_VERSION 14)
include(${CMAKE_CURRENT_LIST_DIR}/aarch64-linux-clang.cmake)
