"""JAX under a 4 GiB gpufrac limit with its default preallocation: when it
starts, XLA takes one arena of XLA_PYTHON_CLIENT_MEM_FRACTION (0.75) of
the memory cuMemGetInfo reports. Under the shim that is 0.75 of the limit,
3 GiB, which fits; sized from the physical GPU it would be refused, and
JAX would come up without its GPU (it falls back to the CPU).

Asserted: JAX starts on the GPU; its arena (memory_stats' bytes_limit) is
within the limit; the daemon charges it (more than 2 GiB held) and the
whole charge, context included, stays within the limit; a computation
gives the right result; and past the arena, a driver allocation beyond
the limit less the context fails."""
import os
import subprocess
import sys

# The defaults are what is checked; one GPU, or XLA takes an arena on each.
for var in ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION",
            "XLA_PYTHON_CLIENT_ALLOCATOR", "JAX_PLATFORMS",
            "JAX_PLATFORM_NAME"):
    os.environ.pop(var, None)
os.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get(
    "CUDA_VISIBLE_DEVICES", "0").split(",")[0]

from gpucheck import (GIB, LIMIT, Driver, DriverOOM, check,  # noqa: E402
                      clean_env, context_check, done, held_by_me, note, skip,
                      size, used_by_me)


def probe():
    """The platform JAX finds without the shim (and without an arena)."""
    env = clean_env()
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    try:
        out = subprocess.run(
            [sys.executable, "-c",
             "import jax; print(jax.devices()[0].platform)"],
            env=env, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return "no answer in 300 s"
    if out.returncode != 0:
        return (out.stderr.strip().splitlines() or ["failed"])[-1]
    return (out.stdout.split() or ["nothing"])[-1]


platform = probe()
if platform != "gpu":
    skip("JAX has no GPU here without the shim (no jax[cuda]?): %s" % platform)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

try:
    dev = jax.devices()[0]
except Exception as e:  # XLA's errors differ between versions
    check("JAX starts under the limit", False, e)
    done()
check("JAX starts on the GPU under the limit (no fall back to the CPU)",
      dev.platform == "gpu", dev)
if dev.platform != "gpu":
    done()

a = jnp.ones((1024, 1024), dtype=jnp.float32)
check("a matrix product is right", float((a @ a).sum()) == 1024.0 ** 3)
check("a reduction is right", int(jnp.arange(1000).sum()) == 499500)

stats = dev.memory_stats() or {}
if "bytes_limit" in stats:
    note("XLA's arena: %s (bytes_limit)" % size(stats["bytes_limit"]))
    check("the arena is sized from the limit", 0 < stats["bytes_limit"] <=
          LIMIT, size(stats["bytes_limit"]))
else:
    note("memory_stats has no bytes_limit here: the daemon's charge decides")
held = held_by_me()
check("the daemon charges the preallocated arena", 2 * GIB < held <= LIMIT,
      size(held))
check("and all it charges, context included, is within the limit",
      used_by_me() <= LIMIT, size(used_by_me()))

context_check(Driver(0).alloc, DriverOOM)	# the one device it sees
done()
