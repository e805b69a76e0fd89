// This source fails for a reason other than the expected one; the harness must notice.
// expect: this diagnostic text does not appear
// expect-harness-failure
#include <ordo/core/chain.hpp>

static_assert(sizeof(ordo::shape<2, 3>) == 0, "an unrelated failure");
