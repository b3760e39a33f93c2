/*
 * keeper: what ties the command's processes to their workspace without the
 * namespaces (isolation = "landlock-only"), where no PID namespace holds
 * them (attacker's review 7, F2: a tie that only hmm makes, not marks that
 * any sandbox gives, a Flatpak terminal's too).
 *
 * Two processes, as isolate.c has, for two jobs:
 *   - the helper hmm started (the "waiter") forks the keeper and ends as the
 *     command ends (its status, or the signal that ended it), so hmm hears
 *     of the command's end though something it started runs on; it passes
 *     hmm's signals on to the keeper, marked as forwarded;
 *   - the keeper becomes a child subreaper: whatever the command starts
 *     stays its descendant, whatever it does (a double fork, setsid, closing
 *     descriptors, leaving the tree, executing itself anew), as an orphan
 *     comes back to the nearest subreaper above it. It takes the workspace's
 *     lock, starts the command (exec.c), which never gets the lock's
 *     descriptor, then only reaps: it holds the lock while any descendant
 *     lives, so `hmm ls` says running while one does, and stop.c ends the
 *     processes that descend from a keeper holding the lock, nothing else.
 * The command stays in hmm's process group, on hmm's terminal, as without
 * the keeper: Ctrl-C and Ctrl-Z reach the command and hmm directly (the
 * waiter takes none of them). The keeper has a process group of its own,
 * so that nothing sent to hmm's (a shell's `kill -KILL %1`) ends it and
 * leaves what the command started beyond hmm's reach.
 *
 * The command cannot signal or trace the keeper: Landlock keeps it from
 * tracing what is outside its domain, and from ABI 6 on (Linux 6.12) from
 * signalling it. Below that it can kill the keeper, as it can kill any of
 * the user's processes; then, as when the user kills it, its orphans go to
 * the system's subreaper, the lock goes, and hmm neither sees nor stops what
 * is left (MANUAL says so).
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

static int status_w = -1;
/* hmm's process group, the command's. */
static pid_t hmm_group;

void keeper_join_hmm(void)
{
	setpgid(0, hmm_group);
}

/* The waiter's life: hmm's signals (SI_USER: sent, not the terminal's) go
 * to the keeper, and it ends as the command did. */
static void waiter(int status_r, pid_t keeper) __attribute__((noreturn));
static void waiter(int status_r, pid_t keeper)
{
	sigset_t set;
	waited_signals(&set);
	int sigs = signalfd(-1, &set, SFD_CLOEXEC);
	if (sigs < 0)
		setup_fail("keeper: signalfd: %s", strerror(errno));
	for (;;) {
		struct pollfd p[2] = {{sigs, POLLIN, 0}, {status_r, POLLIN, 0}};
		if (poll(p, 2, -1) < 0)
			continue;
		struct signalfd_siginfo si;
		if ((p[0].revents & POLLIN) && read(sigs, &si, sizeof si) == sizeof si && si.ssi_code == SI_USER &&
		    si.ssi_signo != SIGCHLD) {
			union sigval v = {.sival_int = FORWARDED};
			sigqueue(keeper, (int)si.ssi_signo, v);
		}
		if (p[1].revents) {
			int status;
			ssize_t got;
			do
				got = read(status_r, &status, sizeof status);
			while (got < 0 && errno == EINTR);
			end_as(got == sizeof status ? status : -1, keeper);
		}
	}
}

void keeper_start(const struct exec_opts *o, int lock)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		setup_fail("keeper: pipe: %s", strerror(errno));
	/* Blocked from here: the waiter reads them from a signalfd, the keeper
	 * waits for them with sigwaitinfo, the command unblocks them. */
	sigset_t set;
	waited_signals(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pid_t keeper = fork();
	if (keeper < 0)
		setup_fail("keeper: cannot start: %s", strerror(errno));
	if (keeper > 0) {
		close(p[1]);
		/* The keeper reports set-up failures and takes the go-ahead. */
		close_handed_over(o, lock);
		waiter(p[0], keeper);
	}
	close(p[0]);
	status_w = p[1];
	hmm_group = getpgrp();
	setpgid(0, 0);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		setup_fail("keeper: cannot become a subreaper: %s", strerror(errno));
}

/* Reaps what ended. The command's end goes to the waiter, after the lock
 * where nothing else is left, so hmm then sees the workspace stopped; the
 * last descendant's end ends the keeper. */
static void reap(pid_t *command, int lock)
{
	for (;;) {
		int status;
		pid_t p = waitpid(-1, &status, WNOHANG);
		if (p == 0)
			return;
		if (p < 0) {
			if (errno == EINTR)
				continue;
			_exit(0); /* nobody left */
		}
		if (p != *command)
			continue;
		*command = -1;
		pid_t more;
		int ignored;
		while ((more = waitpid(-1, &ignored, WNOHANG)) > 0)
			;
		if (more < 0 && errno == ECHILD)
			close(lock);
		write_all(status_w, (const char *)&status, sizeof status);
		close(status_w);
	}
}

void keeper_run(pid_t command, int lock)
{
	/* Nothing of hmm's: not its output (a reader would wait for whatever
	 * the command left running), not the report, nor the terminal. */
	close_other_fds(lock, status_w);
	stdio_to_null(0);
	prctl(PR_SET_DUMPABLE, 0);
	/* A waiter gone (killed) must not take the keeper with it. */
	signal(SIGPIPE, SIG_IGN);
	sigset_t set;
	waited_signals(&set);
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&set, &si);
		if (sig == SIGCHLD)
			reap(&command, lock);
		else if (sig > 0 && command > 0 && si.si_code == SI_QUEUE && si.si_value.sival_int == FORWARDED)
			kill(command, sig);
	}
}
#endif /* __linux__ */
