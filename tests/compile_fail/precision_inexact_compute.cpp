// expect: ordo::precision<Storage, Compute> requires Compute to hold every Storage value exactly
// double data computed in float would be rounded before the first operation.
#include <ordo/precision.hpp>

using too_narrow = ordo::precision<double, float>::compute_type;
