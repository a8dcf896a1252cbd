# Rooms.cmake - one static library per room of src/ (docs/architecture.md), linked only to the
# rooms it may use, so that a forbidden dependency fails to build:
#
# - includes: a room's sources see the headers of include/rtrack/<room>/ and of the rooms it
#   uses, nothing else. Each room gets an include root of its own in the build tree
#   (gen/rooms/<room>/rtrack/<room> -> include/rtrack/<room>), passed on only to the rooms that
#   use it; `#include "rtrack/store/store.h"` in a collector is "No such file or directory".
# - symbols: every room is linked once on its own, with --whole-archive, against the rooms it
#   uses and nothing else (rt_roomcheck_<room>); a call into a room it may not use (declared by
#   hand to get past the includes) is an undefined reference there.
#
# rtrack_room(NAME [EXCLUDE] SOURCES src... [USES room...] [PUBLIC_USES room...] [LIBS lib...])
#   EXCLUDE      not built by default (the probes of tests/layout, built by their tests)
#   USES         rooms this one calls (their headers are private to it)
#   PUBLIC_USES  rooms whose headers this room's own headers include (passed on to its users)
#   LIBS         outside libraries (SQLite, libdl, ...)

file(WRITE ${CMAKE_BINARY_DIR}/gen/roomcheck_main.c
  "/* the link check of each room (cmake/Rooms.cmake) */\nint main(void);\nint main(void) { return 0; }\n")

function(rtrack_room name)
  cmake_parse_arguments(R "EXCLUDE" "" "SOURCES;USES;PUBLIC_USES;LIBS" ${ARGN})
  set(all "")
  if(R_EXCLUDE)
    set(all EXCLUDE_FROM_ALL)
  endif()
  add_library(rt_${name} STATIC ${all} ${R_SOURCES})
  set(root ${CMAKE_BINARY_DIR}/gen/rooms/${name})
  file(MAKE_DIRECTORY ${root}/rtrack)
  if(EXISTS ${CMAKE_SOURCE_DIR}/include/rtrack/${name} AND NOT EXISTS ${root}/rtrack/${name})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/include/rtrack/${name} ${root}/rtrack/${name} SYMBOLIC)
  endif()
  target_include_directories(rt_${name} PUBLIC ${root} PRIVATE ${CMAKE_SOURCE_DIR}/src/${name})
  target_compile_options(rt_${name} PRIVATE ${RTRACK_WARN})
  target_link_libraries(rt_${name} PUBLIC rt_build_flags)
  foreach(u IN LISTS R_PUBLIC_USES)
    target_link_libraries(rt_${name} PUBLIC rt_${u})
  endforeach()
  foreach(u IN LISTS R_USES)
    target_link_libraries(rt_${name} PRIVATE rt_${u})
  endforeach()
  if(R_LIBS)
    target_link_libraries(rt_${name} PUBLIC ${R_LIBS})
  endif()
  # the room alone, every object of it kept, against what it may use (the distribution's build
  # checks it; the portable build's programs carry objects of their own, src/base/glibc_compat.c,
  # and make it on request only)
  set(check_all ${all})
  if(RTRACK_PORTABLE)
    set(check_all EXCLUDE_FROM_ALL)
  endif()
  add_executable(rt_roomcheck_${name} ${check_all} ${CMAKE_BINARY_DIR}/gen/roomcheck_main.c)
  target_link_libraries(rt_roomcheck_${name} PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,rt_${name}>")
endfunction()
