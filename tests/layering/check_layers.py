#!/usr/bin/env python3
"""Checks how ordo's headers include each other (docs/architecture.md, "Layers").

  check_layers.py INCLUDE_DIR

The layers, lowest first: common, core, platform, kernels, nn, mpi. A header may include
  - any header of its own layer;
  - common/ (pure C++ every layer shares) from any layer, platform/ (the Kokkos machinery that
    kernels, nn and mpi share) from platform and above;
  - the public headers (outside detail/) of a lower layer.
No header includes another layer's detail/, common/ includes neither Kokkos nor a layer, core/
includes no Kokkos, and no include chain leads back to where it started. The umbrella headers
(ordo/*.hpp) may include any public header. No header includes <immintrin.h> or <x86intrin.h>: they
cost every translation unit about 0.37 s to parse, and the compilers' vector types and builtins
do the same work (docs/compile_time.md). Prints every violation and exits 1 if there is one.
"""
import os
import re
import sys

LAYERS = ["common", "core", "platform", "kernels", "nn", "mpi"]
SHARED = {"common": 0, "platform": 2}  # shared home -> the lowest layer that may use it
INCLUDE = re.compile(r'^\s*#\s*include\s*<(ordo/[^>]+|Kokkos[^>]*)>', re.M)
HEAVY = re.compile(r'^\s*#\s*include\s*<((?:imm|x86)intrin\.h)>', re.M)


def layer_of(path):
    parts = path.split("/")
    return parts[1] if len(parts) > 2 else None  # None: an umbrella header, ordo/x.hpp


def main(root):
    headers, heavy = {}, []
    for directory, _, files in os.walk(os.path.join(root, "ordo")):
        for name in files:
            if name.endswith(".hpp"):
                full = os.path.join(directory, name)
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                with open(full, encoding="utf-8") as f:
                    text = f.read()
                headers[rel] = INCLUDE.findall(text)
                heavy.extend(f"{rel}: includes <{h}>; use the compilers' vector types and builtins (about 0.37 s "
                             f"of parsing per translation unit)" for h in HEAVY.findall(text))
    problems = list(heavy)
    for header, includes in sorted(headers.items()):
        layer = layer_of(header)
        if layer is not None and layer not in LAYERS:
            problems.append(f"{header}: folder ordo/{layer}/ is not a layer ({', '.join(LAYERS)})")
            continue
        for target in includes:
            if target.startswith("Kokkos"):
                if layer in ("common", "core"):
                    problems.append(f"{header}: includes <{target}>, but {layer}/ is pure C++ (no Kokkos)")
                continue
            if target not in headers:
                problems.append(f"{header}: includes <{target}>, which does not exist")
                continue
            other = layer_of(target)
            if layer is None:
                if "/detail/" in target:
                    problems.append(f"{header}: an umbrella header includes <{target}>, another layer's detail/")
                continue
            if other is None:
                problems.append(f"{header}: includes the umbrella header <{target}>; include what it needs")
            elif other == layer:
                continue
            elif other in SHARED:
                if LAYERS.index(layer) < SHARED[other]:
                    problems.append(f"{header}: includes <{target}>, but {other}/ serves layers from "
                                    f"{LAYERS[SHARED[other]]} up, and {layer}/ is below")
            elif "/detail/" in target:
                problems.append(f"{header}: includes <{target}>, another layer's detail/ "
                                f"(give {layer}/ a public or shared seam instead)")
            elif LAYERS.index(other) > LAYERS.index(layer):
                problems.append(f"{header}: includes <{target}>, a higher layer ({other}/ is above {layer}/)")
    # Include cycles, by depth-first search over ordo's own includes.
    state, stack = {}, []

    def visit(header):
        state[header] = "open"
        stack.append(header)
        for target in headers[header]:
            if target not in headers:
                continue
            if state.get(target) == "open":
                cycle = stack[stack.index(target):] + [target]
                problems.append("include cycle: " + " -> ".join(cycle))
            elif target not in state:
                visit(target)
        stack.pop()
        state[header] = "done"

    for header in sorted(headers):
        if header not in state:
            visit(header)
    for p in problems:
        print(p)
    print(f"check_layers: {len(headers)} headers, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
