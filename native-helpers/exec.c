/*
 * exec: the sandbox's last steps before the command. It takes the lock that
 * marks a workspace running, closes every descriptor hmm did not mean the
 * command to have, confines itself (landlock.c), keeps only the
 * capabilities that act on its own files, forbids gaining privileges, and
 * execs the command. On Linux a process of hmm's outside the sandbox stays
 * its parent, holding the lock while anything the command started lives
 * (the init of its PID namespace, isolate.c; without the namespaces the
 * keeper, keeper.c); on macOS the helper becomes the command. The policy arrives only in argv; no environment
 * variable changes what the helper does. Whatever goes wrong before the
 * command starts is reported on the report descriptor and with its own exit
 * status (125), never confused with the command's own.
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <ctype.h>
#include <sched.h>
#endif

#ifdef __linux__
/* What the command keeps of root's capabilities when hmm runs as root:
 * what root's tools need within the files they may write (owners, modes,
 * set-user-ID tools that switch users, low ports, signals). Everything that
 * reaches past Landlock's file rules goes: loading kernel modules, raw I/O,
 * device nodes (a disk read raw holds every secret), the system clock
 * (which would also let it forge the ctimes hmm trusts), mounts and the
 * rest of SYS_ADMIN, tracing, BPF, DAC_READ_SEARCH (open_by_handle_at),
 * FSETID (a file it writes keeps no set-ID bit; seccomp.c refuses new
 * ones). Landlock does not mediate chown and chmod: CHOWN and FOWNER act
 * only where it may write when everything else is mounted read-only
 * (readonly.c), so they are kept only with the namespaces; without them
 * they would give away, or open to all, any file of the system. So are
 * NET_RAW and NET_BIND_SERVICE: in the user namespace they act only on a
 * network namespace of the command's own (--net); without it, on the
 * host's, a packet socket reads the machine's traffic, loopback's tokens
 * included, and a low port can be taken from a service of the system. */
static const int KEPT_CAPS[] = {CAP_DAC_OVERRIDE, CAP_KILL, CAP_SETGID, CAP_SETUID, CAP_SYS_CHROOT, CAP_AUDIT_WRITE};
static const int KEPT_CAPS_ISOLATED[] = {CAP_CHOWN, CAP_FOWNER, CAP_NET_BIND_SERVICE, CAP_NET_RAW};

static void drop_capabilities(int isolated)
{
	uint64_t keep = 0;
	for (size_t i = 0; i < sizeof KEPT_CAPS / sizeof *KEPT_CAPS; i++)
		keep |= 1ULL << KEPT_CAPS[i];
	for (size_t i = 0; isolated && i < sizeof KEPT_CAPS_ISOLATED / sizeof *KEPT_CAPS_ISOLATED; i++)
		keep |= 1ULL << KEPT_CAPS_ISOLATED[i];
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct caps[2];
	if (syscall(SYS_capget, &hdr, caps) < 0)
		setup_fail("cannot read the capabilities: %s", strerror(errno));
	/* The bounding set too, so that no exec (as root, or of a program
	 * with file capabilities) brings them back. Needs CAP_SETPCAP, which
	 * root has; a process without it has nothing to drop here. */
	if (caps[0].effective & (1U << CAP_SETPCAP)) {
		for (int cap = 0; cap < 64; cap++) {
			if (keep & (1ULL << cap))
				continue;
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
				if (errno == EINVAL)
					break; /* past the last capability this kernel has */
				setup_fail("cannot drop capability %d: %s", cap, strerror(errno));
			}
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		setup_fail("cannot clear the ambient capabilities: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		uint32_t mask = (uint32_t)(keep >> (32 * i));
		caps[i].effective &= mask;
		caps[i].permitted &= mask;
		caps[i].inheritable &= mask;
	}
	if (syscall(SYS_capset, &hdr, caps) < 0)
		setup_fail("cannot drop capabilities: %s", strerror(errno));
}
#endif

static const char *errno_name(int e)
{
	switch (e) {
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case ENOEXEC: return "ENOEXEC";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case ELOOP: return "ELOOP";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case E2BIG: return "E2BIG";
	case ENOMEM: return "ENOMEM";
	case ETXTBSY: return "ETXTBSY";
	case EPERM: return "EPERM";
	case EIO: return "EIO";
	case EINVAL: return "EINVAL";
	case EMFILE: return "EMFILE";
	case ENFILE: return "ENFILE";
	case EFAULT: return "EFAULT";
	default: return "EOTHER";
	}
}

/* execvp's EACCES for a name looked up in PATH also comes from a directory
 * of PATH that may not be searched (root's ~/.cargo/bin in a plain user's
 * PATH). A shell says "not found" (127) then: EACCES only counts where a
 * file of that name exists in some directory of PATH. */
static int found_on_path(const char *name)
{
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin"; /* execvp's own default */
	size_t len = strlen(name);
	for (const char *dir = path;; dir++) {
		const char *end = strchr(dir, ':');
		size_t dlen = end ? (size_t)(end - dir) : strlen(dir);
		char *file = xmalloc(dlen + len + 3);
		/* An empty entry is the working directory, as for execvp. */
		snprintf(file, dlen + len + 3, "%.*s/%s", (int)(dlen ? dlen : 1), dlen ? dir : ".", name);
		struct stat st;
		int found = stat(file, &st) == 0;
		free(file);
		if (found)
			return 1;
		if (!end)
			return 0;
		dir = end;
	}
}

/* Where the command starts, --chdir DIR, entered in the view it runs in
 * (the namespaces' mounts made) without following any link. hmm names DIR
 * canonical, its links resolved; a link met now was put there since. With
 * --chdir-top the directories below TOP are the workspace's tree, which the
 * command controls: a directory there it made a link would lead wherever
 * it chose, /proc/self/cwd/.. to the directory of the process that follows
 * it (attacker's review 24, F1). So DIR is reached from TOP through
 * directories alone (util.c open_dir_beneath), or the command starts at
 * TOP, said in one line (hmm exec looks at the way first, session.ts
 * startInTree: this meets only a command that changed it since, or in a
 * tree just cloned a directory the clone left out). TOP itself is hmm's,
 * out of the command's reach; not entering it fails the set-up. */
static void enter_start(const struct exec_opts *o)
{
	if (!o->chdir)
		return;
	const char *top = o->chdir_top ? o->chdir_top : o->chdir;
#ifdef __linux__
	int at = open_no_links(top, O_PATH | O_DIRECTORY);
#else
	int at = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#endif
	if (at < 0)
		setup_fail("cannot enter %s: %s", top, strerror(errno));
	const char *rel = o->chdir + (strcmp(top, "/") == 0 ? 0 : strlen(top));
	while (*rel == '/')
		rel++;
	if (*rel) {
		int dir = open_dir_beneath(at, rel);
		if (dir >= 0) {
			close(at);
			at = dir;
		} else {
			int e = errno;
			char line[512];
			int n = snprintf(line, sizeof line, "hmm: cannot enter %s (%s); the command starts at %s\n",
					 o->chdir, e == ELOOP || e == EXDEV ? "a link on the way" : strerror(e), top);
			write_all(2, line, (size_t)(n > (int)sizeof line - 1 ? (int)sizeof line - 1 : n));
		}
	}
	if (fchdir(at) < 0)
		setup_fail("cannot enter %s: %s", top, strerror(errno));
	close(at);
}

/* Steps 3 to 5, in the process that becomes the command: returns only
 * where the command could not be run, with hmm's status for that. */
static int confine_and_run(const struct exec_opts *o, int lock)
{
	enter_start(o);

	/* Step 3. On Linux lock is -1 here (the init holds it); the command's
	 * user namespace (ids.c) is kept, to be joined after Landlock's rules
	 * are set. */
#ifdef __linux__
	close_other_fds(lock >= 0 ? lock : ids_userns(), report_fd);
#else
	close_other_fds(lock, report_fd);
#endif

	/* Step 4. */
#ifdef __linux__
	/* With the namespaces both are done for all of the workspace's
	 * processes, before the namespaces are made. */
	if (!o->isolate) {
		user_processes_bound();
		oom_first();
	}
	landlock_confine(o);
	if (o->isolate)
		ids_join(); /* as root, its user namespace (ids.c); resets the bounding set */
	drop_capabilities(o->isolate != NULL);
	/* Last, after no_new_privs (landlock_confine), so that no step above
	 * runs under the filter. */
	if (seccomp_confine(o->net != NET_HOST, o->isolate != NULL) < 0)
		setup_fail("cannot install the seccomp filter: %s", strerror(errno));
#endif

	/* Step 5. The program hmm found outside, or PATH looked up as a shell
	 * would; on success the report descriptor closes with the exec and hmm
	 * reads EOF: "started". */
	if (o->program)
		execv(o->program, o->cmd);
	else
		execvp(o->cmd[0], o->cmd);
	int e = errno;
	if (e == EACCES && !o->program && !strchr(o->cmd[0], '/') && !found_on_path(o->cmd[0]))
		e = ENOENT;
	signal(SIGPIPE, SIG_IGN);
	char line[512];
	int n;
	if (report_fd >= 0)
		n = snprintf(line, sizeof line, "exec %s %s\n", errno_name(e), strerror(e));
	else
		n = snprintf(line, sizeof line, "hmm-helper: %.256s: %s\n", o->cmd[0], strerror(e));
	if (n > (int)sizeof line - 1)
		n = (int)sizeof line - 1;
	write_all(report_fd >= 0 ? report_fd : 2, line, (size_t)n);
#ifdef __linux__
	/* Nobody reads hmm's stderr once a background run has started: said on
	 * its terminal (hmm peek shows it) as `hmm run` says it. */
	if (o->background) {
		char reason[128];
		snprintf(reason, sizeof reason, "%s", e == ENOENT ? "command not found" : strerror(e));
		for (char *c = reason; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		n = snprintf(line, sizeof line, "hmm: %.256s: %s\n", o->cmd[0], reason);
		write_all(2, line, (size_t)(n > (int)sizeof line - 1 ? (int)sizeof line - 1 : n));
	}
#endif
	return e == ENOENT ? 127 : 126;
}

#ifdef __linux__
/* The command, started by the init (isolate.c): a child that shares the
 * init's memory, the init waiting, until it execs (CLONE_VM|CLONE_VFORK,
 * as posix_spawn starts one), so that no copy of the init's address space
 * is made to be thrown away by the exec (a fork and its exit took 3 ms of
 * CPU on a loaded 2-core VM, this clone 0.06 ms). Everything the child
 * changes before the exec is its own (descriptors, directory, signal
 * mask, credentials, Landlock, seccomp: none of CLONE_FILES, CLONE_FS,
 * CLONE_SIGHAND, CLONE_THREAD); what it allocates stays allocated in the
 * init, which only reaps from then on. It never returns: it execs or
 * _exits (returning would run exit handlers on the init's memory). */
struct command_start {
	const struct exec_opts *o;
	int lock;
	int slave;
};

static int command_main(void *arg)
{
	const struct command_start *c = arg;
	isolate_unblock();
	if (c->o->isolate)
		pty_take(c->slave);
	else
		keeper_join_hmm();
	close(c->lock);
	_exit(confine_and_run(c->o, -1));
}

/* The child's stack, until its exec. */
static char command_stack[1 << 20] __attribute__((aligned(16)));

static pid_t start_command(const struct exec_opts *o, int lock, int slave)
{
	struct command_start c = {o, lock, slave};
	pid_t command = clone(command_main, command_stack + sizeof command_stack,
			      CLONE_VM | CLONE_VFORK | SIGCHLD, &c);
	if (command < 0)
		setup_fail("cannot start the command: %s", strerror(errno));
	return command;
}
#endif

/* Step 2, in the process that holds the lock (the init with the
 * namespaces, else the keeper): the lock taken, the network marked, and
 * hmm's go-ahead awaited. Returns whether the mounts were made meanwhile. */
static int hold_and_wait(const struct exec_opts *o, int lock)
{
	/* Shared: other commands may run in the workspace at once (see locked). */
	if (flock_retry(lock, LOCK_SH) < 0)
		setup_fail("cannot lock %s: %s", o->lock, strerror(errno));
	mark_network(o, lock);

	int mounted = 0;
#ifdef __linux__
	/* The mounts that need no tree, and the network namespace, are made
	 * while hmm makes it (run clones the origin meanwhile), not after:
	 * they are a large part of what the namespaces cost to start a
	 * command (a network namespace alone 0.7-5 ms). Not where a cache is
	 * missing and would be made in the user's home (no stand-in, mounts.c):
	 * nothing of the user's is made before hmm is ready to run the command. */
	mounted = o->isolate && isolate_caches_there(o);
	if (mounted) {
		isolate_mounts(o, lock);
		net_isolate(o);
	}
#endif

	/* Step 2b: hmm makes the tree while this process already holds the
	 * lock, so a half-made workspace shows as running, never as broken,
	 * while hmm is alive; if hmm dies meanwhile, the pipe closes and this
	 * process exits without running anything, releasing the lock. */
	if (o->wait_fd >= 0) {
		char go = 0;
		ssize_t got;
		do
			got = read(o->wait_fd, &go, 1);
		while (got < 0 && errno == EINTR);
		if (got != 1 || go != 'g')
			setup_fail("hmm gave up before the command started");
		close(o->wait_fd);
	}
	return mounted;
}

#ifdef __linux__
/* The init's part (isolate.c): step 2, then 2c: the mounts, then the
 * command as the init's child, on a terminal of its own (pty.c), or the
 * init itself becomes the command (isolate_command_is_init: nothing is
 * then left to hold the lock, relay or reap for). The tree is there
 * now: everything is made read-only but where the command may write. */
static void init_run(const struct exec_opts *o, int lock)
{
	if (!hold_and_wait(o, lock)) {
		isolate_mounts(o, lock);
		net_isolate(o);
	}
	ids_remap_places(o);
	read_only_but_granted(o);
	int slave = pty_session();
	if (isolate_command_is_init(o)) {
		isolate_unblock();
		close(lock);
		_exit(confine_and_run(o, -1));
	}
	isolate_init(start_command(o, lock, slave), lock, o->end_with_command);
}
#endif


int cmd_exec(int argc, char **argv)
{
	blank_arguments(argc, argv);
	/* Step 1, first, so that even a usage error is reported where hmm
	 * listens: find --report-fd before reading anything else. */
	for (int i = 2; i + 1 < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--report-fd") == 0) {
			long fd = parse_num(argv[i + 1], 3, INT_MAX);
			if (fd < 0)
				setup_fail("--report-fd needs a descriptor number of 3 or more: %s",
					   argv[i + 1]);
			int flags = fcntl((int)fd, F_GETFD);
			if (flags < 0)
				setup_fail("--report-fd %ld is not open", fd);
			/* Close-on-exec: hmm reads EOF once the command has started. */
			if (fcntl((int)fd, F_SETFD, flags | FD_CLOEXEC) < 0)
				setup_fail("--report-fd %ld: %s", fd, strerror(errno));
			report_fd = (int)fd;
			break;
		}
		if (takes_value(argv[i]))
			i++; /* skip the value, which may look like a flag */
	}

	struct exec_opts o;
	parse_exec(argc, argv, &o);

	/* Step 2: the lock that marks the workspace running. On Linux the init
	 * (or the keeper) holds it for as long as any process of the workspace
	 * lives. On macOS the command inherits it (not close-on-exec), so it is
	 * held while the command, or whatever it left running with the
	 * descriptor, lives. Either way whatever happens to hmm. Read-write, though flock
	 * alone would not need it: over NFS an exclusive flock is emulated
	 * with a POSIX lock, which does. Opened before the namespaces: a file
	 * open for writing on a mount of theirs would keep readonly.c from
	 * making that mount read-only. */
	int lock = open(o.lock, O_RDWR | O_CREAT | O_NOCTTY, 0600);
	if (lock < 0)
		setup_fail("cannot open the lock %s: %s", o.lock, strerror(errno));
	if (lock < 3) {
		/* Never let the lock take the place of stdin/stdout/stderr. */
		int moved = fcntl(lock, F_DUPFD, 3);
		if (moved < 0)
			setup_fail("cannot move the lock's descriptor: %s", strerror(errno));
		close(lock);
		lock = moved;
	}

	/* The directory hmm was started in is the user's (the origin's, its
	 * own files beneath the mask over it): kept, it would stay open to
	 * every process of the sandbox (the waiter, the init, the command
	 * until it enters --chdir) beneath the namespaces' mounts, and reached
	 * through /proc/self/cwd. Every path the helper is given is absolute. */
	if (chdir("/") < 0)
		setup_fail("cannot enter /: %s", strerror(errno));

#ifndef __linux__
	if (o.ngrants || o.nhides || o.nread_only || o.nplain_only || o.isolate)
		setup_fail("Landlock rules and namespaces need Linux; this system confines commands otherwise");
#else
	net_check(&o);
	if (o.isolate) {
		oom_first(); /* the waiter and the init too: they hold its /dev/shm */
		isolate_namespaces(&o, lock, init_run); /* the init goes on in init_run */
	}
	keeper_start(&o, lock); /* returns in the keeper only */
#endif
	hold_and_wait(&o, lock);
#ifdef __linux__
	keeper_run(start_command(&o, lock, -1), lock);
#else
	return confine_and_run(&o, lock);
#endif
}
