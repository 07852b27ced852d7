# Writes the text of INPUT into OUTPUT as a C++ raw string named NAME.
file(READ ${INPUT} text)
file(WRITE ${OUTPUT} "// Generated from ${INPUT}; do not edit.\n#pragma once\nstatic const char ${NAME}[] = R\"rkc_spec(${text})rkc_spec\";\n")
