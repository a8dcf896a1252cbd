# Portable.cmake - what RTRACK_PORTABLE=ON changes (docs/portability.md, scripts/release.sh):
#
# - SQLite is compiled in from the amalgamation (RTRACK_SQLITE_DIR: sqlite3.c and sqlite3.h, the
#   copy in the npm tarball of better-sqlite3, pinned below by version and SHA-256), with the
#   options rtrack needs and not the ones it does not (target rt_sqlite3);
# - libcurl and zlib stay loaded with dlopen at run time (src/net/libs.c); only their headers
#   are read at build time, for types and constants. They are copied into the build tree alone
#   (gen/netinc), never added as a system include folder: /usr/include (or its multiarch folder)
#   holds the build machine's glibc headers, which would shadow the toolchain's glibc 2.17 ones,
#   and arch-specific headers that are wrong for a cross build. curl.h, zlib.h and zconf.h
#   depend on the architecture only through the compiler's own macros.
# - every section of code and data apart, so the link keeps only what is reached (most of
#   SQLite's API is not), and the binary stripped at link time: the release is what is tested.

set(RTRACK_SQLITE_VERSION 3.53.2)
set(RTRACK_SQLITE_C_SHA256 60d2f39a3726cd6b9021da6f4e868608d66fbb6528a9f513dc8ffcc640493422)
set(RTRACK_SQLITE_H_SHA256 9e69a1353a4288450b0d5239ede11fc7f1f4c8e5eb07491fc8317eacb5b7de7e)
set(RTRACK_SQLITE_DIR "" CACHE PATH "folder holding the SQLite ${RTRACK_SQLITE_VERSION} amalgamation (sqlite3.c, sqlite3.h)")

if(NOT EXISTS "${RTRACK_SQLITE_DIR}/sqlite3.c" OR NOT EXISTS "${RTRACK_SQLITE_DIR}/sqlite3.h")
  message(FATAL_ERROR "RTRACK_PORTABLE needs the SQLite amalgamation: -DRTRACK_SQLITE_DIR=<folder "
    "with sqlite3.c and sqlite3.h> (scripts/release.sh installs it with npm)")
endif()
foreach(f c h)
  file(SHA256 "${RTRACK_SQLITE_DIR}/sqlite3.${f}" _sum)
  string(TOUPPER ${f} _F)
  if(NOT _sum STREQUAL RTRACK_SQLITE_${_F}_SHA256)
    message(FATAL_ERROR "${RTRACK_SQLITE_DIR}/sqlite3.${f}: SHA-256 ${_sum}, not the pinned "
      "${RTRACK_SQLITE_${_F}_SHA256} of SQLite ${RTRACK_SQLITE_VERSION} (cmake/Portable.cmake)")
  endif()
endforeach()

# What rtrack needs of SQLite (sql/, src/store/, src/base/json.c): the JSON functions (built in
# since 3.38), window functions, WAL, ATTACH, RETURNING, UPSERT, STRICT and WITHOUT ROWID tables,
# URI file names (read-only opens), several threads each with its own connection. What it does
# not: extensions loaded at run time (and their dlopen), shared cache, deprecated interfaces,
# progress callbacks, the lookaside allocator (Debian's SQLite leaves it out too, and rtrack
# turns it off per connection), memory statistics (a global mutex on every allocation),
# double-quoted string literals (an identifier misspelt would silently become a string).
add_library(rt_sqlite3 STATIC "${RTRACK_SQLITE_DIR}/sqlite3.c")
target_include_directories(rt_sqlite3 SYSTEM PUBLIC "${RTRACK_SQLITE_DIR}")
target_compile_definitions(rt_sqlite3 PRIVATE
  SQLITE_THREADSAFE=1
  SQLITE_USE_URI=1
  SQLITE_DQS=0
  SQLITE_DEFAULT_MEMSTATUS=0
  SQLITE_LIKE_DOESNT_MATCH_BLOBS
  SQLITE_OMIT_LOAD_EXTENSION
  SQLITE_OMIT_SHARED_CACHE
  SQLITE_OMIT_DEPRECATED
  SQLITE_OMIT_PROGRESS_CALLBACK
  SQLITE_OMIT_LOOKASIDE
  SQLITE_UNTESTABLE
  HAVE_ISNAN=1)
# the amalgamation is not rtrack's code: none of rtrack's warnings
target_compile_options(rt_sqlite3 PRIVATE -w)
target_link_libraries(rt_sqlite3 PUBLIC m Threads::Threads)

target_compile_options(rt_build_flags INTERFACE -ffunction-sections -fdata-sections)
target_link_options(rt_build_flags INTERFACE -Wl,--gc-sections -s)
target_compile_options(rt_sqlite3 PRIVATE -ffunction-sections -fdata-sections)

# libcurl's and zlib's headers: found where the build machine's packages put them
# (libcurl4-openssl-dev, zlib1g-dev), or given
pkg_check_modules(RT_HOST_CURL QUIET libcurl)
pkg_check_modules(RT_HOST_ZLIB QUIET zlib)
find_path(RTRACK_CURL_INCLUDE_DIR curl/curl.h HINTS ${RT_HOST_CURL_INCLUDEDIR} NO_CMAKE_FIND_ROOT_PATH
  DOC "folder holding curl/curl.h (libcurl's headers)")
find_path(RTRACK_ZLIB_INCLUDE_DIR zlib.h HINTS ${RT_HOST_ZLIB_INCLUDEDIR} NO_CMAKE_FIND_ROOT_PATH
  DOC "folder holding zlib.h and zconf.h")
if(NOT RTRACK_CURL_INCLUDE_DIR OR NOT RTRACK_ZLIB_INCLUDE_DIR)
  message(FATAL_ERROR "RTRACK_PORTABLE needs libcurl's and zlib's headers (Debian: "
    "libcurl4-openssl-dev zlib1g-dev), or -DRTRACK_CURL_INCLUDE_DIR= -DRTRACK_ZLIB_INCLUDE_DIR=")
endif()
set(_netinc ${CMAKE_BINARY_DIR}/gen/netinc)
file(REMOVE_RECURSE ${_netinc})
file(GLOB _curl_h "${RTRACK_CURL_INCLUDE_DIR}/curl/*.h")
file(COPY ${_curl_h} DESTINATION ${_netinc}/curl)
file(COPY "${RTRACK_ZLIB_INCLUDE_DIR}/zlib.h" "${RTRACK_ZLIB_INCLUDE_DIR}/zconf.h" DESTINATION ${_netinc})
set(RTRACK_NET_INCLUDE_DIRS ${_netinc})
