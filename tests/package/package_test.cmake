# Package test (cmake -P): installs the build tree KILN_BUILD_DIR into WORK_DIR/prefix, configures and builds
# KILN_SOURCE_DIR/samples/standalone against it with find_package(kiln CONFIG) only, and runs the demo.
foreach(var KILN_BUILD_DIR KILN_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "package_test: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
set(sample_build ${WORK_DIR}/standalone)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package_test: ${name} failed (${rc}): ${ARGN}")
  endif()
  message(STATUS "package_test: ${name}: ok")
endfunction()

step(install ${CMAKE_COMMAND} --install ${KILN_BUILD_DIR} --prefix ${prefix})

# The installed tree must hold the library, the headers and the package files, and nothing may point back
# into the build or source tree.
foreach(f include/kiln/kiln.h include/kiln/kiln_runtime.h include/kiln/kiln_base.h include/kiln/kiln_version.h)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "package_test: ${f} was not installed")
  endif()
endforeach()
file(GLOB_RECURSE config_files ${prefix}/*kilnConfig.cmake)
if(NOT config_files)
  message(FATAL_ERROR "package_test: kilnConfig.cmake was not installed")
endif()
file(GLOB_RECURSE cmake_files ${prefix}/*.cmake)
foreach(f IN LISTS cmake_files)
  file(READ ${f} content)
  foreach(tree ${KILN_BUILD_DIR} ${KILN_SOURCE_DIR})
    string(FIND "${content}" "${tree}/" pos)
    if(NOT pos EQUAL -1)
      message(FATAL_ERROR "package_test: ${f} refers to ${tree}")
    endif()
  endforeach()
endforeach()

# Only the install prefix is on the search path: the sample must not find the build tree's package files.
step(configure ${CMAKE_COMMAND} -S ${KILN_SOURCE_DIR}/samples/standalone -B ${sample_build} -G ${GENERATOR}
  -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix}
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
step(build ${CMAKE_COMMAND} --build ${sample_build})
step(run ${sample_build}/kiln_demo --runs 2)
