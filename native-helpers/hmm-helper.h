/*
 * hmm-helper: what the modules of the helper share, a section per file.
 * main.c's comment is the module map: which layer each file is in, and
 * that each calls only the layers below it.
 */
#ifndef HMM_HELPER_H
#define HMM_HELPER_H

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/ioctl.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#endif

/* Nanosecond times are spelt differently on macOS. */
#ifdef __APPLE__
#define ST_ATIM(st) ((st).st_atimespec)
#define ST_MTIM(st) ((st).st_mtimespec)
#else
#define ST_ATIM(st) ((st).st_atim)
#define ST_MTIM(st) ((st).st_mtim)
#endif

#ifndef O_NOATIME
#define O_NOATIME 0
#endif

/* The helper's own failures before the command runs, never the command's. */
#define EXIT_SETUP 125

/* ======== util: what every file uses ======== */

/* ---- util.c ---- */

int write_all(int fd, const char *buf, size_t len);
long parse_num(const char *s, long min, long max);
void oom(void) __attribute__((noreturn));
void *xmalloc(size_t n);
char *xstrdup(const char *s);
char *path_join(const char *a, const char *b);
char *dir_of(const char *path);
char *rel_join(const char *rel, const char *name);
/* Closes every descriptor above 2 but k1 and k2 (-1: none). */
void close_other_fds(int k1, int k2);
/* Points stdin, stdout and stderr (unless kept) at /dev/null (a process that must hold nothing of the terminal). */
void stdio_to_null(int keep_stderr);
/* The same with a /dev/null opened before, and closes it. */
void stdio_to(int null, int keep_stderr);
/* The directory rel beneath the directory at, reached through directories
 * alone, no link followed (util.c): a directory of the workspace's tree. */
int open_dir_beneath(int at, const char *rel);

#ifdef __linux__
/* Opens a path hmm named, canonical, without following any symbolic link on
 * the way, the last component's included (openat2 RESOLVE_NO_SYMLINKS): see
 * util.c. The descriptor is close-on-exec; -1 with errno set (ELOOP where a
 * link is met). */
int open_no_links(const char *path, int flags);
/* Whether p is dir or lies beneath it; strictly beneath it. */
int beneath_or_at(const char *p, const char *dir);
int strictly_beneath(const char *p, const char *dir);
/* mount(2), or a set-up failure naming the step. */
void mount_or_fail(const char *step, const char *src, const char *target, const char *type,
		   unsigned long flags, const char *data);
/* mkdir -p, or a set-up failure naming the step. */
void make_dirs(const char *step, const char *path, mode_t mode);
/* "/proc/self/fd/N", to free: a mount's source or target by descriptor. */
char *fd_path(int fd);
/* A descriptor passed over a unix socket: 0 or -1 (errno); the descriptor
 * received, or -1. */
int send_fd(int sock, int fd);
int receive_fd(int sock);
#endif

/* Where set-up failures go: the report descriptor if hmm gave one, -1 for
 * stderr. */
extern int report_fd;
void setup_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* ======== exec's options: what its layers and processes read ======== */

/* ---- exec-args.c ---- */

/* The command's network (net.c): the user's, none, or hmm's proxy only. */
enum { NET_HOST, NET_NONE, NET_PROXY };

/* Rights classes, in the order a grant widens them. */
enum { CLASS_READ, CLASS_WRITE, CLASS_DEV };

struct grant {
	const char *path;
	int cls;
};

struct exec_opts {
	const char *lock;
	int wait_fd;	   /* -1, or where hmm sends the go-ahead */
	const char *chdir; /* NULL, or where the command starts */
	const char *chdir_top; /* NULL, or the top of the tree chdir lies in, where it starts if chdir cannot be reached (exec.c) */
	const char *program; /* NULL, or the file run for cmd[0] (found by hmm outside), not looked up on PATH */
	struct grant *grants;
	size_t ngrants;
	const char **hides;
	size_t nhides;
	const char **read_only; /* inside write grants, but not written */
	size_t nread_only;
	const char **plain_only; /* inside write grants: only plain files and directories made (landlock.c) */
	size_t nplain_only;
	const char *isolate; /* NULL, or the workspace's directory (isolate.c) */
	int end_with_command; /* isolated: what the command leaves is ended with it */
	const char *background; /* isolated: NULL, or the directory of a background run's pty (background.c) */
	const char **tmp_over;
	size_t ntmp_over;
	const char **caches;
	size_t ncaches;
	const char *layers; /* NULL, or the directory of the workspace's the caches' layers are kept in, for "caches" (mounts.c) */
	const char **masks;
	size_t nmasks;
	const char *cover_data; /* NULL, or hmm's data directory, covered but for isolate (cover-data.c) */
	const char *home; /* NULL, or the home composed of home_keep and home_links alone (home.c) */
	const char **home_keep;
	size_t nhome_keep;
	const char **home_links;
	size_t nhome_links;
	const char **bind_src; /* isolated: each bound over bind_dst[i] after the caches */
	const char **bind_dst;
	size_t nbind_src, nbind_dst;
	int net;		  /* NET_HOST, NET_NONE or NET_PROXY */
	int proxy_port;		  /* NET_PROXY: the loopback port inside */
	const char *proxy_socket; /* NET_PROXY: the abstract socket outside */
	int proxy_debug;	  /* NET_PROXY: the bridge says why it could not connect (hmm's HMM_DEBUG) */
	long net_mark;		  /* NET_PROXY: -1, or the mark hmm gives its host list (marks.c) */
	char **cmd;
};

/* exec's arguments, for its usage errors and usage() (main.c). */
#define EXEC_SYNOPSIS                                                                                        \
	"hmm-helper exec --lock FILE [--report-fd N] [--wait-fd N] [--chdir DIR [--chdir-top TOP]] "         \
	"[--program FILE] [--read PATH]... [--write PATH]... [--dev PATH]... [--hide PATH]... "              \
	"[--read-only PATH]... "                                                                             \
	"[--plain-only PATH]... [--isolate DIR [--tmp-over PATH]... [--cache PATH]... [--layers NAME] "      \
	"[--mask PATH]... [--cover-data DIR] [--bind-src PATH --bind-dst PATH]... "                          \
	"[--home DIR [--home-keep PATH]... [--home-link PATH]...] "                                          \
	"[--net none|proxy [--proxy-port N --proxy-socket NAME [--net-mark N] [--proxy-debug]]] "            \
	"[--end-with-command] [--background DIR]] -- CMD [ARG...]"
/* exec's arguments read into o (a usage error fails the set-up), whether a flag takes a value, and the
 * arguments blanked in the helper's own command line. */
void parse_exec(int argc, char **argv, struct exec_opts *o);
int takes_value(const char *flag);
void blank_arguments(int argc, char **argv);

/* ======== the rest: locks, a workspace's processes, exclude and stat-pairs ======== */

/* ---- lock.c ---- */

int is_locked(const char *path);
/* Whether a workspace runs: its lock is held, or (Linux) a helper whose
 * arguments name the lock lives, should the file have been replaced. */
int workspace_runs(const char *lock);
#ifdef __linux__
/* The helpers of the user's in exec mode whose arguments name the lock: the
 * init of a workspace's PID namespace, or its keeper. */
size_t helpers_of_lock(const char *lock, pid_t *out, size_t max);
#endif
/* The byte of a lock file on which probes take turns: above every
 * byte a cache layer (mounts.c) or a network mark (marks.c) locks. */
#define PROBE_TURN ((off_t)3 << 61)
int flock_retry(int fd, int how);
int cmd_locked(int argc, char **argv);

/* ---- members.c ---- */

#ifdef __linux__
/* The processes of a workspace without a PID namespace of its own (see
 * members.c's comment): those that descend from one of the keepers given.
 * find_members gives a list to free. */
int descends_from(pid_t pid, const pid_t *keepers, size_t n);
size_t find_members(const pid_t *keepers, size_t n, pid_t **out);
#endif

/* ---- exclude.c ---- */

/* The config file's `exclude` patterns, read from FILE (0, or -1 with errno). */
int exclude_load(const char *file);
int exclude_any(void);
/* Whether the patterns exclude the entry at REL (from the top), a directory or not. */
int exclude_match(const char *rel, int is_dir);
int cmd_excluded(int argc, char **argv);

/* ---- statpairs.c ---- */

/* Bytes of one stat record (layout at stat-pairs in statpairs.c). */
#define STAT_RECORD 41

int cmd_stat_pairs(int argc, char **argv);
int cmd_larger_than(int argc, char **argv);
/* clone --stat-pairs: load the paths from stdin, note each regular file
 * copied, write the answers on stdout at the end (0, or -1). */
void sp_load(void);
void sp_note(const char *rel, const char *name, int s, int t, const struct stat *st);
int sp_write(void);

/* ======== the sandbox's layers ======== */

/* ---- landlock.c ---- */

int landlock_abi(void);
#ifdef __linux__
/* Applies the grants, hides and read-only paths of o with Landlock, and
 * no_new_privs. */
void landlock_confine(const struct exec_opts *o);
#endif

/* ---- marks.c ---- */

/* A host list's mark as --net-mark and `marked` take it, or -1. */
long parse_mark(const char *value);
/* Marks the command's network on the lock's descriptor, held with the lock. */
void mark_network(const struct exec_opts *o, int lock);
int cmd_marked(int argc, char **argv);

/* The layers below are Linux's alone. */
#ifdef __linux__

/* ---- seccomp.c ---- */

/* Makes ioctl TIOCSTI and TIOCLINUX fail with EPERM for this process and
 * everything it runs, io_uring with ENOSYS, the keyrings' calls with
 * EPERM (after leaving the user's session keyring), and the calls that
 * change other processes' limits and priorities (those by a process's ID
 * only without `own_pids`, a PID namespace of its own); with `net`, also
 * every socket but unix, IPv4 and IPv6 ones, and raw ones. Needs
 * no_new_privs set. 0, or -1 with errno set. */
int seccomp_confine(int net, int own_pids);

/* ---- oom.c ---- */

/* oom_score_adj 1000 for this process and what it starts after. */
void oom_first(void);

/* ---- counts.c ---- */

#define USER_COUNTS 12
/* The per-user limits of the kernel's counts (/proc/sys/user), as the
 * helper's user namespace has them; -1 where the kernel has none. */
struct user_counts {
	long max[USER_COUNTS];
	long tasks_left; /* more tasks the user may start; -1: not counted (root) */
};
/* Before the workspace's user namespace is made. */
void user_counts_read(struct user_counts *c);
/* In it, while the helper holds its capabilities: half of each, and half
 * of the tasks left as its RLIMIT_NPROC. */
void user_counts_bound(const struct user_counts *c);
/* Without the namespaces, in the command before it runs: RLIMIT_NPROC of
 * the user's tasks and half of those left. */
void user_processes_bound(void);

/* ---- mounts.c ---- */

/* In the init: /proc, /dev (devices.c), caches, binds, tmp,
 * masks, the data directory covered; none needs the workspace's tree.
 * lock: the workspace's lock file, open read-write for the namespace's
 * life (its bytes mark the caches' layers in use). */
void isolate_mounts(const struct exec_opts *o, int lock);

/* ---- caches.c ---- */

/* In the init, each cache's overlay on its layer kept with the
 * workspace (lock's bytes mark the layers in use). */
void isolate_caches(const struct exec_opts *o, int lock);
/* Is every cache of o there, as named, in the user's view? Then
 * isolate_mounts makes nothing of the user's (it makes a missing cache
 * in the user's home). */
int isolate_caches_there(const struct exec_opts *o);
/* After isolate_mounts: whether path is a cache whose layer whites out
 * every hidden path beneath it, so that none is there (landlock.c grants
 * it whole). */
int isolate_sealed(const char *path);
/* A cache's layer mounted on a directory of the workspace's, or -1. */
int cache_stand_in(const char *path);

/* ---- binds.c ---- */

/* Each --bind-src opened before the caches are mounted over it
 * (-1: a login not there), then bound over its --bind-dst after. */
int *open_bind_sources(const struct exec_opts *o);
void bind_files(const struct exec_opts *o, int *fds);
/* After isolate_mounts: whether bind i (--bind-src/--bind-dst) was made. */
int isolate_bound(size_t i);

/* ---- own-run.c ---- */

/* In the init, before the other mounts: a /run of the command's own, with
 * only what programs need of the host's bound back. */
void isolate_run(const struct exec_opts *o);

/* ---- cover-data.c ---- */

/* In the init, after the other mounts: --cover-data's directory covered but for the workspace's. */
void cover_data(const struct exec_opts *o);

/* ---- home.c ---- */

/* In the init, last of the mounts: --home composed of what hmm names alone. */
void compose_home(const struct exec_opts *o);

/* ---- readonly.c ---- */

/* In the init, after every other mount: every mount read-only but the
 * places o grants write on (and what lies beneath them, as it is). */
void read_only_but_granted(const struct exec_opts *o);

/* ---- devices.c ---- */

/* In the init, before the command is forked: the command's own /dev. */
void isolate_dev(void);

/* ---- ids.c ---- */

/* As root, in the waiter, before the init: the command's user namespace,
 * its ids mapped to a range of the host's (or 0 to 0 where idmapped mounts
 * cannot show it its places). */
void ids_prepare(const struct exec_opts *o, const struct user_counts *counts);
/* The command's user namespace's descriptor, -1 before ids_prepare. */
int ids_userns(void);
/* For `layers`, as root: whether the command's ids could be remapped with
 * these places its own; why not in why. */
int ids_refusal(char **paths, int n, char *why, size_t len);
/* Root of the host's user namespace (a container's root is not: ids.c). */
int ids_host_root(void);
/* Whether the command's ids are not the host's. */
int ids_remapped(void);
/* The devpts options that make its ptys its own ("" unless remapped). */
const char *ids_devpts_options(void);
/* Remapped: a cache's overlay mounted on target, made on idmapped layers
 * (lowers: top first; layer: the directory of upper/ and work/); -1 with
 * errno where the kernel cannot. */
int ids_overlay(int target, const int *lowers, size_t nlowers, const char *layer);
/* In the init, after every mount but the read-only pass: the places shown
 * as the command's own. */
void ids_remap_places(const struct exec_opts *o);
/* In the command: into its user namespace, as its root. */
void ids_join(void);

/* ---- net.c ---- */

/* exec's --net, --proxy-port, --proxy-socket (and exec.c's --proxy-debug): 1 if `flag` was one of them. */
int net_option(struct exec_opts *o, const char *flag, const char *value);
/* Refuses a network option that cannot work as given. */
void net_check(const struct exec_opts *o);
/* In the waiter, before the PID namespace is made: the bridge, which
 * waits there for the proxy's port. */
void net_prepare(const struct exec_opts *o);
/* In the init, before the command is forked: the namespace, the loopback,
 * the proxy's port handed to the bridge. */
void net_isolate(const struct exec_opts *o);
/* In the waiter, after the init is forked. */
void net_waiter(const struct exec_opts *o);

/* ---- bridge.c ---- */

/* The bridge's life, in the process net_prepare forks (which
 * holds nothing else of the waiter's); with `debug`, its debug lines go to
 * stderr. */
void net_bridge(int listener, const char *name, int debug) __attribute__((noreturn));
/* The proxy's CONNECT socket is its socket's name with this after it
 * (proxy.ts, CONNECT_SOCKET). */
#define CONNECT_SUFFIX ".connect"

/* ---- verdicts.c ---- */

/* The bridge's kept tunnel verdicts: the longest head and
 * verdict kept (a CONNECT's head is a line or three: a longer one is asked
 * about each time); the kept verdict for a head, copied to `verdict` (room
 * for KEPT_VERDICT), 1 if there is one; a verdict kept for `keep` ms. */
#define KEPT_HEAD 1024
#define KEPT_VERDICT 2048
int verdict_kept(const char *head, size_t head_len, char *verdict, size_t *verdict_len, long long now);
void verdict_keep(const char *head, size_t head_len, const char *verdict, size_t verdict_len, long keep, long long now);

#endif /* __linux__ */

/* ======== exec's processes ======== */

/* ---- term-filter.c ---- */

/* What a sequence under way may hold (a colour OSC, at most). */
#define TERM_HELD 256
/* Room the filtered output of n bytes may take: a byte at most twice over
 * (a string cut short ends with ST), and what was held from before. */
#define TERM_FILTER_ROOM(n) (2 * (n) + TERM_HELD + 8)

/* The filter's state between reads of the command's output. */
struct term_filter {
	int state, string; /* string: the string an ESC came in */
	unsigned num;	   /* an OSC's number */
	size_t len;	   /* of held */
	size_t target;	   /* where a hyperlink's target starts in held, once its parameters have ended */
	unsigned char held[TERM_HELD];
	unsigned char u8[4], lo, hi; /* a UTF-8 character under way; its next byte's range */
	int u8len, need;
	int asked; /* something passed that the terminal answers */
	unsigned modes, put_back, colours; /* what passed that is put back at the end (term-modes.c) */
};
void term_filter_init(struct term_filter *f);
/* The command's n bytes as the user's terminal may see them, into out
 * (TERM_FILTER_ROOM(n) bytes); returns how many. */
size_t term_filter(struct term_filter *f, const unsigned char *in, size_t n, unsigned char *out);
/* The command's output has ended: a string it left open is closed. */
size_t term_filter_end(struct term_filter *f, unsigned char *out);

/* ---- term-modes.c ---- */

/* Room term_filter_put_back may take. */
#define TERM_PUT_BACK_ROOM 512
/* What term_filter passes, noted: a CSI sequence held (its marker and last
 * intermediate, or 0) with its final byte, or 0 when it is not to pass (a
 * mode the terminal could not be put back from, or might read otherwise
 * than noted); a colour OSC (its number; held: the sequence up to its
 * terminator, len bytes, or none for a reset without arguments); an escape
 * (its intermediate, or 0); a shift out of G0 and back (SO, SI). */
int term_note_csi(struct term_filter *f, unsigned char marker, unsigned char inter, unsigned char final);
void term_note_colour(struct term_filter *f, unsigned num, const unsigned char *held, size_t len);
void term_note_esc(struct term_filter *f, unsigned char inter, unsigned char final);
void term_note_shift(struct term_filter *f, unsigned char control);
/* Once the output has ended: what puts back the modes and renditions the
 * command left set that hide hmm's lines or make the terminal type into
 * the user's shell, into out (TERM_PUT_BACK_ROOM bytes); returns how many,
 * and notes in asked when reports may be on their way meanwhile. */
size_t term_filter_put_back(struct term_filter *f, unsigned char *out);

/* ---- waiter.c ---- */

#ifdef __linux__
/* Marks a signal the waiter passes on to the init, as opposed to one for the init. */
#define FORWARDED 0x686d6d
/* Whether sig is one of hmm's that the waiter passes on. */
int passed_on(int sig);
/* The signals the waiter and the init wait for (blocked in both). */
void waited_signals(sigset_t *set);
/* In the process left waiting once the one that keeps the lock is forked
 * (the init, or the keeper without namespaces): what that one took over,
 * the report, the go-ahead and the lock, closed here. */
void close_handed_over(const struct exec_opts *o, int lock);
/* A waiter's end, as the command's status says (-1: as its child `init`
 * ends, which ended first without saying), so hmm sees that status or signal. */
void end_as(int status, pid_t init) __attribute__((noreturn));
#endif

/* ---- pty.c ---- */

#ifdef __linux__
/* In the waiter, before the init is forked: which of stdin, stdout and
 * stderr are terminals, and the way the pty's master will come. */
void pty_prepare(const char *background_dir);
/* In the init, before the command is forked: a session of its own; with a
 * terminal given, the command's pty, whose master goes to the waiter.
 * Returns the slave, or -1. */
int pty_session(void);
/* In the command, after fork: a process group of its own, the pty's
 * foreground, the slave in place of each terminal it was given. */
void pty_take(int slave);
/* Does the init report the command's stops (its stdin is relayed)? */
int pty_reports_stops(void);
/* Was the waiter given a terminal (stdin, stdout or stderr)? */
int pty_given(void);
/* The waiter's life: relays, passes signals on, stops and goes on with the
 * command, and ends as it ended (or as the init did, if it ended first). */
void pty_waiter(int status_fd, pid_t init) __attribute__((noreturn));
/* The waiter's first step, pty_waiter's or background_waiter's: the init's
 * end of the master's way closed. */
void pty_waiting(void);
#endif

#ifdef __linux__
#include <termios.h>
/* The relay between a pty's master and a user's terminal: the waiter's
 * (pty.c) and `hmm attach`'s (background.c). */
struct relay {
	pid_t init;
	int in;	    /* the user's terminal to read (stdin), or -1 */
	int out;    /* where the command's output goes, or -1 */
	int user;   /* the user's terminal whose size the pty takes */
	int master; /* -1 until the init hands it over, or after a hang-up */
	int peer;   /* the waiter's own slave: all the command's closed, the master reads nothing (not EIO) */
	int raw;    /* the user's terminal's modes are ours: saved holds theirs */
	int keep_oflag; /* others write to the terminal too: its output processing kept */
	int record; /* where what the command writes is also kept, unfiltered (a background run's scrollback), or -1 */
	struct termios saved;
	char pending[4096]; /* read from the user, not yet taken by the pty */
	size_t len, off;
	struct term_filter filter; /* what of the command's output the user's terminal sees */
};
/* The most read from the command's terminal at once. */
#define RELAYED 65536
void pty_tell_init(const struct relay *r, int sig);
void pty_copy_size(const struct relay *r);
void pty_restore(struct relay *r);
void pty_make_raw(struct relay *r);
void pty_to_user(struct relay *r, const char *buf, size_t n);
/* Reads the command's output to its end, then pty_end_output. */
void pty_drain(struct relay *r);
/* The filter's end and the modes the command left set put back. */
void pty_end_output(struct relay *r);
void pty_fence(struct relay *r);
/* The waiter's end of the way the init hands the master over, and the taking of it. */
int pty_channel(void);
int pty_take_master(struct relay *r);

/* ---- background.c ---- */

/* In the waiter, before the namespaces are made: the background run's
 * directory (hmm's, out of the command's reach), its key, scrollback and
 * socket, made while the waiter still sees the data directory. */
void background_prepare(const char *dir);
/* The waiter of a background run: keeps the pty and its scrollback, lets
 * `hmm attach` take it over, ends as the command ended. */
void background_waiter(int status_fd, pid_t init) __attribute__((noreturn));
int cmd_attach(int argc, char **argv);

#endif

/* ---- isolate.c ---- */

#ifdef __linux__
/* Namespaces: the init (PID 1 of a new PID namespace) goes on with run,
 * keeping the lock's descriptor; the process that called it waits for the
 * command and exits as it did. */
void isolate_namespaces(const struct exec_opts *o, int lock, void (*run)(const struct exec_opts *o, int lock))
	__attribute__((noreturn));
/* Whether the init becomes the command rather than start it: one that ends
 * with the command (--end-with-command), with no terminal to relay and no
 * bridge (hmm's readers). It then holds the lock only until the command
 * starts. */
int isolate_command_is_init(const struct exec_opts *o);
/* In the command, after fork: the signals the init waits for, unblocked. */
void isolate_unblock(void);
/* The init's life once the command runs: holds lock, reaps, passes signals;
 * with end_with_command, ends the namespace when the command ends. */
void isolate_init(pid_t command, int lock, int end_with_command) __attribute__((noreturn));
#endif

/* ---- keeper.c ---- */

#ifdef __linux__
/* Without the namespaces: forks the keeper, a child subreaper, and returns
 * in it; the helper hmm started waits for the command's status and exits
 * as it did. */
void keeper_start(const struct exec_opts *o, int lock);
/* In the command, before exec: back in hmm's process group, which the
 * keeper left (on hmm's terminal, Ctrl-C and Ctrl-Z reach it). */
void keeper_join_hmm(void);
/* The keeper's life once the command runs: holds lock, reaps every
 * descendant, passes hmm's signals on; exits when none is left. */
void keeper_run(pid_t command, int lock) __attribute__((noreturn));
#endif

/* ======== the modes ======== */

/* ---- exec.c ---- */

int cmd_exec(int argc, char **argv);

/* ---- layers.c ---- */

int cmd_abi(int argc, char **argv);
int cmd_layers(int argc, char **argv);

/* ---- stop.c ---- */

int cmd_stop(int argc, char **argv);

/* ---- clone.c ---- */

int cmd_clone(int argc, char **argv);

/* ---- remove.c ---- */

/* remove could not delete everything; the first failure is on stderr. */
#define EXIT_NOT_REMOVED 3

int cmd_remove(int argc, char **argv);

/* ---- usage.c ---- */

int cmd_disk_usage(int argc, char **argv);

#endif
