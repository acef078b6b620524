# Install and packaging (included by CMakeLists.txt). `cmake --install`
# puts, under the usual GNU prefixes (GNUInstallDirs):
#   bin/lockstorm                          the binary
#   lib/lockstorm/liblsclock.so            the clock shim (when the lsclock target exists)
#   share/lockstorm/workloads/             bundled workloads (run by name)
#   share/lockstorm/adapters/              bundled adapters (without node_modules)
#   share/lockstorm/tests/fixtures/        the record-mode workloads' program
#   share/doc/lockstorm/                   README.md and docs/*.md
#   share/man/man1/lockstorm.1             the man page
#   share/bash-completion/completions/lockstorm
# The binary finds its workloads at <exe>/../share/lockstorm/workloads and
# the shim at <exe>/../lib/lockstorm/ (a private directory, not LIBDIR: on
# Debian LIBDIR is multiarch, and the relative lookup must not depend on it).
# `cpack -G DEB` packages the same tree under /usr. Tested by
# tests/e2e/test_install.sh.
include(GNUInstallDirs)

set(LS_PKG_LIBDIR lib/lockstorm)
set(LS_PKG_DATADIR ${CMAKE_INSTALL_DATADIR}/lockstorm)

# `lockstorm --version` names the build type (harness/cli_help.c)
set_property(SOURCE ${CMAKE_SOURCE_DIR}/harness/cli_help.c APPEND PROPERTY
             COMPILE_DEFINITIONS LS_BUILD_TYPE="${CMAKE_BUILD_TYPE}")

install(TARGETS lockstorm RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET lsclock)
  install(TARGETS lsclock LIBRARY DESTINATION ${LS_PKG_LIBDIR} NAMELINK_SKIP)
endif()
install(DIRECTORY ${CMAKE_SOURCE_DIR}/workloads/ DESTINATION ${LS_PKG_DATADIR}/workloads
        FILES_MATCHING PATTERN "*.yaml")
if(EXISTS ${CMAKE_SOURCE_DIR}/adapters)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/adapters/ DESTINATION ${LS_PKG_DATADIR}/adapters
          PATTERN node_modules EXCLUDE
          PATTERN __pycache__ EXCLUDE)
endif()
# the record-mode workloads' program (workloads/record/redis-*.yaml name it
# as ../../tests/fixtures/record_program.py, next to themselves)
install(PROGRAMS ${CMAKE_SOURCE_DIR}/tests/fixtures/record_program.py
        DESTINATION ${LS_PKG_DATADIR}/tests/fixtures)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
file(GLOB LS_DOCS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${LS_DOCS} DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${CMAKE_SOURCE_DIR}/docs/lockstorm.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/contrib/lockstorm.bash-completion
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME lockstorm)

# cpack -G DEB (and TGZ): one package, installed under /usr.
set(CPACK_PACKAGE_NAME lockstorm)
set(CPACK_PACKAGE_VENDOR "lockstorm")
set(CPACK_PACKAGE_CONTACT "lockstorm maintainers <lockstorm@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "verification and chaos-testing harness for distributed locks")
set(CPACK_PACKAGE_DESCRIPTION
    "lockstorm hammers a distributed lock (Redis SET NX PX, Redlock, broken variants, or a
library in another language through an adapter) with worker processes while it injects
faults, then checks the event logs for mutual-exclusion violations, lost updates with and
without fencing, and liveness. Results as text, JSON, JUnit XML, HTML and gnuplot charts.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)   # libc6, libhiredis, libyaml from the binary
set(CPACK_DEBIAN_PACKAGE_DEPENDS "redis-server")
# libpq5: loaded at the first PostgreSQL connection (locks/pq.c), so not
# found by SHLIBDEPS; without it only the PostgreSQL lock and store refuse
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gnuplot-nox, libpq5")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "redis-sentinel, nodejs, npm")
set(CPACK_GENERATOR "DEB;TGZ")
include(CPack)

# tests/e2e/test_ci_examples.sh builds lockstorm from a clone, as the CI
# examples do: give it room on a loaded two-core machine
if(TEST e2e/test_ci_examples)
  set_tests_properties(e2e/test_ci_examples PROPERTIES TIMEOUT 900)
endif()
