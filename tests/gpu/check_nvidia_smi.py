"""nvidia-smi under a 4 GiB gpufrac limit (run.sh's environment: the shim
preloaded, GPUFRAC_MEMORY_LIMIT=4Gi), as inside a limited container: on
every device the daemon shares, memory.total is the limit (4096 MiB),
memory.free what is left of it and never more than the device has free
(nvidia-smi without the shim, just before), memory.used the rest.

That needs nvidia-smi to reach NVML through the dynamic linker: it loads
libnvidia-ml.so.1 at run time and finds its functions with dlsym, which
the shim interposes (as for pynvml). Where nvidia-smi's reading does not
change under the shim, it does not reach the hooks, and that is a SKIP
(check_nvml.py still asserts the view, the ctypes way). nvidia-smi makes
no CUDA context, so there is no context record to report here."""
import os
import shutil
import subprocess

from gpucheck import (LIMIT, MIB, capacities, check, clean_env, done, note,
                      skip)

QUERY = ["--query-gpu=uuid,memory.total,memory.used,memory.free",
         "--format=csv,noheader,nounits"]


def query(smi, env):
    """{uuid: (total, used, free)} in MiB, as nvidia-smi prints them."""
    out = subprocess.run([smi] + QUERY, env=env, capture_output=True,
                         text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError("status %d: %s" % (out.returncode,
                                              out.stdout + out.stderr))
    rows = {}
    for line in out.stdout.splitlines():
        f = [v.strip() for v in line.split(",")]
        if len(f) == 4 and all(v.isdigit() for v in f[1:]):
            rows[f[0]] = tuple(int(v) for v in f[1:])
    return rows


smi = shutil.which("nvidia-smi")
if smi is None:
    skip("no nvidia-smi here")
if not os.environ.get("LD_PRELOAD"):
    skip("run it with the shim preloaded, as run.sh does")
bare = query(smi, clean_env())
try:
    view = query(smi, dict(os.environ))
except RuntimeError as e:
    check("nvidia-smi runs under the shim", False, e)
    done()
shared = capacities()
for uuid in sorted(view):
    note("%s: under the shim total %d MiB, used %d, free %d; without it "
         "total %d, used %d, free %d" % ((uuid,) + view[uuid] +
                                         bare.get(uuid, (-1, -1, -1))))
rows = [u for u in sorted(view) if u in shared and u in bare]
if not rows:
    skip("nvidia-smi shows none of the daemon's devices: %s"
         % ", ".join(sorted(view)))
if all(view[u][0] == bare[u][0] for u in rows) and \
        any(bare[u][0] != min(LIMIT, shared[u]) // MIB for u in rows):
    skip("nvidia-smi does not reach the shim's NVML hooks (memory.total "
         "is the same with and without it)")

for u in rows:
    total, used, free = view[u]
    check("%s: memory.total is the limit" % u,
          total == min(LIMIT, shared[u]) // MIB, total)
    # Each is rounded to MiB on its own: their sum may be 1 off.
    check("%s: memory.used is the rest" % u,
          abs(used + free - total) <= 1, "%d + %d" % (used, free))
    check("%s: memory.free is no more than the device has" % u,
          free <= bare[u][2], "%d > %d" % (free, bare[u][2]))
done()
