// doctest's own main, compiled once and linked into every test of the pure layer (ordo::core):
// those tests need no Kokkos, so nothing is initialized around the run.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
