# Writes each file of INPUTS (a ;-list) into OUTPUT as a C++ raw string named
# by the matching entry of NAMES.
string(REPLACE "|" ";" INPUTS "${INPUTS}")
string(REPLACE "|" ";" NAMES "${NAMES}")
list(LENGTH INPUTS count)
math(EXPR last "${count} - 1")
set(content "// Generated from ${INPUTS}; do not edit.\n#pragma once\n")
foreach(i RANGE ${last})
  list(GET INPUTS ${i} input)
  list(GET NAMES ${i} name)
  file(READ ${input} text)
  string(APPEND content "static const char ${name}[] = R\"rkc_embedded(${text})rkc_embedded\";\n")
endforeach()
file(WRITE ${OUTPUT} "${content}")
