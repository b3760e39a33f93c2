/*
 * hmm-helper: the small native part of hmm, for what Node cannot do itself.
 *
 *   hmm-helper abi
 *   hmm-helper layers [PLACE...]
 *   hmm-helper locked FILE...
 *   hmm-helper marked LOCK [HOSTS]
 *   hmm-helper exec --lock FILE [--report-fd N] [--wait-fd N] [--chdir DIR]
 *                   [--read PATH]... [--write PATH]... [--dev PATH]...
 *                   [--hide PATH]... [--read-only PATH]... [--plain-only PATH]... [--isolate DIR [--tmp-over PATH]...
 *                   [--cache PATH]... [--mask PATH]... [--cover-data DIR]
 *                   [--bind-src PATH --bind-dst PATH]...
 *                   [--home DIR [--home-keep PATH]... [--home-link PATH]...] [--end-with-command]
 *                   [--net none|proxy [--proxy-port N --proxy-socket NAME [--proxy-debug]]]]
 *                   -- CMD [ARG...]
 *   hmm-helper stop LOCK...
 *   hmm-helper attach DIR   (the background run's pty: background.c)
 *   hmm-helper clone [--threads N] [--progress-fd N] [--stat-pairs]
 *                    [--exclude-from FILE --excluded-to FILE] SRC DST
 *   hmm-helper excluded FILE < NUL-separated relative paths
 *   hmm-helper stat-pairs ROOT_A ROOT_B < NUL-separated relative paths
 *   hmm-helper larger-than LIMIT TOTAL < NUL-separated relative paths
 *   hmm-helper remove DIR
 *   hmm-helper disk-usage DIR...
 *
 * Where it stands on security: `exec` is the sandbox (exec.c, its arguments exec-args.c, landlock.c,
 * seccomp.c; isolate.c: namespaces and the init that holds the lock;
 * mounts.c: its own /tmp, caches, masks; home.c: the composed home; ids.c: run as root, the
 * command's ids, not the host's root; net.c: the network namespace,
 * bridge.c: the bridge to hmm's proxy); `stop` ends a workspace's processes (stop.c).
 * `clone` (clone.c, clone-copy.c) copies the origin into a workspace the way
 * `cp -a --reflink=auto` does, from several threads, reading the source only
 * through *at() calls relative to directory descriptors opened with
 * O_NOFOLLOW, so it never follows a link in SRC. `stat-pairs` (statpairs.c)
 * gives the stat data the workspace's first index is written from;
 * `larger-than` (there too) finds files too large for git add. `excluded`
 * (exclude.c) matches the config file's `exclude` patterns. `remove`
 * (remove.c) deletes a workspace's directory by directory descriptors, never
 * following a link a process of the command swaps in meanwhile.
 * `disk-usage` (usage.c) measures a workspace's directories for `hmm ls -l`
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
	      "       hmm-helper layers\n"
	      "       hmm-helper locked FILE...\n"
	      "       hmm-helper exec --lock FILE [--report-fd N] [--wait-fd N] [--chdir DIR]\n"
	      "                       [--read PATH]... [--write PATH]... [--dev PATH]...\n"
	      "                       [--hide PATH]... [--read-only PATH]... [--plain-only PATH]...\n                       [--isolate DIR [--tmp-over PATH]...\n"
	      "                       [--cache PATH]... [--mask PATH]... [--cover-data DIR]\n"
	      "                       [--bind-src PATH --bind-dst PATH]... [--end-with-command]\n"
	      "                       [--net none|proxy [--proxy-port N --proxy-socket NAME [--net-mark N] [--proxy-debug]]]]\n"
	      "                       -- CMD [ARG...]\n"
	      "       hmm-helper marked LOCK [HOSTS]\n"
	      "       hmm-helper stop LOCK...\n"
	      "       hmm-helper attach DIR\n"
	      "       hmm-helper clone [--threads N] [--progress-fd N] [--stat-pairs]\n"
	      "                        [--exclude-from FILE --excluded-to FILE] SRC DST\n"
	      "       hmm-helper excluded FILE < NUL-separated paths\n"
	      "       hmm-helper stat-pairs ROOT_A ROOT_B < NUL-separated paths\n"
	      "       hmm-helper larger-than LIMIT TOTAL < NUL-separated paths\n"
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
