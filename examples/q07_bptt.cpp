// Question 7: time and space complexity of backpropagation through time (BPTT) for an RNN?
//
// A constexpr cost model of the RNN (time, activation memory, checkpointing simulated step by
// step), and the gradient as a chain of Jacobians whose cheapest order the planner proves to be
// reverse mode. Every claim is a static_assert in support/q07_bptt.hpp, which the tour uses too;
// this program prints them.
#include "support/q07_bptt.hpp"

int main() { ordo_examples::q07::demonstrate(); }
