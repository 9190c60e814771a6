"""PyTorch under a 4 GiB gpufrac limit (GPUFRAC_MEMORY_LIMIT=4Gi)."""
import torch

from gpucheck import GIB, check, done, held_by_me, used_by_me

free, total = torch.cuda.mem_get_info()
check("mem_get_info reports a 4 GiB total", total == 4 * GIB, total)
check("and no more than that free", 0 < free <= 4 * GIB, free)
x = torch.ones(256 << 20, dtype=torch.float32, device="cuda")  # 1 GiB
check("a 1 GiB tensor fits and works", x.sum().item() == 256 << 20)
check("gpufracctl ps shows it", used_by_me() >= GIB, used_by_me())
try:
    torch.empty(4 * GIB, dtype=torch.uint8, device="cuda")
    check("allocating past the limit raises OutOfMemoryError", False, "no error")
except torch.cuda.OutOfMemoryError:
    check("allocating past the limit raises OutOfMemoryError", True)
del x
torch.cuda.empty_cache()
check("after empty_cache the memory is back in gpufracctl allocs "
      "(its context aside)",
      held_by_me() < 64 << 20, held_by_me())
done()
