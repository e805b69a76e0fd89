"""What ordo costs the compiler: generated translation units compiled by g++ and clang++, timed.

docs/compile_time.md's compile-time-results (chains of 8 to 256 matrices), compile-time-hu-shing (64 to 4096),
include-cost, expression-compile and gemm-view-types (--only picks some). Each TU is compiled --reps times
round-robin under /usr/bin/time; chain TUs static_assert expected.cpp's plans, checked by a DP."""

import collections
import functools
import json
import os
import random
import re
import statistics
import subprocess
import tempfile
from pathlib import Path

import ordo_bench as ob

HERE = Path(__file__).resolve().parent
WATCH = ("include", "bench/compile_time")
DOC = "docs/compile_time.md"
SECTIONS = ("compile-time-results", "compile-time-hu-shing", "include-cost", "expression-compile", "gemm-view-types",
            "public-headers", "consumer", "structured-compile")
REPS = dict(zip(SECTIONS, (3, 3, 7, 5, 5, 3, 3, 5)))
STRUCTURED_GOAL = 1.0  # issue 31: a 6-operand structured chain planned at compile time, at most + 1 s
STRUCTURED_UNITS = {  # name: (label, source): the header alone, and with a 6-operand plan (value and product form)
    "header": ("`#include <ordo/core/structured_chain.hpp>` alone",
               "#include <ordo/core/structured_chain.hpp>\nint main() { return 0; }\n"),
    "plan": ("the header and a `constexpr` 6-operand plan: L⁻¹·A·S⁻¹·Bᵀ·D·x (lower⁻¹, general, SPD⁻¹, transposed, "
             "diagonal, vector), its kernels `static_assert`ed",
             "#include <ordo/core/structured_chain.hpp>\nusing namespace ordo::operands;\n"
             "constexpr auto plan = ordo::plan_structured_chain(std::array<std::size_t, 7>{400, 400, 300, 300, 500, 500, 1},"
             " std::array<ordo::chain_operand, 6>{lower.inverse(), general, spd.inverse(), general.transpose(), diagonal,"
             " general});\nstatic_assert(plan.kernels() == \"scale_rows gemv posv gemv trsv\");\n"
             "int main() { return 0; }\n"),
}
CONSUMER_GOAL = 1.5  # issue 30: a consumer's 3 x 3 a * b at most 1.5 times a Kokkos hello world
SEED, GOAL_N, GOAL_GXX = 2026, 64, 0.5  # the DP run's goals: n = 64 within the limits, + 0.5 s on g++
LONG_GOAL_N, LONG_GOAL, INCLUDE_GOAL = 1024, 0.8, 0.3  # issue 30 (issue 15 asked 1 s): 1024 matrices, + 0.8 s
HEADER_GOAL = 0.15  # issue 30: <ordo/core/chain.hpp> alone at most + 0.15 s over STANDARD
EXPRESSION_GOAL = 0.5  # issue 30: a 16-operand expression at most +0.5 s over a 2-operand one
LIMITS = {  # flag, default, raised, the message of a compile that hit it
    "g++": ("-fconstexpr-ops-limit", 1 << 25, "-fconstexpr-ops-limit=4294967296",
            r"constexpr.? evaluation operation count exceeds limit"),
    "clang++": ("-fconstexpr-steps", 1 << 20, "-fconstexpr-steps=4294967295",
                r"constexpr evaluation hit maximum step limit"),
}
CHAIN_FLAGS = ["-std=c++20", "-O0", "-c"]
STANDARD = ["<array>", "<cstddef>", "<string_view>"]  # issue 30's baseline for the header's weight
# What the planner header pulls or pulled in beyond STANDARD (<immintrin.h>: the old run-time SIMD path).
EXTRA = ["<vector>", "<span>", "<exception>", "<cstdint>", "<limits>", "<type_traits>", "<string>", "<stdexcept>",
         "<cmath>", "<boost/mp11/list.hpp>", "<immintrin.h>"]
MODES = {"-O2 -c": ["-O2", "-c"], "-fsyntax-only": ["-fsyntax-only"]}
PATHS = {  # the same 64-matrix plan reached in other ways (where the time goes)
    "value": "value level: `constexpr auto p = ordo::plan_chain(array)`",
    "type": "type level: the benchmark TU (cost, order, tree)",
    "plan_v": "`constexpr auto p = ordo::chain_plan_v<...>` only",
    "consteval_vt": "`plan_chain(array)` in a `consteval` function template called from a variable template",
    "constexpr_vt": "the same with `constexpr` instead of `consteval`",
}
GEMM_ROWS = {"before": "one instantiation per View type", "after": "canonical Views"}
CHAIN_HPP = ("#if __has_include(<ordo/core/chain.hpp>)\n#include <ordo/core/chain.hpp>\n#else  // before 4ef71cc\n"
             "#include <ordo/chain.hpp>\n#endif\n")
ENV = dict(os.environ, LC_ALL="C", LANG="C")  # ASCII diagnostics for the regexes
WORK = INCLUDE = WHAT = None  # measure() sets them: the temporary folder, the --rev headers and what they are


def options(p):
    p.add_argument("--only", default=",".join(SECTIONS), help="sections to measure, comma-separated")
    p.add_argument("--reps", type=int, help="compiles per TU (default per section: %s)" % REPS)
    p.add_argument("--compilers", default="g++,clang++")
    p.add_argument("--sizes", default="8,16,32,48,64,80,96,128,192,256", help="chains of compile-time-results")
    p.add_argument("--long-sizes", default="64,128,256,512,1024,2048,4096", help="chains of compile-time-hu-shing")
    p.add_argument("--rev", default="worktree", help="headers measured: worktree, a git revision or an include folder")
    p.add_argument("--before", help="include-cost: a second --rev, compiled in the same rounds")
    p.add_argument("--gemm-before", default="ab7681f", help="gemm-view-types: the headers before canonical Views")
    p.add_argument("--no-profile", action="store_true", help="compile-time-results without where the time goes")


def smoke(args):
    args.reps, args.compilers, args.sizes, args.long_sizes, args.no_profile = 1, "g++", "8", "64", True
    args.extra, args.modes = EXTRA[:1], ["-fsyntax-only"]


def write(name, text):
    (WORK / name).write_text("// Generated by bench/compile_time/bench.py\n" + text)
    return WORK / name


def compile_tu(cxx, flags, src, out=os.devnull):
    """One compile under /usr/bin/time: dict(seconds, cpu (user + sys), mb (peak), status, error, load before it)."""
    load, timing = ob.loadavg(), WORK / "time.txt"
    p = subprocess.run(["/usr/bin/time", "-f", "%e %M %U %S", "-o", str(timing), cxx, *flags, str(src),
                        "-o", str(out)], capture_output=True, text=True, env=ENV)
    wall, kib, user, system = timing.read_text().split()[-4:]
    status = "ok" if p.returncode == 0 else "limit" if re.search(LIMITS[cxx][3], p.stderr) else "error"
    error = next((x for x in p.stderr.splitlines() if "error" in x), p.stderr)[:300] if status == "error" else None
    return dict(seconds=float(wall), cpu=float(user) + float(system), mb=int(kib) / 1024, status=status,
                error=error, load=load)


def rounds(ctx, jobs, reps, allow=("ok",)):
    """Compiles jobs {key: (cxx, flags, src[, out])} reps times round-robin, each round after --wait-load: {key:
    dict(status, s, cpu, mb, max_mb, error, runs)}; checks each status is in allow."""
    runs = {k: [] for k in jobs}
    for rep in range(reps):
        ob.wait_for_load(ctx.args.wait_load, ctx.args.max_wait)
        for k, job in jobs.items():
            runs[k].append(r := compile_tu(*job))
            ob.log("rep %d/%d %-42s %-6s %6.2f s %6.2f cpu-s %5.0f MB load %.2f" % (
                rep + 1, reps, k, r["status"], r["seconds"], r["cpu"], r["mb"], r["load"]))
    out = {}
    for k, rs in runs.items():
        st = {r["status"] for r in rs}
        r = out[k] = dict(status="ok" if st == {"ok"} else "limit" if "limit" in st else "error", runs=rs,
                          error=next((r["error"] for r in rs if r["error"]), None), max_mb=max(r["mb"] for r in rs),
                          s=ob.median(x["seconds"] for x in rs), cpu=ob.median(x["cpu"] for x in rs),
                          mb=ob.median(x["mb"] for x in rs))
        ctx.check(not allow or r["status"] in allow, "%s failed to compile: %s" % (k, r["error"] or r["status"]))
    return out


def loads(*results):
    v = [r["load"] for res in results for s in res.values() for r in s["runs"]]
    return "1-minute load average at the start of each compile %.2f to %.2f (mean %.2f)" % (
        min(v), max(v), statistics.mean(v))


def headers(rev):
    """(include folder, what it is) of rev: worktree, a git revision or an include folder."""
    if rev == "worktree":
        head, dirty = ob.commit(("include",))
        return str(Path(ob.ROOT, "include")), "the working tree (HEAD %s%s)" % (head, ", include/ modified" * dirty)
    if Path(rev, "ordo").is_dir():
        return str(Path(rev).resolve()), "the include folder " + rev
    short = ob.shell(["git", "rev-parse", "--short", rev])
    (WORK / short).mkdir(exist_ok=True)
    tar = subprocess.run(["git", "-C", ob.ROOT, "archive", short, "include"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(WORK / short)], input=tar, check=True)
    return str(WORK / short / "include"), "commit " + short


def versions(compilers):
    return "; ".join(ob.shell([c, "--version"]).splitlines()[0] for c in compilers)


@functools.lru_cache(None)
def kokkos(cxx):
    """The Kokkos prefix that scripts/setup builds for cxx, and its version."""
    prefix = ob.shell([os.path.join(ob.ROOT, "scripts", "setup"), "--compiler", cxx]).splitlines()[-1]
    v = int(re.search(r"KOKKOS_VERSION (\d+)", Path(prefix, "include", "KokkosCore_config.h").read_text()).group(1))
    return prefix, "%d.%d.%02d" % (v // 10000, v // 100 % 100, v % 100)


def chain_dims(n):
    rng = random.Random(SEED * 100003 + n)
    return [rng.randint(1, 1000) for _ in range(n + 1)]


def dp_cost(d):
    """CLRS 15.2's optimal cost in Python: an oracle independent of ordo for expected.cpp."""
    n = len(d) - 1
    m = [[0] * n for _ in range(n)]
    for i, j in ((i, i + length) for length in range(1, n) for i in range(n - length)):
        m[i][j] = min(m[i][k] + m[k + 1][j] + d[i] * d[k + 1] * d[j + 1] for k in range(i, j))
    return m[0][n - 1]


def expected(ctx, chains):
    """{key: (cost, order)} of chains {key: dims} by expected.cpp on the working tree's headers (older revisions lack
    the planner tags); costs up to 256 matrices are checked against dp_cost."""
    exe = WORK / "expected"
    if not exe.exists():
        ob.run(["g++", "-std=c++20", "-O2", "-I" + os.path.join(ob.ROOT, "include"), str(HERE / "expected.cpp"), "-o",
                str(exe)])
    text = "".join("%d %s\n" % (len(d) - 1, " ".join(map(str, d))) for d in chains.values())
    lines = subprocess.run([str(exe)], input=text, capture_output=True, text=True, check=True).stdout.split()
    plans = {k: (int(lines[2 * i]), lines[2 * i + 1]) for i, k in enumerate(chains)}
    for k in (k for k, d in chains.items() if len(d) <= 257):
        ctx.check(dp_cost(chains[k]) == plans[k][0], "chain %s: expected.cpp's cost %d is not the DP's" % (
            k, plans[k][0]))
    return plans


def tree(order):
    """The ordo::product / ordo::operand type of an order string such as "(A1(A2A3))"."""
    s = re.sub(r"A(\d+)", lambda m: "ordo::operand<%d>, " % (int(m.group(1)) - 1), order)
    return s.replace("(", "ordo::product<").replace(")", ">, ").replace(", >", ">").rstrip(", ")


def chain_tus(n, dims, cost, order, kinds):
    """{kind: path} of one chain's TUs: type (cost, order, tree at the type level), value and the others of PATHS."""
    shapes = "#define CHAIN \\\n  " + ", \\\n  ".join("ordo::shape<%d, %d>" % (dims[i], dims[i + 1]) for i in range(n))
    array = "std::array<std::size_t, %d>{%s}" % (n + 1, ", ".join(map(str, dims)))
    make = ("template <class...> %s auto make() { return ordo::plan_chain(" + array + "); }\n"
            "template <class... T> inline constexpr auto planned = make<T...>();\nconstexpr auto p = planned<>;\n")
    plan = "static_assert(p.cost() == %dULL);\n" % cost
    body = {"type": shapes + '\nstatic_assert(ordo::chain_cost_v<CHAIN> == %dULL);\nstatic_assert(ordo::chain_order_v'
                    '<CHAIN> == "%s");\nstatic_assert(std::is_same_v<ordo::chain_tree_t<CHAIN>, %s>);\n' % (
                        cost, order, tree(order)),
            "value": "constexpr auto p = ordo::plan_chain(%s);\n" % array + plan,
            "plan_v": shapes + "\nconstexpr auto p = ordo::chain_plan_v<CHAIN>;\n" + plan,
            "consteval_vt": make % "consteval" + plan, "constexpr_vt": make % "constexpr" + plan}
    return {k: write("%s_%d.cpp" % (k, n), CHAIN_HPP + "\n#include <array>\n#include <cstddef>\n#include <type_traits>"
                     "\n\n" + body[k]) for k in kinds}


def chain_text(res, compilers, sizes, reps):
    lines = ["Headers of %s; seed %d. Each cell is the median of %d compiles (`%s`); \"added\" is over the "
             "median of the empty TU of the same compiler; \"CPU\" is user + sys time of the compile, which other load "
             "on the machine inflates far less than wall time; %s." % (
                 WHAT, SEED, reps, " ".join(CHAIN_FLAGS), loads(res)), ""]
    raised, errors = [], []
    for c in compilers:
        e, rows = res[(c, "empty")], []
        for n in sizes:
            cells, added = [n], {}
            for k in ("type", "value"):
                r = res[(c, (k, n))]
                if r["status"] == "ok":
                    added[k] = r["cpu"] - e["cpu"]
                cells += (["%.2f" % r["s"], "%+.2f" % (r["s"] - e["s"]), "%+.2f" % added[k]] if k in added else [
                    "**fails** (%s, after %.2f s)" % ("default limit" if r["status"] == "limit" else "error", r["s"]),
                    "—", "—"]) + ["%.0f" % r["mb"]]
                if x := r.get("raised"):
                    raised.append([c, k, n, "ok" if x["status"] == "ok" else "fails (%s)" % (x["error"] or x["status"]),
                                   "%.2f" % x["seconds"], "%+.2f" % (x["seconds"] - e["s"]), "%.2f" % x["cpu"],
                                   "%+.2f" % (x["cpu"] - e["cpu"]), "%.0f" % x["mb"]])
                if r["status"] == "error":
                    errors.append("- %s %s n=%d: `%s`" % (c, k, n, r["error"]))
            rows.append(cells + ["%+.2f" % (added["type"] - added["value"]) if len(added) == 2 else "—"])
        lines += ["### %s: empty TU (`#include <ordo/core/chain.hpp>` only) %.2f s wall, %.2f s CPU, %.0f MB" % (
            c, e["s"], e["cpu"], e["mb"]), "",
            ob.table(["n", "type-level s", "added s", "added CPU s", "MB", "value-level s", "added s", "added CPU s",
                      "MB", "type − value, CPU s"], rows, "r" * 10), ""]
    if raised:
        lines += ["### Raised-limit compiles (one compile each; g++ `%s`, clang++ `%s`)" % (
            LIMITS["g++"][2], LIMITS["clang++"][2]), "",
            ob.table(["compiler", "variant", "n", "result", "s", "added s", "CPU s", "added CPU s", "MB"], raised,
                     "llrlrrrrr"), ""]
    if errors:
        lines += ["Compile errors other than the constant-evaluation limit:", ""] + errors + [""]
    return lines


def dp_goals(res, compilers):
    if set(compilers) != set(LIMITS) or ("g++", ("type", GOAL_N)) not in res:
        return ["- (not evaluated: this run did not cover n = %d on both compilers)" % GOAL_N]
    ok = {c: res[(c, ("type", GOAL_N))]["status"] == "ok" for c in LIMITS}
    lines = ["- A %d-matrix chain (type level) compiles within both compilers' default limits: %s (%s)." % (
        GOAL_N, "**met**" if all(ok.values()) else "**not met**",
        "; ".join("%s: %s at default limits" % (c, "compiles" if v else "fails") for c, v in ok.items()))]
    r, e = res[("g++", ("type", GOAL_N))], res[("g++", "empty")]
    if not ok["g++"]:
        return lines + ["- On g++ a %d-matrix chain adds at most %g s: **not met**: it does not compile at default "
                        "limits." % (GOAL_N, GOAL_GXX)]
    wall, cpu = r["s"] - e["s"], r["cpu"] - e["cpu"]
    verdict = ("**met**" if max(wall, cpu) <= GOAL_GXX else "**not met**" if min(wall, cpu) > GOAL_GXX else
               "**met on CPU time, not on wall time** (wall time on this shared machine includes waiting for the cores)"
               if cpu <= GOAL_GXX else "**met on wall time, not on CPU time**")
    rs, es, rc, ec = (", ".join("%.2f" % y[f] for y in x["runs"]) for f in ("seconds", "cpu") for x in (r, e))
    return lines + [
        "- On g++ a %d-matrix chain adds at most %g s over the empty TU: %s. Wall: median %.2f s vs %.2f s, added "
        "%.2f s (runs %s s vs empty %s s). CPU: median %.2f s vs %.2f s, added %.2f s (runs %s s vs empty %s s)." % (
            GOAL_N, GOAL_GXX, verdict, r["s"], e["s"], wall, rs, es, r["cpu"], e["cpu"], cpu, rc, ec)]


def merged(intervals):
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def clang_trace(src):
    """What clang's -ftime-trace says of src, in seconds: frontend, backend, header (top-level Source events),
    instantiation after the header, the rest of the frontend, and the 5 class templates of largest self time."""
    obj = WORK / (src.stem + "_trace.o")
    if compile_tu("clang++", CHAIN_FLAGS + ["-I" + INCLUDE, "-ftime-trace", "-ftime-trace-granularity=0"], src,
                  obj)["status"] != "ok":
        return None
    ev = [e for e in json.loads(obj.with_suffix(".json").read_text())["traceEvents"]
          if e.get("ph") == "X" and not e["name"].startswith("Total ")]
    header = merged((e["ts"], e["ts"] + e["dur"]) for e in ev if e["name"] == "Source")
    after = [e for e in ev if not any(a <= e["ts"] < b for a, b in header)]
    inst = merged((e["ts"], e["ts"] + e["dur"]) for e in after if e["name"] in (
        "InstantiateClass", "InstantiateFunction", "PerformPendingInstantiations"))
    self_time, stack = {}, []  # minus the events nested in it, so nested instantiations count once
    for e in sorted(ev, key=lambda e: (e.get("tid", 0), e["ts"], -e["dur"])):
        while stack and (stack[-1].get("tid", 0) != e.get("tid", 0) or e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"]):
            stack.pop()
        self_time[id(e)] = e["dur"]
        if stack:
            self_time[id(stack[-1])] -= e["dur"]
        stack.append(e)
    count, seconds = collections.Counter(), collections.Counter()
    for e in (e for e in after if e["name"] == "InstantiateClass"):
        name = e.get("args", {}).get("detail", "?").split("<")[0]
        count[name], seconds[name] = count[name] + 1, seconds[name] + self_time[id(e)] / 1e6
    t = dict(frontend=max(e["dur"] for e in ev if e["name"] == "Frontend") / 1e6,
             backend=sum(e["dur"] for e in ev if e["name"] == "Backend") / 1e6,
             header=sum(b - a for a, b in header) / 1e6, inst=sum(b - a for a, b in inst) / 1e6,
             top=", ".join("`%s` ×%d %.3f s" % (k, count[k], v) for k, v in seconds.most_common(5)))
    return dict(t, rest=t["frontend"] - t["header"] - t["inst"])


def gxx_report(src):
    """Wall seconds of g++ -ftime-report's timers TOTAL, template instantiation, constexpr evaluation."""
    err = subprocess.run(["g++", *CHAIN_FLAGS, "-I" + INCLUDE, "-ftime-report", str(src), "-o", os.devnull],
                         capture_output=True, text=True, env=ENV).stderr
    out = collections.defaultdict(float)
    for m in re.finditer(r"^\s*(TOTAL|template instantiation|constant expression evaluation)\s*:\s*[\d.]+\s*"
                         r"(?:\(\s*\d+%\))?\s*[\d.]+\s*(?:\(\s*\d+%\))?\s*([\d.]+)", err, re.M):
        out[m.group(1)] = float(m.group(2))
    return out


def limit_needed(cxx, src):
    """The smallest constexpr limit of cxx that still compiles src, by bisection to 0.5 %."""
    def ok(v):
        return compile_tu(cxx, CHAIN_FLAGS + ["-I" + INCLUDE, "%s=%d" % (LIMITS[cxx][0], v)], src)["status"] == "ok"
    lo, hi = 1000, 1 << 31
    if not ok(hi):
        return None
    while hi - lo > hi // 200:
        lo, hi = (lo, (lo + hi) // 2) if ok((lo + hi) // 2) else ((lo + hi) // 2, hi)
    return hi


def profile(ctx, compilers, reps, src, plan):
    lines = ["### Where the time goes (n = %d, type level, one compile each)" % GOAL_N, ""]
    tu = src[("type", GOAL_N)]
    if "clang++" in compilers:
        t, e = clang_trace(tu), clang_trace(src["empty"])
        ctx.check(t and e, "clang++ -ftime-trace failed")
        lines += [
            "- clang++ `-ftime-trace -ftime-trace-granularity=0`: frontend %.2f s (empty TU %.2f s), backend %.3f s. "
            "Parsing the header: %.2f s (empty TU %.2f s). Template instantiation after the header: %.2f s. Frontend "
            "time inside no trace event after the header: %.2f s (empty TU %.2f s); clang 14 has no trace event for "
            "constant evaluation, so this is where evaluating the planner shows up." % (
                t["frontend"], e["frontend"], t["backend"], t["header"], e["header"], t["inst"], t["rest"], e["rest"]),
            "  Largest class-template instantiations (self time): %s." % t["top"]] if t and e else []
    if "g++" in compilers:
        g, e = gxx_report(tu), gxx_report(src["empty"])
        lines.append("- g++ `-ftime-report` (wall): total %.2f s (empty TU %.2f s); constant expression evaluation "
                     "%.2f s (empty TU %.2f s); template instantiation %.2f s (empty TU %.2f s)." % tuple(d[k] for k in
                         ("TOTAL", "constant expression evaluation", "template instantiation") for d in (g, e)))
    need = {c: limit_needed(c, tu) for c in compilers}
    lines.append("- Headroom: the smallest limit with which the n = %d type-level TU still compiles (bisection to "
                 "0.5 %%): %s." % (GOAL_N, "; ".join("%s `%s` needs %s (default %s, %.0f %% of it)" % (
                     c, LIMITS[c][0], "{:,}".format(v), "{:,}".format(LIMITS[c][1]), 100 * v / LIMITS[c][1])
                     if v else "%s does not compile it even at %s=2^31" % (c, LIMITS[c][0]) for c, v in need.items())))
    tus = dict(chain_tus(GOAL_N, chain_dims(GOAL_N), *plan, ("plan_v", "consteval_vt", "constexpr_vt")),
               empty=src["empty"], type=tu, value=src[("value", GOAL_N)])
    res = rounds(ctx, {(c, k): (c, CHAIN_FLAGS + ["-I" + INCLUDE], tus[k]) for c in compilers
                       for k in ["empty", *PATHS]}, reps, ())
    rows = [[label] + ["%+.2f" % (res[(c, k)]["cpu"] - res[(c, "empty")]["cpu"]) if res[(c, k)]["status"] == "ok"
                       else "fails" for c in compilers] for k, label in PATHS.items()]
    return lines + ["", "Evaluation paths of the same %d-matrix plan: CPU seconds (user + sys) added over the empty "
                    "TU, median of %d compiles (a failed compile shows as fails):" % (GOAL_N, reps), "",
                    ob.table(["TU"] + compilers, rows)]


def chain_section(ctx, compilers, reps, long=False):
    """compile-time-results (long: compile-time-hu-shing): the type and value TUs of each chain, medians {(cxx, "empty"
    or (kind, n)): summary}; those that hit the default limit are compiled once more with it raised (["raised"])."""
    sizes = [int(x) for x in (ctx.args.long_sizes if long else ctx.args.sizes).split(",")]
    plans = expected(ctx, {n: chain_dims(n) for n in sizes})
    src = {"empty": write("empty.cpp", CHAIN_HPP), **{(k, n): p for n in sizes for k, p in chain_tus(
        n, chain_dims(n), *plans[n], ("type", "value")).items()}}
    flags = CHAIN_FLAGS + ["-I" + INCLUDE]
    res = rounds(ctx, {(c, k): (c, flags, s) for c in compilers for k, s in src.items()}, reps, ("ok", "limit"))
    for (c, k), r in res.items():
        if r["status"] == "limit":
            r["raised"] = compile_tu(c, flags + [LIMITS[c][2]], src[k])
    lines = chain_text(res, compilers, sizes, reps)
    if not long:
        lines += ["### Goals", ""] + dp_goals(res, compilers) + [""]
        if not ctx.args.no_profile and GOAL_N in sizes:
            lines += profile(ctx, compilers, reps, src, plans[GOAL_N])
        return "\n".join(lines), versions(compilers)
    lines += ["### Goals (issue 30; issue 15 asked 1.0 s)", ""] + ([] if LONG_GOAL_N in sizes else [
        "- (not evaluated: this run did not cover n = %d)" % LONG_GOAL_N])
    for c in compilers if LONG_GOAL_N in sizes else ():
        r, e = res[(c, ("type", LONG_GOAL_N))], res[(c, "empty")]
        wall, cpu = r["s"] - e["s"], r["cpu"] - e["cpu"]
        lines.append(
            "- %s: a %d-matrix chain (type level: cost, order and tree) compiles at the default limits and adds "
            "%.2f s wall, %.2f s CPU over the empty TU: **%s** (goal: at most %.1f s%s)." % (
                c, LONG_GOAL_N, wall, cpu, "met" if cpu <= LONG_GOAL else "not met", LONG_GOAL,
                "; judged on CPU time, which load inflates less" if wall > LONG_GOAL >= cpu else "")
            if r["status"] == "ok" else "- %s: the %d-matrix chain (type level) does **not** compile at the default "
            "limits." % (c, LONG_GOAL_N))
    return "\n".join(lines), versions(compilers)


def include_section(ctx, compilers, reps):
    """The TUs that include ordo compiled with the headers of each (name, include, what) of revs."""
    revs = [("before",) + headers(ctx.args.before), ("after", INCLUDE, WHAT)] if ctx.args.before else [
        ("measured", INCLUDE, WHAT)]
    extra = getattr(ctx.args, "extra", EXTRA)
    cost, order = expected(ctx, {GOAL_N: chain_dims(GOAL_N)})[GOAL_N]
    std = "".join("#include %s\n" % h for h in STANDARD)
    src = {"std": write("std.cpp", std), "header": write("empty.cpp", CHAIN_HPP),
           "plan": chain_tus(GOAL_N, chain_dims(GOAL_N), cost, order, ("value",))["value"]}
    src.update({"std+" + h: write("std_%d.cpp" % i, std + "#include %s\n" % h) for i, h in enumerate(extra)})
    jobs = {(c, k + ("" if k.startswith("std") else "@" + name)): (c, ["-std=c++20", "-O2", "-c", "-I" + inc], s)
            for c in compilers for k, s in src.items() for name, inc, _ in (revs[-1:] if k.startswith("std") else revs)}
    res = rounds(ctx, jobs, reps)
    rows = [("std", "`std`: " + ", ".join("`%s`" % h for h in STANDARD) + " only (the baseline)")]
    for name, _, _ in revs:
        tag = " (%s)" % name if len(revs) > 1 else ""
        rows += [("header@" + name, "`#include <ordo/core/chain.hpp>`%s: **issue 30's goal, at most +%g s**" % (
            tag, HEADER_GOAL)), ("plan@" + name, "the header and a %d-matrix `constexpr` `plan_chain`%s: **the goal, "
                                 "at most +%g s**" % (GOAL_N, tag, INCLUDE_GOAL))]
    rows += [("std+" + h, "`std` and `%s`" % h) for h in extra]
    cells = [[label] + ["%.2f" % res[(c, k)][f] if k == "std" else "%.2f (%+.2f)" % (
        res[(c, k)][f], res[(c, k)][f] - res[(c, "std")][f]) for c in compilers for f in ("s", "cpu")]
        for k, label in rows]
    lines = ["`-std=c++20 -O2 -c`, median wall seconds (`/usr/bin/time -f %%e`) of %d compiles, round-robin; %s; CPU "
             "is user + sys, which load inflates less than wall time. In parentheses: added over `std`, same compiler. "
             "Headers: %s." % (reps, loads(res), "; ".join("**%s** = %s" % (n, w) for n, _, w in revs)), "",
             ob.table(["TU"] + ["%s %s s" % (c, f) for c in compilers for f in ("wall", "CPU")], cells), ""]
    for name, _, _ in revs:
        for key, what, goal in (("header", "the header alone", HEADER_GOAL),
                                ("plan", "header and %d-matrix plan" % GOAL_N, INCLUDE_GOAL)):
            added = {c: [res[(c, key + "@" + name)][f] - res[(c, "std")][f] for f in ("s", "cpu")] for c in compilers}
            lines.append("- Goal (%s at most %g s over `std`%s): %s." % (
                what, goal, ", " + name if len(revs) > 1 else "", "; ".join("%s %+.2f s wall, %+.2f s CPU: %s" % (
                    c, wall, cpu, "met" if max(wall, cpu) <= goal else "met on CPU time only" if cpu <= goal
                    else "not met") for c, (wall, cpu) in added.items())))
    return "\n".join(lines), versions(compilers)


def expression_section(ctx, compilers, reps):
    n, modes = 16, getattr(ctx.args, "modes", list(MODES))
    d = [16 + int(x) % (2048 - 16 + 1) for x in ob.splitmix64(20240601, n + 1)]  # bench_expression's random_16
    cost, order = expected(ctx, {"expression": d})["expression"]
    body = ("\ntemplate <std::size_t R, std::size_t C>\nusing mat = ordo::matrix<double, R, C, "
            "Kokkos::DefaultHostExecutionSpace>;\n\nauto product(%s) {\n  auto e = %s;\n  static_assert("
            "decltype(e)::cost() == %dULL);\n  static_assert(decltype(e)::order() == \"%s\");\n  return %%s;\n}\n" % (
                ", ".join("const mat<%d, %d>& a%d" % (d[k], d[k + 1], k + 1) for k in range(n)),
                " * ".join("a%d" % (k + 1) for k in range(n)), cost, order))
    two = ("\ntemplate <std::size_t R, std::size_t C>\nusing mat = ordo::matrix<double, R, C, "
           "Kokkos::DefaultHostExecutionSpace>;\n\nauto product(const mat<%d, %d>& a1, const mat<%d, %d>& a2) {\n"
           "  auto e = a1 * a2;\n  static_assert(decltype(e)::cost() == %dULL);\n  return e;\n}\n" % (
               d[0], d[1], d[1], d[2], d[0] * d[1] * d[2]))
    units = {"headers": "", "two": two, "expression": body % "e", "evaluate": body % "ordo::evaluate(e)"}
    src = {u: write("expr_%s.cpp" % u, "#include <ordo/expression.hpp>\n" + t + "\nint main() { return 0; }\n")
           for u, t in units.items()}
    flags = ["-std=c++20", "-fopenmp", "-DORDO_HAS_BLAS=1"]
    res = rounds(ctx, {(c, m, u): (c, flags + MODES[m] + ["-I", INCLUDE, "-isystem", kokkos(c)[0] + "/include"], s)
                       for c in compilers for m in modes for u, s in src.items()}, reps)
    rows, met = [], True
    for c in compilers:
        for m in modes:
            r = {u: res[(c, m, u)] for u in units}
            over, judged = r["expression"]["s"] - r["two"]["s"], m == "-O2 -c"
            met = met and (over <= EXPRESSION_GOAL or not judged)
            cell = {u: "%.2f s, %.0f MB" % (r[u]["s"], r[u]["max_mb"]) for u in units}
            rows.append([c, "`%s`" % m, cell["headers"], cell["two"], cell["expression"], "**%+.2f s** (%s)" % (
                over, "met" if over <= EXPRESSION_GOAL else "not met") if judged else "%+.2f s" % over,
                "%+.2f s" % (r["expression"]["s"] - r["headers"]["s"]),
                cell["evaluate"], "%+.2f s" % (r["evaluate"]["s"] - r["headers"]["s"])])
    return "\n".join([
        ob.table(["compiler", "flags", "headers alone", "2-operand expression", "16-operand expression",
                  "16 - 2 operands (goal <= %g s)" % EXPRESSION_GOAL, "16 operands - headers",
                  "with `ordo::evaluate(e)`", "evaluate - headers"], rows, "llrrrrrrr"), "",
        "**Goal (full `-O2` compile) %s.** Cells: median wall seconds of %d compiles each (round-robin), and the "
        "largest peak resident memory." % (("met on " + " and ".join(compilers) if met else "not met everywhere")
                                   if "-O2 -c" in modes else "not evaluated", reps), "",
        "- The expression: `auto e = a1 * a2 * ... * a16;` on `ordo::matrix<double, R, C, "
        "Kokkos::DefaultHostExecutionSpace>` lvalues (held by reference: no View is copied) with dims %s "
        "(bench_expression's `random_16`), then `static_assert(decltype(e)::cost() == %d)` and "
        "`static_assert(decltype(e)::order() == \"%s\")`, returned from a function; the 2-operand unit is "
        "`a1 * a2` of the first two, the same way; the last columns also instantiate `ordo::evaluate(e)`." % (
            ", ".join(map(str, d)), cost, order),
        "- Flags: `%s` and the mode's, with the headers of %s and Kokkos built with the same compiler; %s." % (
            " ".join(flags), WHAT, loads(res))]), "%s; Kokkos %s (OpenMP + Serial) built with each" % (
                versions(compilers), kokkos("g++")[1])


def public_headers_section(ctx, compilers, reps):
    """What including each public header (not detail/) costs over an empty TU, at -O2 -c."""
    names = sorted(str(p.relative_to(INCLUDE)) for p in Path(INCLUDE).rglob("*.hpp") if "detail" not in p.parts)
    names.append("Kokkos_Core.hpp")  # the reference: what every kernels header includes
    mpi = subprocess.run(["mpicxx", "--showme:compile"], capture_output=True, text=True).stdout.split()
    src = {"empty": write("public_empty.cpp", "int main() { return 0; }\n")}
    src.update({h: write("public_%d.cpp" % i, "#include <%s>\nint main() { return 0; }\n" % h)
                for i, h in enumerate(names)})
    # As a build that found OpenBLAS with LAPACK and ScaLAPACK defines them (the distributed headers
    # refuse to compile without ScaLAPACK).
    flags = lambda c: ["-std=c++20", "-O2", "-c", "-fopenmp", "-DORDO_HAS_BLAS=1", "-DORDO_HAS_LAPACK=1",
                       "-DORDO_HAS_SCALAPACK=1", "-I", INCLUDE, "-isystem", kokkos(c)[0] + "/include"] + mpi
    res = rounds(ctx, {(c, k): (c, flags(c), s) for c in compilers for k, s in src.items()}, reps)
    rows = [["`<%s>`" % h] + ["%+.2f" % (res[(c, h)]["cpu"] - res[(c, "empty")]["cpu"]) for c in compilers] +
            ["%.0f" % max(res[(c, h)]["max_mb"] for c in compilers)] for h in names]
    return "\n".join([
        "Every public header (`include/ordo/**.hpp` outside `detail/`) alone in a TU with an empty `main`, "
        "`-std=c++20 -O2 -c -fopenmp -DORDO_HAS_BLAS=1 -DORDO_HAS_LAPACK=1 -DORDO_HAS_SCALAPACK=1` with Kokkos and "
        "Open MPI's include paths: median CPU seconds "
        "(user + sys) of %d compiles added over the empty TU (%s), and the largest peak memory. Umbrella headers "
        "(`<ordo/ordo.hpp>`, `<ordo/kernels.hpp>`, ...) include the others; the last row, `<Kokkos_Core.hpp>` alone, "
        "is the part of every kernels header that is Kokkos'; %s." % (reps, ", ".join("%s %.2f s" % (c, res[(c, "empty")]["cpu"]) for c in compilers),
                                       loads(res)), "",
        ob.table(["header"] + ["%s (s)" % c for c in compilers] + ["peak MB"], rows, "l" + "r" * (len(compilers) + 1))]), (
        versions(compilers) + "; Kokkos %s built with each" % kokkos("g++")[1])


CONSUMER_UNITS = {
    "hello": ("a Kokkos hello world (the reference)", "#include <Kokkos_Core.hpp>\n#include <cstdio>\n\n"
              "int main(int argc, char* argv[]) {\n  Kokkos::ScopeGuard kokkos(argc, argv);\n"
              "  std::printf(\"hello from %s\\n\", Kokkos::DefaultExecutionSpace::name());\n  return 0;\n}\n"),
    "views": ("plain Kokkos: three 3 x 3 Views, a mirror, two `deep_copy`s and one `parallel_for` product",
              "#include <Kokkos_Core.hpp>\n\nint main(int argc, char* argv[]) {\n  Kokkos::ScopeGuard kokkos(argc, argv);\n"
              "  {\n    Kokkos::View<double**, Kokkos::LayoutRight> a(\"a\", 3, 3), b(\"b\", 3, 3), c(\"c\", 3, 3);\n"
              "    auto h = Kokkos::create_mirror_view(a);\n    h(0, 0) = 1;\n    Kokkos::deep_copy(a, h);\n"
              "    Kokkos::deep_copy(b, a);\n    Kokkos::parallel_for(9, KOKKOS_LAMBDA(int e) {\n"
              "      const int i = e / 3, j = e % 3;\n      double s = 0;\n"
              "      for (int l = 0; l < 3; ++l) s += a(i, l) * b(l, j);\n      c(i, j) = s;\n    });\n"
              "    auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);\n"
              "    return hc(0, 0) == 1 ? 0 : 1;\n  }\n}\n"),
    "consumer": ("`#include <ordo/ordo.hpp>`, two 3 x 3 matrices from row lists, `matrix c = a * b;`",
                 "#include <ordo/ordo.hpp>\n\nint main(int argc, char* argv[]) {\n  Kokkos::ScopeGuard kokkos(argc, argv);\n"
                 "  {\n    ordo::matrix<double, 3, 3> a{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};\n"
                 "    ordo::matrix<double, 3, 3> b{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};\n"
                 "    ordo::matrix<double, 3, 3> c = a * b;\n    return c(0, 0) == 1 ? 0 : 1;\n  }\n}\n"),
}


def consumer_section(ctx, compilers, reps):
    """A consumer's smallest program against a Kokkos hello world, -O3 -c (the issue-30 goal)."""
    src = {u: write("consumer_%s.cpp" % u, text) for u, (_, text) in CONSUMER_UNITS.items()}
    omp = {"g++": "-fopenmp", "clang++": "-fopenmp=libomp"}
    flags = lambda c: ["-std=c++20", "-O3", "-c", omp.get(c, "-fopenmp"), "-DORDO_HAS_BLAS=1", "-I", INCLUDE,
                       "-isystem", kokkos(c)[0] + "/include"]
    res = rounds(ctx, {(c, u): (c, flags(c), s) for c in compilers for u, s in src.items()}, reps)
    rows, verdicts = [], []
    for u, (label, _) in CONSUMER_UNITS.items():
        rows.append([label] + ["%.2f (%.2fx)" % (res[(c, u)]["cpu"], res[(c, u)]["cpu"] / res[(c, "hello")]["cpu"])
                               for c in compilers])
    for c in compilers:
        ratio = res[(c, "consumer")]["cpu"] / res[(c, "hello")]["cpu"]
        verdicts.append("%s %.2fx (%s)" % (c, ratio, "met" if ratio <= CONSUMER_GOAL else "not met"))
    return "\n".join([
        "`-std=c++20 -O3 -c -fopenmp -DORDO_HAS_BLAS=1` with Kokkos' include path: median CPU seconds (user + sys) of "
        "%d compiles, and in parentheses the ratio to the hello world, same compiler; %s." % (reps, loads(res)), "",
        ob.table(["translation unit"] + ["%s CPU s" % c for c in compilers], rows, "l" + "r" * len(compilers)), "",
        "- Goal (the consumer at most %gx the hello world): %s." % (CONSUMER_GOAL, "; ".join(verdicts))]), (
        versions(compilers) + "; Kokkos %s built with each" % kokkos("g++")[1])


def structured_section(ctx, compilers, reps):
    """Issue 31's goal: a 6-operand structured chain planned at compile time within 1 s over its header."""
    src = {u: write("structured_%s.cpp" % u, text) for u, (_, text) in STRUCTURED_UNITS.items()}
    res = rounds(ctx, {(c, u): (c, ["-std=c++20", "-O2", "-c", "-I" + INCLUDE], s) for c in compilers
                       for u, s in src.items()}, reps)
    rows = [[label] + ["%.2f (%+.2f)" % (res[(c, u)]["cpu"], res[(c, u)]["cpu"] - res[(c, "header")]["cpu"])
                       for c in compilers] for u, (label, _) in STRUCTURED_UNITS.items()]
    added = {c: res[(c, "plan")]["cpu"] - res[(c, "header")]["cpu"] for c in compilers}
    return "\n".join([
        "`-std=c++20 -O2 -c`: median CPU seconds (user + sys) of %d compiles, round-robin, and in parentheses the time "
        "added over the header alone, same compiler; %s." % (reps, loads(res)), "",
        ob.table(["translation unit"] + ["%s CPU s" % c for c in compilers], rows, "l" + "r" * len(compilers)), "",
        "- Goal (the 6-operand plan at most +%g s over the header): %s." % (STRUCTURED_GOAL, "; ".join(
            "%s %+.2f s (%s)" % (c, a, "met" if a <= STRUCTURED_GOAL else "not met") for c, a in added.items()))]), \
        versions(compilers)


def gemm_section(ctx, compilers, reps):
    revs = [("before",) + headers(ctx.args.gemm_before), ("after", INCLUDE, WHAT)]
    flags = ["-std=c++20", "-O2", "-fopenmp", "-DORDO_HAS_BLAS=1", "-isystem", kokkos("g++")[0] + "/include", "-c"]
    res = rounds(ctx, {side: ("g++", flags + ["-I" + inc], HERE / "gemm_view_types.cpp", WORK / (side + ".o"))
                       for side, inc, _ in revs}, reps)
    text = {side: int(ob.shell(["size", str(WORK / (side + ".o"))]).splitlines()[1].split()[0]) for side in res}
    b, a = res["before"]["cpu"], res["after"]["cpu"]
    rows = [["%s, %s (%s)" % (side, what.replace("commit ", ""), GEMM_ROWS[side])] + [
        x if side == "before" else "**%s**" % x for x in ("%.2f s" % res[side]["cpu"], "{:,} bytes".format(text[side]))]
        for side, _, what in revs]
    return "\n".join([
        ob.table(["headers", "g++ %s `-O2 -c`, CPU seconds (median of %d)" % (ob.shell(["g++", "-dumpversion"]), reps),
                  "object's code (text)"], rows), "",
        "With the headers after, the translation unit compiles in %.0f %% of the CPU time and makes %.0f %% of the "
        "code; %s. A program with one View type per layout gains nothing and loses nothing." % (
            100 * a / b, 100 * text["after"] / text["before"], loads(res))]), \
        "%s, Kokkos %s (OpenMP + Serial), `-DORDO_HAS_BLAS=1` (OpenBLAS)" % (versions(["g++"]), kokkos("g++")[1])


def measure(ctx):
    global WORK, INCLUDE, WHAT
    a, make = ctx.args, dict(zip(SECTIONS, (chain_section, functools.partial(chain_section, long=True), include_section,
                                             expression_section, gemm_section, public_headers_section,
                                             consumer_section, structured_section)))
    only, compilers = a.only.split(","), a.compilers.split(",")
    if not set(only) <= set(SECTIONS):
        raise SystemExit("--only: unknown sections %s (known: %s)" % (set(only) - set(SECTIONS), ", ".join(SECTIONS)))
    with tempfile.TemporaryDirectory(prefix="ordo-compile-time-") as tmp:
        WORK = Path(tmp)
        INCLUDE, WHAT = headers(a.rev)
        return [ob.Section(s, *make[s](ctx, compilers, a.reps or REPS[s]), DOC) for s in SECTIONS if s in only]
