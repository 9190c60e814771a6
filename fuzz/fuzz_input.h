/*
 * The fuzzer's input format, shared by the harness (harness.c) and the seed
 * generator (seeds.c). An input is a little world and a script for it:
 *
 *   world byte   which configuration the daemon starts with, which GPUs
 *                the simulated driver has, whether NVML and the driver's
 *                checkpoint API are there (FZ_WORLD_*)
 *   op ...       until the input ends: one byte, (op << 4) | FZ_DEFER |
 *                slot, then the op's operands (FZ_OP_*)
 *
 * A slot is one connection of one simulated process; the slot's number
 * fixes who that is (fuzz.h: slot_ids in peers.c): four CUDA processes of
 * their own pids, uids and cgroups (slot 4 is a second connection of slot
 * 0's process), the fuzzer's own process as a CUDA client (5) and as root
 * running gpufracctl (6, admin), and an unprivileged gpufracctl (7).
 * Op FZ_OP_BARE's processes have no slot: they never connect.
 * Operands missing at the end of the input read as zero bytes; multi-byte
 * operands are little-endian.
 */
#ifndef GF_FUZZ_INPUT_H
#define GF_FUZZ_INPUT_H

/* The world byte. */
#define FZ_WORLD_CONF(b)	((b) & 0x3)	/* start variant, configs.c */
#define FZ_WORLD_NVML		0x04		/* NVML present */
#define FZ_WORLD_CKPT		0x08		/* checkpoint API present */
#define FZ_WORLD_DEVS(b)	(((b) >> 4) & 0x3)	/* device set, fakes.c */

/*
 * The simulated processes' pids (above any pid_max: never a real one):
 * slots 0 and 4 are FZ_PID(1), slots 1 to 3 FZ_PID(2) to FZ_PID(4), slot 7
 * FZ_PID(7); slots 5 and 6 are the fuzzer's own pid. The GPUs' uuids are
 * 16 bytes of FZ_UUID_BYTE(index).
 */
#define FZ_PID(n)		(0x40000000u + (n))
#define FZ_UUID_BYTE(dev)	(0xa0 + (dev))

#define FZ_NSLOTS		8
#define FZ_SLOT(b)		((b) & 0x7)
#define FZ_DEFER		0x08	/* leave the daemon alone after it:
					   the next ops' packets pile up */
#define FZ_OP(b)		((b) >> 4)
#define FZ_OPBYTE(op, slot)	((unsigned char)(((op) << 4) | (slot)))

enum {
	/* type (GF_MSG_*, any byte), seq, then the type's payload in full
	   (proto.h; none for an unknown type) */
	FZ_OP_MSG = 0,
	/* version, type, seq, len, then len bytes of payload: a header of
	   any protocol version over a payload of any length (a type's first,
	   shorter size; another version's HELLO; garbage) */
	FZ_OP_MSGLEN,
	/* len (2 bytes, mod 513), then that many bytes sent as one packet */
	FZ_OP_RAW,
	/* the connection closes; the process goes on (a self process's
	   client stays, departing) */
	FZ_OP_CLOSE,
	/* the slot's process exits: every connection of it closes */
	FZ_OP_EXIT,
	/* step: time passes (fz_ticks[step % FZ_NTICKS] ms) */
	FZ_OP_TICK,
	/* variant: the configuration file becomes that variant, SIGHUP */
	FZ_OP_HUP,
	/* offset (in 8-byte words), value (8 bytes): the process writes its
	   activity page, as a shim does (or a hostile one) */
	FZ_OP_PAGE,
	/* device, MiB (4 bytes): what NVML says the process holds there */
	FZ_OP_NVML,
	/* mode: how the driver's checkpoint API treats the process
	   (FZ_CKPT_*) */
	FZ_OP_CKPT,
	/* read every reply waiting for this slot */
	FZ_OP_DRAIN,
	/* this slot stops (or starts again) reading its replies at once */
	FZ_OP_SLOW,
	/* count: send the slot's last packet again, count times */
	FZ_OP_BURST,
	/* what: then as FZ_OP_MSG, the packet carrying a descriptor
	   (SCM_RIGHTS): what & 1, the process's activity page; else one
	   that is not a page */
	FZ_OP_MSGFD,
	/* 14: more FZ_OP_MSG, the op that matters most */
	/* kind, device, MiB (4 bytes): a process without a connection
	   (slot & 3 picks which of FZ_NBARE, fuzz/bare.c), by kind & 3:
	   0 it holds MiB on the device (a new process if none lives),
	   1 it exits and its memory is back, 2 it exits and a new process
	   takes its pid and MiB on the device, 3 it exits and NVML lists
	   its memory until a kind 0 of 0 MiB; kind >> 4, a new process's
	   procid reason (PROCID_*: a renamed library, a fake shim, ...) */
	FZ_OP_BARE = 15,
};

/* The processes without connections: pids, and how many. */
#define FZ_NBARE		4
#define FZ_BARE_PID(i)		(0x40000010u + (i))

/* FZ_OP_CKPT's mode byte. */
#define FZ_CKPT_LOCK_FAILS	0x01
#define FZ_CKPT_CHECKPOINT_FAILS 0x02
#define FZ_CKPT_RESTORE_FAILS	0x04
#define FZ_CKPT_UNLOCK_FAILS	0x08
#define FZ_CKPT_SET_STATE(b)	(((b) >> 4) & 0x7)	/* 0: keep; n: state
							   n - 1 */
#define FZ_CKPT_STATE_FAILS	0x80	/* cuCheckpointProcessGetState */
#define FZ_CKPT_FAILS		(FZ_CKPT_LOCK_FAILS | FZ_CKPT_CHECKPOINT_FAILS | \
				 FZ_CKPT_RESTORE_FAILS | FZ_CKPT_UNLOCK_FAILS | \
				 FZ_CKPT_STATE_FAILS)

/* What FZ_OP_TICK's step byte means, in ms. */
#define FZ_NTICKS		8
#define FZ_TICKS		{ 1, 50, 250, 1000, 2500, 10000, 31000, 120000 }

#endif
