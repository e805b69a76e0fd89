#ifndef ORDO_KERNELS_EXECUTION_HPP
#define ORDO_KERNELS_EXECUTION_HPP

// The execution spaces this build enables (ordo::enabled_execution_spaces), whether a space runs
// on the host (ordo::is_host_space_v) and their names. Defined in the shared platform layer,
// which the launch shapes of kernels/ and nn/ build on; this is where users include them.

#include <ordo/platform/execution.hpp>

#endif
