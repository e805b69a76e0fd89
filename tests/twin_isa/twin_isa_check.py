#!/usr/bin/env python3
"""Checks that ordo's AVX2 and AVX-512 code paths are that code all the way down (issue 29).

A dispatched function (platform/host_dispatched.hpp's run_avx2_twin<Kernel> and
run_avx512_twin<Kernel>, which must contain their kernel's whole call tree, or an explicit *_avx2
kernel such as the exact sum's, or *_avx512) is compiled with its level's target. A helper it calls out of line
is compiled once for the baseline ISA, so the "AVX2" path silently runs SSE2 code: in the binary,
a call from a dispatched function to an ordo function that is not one. This reads the disassembly
(objdump -d -C) of a test binary and fails when:
  - the binary has no AVX2 function at all (nothing dispatched: the check would be vacuous),
  - a dispatched function calls an ordo function that is not a dispatched function,
  - a dispatched function calls a per-vector helper (fast_exp) out of line,
  - no AVX2 function uses a 256-bit register (ymm),
  - there are AVX-512 twins and none of them uses a 512-bit register (zmm).
Calls into the C library (exp, log), OpenMP and Kokkos' abort path are allowed: they are not
kernel bodies.

usage: twin_isa_check.py OBJDUMP BINARY
"""
import re
import subprocess
import sys


def main(objdump, binary):
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", "-C", binary], capture_output=True, text=True,
                          check=True).stdout
    blocks = re.split(r"\n(?=[0-9a-f]+ <)", text)
    avx2 = re.compile(r"run_avx2_twin<|run_avx512_twin<|ordo::[\w:]*_avx(2|512)\b")
    # Helpers of the right level that work on one vector at a time must still be inlined: out of
    # line, each call spills the vectors it takes and returns (softmax's fast_exp_avx512 ran 25 %
    # slower when a change to the twins' signature left it out of line).
    per_vector = re.compile(r"fast_exp")
    # exact_blocks_use_avx2() and _avx512() choose a level: baseline code by design, not dispatched.
    predicate = re.compile(r"_use_avx(2|512)\(")
    twins = [b for b in blocks if re.match(r"[0-9a-f]+ <", b) and avx2.search(b.split("\n", 1)[0])
             and "ordo::" in b.split("\n", 1)[0] and not predicate.search(b.split("\n", 1)[0])]
    problems = []
    if not twins:
        problems.append("no AVX2 function of ordo in the binary")
    for block in twins:
        name = block.split("\n", 1)[0]
        for target in sorted(set(re.findall(r"\bcall\s+[0-9a-f]+ <([^>]*)>", block))):
            if "ordo::" in target and not avx2.search(target):
                problems.append("%s\n    calls %s" % (name[:200], target[:300]))
            elif "ordo::" in target and per_vector.search(target):
                problems.append("%s\n    calls the per-vector helper %s out of line" % (name[:200], target[:300]))
    if twins and not any(re.search(r"%ymm\d", b) for b in twins):
        problems.append("no AVX2 function uses a ymm register: they are not AVX2 code")
    wide = [b for b in twins if re.search(r"run_avx512_twin<|_avx512\b", b.split("\n", 1)[0])]
    if wide and not any(re.search(r"%zmm\d", b) for b in wide):
        problems.append("no AVX-512 twin uses a zmm register: they are not AVX-512 code")
    print("%s: %d dispatched functions (%d AVX-512 twins), %d with ymm code, %d with zmm code" % (
        binary, len(twins), len(wide), sum(bool(re.search(r"%ymm\d", b)) for b in twins),
        sum(bool(re.search(r"%zmm\d", b)) for b in twins)))
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
