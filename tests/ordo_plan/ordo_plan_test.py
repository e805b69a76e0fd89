#!/usr/bin/env python3
"""Tests the ordo-plan program against an oracle written here from the problem's definition.

    ordo_plan_test.py PATH/TO/ordo-plan [SUITE ...]

SUITE is any of: known, random, formats, stdin, planners, large, errors (default: all).

The oracle solves the matrix-chain problem with its own memoized recursion over (first, last)
ranges and, for short chains, by enumerating every parenthesization. Costs are Python integers, so
overflow beyond 64 bits is decided exactly. Among equal-cost orders ordo's dynamic program takes
the smallest split at every range (docs/chain.md, "Tie rule"); the oracle picks its orders by the
same rule, and the enumeration checks that rule independently. Hu-Shing and the approximation may
choose other trees among ties, so for them the test recomputes the cost of the tree the tool
printed and compares costs. Only Python's standard library is used.
"""

import functools
import json
import os
import random
import re
import subprocess
import sys

LIMIT = 2**64 - 1  # ordo counts a cost of 2^64 - 1 or more as overflow (docs/chain.md)
TOOL = None
failures = []


# --- the oracle --------------------------------------------------------------------------------

def optimal(dims):
    """(cost, tree) of the cheapest order; a tree is an operand index or a (left, right) pair.
    Ties go to the smallest split of every range."""
    n = len(dims) - 1

    @functools.lru_cache(maxsize=None)
    def best(first, last):
        if first == last:
            return 0, first
        choice = None
        for k in range(first, last):
            left_cost, left_tree = best(first, k)
            right_cost, right_tree = best(k + 1, last)
            c = left_cost + right_cost + dims[first] * dims[k + 1] * dims[last + 1]
            if choice is None or c < choice[0]:
                choice = (c, (left_tree, right_tree))
        return choice

    result = best(0, n - 1)
    best.cache_clear()
    return result


def all_trees(first, last):
    """Every parenthesization of operands first..last, root split ascending, then left, then
    right: the first optimal tree in this order is the one the smallest-split rule picks."""
    if first == last:
        yield first
        return
    for k in range(first, last):
        for left in list(all_trees(first, k)):
            for right in all_trees(k + 1, last):
                yield (left, right)


def catalan(m):
    c = 1
    for i in range(m):
        c = c * 2 * (2 * i + 1) // (i + 2)
    return c


class facts:
    """Everything the tool prints about one tree, recomputed from the tree alone: the cost, the
    height, and the peak of intermediate elements by simulating the evaluation."""

    def __init__(self, dims, tree):
        # Post-order, left subtree first, by an explicit stack: the trees of long chains are deep.
        # Products are keyed by id(): they are distinct tuple objects.
        order = []
        stack = [(tree, False)]
        while stack:
            node, expanded = stack.pop()
            if isinstance(node, int):
                continue
            if expanded:
                order.append(node)
            else:
                stack += [(node, True), (node[1], False), (node[0], False)]
        span, height, size = {}, {}, {}

        def span_of(node):
            return (node, node) if isinstance(node, int) else span[id(node)]

        self.cost = 0
        self.peak = 0
        live = 0
        for index, node in enumerate(order):
            (first, mid), (mid_next, last) = span_of(node[0]), span_of(node[1])
            assert mid + 1 == mid_next
            span[id(node)] = (first, last)
            height[id(node)] = 1 + max(height.get(id(c), 0) if not isinstance(c, int) else 0 for c in node)
            self.cost += dims[first] * dims[mid_next] * dims[last + 1]
            # Operands and the final result are not intermediates; a factor is freed once its
            # product has been computed.
            mine = 0 if index == len(order) - 1 else dims[first] * dims[last + 1]
            self.peak = max(self.peak, live + mine)
            live += mine - sum(size[id(c)] for c in node if not isinstance(c, int))
            size[id(node)] = mine
        self.height = height[id(tree)] if order else 0


def order_string(tree):
    out = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, int):
            out.append("A%d" % (node + 1))
        else:
            stack.extend([")", node[1], node[0], "("])
    return "".join(out)


def parse_order(text, n):
    """The tree an order string describes; fails the test on anything malformed."""
    stack = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "(":
            stack.append("(")
            i += 1
        elif c == "A":
            j = i + 1
            while j < len(text) and text[j].isdigit():
                j += 1
            stack.append(int(text[i + 1:j]) - 1)
            i = j
        elif c == ")":
            right, left, opening = stack.pop(), stack.pop(), stack.pop()
            assert opening == "(", text
            stack.append((left, right))
            i += 1
        else:
            raise AssertionError("unexpected %r in order %r" % (c, text))
    assert len(stack) == 1, text
    leaves = []
    walk = [stack[0]]
    while walk:
        node = walk.pop()
        if isinstance(node, int):
            leaves.append(node)
        else:
            walk.extend([node[1], node[0]])
    assert leaves == list(range(n)), "order %r does not list A1..A%d once each" % (text, n)
    return stack[0]


def left_to_right(dims):
    return sum(dims[0] * dims[k] * dims[k + 1] for k in range(1, len(dims) - 1))


def grouped(value):
    return "{:,}".format(value)


def comparison(cost, ltr):
    if cost == ltr:
        return "the same"
    if cost == 0:
        return "avoided entirely"
    if ltr == 0:
        return "more"
    less = cost < ltr
    # The tool divides the two costs as doubles and rounds to one decimal.
    ratio = float(ltr) / float(cost) if less else float(cost) / float(ltr)
    whole, tenths = ("%.1f" % ratio).split(".")
    return "%s.%sx %s" % (grouped(int(whole)), tenths, "less" if less else "more")


def overflows(cost):
    """What the tool must refuse: a planned cost that does not fit in 64 bits."""
    return cost >= LIMIT


def fitting(number):
    """A number beside the cost as the JSON prints it: null when it does not fit in 64 bits."""
    return None if number >= LIMIT else number


def expected_text(dims, tree):
    """The text output; a number beside the cost that does not fit in 64 bits reads 'beyond 64 bits'."""
    f = facts(dims, tree)
    ltr = left_to_right(dims)
    ltr_text = "left-to-right beyond 64 bits" if ltr >= LIMIT else "left-to-right %s, %s" % (
        grouped(ltr), comparison(f.cost, ltr))
    flops = "beyond 64 bits" if 2 * f.cost > LIMIT else grouped(2 * f.cost)
    peak = "beyond 64 bits" if f.peak >= LIMIT else "%s element%s" % (grouped(f.peak), "" if f.peak == 1 else "s")
    return "order: %s   cost: %s mults (%s)   flops: %s\npeak temporary: %s\n" % (
        order_string(tree), grouped(f.cost), ltr_text, flops, peak)


# --- running the tool --------------------------------------------------------------------------

class result:
    def __init__(self, completed):
        self.code = completed.returncode
        self.out = completed.stdout.decode("utf-8", "replace")
        self.err = completed.stderr.decode("utf-8", "replace")


def run(args, stdin=b""):
    return result(subprocess.run([TOOL] + [str(a) for a in args], input=stdin,
                                 capture_output=True, timeout=300))


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)
    return condition


def check_success(r, what):
    return check(r.code == 0 and r.err == "", "%s: exit %d, stderr %r" % (what, r.code, r.err[:300]))


def check_error(args, needle, stdin=b"", code=2):
    """An error: the exit code, exactly one line on stderr naming the problem, nothing on stdout."""
    r = run(args, stdin)
    what = "ordo-plan %s (stdin %r)" % (" ".join(map(str, args)), stdin[:40])
    check(r.code == code, "%s: exit %d, expected %d" % (what, r.code, code))
    check(r.out == "", "%s: wrote to stdout: %r" % (what, r.out[:200]))
    check(r.err.startswith("ordo-plan: ") and r.err.endswith("\n") and r.err.count("\n") == 1,
          "%s: stderr is not one 'ordo-plan: ...' line: %r" % (what, r.err[:300]))
    check(needle in r.err, "%s: stderr %r does not mention %r" % (what, r.err[:300], needle))


# --- suites ------------------------------------------------------------------------------------

def suite_known():
    """Published instances (references.md, the issue's example) as exact text."""
    r = run([100, 5, 200, 20])
    check_success(r, "100 5 200 20")
    check(r.out == "order: (A1(A2A3))   cost: 30,000 mults (left-to-right 500,000, 16.7x less)"
                   "   flops: 60,000\npeak temporary: 100 elements\n", "the issue's example: %r" % r.out)
    instances = [
        ([30, 35, 15, 5, 10, 20, 25], 15125, "((A1(A2A3))((A4A5)A6))"),
        ([5, 10, 3, 12, 5, 50, 6], 2010, "((A1A2)((A3A4)(A5A6)))"),
        ([10, 100, 5, 50], 7500, None),
        ([40, 20, 30, 10, 30], 26000, None),
        ([1, 10, 1, 10, 1], 21, None),
        ([7, 7, 7, 7, 7], 3 * 343, "(A1(A2(A3A4)))"),  # equal squares nest to the right
        ([3, 4], 0, "A1"),
    ]
    for dims, cost, order in instances:
        oracle_cost, tree = optimal(dims)
        check(oracle_cost == cost, "oracle disagrees with the published optimum of %s" % dims)
        if order is not None:
            check(order_string(tree) == order, "oracle order of %s is %s" % (dims, order_string(tree)))
        r = run(dims)
        check_success(r, str(dims))
        check(r.out == expected_text(dims, tree), "%s: %r vs %r" % (dims, r.out, expected_text(dims, tree)))
    # CLRS's chain through every planner: the same optimum.
    for planner in ["dynamic_programming", "hu_shing", "automatic"]:
        r = run(["--json", "--planner", planner, 30, 35, 15, 5, 10, 20, 25])
        check_success(r, "CLRS with " + planner)
        check(json.loads(r.out)["cost"] == 15125, "CLRS with %s: %s" % (planner, r.out))


def random_dims(rng):
    n = rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8] + list(range(1, 14)))
    kind = rng.random()
    if kind < 0.3:
        high, low = 3, 0  # zeros and ties
    elif kind < 0.5:
        high, low = 6, 1
    elif kind < 0.8:
        high, low = 1000, 1
    elif kind < 0.9:
        high, low = 10**6, 0
    else:
        low, high = 2**16, 2**24  # costs near and beyond 2^64
    return [rng.randint(low, high) for _ in range(n + 1)]


def suite_random():
    """Random chains: the exact text of the DP planners, or the overflow error."""
    rng = random.Random(16)
    checked_by_enumeration = 0
    for case in range(400):
        dims = random_dims(rng)
        n = len(dims) - 1
        cost, tree = optimal(dims)
        if n <= 7:
            # The enumeration checks the oracle: the first optimal tree in split order is the
            # smallest-split tree, and there are Catalan(n - 1) trees.
            trees = list(all_trees(0, n - 1))
            check(len(trees) == catalan(n - 1), "enumeration of %d operands" % n)
            costs = [facts(dims, t).cost for t in trees]
            first_best = trees[costs.index(min(costs))]
            check(min(costs) == cost and first_best == tree, "oracle self-check on %s" % dims)
            checked_by_enumeration += 1
        f = facts(dims, tree)
        ltr = left_to_right(dims)
        planner = ["automatic", "dynamic_programming"][case % 2]
        r = run(["--planner", planner] + dims)
        if overflows(f.cost):
            check(r.code == 2 and r.out == "" and "does not fit in 64 bits" in r.err and r.err.count("\n") == 1,
                  "%s with %s: expected an overflow error, got %d %r %r" % (dims, planner, r.code, r.out, r.err))
            continue
        check_success(r, "%s with %s" % (dims, planner))
        check(r.out == expected_text(dims, tree),
              "%s with %s:\n  got      %r\n  expected %r" % (dims, planner, r.out, expected_text(dims, tree)))
    check(checked_by_enumeration > 100, "too few chains checked by enumeration")


def parse_dot(text):
    """Nodes {name: label} and edges [(from, to)] of the tool's digraph, checking its frame."""
    lines = text.splitlines()
    assert lines[0] == "digraph ordo_plan {" and lines[-1] == "}", text[:200]
    nodes, edges = {}, []
    for line in lines[1:-1]:
        m = re.fullmatch(r'  (\w+) \[shape=(box|ellipse), label="([^"]*)"\];', line)
        if m:
            assert m.group(1) not in nodes, "node %s declared twice" % m.group(1)
            nodes[m.group(1)] = (m.group(2), m.group(3).split("\\n"))
            continue
        m = re.fullmatch(r"  (\w+) -> (\w+);", line)
        if m:
            edges.append((m.group(1), m.group(2)))
            continue
        assert re.fullmatch(r'  label="[^"]*";|  ordering=out;', line), "unexpected dot line %r" % line
    return nodes, edges


def check_dot(dims, tree, text):
    what = "--dot %s" % dims
    try:
        nodes, edges = parse_dot(text)
    except AssertionError as e:
        check(False, "%s: %s" % (what, e))
        return
    n = len(dims) - 1
    for i in range(n):
        check(nodes.get("A%d" % (i + 1)) == ("box", ["A%d" % (i + 1), "%dx%d" % (dims[i], dims[i + 1])]),
              "%s: leaf A%d is %r" % (what, i + 1, nodes.get("A%d" % (i + 1))))
    children = {}
    for parent, child in edges:
        children.setdefault(parent, []).append(child)
    inner = [name for name in nodes if not name.startswith("A")]
    check(len(inner) == n - 1 and all(len(children.get(p, [])) == 2 for p in inner),
          "%s: %d products, children %r" % (what, len(inner), children))
    check(set(children) == set(inner), "%s: edges leave non-products" % what)
    # Rebuild the tree from the root (the one node nobody points to) and compare with the oracle.
    pointed = {child for _, child in edges}
    roots = [name for name in nodes if name not in pointed]
    if not check(len(roots) == 1, "%s: roots %r" % (what, roots)):
        return
    total = 0

    def build(name):
        nonlocal total
        if name.startswith("A"):
            return int(name[1:]) - 1
        left, right = (build(c) for c in children[name])
        first, last = leftmost(left), rightmost(right)
        shape, label = nodes[name]
        own = dims[first] * dims[leftmost(right)] * dims[last + 1]
        total += own
        check(shape == "ellipse" and label == ["A%d..A%d" % (first + 1, last + 1),
                                               "%dx%d" % (dims[first], dims[last + 1]),
                                               "%s mults" % grouped(own)],
              "%s: product %s is %r" % (what, name, nodes[name]))
        return (left, right)

    def leftmost(t):
        while not isinstance(t, int):
            t = t[0]
        return t

    def rightmost(t):
        while not isinstance(t, int):
            t = t[1]
        return t

    rebuilt = build(roots[0])
    check(rebuilt == tree, "%s: the graph is %s, expected %s" % (what, order_string(rebuilt), order_string(tree)))
    check(total == facts(dims, tree).cost, "%s: product costs sum to %d" % (what, total))


def check_json(dims, tree, text, planner, algorithm, stats=False):
    what = "--json %s" % dims
    try:
        obj = json.loads(text)
    except ValueError as e:
        check(False, "%s: not JSON (%s): %r" % (what, e, text[:200]))
        return
    f = facts(dims, tree)
    expected = {
        "order": order_string(tree), "cost": f.cost, "left_to_right_cost": fitting(left_to_right(dims)),
        "flops": None if 2 * f.cost > LIMIT else 2 * f.cost, "peak_temporary_elements": fitting(f.peak),
        "matrices": len(dims) - 1,
        "planner": planner, "algorithm": algorithm,
    }
    got = dict(obj)
    stats_object = got.pop("stats", None)
    check(got == expected, "%s:\n  got      %r\n  expected %r" % (what, got, expected))
    if stats:
        check(isinstance(stats_object, dict) and stats_object.get("products") == len(dims) - 2 and stats_object.get("tree_height") == f.height and
              all(isinstance(stats_object.get(k), float) and stats_object[k] >= 0
                  for k in ("read_seconds", "planning_seconds")),
              "%s --stats: %r" % (what, stats_object))
    else:
        check(stats_object is None, "%s: stats without --stats" % what)


def suite_formats():
    """--json, --dot and --stats on random chains, and --help and --version."""
    rng = random.Random(17)
    for case in range(150):
        dims = random_dims(rng)
        if rng.random() < 0.3:
            dims = [rng.randint(0, 40) for _ in range(rng.randint(2, 25))]
        cost, tree = optimal(dims)
        f = facts(dims, tree)
        if overflows(cost):
            continue
        r = run(["--json"] + dims)
        check_success(r, "--json %s" % dims)
        check_json(dims, tree, r.out, "automatic", "dynamic_programming")
        r = run(dims + ["--json", "--stats", "--planner=dynamic_programming"])
        check_success(r, "--json --stats %s" % dims)
        check_json(dims, tree, r.out, "dynamic_programming", "dynamic_programming", stats=True)
        r = run(["--dot"] + dims)
        check_success(r, "--dot %s" % dims)
        check_dot(dims, tree, r.out)
        r = run(["--cost-only"] + dims)
        check_success(r, "--cost-only %s" % dims)
        check(r.out == expected_text(dims, tree).split("   ", 1)[1], "--cost-only %s: %r" % (dims, r.out))
        r = run(["--json", "--cost-only"] + dims)
        check_success(r, "--json --cost-only %s" % dims)
        check("order" not in json.loads(r.out) and json.loads(r.out)["cost"] == f.cost,
              "--json --cost-only %s: %r" % (dims, r.out))
        r = run(["--stats"] + dims)
        check_success(r, "--stats %s" % dims)
        lines = r.out.split("\n")
        check("\n".join(lines[:2]) + "\n" == expected_text(dims, tree), "--stats %s: plan lines %r" % (dims, lines[:2]))
        check(len(lines) == 5 and lines[4] == "" and
              lines[2] == "matrices: %s   products: %s   tree height: %s" % (
                  grouped(len(dims) - 1), grouped(len(dims) - 2), grouped(f.height)) and
              re.fullmatch(r"planner: automatic \(ran dynamic_programming\)   read: \d+\.\d{6} s"
                           r"   planning: \d+\.\d{6} s", lines[3]) is not None,
              "--stats %s: %r" % (dims, lines[2:]))
    # A real Graphviz, where one is installed, must accept the graph.
    if any(os.access(os.path.join(p, "dot"), os.X_OK) for p in os.environ.get("PATH", "").split(os.pathsep)):
        graph = run(["--dot", 30, 35, 15, 5, 10, 20, 25]).out.encode()
        checked = subprocess.run(["dot", "-Tsvg"], input=graph, capture_output=True)
        check(checked.returncode == 0, "dot rejects the graph: %r" % checked.stderr[:300])
    for flag in ["--help", "-h"]:
        r = run([flag])
        check_success(r, flag)
        for word in ["--planner", "dynamic_programming", "hu_shing", "approximate", "automatic", "--json",
                     "--dot", "--stats", "--cost-only", "--help", "--version", "standard input", "exit status"]:
            check(word in r.out, "%s does not mention %s" % (flag, word))
    r = run(["1", "--help", "--bogus"])  # --help wins over what follows
    check_success(r, "--help before a bad option")
    r = run(["--version"])
    check_success(r, "--version")
    check(re.fullmatch(r"ordo-plan \d+\.\d+\.\d+\n", r.out) is not None, "--version: %r" % r.out)


def suite_stdin():
    """Dims from standard input and in arguments, separated by whitespace or commas."""
    dims = [30, 35, 15, 5, 10, 20, 25]
    expected = expected_text(dims, optimal(dims)[1])
    inputs = [b"30 35 15 5 10 20 25", b"30 35 15 5 10 20 25\n", b"30,35,15,5,10,20,25\n",
              b"30, 35, 15,\n5\t10\r\n20\n\n25\n", b"\n  30\n35\n15\n5\n10\n20\n25", b",30,35,,15 , 5,10,20,25,",
              b"30\r\n35\r\n15\r\n5\r\n10\r\n20\r\n25\r\n", b"30\v35\f15 5 10 20 25"]
    for text in inputs:
        r = run([], text)
        check_success(r, "stdin %r" % text)
        check(r.out == expected, "stdin %r: %r" % (text, r.out))
    for args in [["30,35,15,5,10,20,25"], ["30,35", "15", "5,10,20", "25"], ["30 35 15 5 10 20 25"],
                 ["--", "30", "35", "15", "5", "10", "20", "25"]]:
        r = run(args, b"1 2 3")  # arguments win: standard input is not read
        check_success(r, "arguments %r" % args)
        check(r.out == expected, "arguments %r: %r" % (args, r.out))
    # Arguments without a dim (an empty "$DIMS", separators alone) leave the dims to standard input.
    for args in [[""], ["", " "], [","], ["--", ""]]:
        r = run(args, b"30 35 15 5 10 20 25")
        check_success(r, "arguments %r without a dim, dims on stdin" % args)
        check(r.out == expected, "arguments %r without a dim, dims on stdin: %r" % (args, r.out))
    r = run(["--json"], b"100 5 200 20\n")
    check_success(r, "--json from stdin")
    check_json([100, 5, 200, 20], optimal([100, 5, 200, 20])[1], r.out, "automatic", "dynamic_programming")
    # Zero extents are matrices too; their products cost nothing.
    for dims in ([0, 5], [5, 0], [0, 0, 0], [10, 0, 10, 10], [0, 7, 0, 7, 0], [2**64 - 1, 0]):
        r = run([], ",".join(map(str, dims)).encode())
        check_success(r, "zero dims %s" % dims)
        check(r.out == expected_text(dims, optimal(dims)[1]), "zero dims %s: %r" % (dims, r.out))
    r = run([10, 0, 10, 10])
    check(r.out.startswith("order: (A1(A2A3))   cost: 0 mults (left-to-right 1,000, avoided entirely)"),
          "a zero inner dim: %r" % r.out)


def suite_planners():
    """hu_shing is exact and approximate within 2/sqrt(3) of the optimum; both on random chains,
    including many ties, checked through the tree each printed."""
    rng = random.Random(18)
    for case in range(160):
        n = rng.randint(1, 45)
        high = rng.choice([2, 3, 5, 30, 1000, 10**5])
        dims = [rng.randint(1 if rng.random() < 0.9 else 0, high) for _ in range(n + 1)]
        cost, dp_tree = optimal(dims)
        ltr = left_to_right(dims)
        for planner in ["hu_shing", "approximate", "automatic"]:
            r = run(["--json", "--planner", planner] + dims)
            if not check_success(r, "%s %s" % (planner, dims)):
                continue
            obj = json.loads(r.out)
            tree = parse_order(obj["order"], n)
            f = facts(dims, tree)
            algorithm = planner if planner != "automatic" else (
                "dynamic_programming" if n <= 32 else "hu_shing")
            check(obj["algorithm"] == algorithm and obj["planner"] == planner, "%s: %r" % (planner, obj))
            check(obj["cost"] == f.cost and obj["flops"] == 2 * f.cost and obj["peak_temporary_elements"] == f.peak
                  and obj["left_to_right_cost"] == ltr and obj["matrices"] == n,
                  "%s %s: printed numbers differ from its own tree's: %r" % (planner, dims, obj))
            if planner == "approximate":
                # cost <= 2/sqrt(3) * optimum, in integers: 3 cost^2 <= 4 optimum^2.
                check(cost <= f.cost and 3 * f.cost ** 2 <= 4 * cost ** 2,
                      "approximate %s: %d against optimum %d" % (dims, f.cost, cost))
            else:
                check(f.cost == cost, "%s %s: %d against optimum %d" % (planner, dims, f.cost, cost))
            if planner == "automatic" and n <= 32:
                check(tree == dp_tree, "automatic %s: not the DP's tree" % dims)
        # The text output of every planner describes the same tree as its JSON.
        r = run(["--planner", "approximate"] + dims)
        obj = json.loads(run(["--json", "--planner", "approximate"] + dims).out)
        check(r.out == expected_text(dims, parse_order(obj["order"], n)), "approximate text %s" % dims)


def suite_large():
    """Long chains from standard input: Hu-Shing's cost against the oracle at n = 150, and the
    printed tree's cost, peak and height at n = 5000."""
    rng = random.Random(19)
    dims = [rng.randint(1, 100) for _ in range(151)]
    cost, _ = optimal(dims)
    for planner in ["automatic", "hu_shing", "dynamic_programming"]:
        r = run(["--json", "--planner", planner], " ".join(map(str, dims)).encode())
        if check_success(r, "150 matrices with %s" % planner):
            obj = json.loads(r.out)
            check(obj["cost"] == cost == facts(dims, parse_order(obj["order"], 150)).cost,
                  "150 matrices with %s: %d against %d" % (planner, obj["cost"], cost))
    dims = [rng.randint(1, 1000) for _ in range(5001)]
    for planner in ["automatic", "hu_shing", "approximate"]:
        r = run(["--json", "--stats", "--planner", planner], "\n".join(map(str, dims)).encode())
        if check_success(r, "5000 matrices with %s" % planner):
            obj = json.loads(r.out)
            f = facts(dims, parse_order(obj["order"], 5000))
            check(obj["cost"] == f.cost and obj["peak_temporary_elements"] == f.peak and obj["matrices"] == 5000
                  and obj["stats"]["tree_height"] == f.height and obj["stats"]["products"] == 4999
                  and obj["algorithm"] == ("approximate" if planner == "approximate" else "hu_shing"),
                  "5000 matrices with %s" % planner)


def suite_errors():
    """Every error path: exit code 2 (1 for a full disk), one line on stderr, nothing on stdout."""
    check_error(["abc"], "'abc' is not a dimension (expected a non-negative integer)")
    check_error([3, "abc", 4], "'abc' is not a dimension")
    check_error([3, "1.5"], "'1.5' is not a dimension")
    check_error([3, "1e6"], "'1e6' is not a dimension")
    check_error([3, "+5"], "'+5' is not a dimension")
    check_error([3, "0x10"], "'0x10' is not a dimension")
    check_error([3, "-5"], "'-5' is negative")
    check_error(["-5", 3], "'-5' is negative")
    check_error([3, "-"], "'-' is not a dimension")
    check_error([3, "--", "-5"], "'-5' is negative")
    check_error([3, "007"], "'007' has a leading zero")
    check_error(["1,000", 5], "'000' has a leading zero (commas separate dims")
    check_error([3, str(2**64)], "'18446744073709551616' is too large (a dimension is at most 18446744073709551615)")
    check_error([3, "9" * 400], "is too large")
    check_error([3, "x" * 400], "...' is not a dimension")
    check_error([], "'abc' is not a dimension", b"30 35\n15 abc 5\n")
    check_error([], "standard input line 2: 'abc'", b"30 35\n15 abc 5\n")
    check_error([], "standard input line 1: '12\\x00' is not a dimension", b"12\x00 3")
    check_error([], "'\\xc3\\xa9' is not a dimension", "é 3".encode())
    check_error([], "standard input line 1: '-1' is negative", b"-1 3")
    check_error([7], "need at least 2 dims (d0..dn describe n >= 1 matrices), but the arguments held 1")
    check_error([], "need at least 2 dims (d0..dn describe n >= 1 matrices), but standard input held 0")
    check_error([], "standard input held 0", b" \n , \n")
    check_error([], "standard input held 1", b"42\n")
    check_error([","], "standard input held 0")  # no dim in the arguments: standard input, here empty
    check_error(["--bogus", 1, 2], "unknown option '--bogus' (see ordo-plan --help)")
    check_error([1, 2, "-x"], "unknown option '-x'")
    check_error(["--JSON", 1, 2], "unknown option '--JSON'")
    check_error(["--planner"], "--planner needs a name")
    check_error(["--planner", "greedy", 1, 2], "unknown planner 'greedy' (expected dynamic_programming, hu_shing")
    check_error(["--planner=", 1, 2], "unknown planner ''")
    check_error(["--json", "--dot", 1, 2], "--json and --dot cannot be combined")
    check_error(["--dot", "--stats", 1, 2], "--stats cannot be combined with --dot")
    check_error(["--dot", "--cost-only", 1, 2], "--cost-only cannot be combined with --dot")
    # Costs beyond 64 bits, for every planner: the optimum itself ...
    big = 2**22
    for planner in ["automatic", "dynamic_programming", "hu_shing", "approximate"]:
        check_error(["--planner", planner, big, big, big, big], "cost does not fit in 64 bits")
        check_error(["--json", "--planner", planner, 2**63, 2, 2], "cost does not fit in 64 bits")
    # ... but a plan whose cost fits is printed, with the numbers beside it that do not fit as
    # "beyond 64 bits" (text) and null (JSON): the left-to-right cost, the flops, the peak.
    for dims, key, text in [([2**30, 2**30, 2**30, 1], "left_to_right_cost", "(left-to-right beyond 64 bits)"),
                            ([2**21, 2**21, 2**21], "flops", "flops: beyond 64 bits\n"),
                            ([0, 2**40, 0, 2**40], "peak_temporary_elements", "peak temporary: beyond 64 bits\n"),
                            ([2, 2**63 - 1, 1], "flops", "flops: beyond 64 bits\n")]:
        r = run(dims)
        if check_success(r, "%s, text" % dims):
            check(text in r.out and r.out == expected_text(dims, optimal(dims)[1]), "%s: %r" % (dims, r.out))
        r = run(["--json", "--cost-only"] + dims)
        if check_success(r, "%s, JSON" % dims):
            obj = json.loads(r.out)
            check(obj[key] is None and obj["cost"] == optimal(dims)[0], "%s: %r" % (dims, obj))
    # Exactly at the limits: a cost of 2^64 - 1 counts as overflow (docs/chain.md), 2^64 - 2
    # fits but its flops do not (above), and 2^63 - 1 fits with its flops 2^64 - 2.
    check_error([2**32 + 1, 2**32 - 1, 1], "the optimal cost does not fit in 64 bits")
    r = run(["--json", 2**63 - 1, 1, 1])
    if check_success(r, "a cost of 2^63 - 1"):
        obj = json.loads(r.out)
        check(obj["cost"] == 2**63 - 1 and obj["flops"] == 2**64 - 2, "a cost of 2^63 - 1: %r" % obj)
    # Out of memory: exit status 1, one line. The DP's table for 10^5 matrices (10^10 entries)
    # cannot fit under a 2 GiB address-space limit. A sanitizer build cannot start under such a
    # limit at all, so the case is skipped where --version fails under it.
    try:
        import resource

        def limited():
            resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

        starts = subprocess.run([TOOL, "--version"], capture_output=True, preexec_fn=limited).returncode == 0
    except (ImportError, ValueError, OSError):
        starts = False
    if starts:
        completed = subprocess.run([TOOL, "--planner", "dynamic_programming"], input=b"1 " * 100001,
                                   capture_output=True, preexec_fn=limited)
        check(completed.returncode == 1 and completed.stdout == b"" and completed.stderr ==
              b"ordo-plan: out of memory planning 100,000 matrices (dynamic_programming keeps n^2 table "
              b"entries; try --planner hu_shing)\n", "out of memory: %d %r" % (completed.returncode, completed.stderr))
    # Standard output that cannot be written: exit status 1, one line.
    if os.path.exists("/dev/full"):
        with open("/dev/full", "wb") as full:
            completed = subprocess.run([TOOL, "100", "5", "200", "20"], stdout=full, stderr=subprocess.PIPE)
        check(completed.returncode == 1 and completed.stderr == b"ordo-plan: cannot write to standard output\n",
              "/dev/full: %d %r" % (completed.returncode, completed.stderr))


SUITES = {
    "known": suite_known, "random": suite_random, "formats": suite_formats, "stdin": suite_stdin,
    "planners": suite_planners, "large": suite_large, "errors": suite_errors,
}


def main():
    global TOOL
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    TOOL = os.path.abspath(sys.argv[1])
    names = sys.argv[2:] or list(SUITES)
    for name in names:
        if name not in SUITES:
            print("ordo_plan_test.py: unknown suite %r (expected one of %s)" % (name, ", ".join(SUITES)),
                  file=sys.stderr)
            return 2
    for name in names:
        before = len(failures)
        SUITES[name]()
        print("%-9s %s" % (name, "ok" if len(failures) == before else "%d failures" % (len(failures) - before)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
