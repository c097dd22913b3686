# Helpers that give every folder the same shape: an OBJECT library of its *.cc (tests excluded), and a
# gtest binary of its *_test.cc files, each case registered with ctest under the given labels.

# kiln_component(<name> [DEPS <component>...] [GLOBS <globs>...] [EXCLUDE <regex>])
function(kiln_component name)
  cmake_parse_arguments(ARG "" "EXCLUDE" "DEPS;GLOBS;EXTRA_SOURCES" ${ARGN})
  if(NOT ARG_GLOBS)
    set(ARG_GLOBS "*.cc")
  endif()
  set(srcs)
  foreach(g IN LISTS ARG_GLOBS)
    file(GLOB_RECURSE found CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/${g}")
    list(APPEND srcs ${found})
  endforeach()
  list(FILTER srcs EXCLUDE REGEX "_test\\.cc$")
  if(ARG_EXCLUDE)
    list(FILTER srcs EXCLUDE REGEX "${ARG_EXCLUDE}")
  endif()
  if(NOT srcs)
    # A folder still being written: an empty object library keeps the build graph whole.
    set(empty ${PROJECT_BINARY_DIR}/generated/empty_${name}.cc)
    file(WRITE ${empty} "// empty component ${name}\n")
    list(APPEND srcs ${empty})
  endif()
  add_library(kiln_${name} OBJECT ${srcs} ${ARG_EXTRA_SOURCES})
  target_include_directories(kiln_${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/generated>)
  target_compile_options(kiln_${name} PRIVATE ${KILN_WARNINGS})
  target_compile_definitions(kiln_${name} PRIVATE KILN_BUILDING_LIBRARY=1)
  set(closure kiln_${name})
  foreach(d IN LISTS ARG_DEPS)
    target_link_libraries(kiln_${name} PUBLIC kiln_${d})
    get_property(dc GLOBAL PROPERTY KILN_CLOSURE_${d})
    list(APPEND closure ${dc})
  endforeach()
  list(REMOVE_DUPLICATES closure)
  set_property(GLOBAL PROPERTY KILN_CLOSURE_${name} ${closure})
  set_property(GLOBAL APPEND PROPERTY KILN_COMPONENTS kiln_${name})
endfunction()

# kiln_tests(<name> LABELS <labels>... [GLOBS <globs>...] [COMPONENT <c>] [EXCLUDE <regex>] [LINK <targets>...]):
# one gtest binary from the matching *_test.cc, linked with the objects of component <c> (default <name>) and
# everything below it, or with the whole library when COMPONENT is ALL, plus LINK.
function(kiln_tests name)
  cmake_parse_arguments(ARG "" "COMPONENT;EXCLUDE" "LABELS;GLOBS;LINK" ${ARGN})
  if(NOT ARG_COMPONENT)
    set(ARG_COMPONENT ${name})
  endif()
  if(NOT KILN_BUILD_TESTS)
    return()
  endif()
  if(NOT ARG_GLOBS)
    set(ARG_GLOBS "*_test.cc")
  endif()
  set(srcs)
  foreach(g IN LISTS ARG_GLOBS)
    file(GLOB_RECURSE found CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/${g}")
    list(APPEND srcs ${found})
  endforeach()
  if(ARG_EXCLUDE)
    list(FILTER srcs EXCLUDE REGEX "${ARG_EXCLUDE}")
  endif()
  if(NOT srcs)
    return()
  endif()
  add_executable(${name}_tests ${srcs})
  target_compile_options(${name}_tests PRIVATE ${KILN_WARNINGS})
  # Linking an OBJECT library directly links its objects (self-registering kernels included), so list the
  # whole closure. ALL means every component, i.e. the objects of libkiln.so, without its visibility limits.
  if(ARG_COMPONENT STREQUAL "ALL")
    get_property(closure GLOBAL PROPERTY KILN_COMPONENTS)
  else()
    get_property(closure GLOBAL PROPERTY KILN_CLOSURE_${ARG_COMPONENT})
  endif()
  target_link_libraries(${name}_tests PRIVATE ${closure} ${ARG_LINK} ${XXHASH_LIBRARY} ${CMAKE_DL_LIBS})
  target_link_libraries(${name}_tests PRIVATE GTest::gtest GTest::gtest_main Threads::Threads)
  # gtest_discover_tests' PROPERTIES is a flat key/value list that the discovery script splits again, so a
  # second label would be read as a property name: the first label goes there, and every label is set on the
  # discovered tests by a script ctest includes after the discovery's own (it defines ${name}_tests_TESTS).
  list(GET ARG_LABELS 0 first_label)
  # DISCOVERY_TIMEOUT goes before PROPERTIES, whose value list would otherwise take it in (leaving CMake's 5 s,
  # which a binary loading cuDNN on a busy 2-core machine can exceed, failing the build).
  gtest_discover_tests(${name}_tests DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${first_label}" SKIP_REGULAR_EXPRESSION "\\[  SKIPPED ")
  list(LENGTH ARG_LABELS label_count)
  if(label_count GREATER 1)
    set(labels_script ${CMAKE_CURRENT_BINARY_DIR}/${name}_tests_labels.cmake)
    file(WRITE ${labels_script}
      "foreach(t IN LISTS ${name}_tests_TESTS)\n  set_tests_properties(\"\${t}\" PROPERTIES LABELS \"${ARG_LABELS}\")\nendforeach()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${labels_script})
  endif()
endfunction()
