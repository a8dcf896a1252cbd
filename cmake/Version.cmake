# Script mode: cmake -DSRC=<source dir> -DIN=<version.h.in> -DOUT=<version.h> -DPROJECT_VERSION=x.y.z
#          -DRTRACK_TARGET="triple, glibc" -P Version.cmake
# Run at every build (not only at configure time), so `rtrack --version` names the commit the
# binary was built from; configure_file leaves the header untouched when nothing changed.
execute_process(COMMAND git rev-parse --short=12 HEAD
                WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE RTRACK_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET)
if(NOT RTRACK_GIT_COMMIT)
  set(RTRACK_GIT_COMMIT "unknown")
endif()
configure_file(${IN} ${OUT} @ONLY)
