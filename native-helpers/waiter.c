/*
 * waiter: the helper hmm started, once it has forked the process that holds
 * the lock (the init, isolate.c; the keeper, keeper.c): the signals it and
 * that process wait for, what it hands over and closes, and its end, as the
 * command's (pty.c and background.c relay meanwhile).
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <sys/wait.h>

static const int PASSED_ON[] = {SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2};

/* Whether sig is one of hmm's signals that the waiter passes on. */
int passed_on(int sig)
{
	for (size_t i = 0; i < sizeof PASSED_ON / sizeof *PASSED_ON; i++)
		if (PASSED_ON[i] == sig)
			return 1;
	return 0;
}

void waited_signals(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < sizeof PASSED_ON / sizeof *PASSED_ON; i++)
		sigaddset(set, PASSED_ON[i]);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGTSTP);
	sigaddset(set, SIGCONT);
	sigaddset(set, SIGWINCH);
}

void close_handed_over(const struct exec_opts *o, int lock)
{
	if (report_fd >= 0)
		close(report_fd);
	if (o->wait_fd >= 0)
		close(o->wait_fd);
	close(lock);
}

/* The command has ended (or the init without saying how): the waiter ends
 * the same way, so hmm sees the command's status or signal. */
void end_as(int status, pid_t init)
{
	if (status == -1) {
		pid_t r;
		do
			r = waitpid(init, &status, 0);
		while (r < 0 && errno == EINTR);
		if (r < 0)
			_exit(EXIT_SETUP);
	}
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		struct rlimit none = {0, 0};
		setrlimit(RLIMIT_CORE, &none); /* the command dumped its own core */
		signal(sig, SIG_DFL);
		sigset_t only;
		sigemptyset(&only);
		sigaddset(&only, sig);
		sigprocmask(SIG_UNBLOCK, &only, NULL);
		kill(getpid(), sig);
		_exit(128 + sig);
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_SETUP);
}
#endif /* __linux__ */
