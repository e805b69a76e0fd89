#ifndef ORDO_TESTS_SUPPORT_TREE_TEXT_HPP
#define ORDO_TESTS_SUPPORT_TREE_TEXT_HPP

// A tree type of ordo::product and ordo::operand written out as the planner writes orders,
// "(A1(A2A3))", at run time: the oracle that compares type-level trees with value-level plans.

#include <ordo/core/chain.hpp>

#include <cstddef>
#include <string>

namespace ordo_test {

template <class Tree>
struct tree_writer;
template <std::size_t Index>
struct tree_writer<ordo::operand<Index>> {
  static void write(std::string& out) {
    out += 'A';
    out += std::to_string(Index + 1);
  }
};
template <class Left, class Right>
struct tree_writer<ordo::product<Left, Right>> {
  static void write(std::string& out) {
    out += '(';
    tree_writer<Left>::write(out);
    tree_writer<Right>::write(out);
    out += ')';
  }
};

template <class Tree>
std::string tree_text() {
  std::string out;
  tree_writer<Tree>::write(out);
  return out;
}

}  // namespace ordo_test

#endif
