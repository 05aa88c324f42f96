# Highway: the system's package by default (find_package(hwy), e.g. Debian's 1.0.3), or with
# EDGEATTN_FETCH_HIGHWAY the pinned release built from source, for platforms without a packaged
# Highway (Android, iOS, Windows) and for building against a newer Highway than the system's.
# Without network, point FETCHCONTENT_SOURCE_DIR_HIGHWAY at an extracted copy of the release.
# Either way the kernels see hwy::hwy; they need only Highway's library and headers (the contrib
# math header is header-only), not hwy_contrib or hwy_test.
option(EDGEATTN_FETCH_HIGHWAY "Build the pinned Highway release from source instead of find_package(hwy)" OFF)

if(EDGEATTN_FETCH_HIGHWAY)
  include(FetchContent)
  if(POLICY CMP0135)  # the archive's files get the extraction time, so rebuilds follow a new pin
    cmake_policy(SET CMP0135 NEW)
  endif()
  # Highway 1.4.0 (tag commit 2607d3b5b0113992fe84d3848859eae13b3b52c1), the tag's source archive.
  FetchContent_Declare(highway
    URL https://github.com/google/highway/archive/refs/tags/1.4.0.tar.gz
    URL_HASH SHA256=ca8787b682e01345b89032d9ccfe3dde8db3fc905b62ac2473dfe77bfdaf3b7b)
  # Only the library: Highway's tests, examples and contrib (vqsort, dozens of files) stay off.
  # Its install rules stay on, so that an installed static libedgeattn finds the Highway it links.
  set(HWY_ENABLE_TESTS OFF CACHE BOOL "" FORCE)
  set(HWY_ENABLE_EXAMPLES OFF CACHE BOOL "" FORCE)
  set(HWY_ENABLE_CONTRIB OFF CACHE BOOL "" FORCE)
  set(HWY_ENABLE_INSTALL ON CACHE BOOL "" FORCE)
  set(HWY_FORCE_STATIC_LIBS ON CACHE BOOL "" FORCE)
  FetchContent_MakeAvailable(highway)
  # An installed Highway's package names its library hwy::hwy; the source tree's target is hwy.
  add_library(hwy::hwy ALIAS hwy)
  set(EDGEATTN_HWY_VERSION 1.4.0)
else()
  find_package(hwy REQUIRED)
  set(EDGEATTN_HWY_VERSION ${hwy_VERSION})
endif()
message(STATUS "edgeattn: Highway ${EDGEATTN_HWY_VERSION}")

# Every file that includes Highway must see this Highway's headers, not another copy on the
# default include path (a system 1.0.3 under a fetched 1.4): simd/highway_compat.h checks.
string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _ "${EDGEATTN_HWY_VERSION}")
target_compile_definitions(edgeattn_flags INTERFACE
  EDGEATTN_HWY_LINKED_MAJOR=${CMAKE_MATCH_1} EDGEATTN_HWY_LINKED_MINOR=${CMAKE_MATCH_2})
