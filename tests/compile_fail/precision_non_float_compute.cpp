// expect: ordo::precision<Storage, Compute> requires Compute to be float or double
// Compute is what the arithmetic runs in: a 16-bit type is storage only.
#include <ordo/precision.hpp>

using storage_as_compute = ordo::precision<ordo::half, ordo::bfloat16>::compute_type;
