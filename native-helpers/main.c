/*
 * hmm-helper: the small native part of hmm, for what Node cannot do itself.
 *
 *   hmm-helper MODE [ARG...]
 *
 * The modes and their arguments are usage()'s, below.
 *
 * The module map, top down: each file calls only files listed after it,
 * never one above (no circle of files).
 *
 *   main.c          the modes, by name
 *   modes           exec.c `exec`, exec-args.c its arguments; layers.c
 *                   `abi`, `layers`; stop.c `stop`; clone.c `clone`;
 *                   remove.c `remove`; usage.c `disk-usage`
 *   exec's processes
 *     isolate.c     the namespaces: the waiter, the init
 *     keeper.c      without them: the keeper, a subreaper
 *     background.c  a background run's waiter; `attach`
 *     pty.c         the command's pty, the waiter's relay
 *     waiter.c      the signals waited for, the waiter's end
 *     term-filter.c, term-modes.c  what reaches the user's terminal
 *   the sandbox's layers
 *     mounts.c      the init's mounts, in their order
 *     landlock.c    Landlock's rules
 *     home.c        the composed home
 *     devices.c     /dev
 *     caches.c      the caches' layers and stand-ins
 *     net.c         the network namespace
 *     ids.c         root's command's own ids, idmapped mounts
 *     bridge.c, verdicts.c  the bridge to hmm's proxy
 *     binds.c, counts.c, cover-data.c, own-run.c (/run), readonly.c,
 *     marks.c `marked`, oom.c, seccomp.c
 *   clone's parts   clone-copy.c, clone-data.c, clone-state.c (clone.h)
 *   the rest        lock.c `locked`, members.c, exclude.c `excluded`,
 *                   statpairs.c `stat-pairs`, `larger-than`
 *   util.c          memory, numbers, paths, descriptors, mount steps,
 *                   descriptor passing, setup_fail
 * hmm-helper.h declares them, a section per file, grouped as above from
 * the bottom up (clone.h: clone's own parts).
 *
 * Where it stands on security: `exec` is the sandbox (exec.c, landlock.c,
 * seccomp.c; isolate.c: namespaces and the init that holds the lock;
 * mounts.c: its own /tmp, caches, masks; home.c: the composed home; ids.c:
 * run as root, the command's ids, not the host's root; net.c: the network
 * namespace, bridge.c: the bridge to hmm's proxy); `stop` ends a
 * workspace's processes (stop.c).
 * `clone` copies the origin into a workspace the way
 * `cp -a --reflink=auto` does, from several threads, reading the source only
 * through *at() calls relative to directory descriptors opened with
 * O_NOFOLLOW, so it never follows a link in SRC. `stat-pairs`
 * gives the stat data the workspace's first index is written from;
 * `larger-than` finds files too large for git to read. `excluded`
 * matches the config file's `exclude` patterns. `remove`
 * deletes a workspace's directory by directory descriptors, never
 * following a link a process of the command swaps in meanwhile.
 * `disk-usage` measures a workspace's directories for `hmm ls -l`
 * the same careful way.
 *
 * Linux-only parts (Landlock, namespaces, stop, capabilities, FICLONE,
 * copy_file_range, close_range) are behind __linux__; the rest also builds
 * on macOS, where hmm confines the command with sandbox-exec instead, clones
 * with `cp -c`, and uses the helper's `locked`, `exec` (lock, descriptors,
 * exec; no Landlock rules, no namespaces), `stat-pairs` and `larger-than`.
 */
#include "hmm-helper.h"

static void usage(void)
{
	fputs("usage: hmm-helper abi\n"
	      "       hmm-helper layers [PLACE...]\n"
	      "       hmm-helper locked FILE...\n"
	      "       hmm-helper marked LOCK [HOSTS]\n"
	      "       " EXEC_SYNOPSIS "\n"
	      "       hmm-helper stop LOCK...\n"
	      "       hmm-helper attach DIR\n"
	      "       hmm-helper clone [--threads N] [--progress-fd N] [--stat-pairs]\n"
	      "                        [--exclude-from FILE --excluded-to FILE] SRC DST\n"
	      "       hmm-helper excluded FILE < NUL-separated relative paths\n"
	      "       hmm-helper stat-pairs ROOT_A ROOT_B < NUL-separated relative paths\n"
	      "       hmm-helper larger-than LIMIT TOTAL [FILE...] < NUL-separated relative paths > the same, for git update-index\n"
	      "       hmm-helper remove DIR\n"
	      "       hmm-helper disk-usage DIR...\n",
	      stderr);
}

/* The modes, by the word that names them. */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} MODES[] = {
	{"abi", cmd_abi},
	{"layers", cmd_layers},
	{"locked", cmd_locked},
	{"marked", cmd_marked},
	{"exec", cmd_exec},
	{"stop", cmd_stop},
#ifdef __linux__
	{"attach", cmd_attach},
#endif
	{"clone", cmd_clone},
	{"stat-pairs", cmd_stat_pairs},
	{"larger-than", cmd_larger_than},
	{"excluded", cmd_excluded},
	{"remove", cmd_remove},
	{"disk-usage", cmd_disk_usage},
};

int main(int argc, char **argv)
{
	if (argc >= 2)
		for (size_t i = 0; i < sizeof MODES / sizeof MODES[0]; i++)
			if (strcmp(argv[1], MODES[i].name) == 0)
				return MODES[i].run(argc, argv);
	usage();
	return 2;
}
