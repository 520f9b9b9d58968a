# cmake -DPROGRAM=... -DARGS="a|b" -DOUTPUT=file -P runto.cmake: runs PROGRAM with ARGS and
# writes its standard output to OUTPUT; a failure fails the build step (no empty file left).
string(REPLACE "|" ";" ARGS "${ARGS}")
execute_process(COMMAND ${PROGRAM} ${ARGS} OUTPUT_FILE ${OUTPUT}.tmp RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    file(REMOVE ${OUTPUT}.tmp)
    message(FATAL_ERROR "${PROGRAM} ${ARGS} failed (${rc})")
endif()
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
