/*
 * isolate: the namespaces and mounts that cut the command off from the
 * user's session (DESIGN "Isolation on Linux", "Running state"), before
 * Landlock confines what it may touch.
 *
 * Three processes, for three jobs:
 *   - the helper hmm started (the "waiter") makes a user namespace (the
 *     user's own uid and gid; as root, one for the command alone: ids.c), a mount, PID and
 *     IPC namespace, forks the init, and waits for the command's status,
 *     which it exits with (or dies of), passing hmm's signals on and
 *     relaying the command's terminal (pty.c);
 *   - the init, PID 1 of the new PID namespace, takes the workspace's lock,
 *     makes the mounts, leads the session of the command's terminal, starts
 *     the command (exec.c) and then only reaps: it holds the
 *     lock while any process of the workspace lives (the command never has
 *     the lock's descriptor, so nothing it does can drop it), and when it
 *     exits the kernel kills whatever is left in the namespace;
 *   - the command (exec.c confines and execs it).
 * A command that ends the namespace with it and has no terminal or bridge
 * (hmm's readers: isolate_command_is_init) is the init itself: nothing is
 * left to hold the lock for, reap or relay, so it takes the place of the
 * init (which holds the lock until then) and the kernel ends whatever it
 * leaves when it exits. Being PID 1, it gets only the signals it handles
 * (and SIGKILL): hmm ends its readers with SIGKILL.
 *
 * Signals: hmm forwards SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2 to
 * the waiter, which queues them to the init marked as forwarded; the init
 * sends them to the command. The command never shares hmm's terminal or
 * session (pty.c): Ctrl-C and the like reach it as bytes through its own
 * pty; without a terminal those the terminal sends hmm (SI_KERNEL) are
 * passed on by hmm, not twice by the waiter. Stops go to the command's
 * process group (SIGTSTP, SIGCONT: pty.c). A SIGTERM sent to the init by
 * anyone else (hmm stop) ends every process of the namespace, stopped ones
 * continued to act on it.
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>

static pid_t init_pid;

static void write_file(pid_t pid, const char *name, const char *text)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
		setup_fail("namespaces: cannot write %s: %s", path, strerror(errno));
	close(fd);
}

/* A plain user's namespace maps the user to itself: files keep their
 * owners, and the command runs as the user it is. A plain user can map
 * only itself (which needs setgroups denied), and does so from inside.
 * So does a container's root (ids_host_root); the host's root's command
 * gets a namespace of its own (ids.c). */
static void map_ids(uid_t uid, gid_t gid)
{
	char map[64];
	pid_t self = getpid();
	write_file(self, "setgroups", "deny\n");
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	write_file(self, "uid_map", map);
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	write_file(self, "gid_map", map);
}

static int status_w = -1;

/* Where the namespaces' init starts: the rest of its set-up (exec.c). */
struct init_start {
	const struct exec_opts *o;
	int lock;
	int status_r, status_w;
	void (*run)(const struct exec_opts *o, int lock);
};

static int init_main(void *arg)
{
	const struct init_start *s = arg;
	close(s->status_r);
	status_w = s->status_w;
	/* Until the command has ended, the init dies with the waiter, so a
	 * killed waiter cannot leave a namespace nobody reports on. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	s->run(s->o, s->lock);
	_exit(EXIT_SETUP); /* run never returns */
}

/* The init's stack where it shares the waiter's memory (below). */
static char init_stack[1 << 20] __attribute__((aligned(16)));

int isolate_command_is_init(const struct exec_opts *o)
{
	return o->end_with_command && o->net != NET_PROXY && !pty_given();
}

void isolate_namespaces(const struct exec_opts *o, int lock, void (*run)(const struct exec_opts *o, int lock))
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int root = ids_host_root();
	struct user_counts counts;
	user_counts_read(&counts);
	/* Opened in the user's mount namespace: a file open for writing on
	 * the namespace's own mounts would keep them from being made read-only. */
	if (o->background)
		background_prepare(o->background);
	/* Root makes the namespaces as root, and the command alone gets a
	 * user namespace (ids.c): idmapped mounts of the host's file systems
	 * need root's capabilities in the host's. */
	if (root && unshare(CLONE_NEWNS | CLONE_NEWIPC) < 0)
		setup_fail("namespaces: cannot make mount and IPC namespaces: %s", strerror(errno));
	if (!root && unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC) < 0)
		setup_fail("namespaces: cannot make user and mount namespaces: %s "
			   "(unprivileged user namespaces may be turned off: "
			   "sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces, "
			   "or AppArmor's kernel.apparmor_restrict_unprivileged_userns)",
			   strerror(errno));
	if (root) {
		ids_prepare(o, &counts);
	} else {
		map_ids(uid, gid);
		user_counts_bound(&counts);
		if (uid == 0 && o->home && !o->end_with_command)
			fprintf(stderr, "hmm: warning: run as root, the command can read every file root may "
					"(root of a user namespace, not the host's); hmm sandbox shows it\n");
	}
	/* Nothing mounted here reaches the user's mount namespace, and nothing
	 * the host mounts later (a login's /run/user/<uid>, a disk, sshfs)
	 * reaches the command: it would arrive unmasked and not read-only. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		setup_fail("namespaces: cannot make the mounts private: %s", strerror(errno));
	/* The bridge is forked before the PID namespace, so it stays out of
	 * the command's sight: its /proc/PID/net would show the user's
	 * network (net.c). */
	net_prepare(o);
	if (unshare(CLONE_NEWPID) < 0)
		setup_fail("namespaces: cannot make a PID namespace: %s", strerror(errno));

	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		setup_fail("namespaces: pipe: %s", strerror(errno));
	pty_prepare(o->background);
	/* Blocked from here: the waiter reads them from a signalfd, the init
	 * waits for them with sigwaitinfo, the command unblocks them. */
	sigset_t set;
	waited_signals(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
	struct init_start start = {o, lock, p[0], p[1], run};
	/* An init that becomes the command (exec.c) needs no copy of the
	 * waiter's memory: it shares it, the waiter waiting, until its exec,
	 * as the command is started (CLONE_VM|CLONE_VFORK; a fork took 2-4 ms
	 * of this VM's CPU). Its status pipe closes with the exec, and the
	 * waiter then waits for it to end. */
	if (isolate_command_is_init(o))
		init_pid = clone(init_main, init_stack + sizeof init_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
	else if ((init_pid = fork()) == 0)
		init_main(&start);
	if (init_pid < 0)
		setup_fail("namespaces: cannot start the init: %s", strerror(errno));
	close(p[1]);
	/* The init and the command have their own copies; hmm reads
	 * EOF once the command has started. */
	close_handed_over(o, lock);
	net_waiter(o);
	if (o->background)
		background_waiter(p[0], init_pid);
	pty_waiter(p[0], init_pid);
}

/* The command has ended, and nothing is to outlive it: everything else in
 * the namespace is killed and reaped, so only the init is left. */
static void end_the_rest(void)
{
	kill(-1, SIGKILL);
	int ignored;
	while (waitpid(-1, &ignored, 0) > 0 || errno == EINTR)
		;
}

static void reap(pid_t *command, int lock, int end_with_command)
{
	for (;;) {
		int status;
		pid_t p = waitpid(-1, &status, WNOHANG | (pty_reports_stops() ? WUNTRACED : 0));
		if (p == 0)
			return;
		if (p < 0) {
			if (errno == EINTR)
				continue;
			_exit(0); /* nobody left: the workspace has stopped */
		}
		if (p == *command && WIFSTOPPED(status)) {
			/* Ctrl-Z in its pty: the waiter stops hmm with it. */
			write_all(status_w, (const char *)&status, sizeof status);
		} else if (p == *command) {
			*command = -1;
			if (end_with_command)
				end_the_rest();
			/* Nothing else left: the lock goes before hmm hears the
			 * command ended, so hmm then sees the workspace stopped. */
			pid_t more;
			int ignored;
			while ((more = waitpid(-1, &ignored, WNOHANG)) > 0)
				;
			if (more < 0 && errno == ECHILD)
				close(lock);
			/* The waiter exits once told; the init must outlive it. */
			prctl(PR_SET_PDEATHSIG, 0);
			write_all(status_w, (const char *)&status, sizeof status);
			close(status_w);
		}
	}
}

void isolate_init(pid_t command, int lock, int end_with_command)
{
	/* The init keeps nothing of hmm's: not its output (a reader would wait
	 * for whatever the command left running), not the report, nothing else
	 * it was given. Not dumpable: no process of the namespace may look into
	 * it (Landlock already forbids tracing it), its lock least of all. */
	close_other_fds(lock, status_w);
	stdio_to_null(0);
	prctl(PR_SET_DUMPABLE, 0);
	/* Its own process group, also if the command has not made it yet. */
	setpgid(command, command);
	sigset_t set;
	waited_signals(&set);
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&set, &si);
		if (sig < 0)
			continue;
		if (sig == SIGCHLD)
			reap(&command, lock, end_with_command);
		else if (si.si_code == SI_QUEUE && si.si_value.sival_int == FORWARDED) {
			/* Job control and the hangup go to the command's process
			 * group, as a shell sends them to a job; a stopped job is
			 * continued to act on the hangup, as the kernel does. */
			int job = sig == SIGTSTP || sig == SIGCONT || sig == SIGHUP;
			if (command > 0)
				kill(job ? -command : command, sig);
			if (command > 0 && sig == SIGHUP)
				kill(-command, SIGCONT);
		} else if (si.si_code == SI_KERNEL || !passed_on(sig))
			; /* its pty's hang-up, or none of the init's business */
		else if (sig == SIGTERM) {
			/* hmm stop: every process of the workspace. A stopped one
			 * (Ctrl-Z, SIGSTOP) acts on SIGTERM only once continued;
			 * left stopped it would wait out the grace for SIGKILL. */
			kill(-1, SIGTERM);
			kill(-1, SIGCONT);
		}
		else if (command > 0)
			kill(command, sig);
	}
}

void isolate_unblock(void)
{
	sigset_t set;
	waited_signals(&set);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}
#endif /* __linux__ */
