# The CMake package.  find_package (kvevents CONFIG) reads
# $(libdir)/cmake/kvevents/kvevents-config.cmake, which defines the
# imported target kvevents::kvevents, and kvevents-config-version.cmake;
# configure writes both from the templates here, with the directories
# relative to the prefix (configure.ac says how).  consumer/ is a
# master's CMake build of tests/installcheck-consumer.c and
# examples/master.cpp: make check (tests/test-cmake.sh) runs it on the
# build's files laid out as make install lays them out, make
# installcheck on the installed ones.

kvevents_cmakedir = $(libdir)/cmake/kvevents
kvevents_cmake_DATA = %reldir%/kvevents-config.cmake %reldir%/kvevents-config-version.cmake
EXTRA_DIST += \
	%reldir%/kvevents-config.cmake.in \
	%reldir%/kvevents-config-version.cmake.in \
	%reldir%/consumer/CMakeLists.txt

# make installcheck (and so make distcheck): cmake/consumer/ built and
# run against the installed files (cmake/installcheck.sh).
installcheck-local: installcheck-cmake
installcheck-cmake:
	CC='$(CC)' CXX='$(CXX)' CMAKE='$(CMAKE)' DESTDIR='$(DESTDIR)' \
	prefix='$(prefix)' libdir='$(libdir)' KVEV_HAVE_CXX17='$(HAVE_CXX17_01)' \
	KVEV_HAVE_ZMQ='$(HAVE_ZMQ_01)' KVEV_CMAKE_RELOCATABLE='$(KVEV_CMAKE_RELOCATABLE)' \
	$(SHELL) $(srcdir)/%reldir%/installcheck.sh '$(srcdir)'
.PHONY: installcheck-cmake
EXTRA_DIST += %reldir%/installcheck.sh
