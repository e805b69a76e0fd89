// Question 6: what does "intractable" mean?
//
// No polynomial-time algorithm is known for it. Ordering a matrix chain by trying every tree is
// exponential (Catalan-many trees), yet the dynamic program solves it in O(n^3): this example
// shows both growths side by side and times the brute force against the DP. The demonstration
// lives in support/q06_intractable.hpp, which the tour calls too.
#include "support/q06_intractable.hpp"

int main() { return ordo_examples::q06::demonstrate() ? 0 : 1; }
