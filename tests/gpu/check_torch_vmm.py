"""PyTorch's expandable segments under a 4 GiB gpufrac limit: the caching
allocator maps pages made with cuMemCreate into one reserved address range
(virtual memory management), which the shim charges at cuMemCreate and
returns once a page is released and unmapped (DESIGN.md section 3), as
records of kind "vmm"; reserving the range charges nothing."""
import os
import re

# Read at the allocator's first use, so before any tensor is made.
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
import torch  # noqa: E402

from gpucheck import (GIB, LIMIT, MIB, all_equal, check,  # noqa: E402
                      context_check, done, expect_error, fill, held_by_me,
                      kinds, note, skip, size)

OOM = torch.cuda.OutOfMemoryError
version = tuple(int(v) for v in re.match(r"(\d+)\.(\d+)",
                                         torch.__version__).groups())
if version < (2, 1):
    skip("PyTorch %s has no expandable segments (2.1 and later)"
         % torch.__version__)
if not torch.cuda.is_available():
    skip("PyTorch sees no CUDA device")


def empty(n):
    return torch.empty(n, dtype=torch.uint8, device="cuda")


free, total = torch.cuda.mem_get_info()
check("mem_get_info (cuMemGetInfo) reports the limit as total",
      total == LIMIT, total)
check("and no more than that free", 0 < free <= LIMIT, free)
torch.zeros(1, device="cuda")
base = held_by_me()

x = torch.full((GIB // 4,), 3, dtype=torch.int32, device="cuda")
check("a 1 GiB tensor fits and works", all_equal(x, 3))
k = kinds()
check("gpufracctl allocs shows it in records of kind vmm",
      k.get("vmm", (0, 0))[1] >= GIB, k)
note("records while it lives: %s" % ", ".join(
    "%d %s (%s)" % (n, kind, size(b)) for kind, (n, b) in sorted(k.items())))
del x
torch.cuda.empty_cache()
check("empty_cache releases and unmaps its pages: the charge is back",
      held_by_me() < base + 64 * MIB, size(held_by_me()))

expect_error("allocating past the limit raises OutOfMemoryError",
             lambda: empty(LIMIT + 64 * MIB), OOM)

# cuMemCreate and cuMemRelease again and again: nothing may stick.
for r in range(1, 5):
    x = torch.full((GIB // 2,), r, dtype=torch.int32, device="cuda")
    ok = all_equal(x, r)
    del x
    torch.cuda.empty_cache()
    left = held_by_me()
    check("round %d: 2 GiB allocated, used and freed" % r,
          ok and left < base + 64 * MIB,
          "values right: %s, %s left" % (ok, size(left)))

held = fill(empty, OOM)
del held
torch.cuda.empty_cache()
check("after filling up and empty_cache the charge is back",
      held_by_me() < base + 64 * MIB, size(held_by_me()))

context_check(empty, OOM, settle=torch.cuda.empty_cache)
done()
