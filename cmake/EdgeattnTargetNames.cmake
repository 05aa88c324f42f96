# The names in EDGEATTN_DISABLED_TARGETS and EDGEATTN_TEST_DISABLED_TARGETS (EdgeattnTargets.cmake
# checks their form) checked against the Highway in use, whose hwy/detect_targets.h defines each
# target as a bit: a name that Highway lacks (HWY_AVX3_SPR under 1.0.3) then fails here, with the
# names it has, rather than in the compiler once the build has started.
if(EDGEATTN_FETCH_HIGHWAY)
  set(edgeattn_hwy_includes "${highway_SOURCE_DIR}")
else()
  get_target_property(edgeattn_hwy_includes hwy::hwy INTERFACE_INCLUDE_DIRECTORIES)
endif()
find_file(EDGEATTN_HWY_DETECT_TARGETS hwy/detect_targets.h
          PATHS ${edgeattn_hwy_includes} NO_DEFAULT_PATH NO_CACHE)
set(edgeattn_hwy_targets "")
if(EDGEATTN_HWY_DETECT_TARGETS)
  file(STRINGS "${EDGEATTN_HWY_DETECT_TARGETS}" edgeattn_hwy_defines
       REGEX "^#define HWY_[A-Z0-9_]+ \\(1LL << [0-9]+\\)")
  foreach(line IN LISTS edgeattn_hwy_defines)
    string(REGEX MATCH "HWY_[A-Z0-9_]+" name "${line}")
    list(APPEND edgeattn_hwy_targets "${name}")
  endforeach()
endif()
# No names found (no header, or one that defines its targets otherwise): nothing to check against.
if(edgeattn_hwy_targets)
  foreach(option EDGEATTN_DISABLED_TARGETS EDGEATTN_TEST_DISABLED_TARGETS)
    string(REPLACE "|" ";" names "${${option}}")
    foreach(name IN LISTS names)
      if(NOT name IN_LIST edgeattn_hwy_targets)
        list(JOIN edgeattn_hwy_targets ", " known)
        message(FATAL_ERROR "${option}: '${name}' is not a target of Highway "
                            "${EDGEATTN_HWY_VERSION}, whose targets are ${known}")
      endif()
    endforeach()
  endforeach()
else()
  message(STATUS "edgeattn: no target names found in ${edgeattn_hwy_includes}/hwy/"
                 "detect_targets.h: EDGEATTN_DISABLED_TARGETS is not checked against them")
endif()
