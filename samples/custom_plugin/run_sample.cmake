# Runs the custom-plugin sample: writes the model, runs kilnexec with the plugin library and --check, then
# inspects the saved plan (its plugin must be listed). Fails on any non-zero exit or missing output.
execute_process(COMMAND ${PYTHON} ${MAKE_MODEL} ${MODEL} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make_model.py failed (${rc})")
endif()
execute_process(COMMAND ${KILNEXEC} --backend=${BACKEND} --dynamicPlugins=${PLUGIN} --onnx=${MODEL}
  --saveEngine=${MODEL}.plan --check --iterations=3 --duration=0 --warmUp=0
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kilnexec failed (${rc})")
endif()
execute_process(COMMAND ${KILNEXEC} --inspect=${MODEL}.plan RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "Plugins: scale_bias[^:]*: plugin 'ScaleBias' version '1' namespace 'kiln.samples'")
  message(FATAL_ERROR "kilnexec --inspect does not list the plugin (${rc})")
endif()
