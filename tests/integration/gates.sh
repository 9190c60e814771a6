# Every entry point of the driver is hooked or gated by the shim, but for
# those that touch no device or cannot be known (shim/hooks_list.h): one
# left out would wait in the driver's checkpoint lock while the process is
# swapped out, unseen by the shim, for ever if it was swapped out by hand
# (the soak found cuMemPoolGetAttribute and cuArrayGetMemoryRequirements).
. "$(dirname "$0")/lib.sh"
G=$CLIENTS/gates_linked

# Without the shim, the driver's answers are its own: the list is whole.
all=$("$G" | tail -n 1)
check "the driver lists its entry points" [ "${all#entry points }" -gt 150 ]
check_eq "the shim hooks or gates all but these" "$(preload "$G")" \
	"driver cuCheckpointProcessCheckpoint 12080
driver cuCheckpointProcessGetRestoreThreadId 12080
driver cuCheckpointProcessGetState 12080
driver cuCheckpointProcessLock 12080
driver cuCheckpointProcessRestore 12080
driver cuCheckpointProcessUnlock 12080
driver cuCtxCreate 2000
driver cuDriverGetVersion 2020
driver cuGetErrorName 6000
driver cuGetErrorString 6000
driver cuGetExportTable 3000
driver cuInit 2000
$all"
finish
