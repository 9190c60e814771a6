#!/usr/bin/env python3
"""Count the calls between files that run up a component's layers.

tools/calls_up.py [-v] OBJDIR LAYERS

OBJDIR holds the component's objects (build/shim); LAYERS (shim/layers)
names its layers, lowest first, one a line: "name: file file ...", files
without .c. A file refers to another when an object has undefined a
symbol (a function or a variable) that the other defines; nm reads both
from the code as built, so a callback set at start (a function pointer
handed down) is not a reference of the lower file. A reference runs up
when the caller's layer is below the callee's: it is counted, and with -v
listed ("up: CALLER (LAYER) -> CALLEE (LAYER): SYMBOL"). Prints the
counts, the files no layer names, and the circles (files that reach each
other through references); exits 0, 2 on a usage error.
"""
import os
import subprocess
import sys


def layers_of(path):
    """{file: (rank, layer name)} from LAYERS."""
    rank = {}
    with open(path) as f:
        n = 0
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, _, files = line.partition(":")
            for file in files.split():
                rank[file] = (n, name.strip())
            n += 1
    return rank


def symbols(objs):
    """{object: (defined, undefined) global symbols}, from one nm run over
    all the objects (a run each would cost a process each: seconds)."""
    out = subprocess.run(["nm"] + objs, capture_output=True, text=True,
                         check=True).stdout
    syms, defined, undefined = {}, None, None
    for line in out.splitlines():
        parts = line.split()
        if line.endswith(":") and line[:-1] in objs:
            defined, undefined = syms[line[:-1]] = set(), set()
        elif len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRVWGS":
            defined.add(parts[2])
    return syms


def circles(edges, files):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(files):
        if v not in index:
            visit(v)
    return out


def main(argv):
    verbose = "-v" in argv
    args = [a for a in argv if a != "-v"]
    if len(args) != 2:
        sys.stderr.write("usage: calls_up.py [-v] OBJDIR LAYERS\n")
        return 2
    objdir, layers = args
    rank = layers_of(layers)
    objs = sorted(f[:-2] for f in os.listdir(objdir) if f.endswith(".o"))
    paths = [os.path.join(objdir, o + ".o") for o in objs]
    syms = symbols(paths)
    defs, undefs, owner = {}, {}, {}
    for o, path in zip(objs, paths):
        defs[o], undefs[o] = syms.get(path, (set(), set()))
        for s in defs[o]:
            owner[s] = o
    edges, up, calls = {}, [], 0
    for o in objs:
        for s in sorted(undefs[o]):
            callee = owner.get(s)
            if callee is None or callee == o:
                continue
            calls += 1
            edges.setdefault(o, set()).add(callee)
            if o in rank and callee in rank and rank[o][0] < rank[callee][0]:
                up.append((o, s, callee))
    print("%d references between files, %d of them up" % (calls, len(up)))
    for o, s, callee in up if verbose else ():
        print("  up: %s (%s) -> %s (%s): %s"
              % (o, rank[o][1], callee, rank[callee][1], s))
    unplaced = [o for o in objs if o not in rank]
    if unplaced:
        print("in no layer: " + " ".join(unplaced))
    for comp in circles(edges, objs):
        print("circle of %d: %s" % (len(comp), " ".join(comp)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
