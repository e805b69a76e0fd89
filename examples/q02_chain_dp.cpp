// Question 2: how do you order the product A1 A2 ... An?
//
// The matrix-chain dynamic program (CLRS 3rd ed., section 15.2), checked with closed forms, the
// published CLRS instance, and a 1,000-matrix chain planned at run time by the DP and by Hu and
// Shing's O(n log n) algorithm. The demonstration lives in support/q02_chain_dp.hpp, which the
// tour calls too.
#include "support/q02_chain_dp.hpp"

int main() { return ordo_examples::q02::demonstrate() ? 0 : 1; }
