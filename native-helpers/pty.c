/*
 * pty: the command's terminal (attack-report 3, F6 and F11), and the
 * waiter's life while the command runs. Runs in the waiter and the init
 * (isolate.c) and in the command just before exec.c confines it.
 *
 * The command never gets the user's terminal. Given it, a process of the
 * command could keep it past the command's end (a descriptor, or a way to
 * open it again: an O_PATH /dev of a nested mount namespace) and read what
 * the user types at the shell afterwards, or, once hmm is stopped (Ctrl-Z,
 * or started with `&`), make its own process group the terminal's
 * foreground and read the shell's input meanwhile. Instead, as sudo's
 * use_pty does: where hmm's stdin, stdout or stderr is a terminal, the init
 * makes a pseudo-terminal in the namespace's own devpts (so /dev/pts inside
 * holds only it), becomes the leader of a new session with the pty as its
 * controlling terminal, and gives the command the slave in place of each of
 * those descriptors (the others, pipes and files, pass through unchanged),
 * in a process group of its own that is the pty's foreground. The master
 * goes to the waiter, outside the PID namespace, which relays bytes between
 * it and the user's terminal: nothing the command does reaches the user's
 * terminal but the bytes it writes, as term-filter.c lets them (no
 * clipboard, no questions answered with what the terminal holds), and once
 * hmm is stopped or has returned nothing of the user's input reaches the
 * command. Without any terminal
 * the init still leaves hmm's session, so /dev/tty inside opens nothing.
 *
 * While the command runs, the user's terminal (stdin) is raw: Ctrl-C,
 * Ctrl-Z and the rest are bytes the pty turns into the command's signals.
 * Job control as sudo does it: when the command stops (Ctrl-Z stopped its
 * process group in the pty), the init says so, the waiter puts the user's
 * terminal back as it was and stops hmm's process group (node with it), so
 * the shell shows it stopped; continued (fg, bg), it makes the terminal
 * raw again if hmm is in the foreground (in the background it reads
 * nothing and leaves the modes alone) and continues the command. The
 * window size is copied at start, on SIGWINCH and when continued. Output
 * the command wrote before it ended is read to the end before hmm exits,
 * and answers the terminal still owes it are taken (fence); a hang-up of
 * the user's terminal hangs the pty up.
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

/* Which of stdin, stdout and stderr are terminals: bit fd each. */
static int given;
/* The master's way from the init to the waiter: each keeps its end. */
static int channel[2] = {-1, -1};
/* A background run (background.c): the pty is the command's whatever hmm was given. */
static int background;

void pty_prepare(const char *background_dir)
{
	for (int fd = 0; fd < 3; fd++)
		if (isatty(fd))
			given |= 1 << fd;
	if (background_dir) {
		background = 1;
		given = 7;
	}
	if (given && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, channel) < 0)
		setup_fail("terminal: socketpair: %s", strerror(errno));
}

int pty_reports_stops(void)
{
	return given & 1;
}

int pty_given(void)
{
	return given != 0;
}

/* The first terminal of hmm's, whose modes and size the pty starts with. */
static int user_terminal(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (given & (1 << fd))
			return fd;
	return -1;
}

int pty_session(void)
{
	if (channel[1] >= 0)
		close(channel[1]);
	if (setsid() < 0)
		setup_fail("terminal: setsid: %s", strerror(errno));
	if (!given)
		return -1;
	/* /dev/ptmx leads here too; the devpts of the namespace's own /dev. */
	int master = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || unlockpt(master) < 0)
		setup_fail("terminal: cannot make a pty: %s", strerror(errno));
	int slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		setup_fail("terminal: cannot open the pty: %s", strerror(errno));
	if (ioctl(slave, TIOCSCTTY, 0) < 0)
		setup_fail("terminal: cannot make the pty the session's terminal: %s", strerror(errno));
	int user = user_terminal();
	struct termios modes;
	struct winsize size = {.ws_row = 24, .ws_col = 80};
	if (background)
		ioctl(slave, TIOCSWINSZ, &size); /* until someone attaches; the modes the pty's own */
	else if (tcgetattr(user, &modes) == 0)
		tcsetattr(slave, TCSANOW, &modes);
	if (!background && ioctl(user, TIOCGWINSZ, &size) == 0)
		ioctl(slave, TIOCSWINSZ, &size);
	if (send_fd(channel[0], master) < 0)
		setup_fail("terminal: cannot hand the pty over: %s", strerror(errno));
	close(master);
	close(channel[0]);
	return slave;
}

void pty_take(int slave)
{
	setpgid(0, 0);
	if (slave < 0)
		return;
	/* From a process group not yet the foreground: SIGTTOU blocked, the
	 * kernel lets it through. */
	sigset_t ttou, old;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	if (tcsetpgrp(slave, getpid()) < 0)
		setup_fail("terminal: cannot give the command its pty: %s", strerror(errno));
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (int fd = 0; fd < 3; fd++)
		if ((given & (1 << fd)) && dup2(slave, fd) < 0)
			setup_fail("terminal: dup2: %s", strerror(errno));
	close(slave);
}

/* ---- the waiter ---- */




void pty_tell_init(const struct relay *r, int sig)
{
	union sigval v = {.sival_int = FORWARDED};
	sigqueue(r->init, sig, v);
}

void pty_copy_size(const struct relay *r)
{
	struct winsize size;
	if (r->master >= 0 && r->user >= 0 && ioctl(r->user, TIOCGWINSZ, &size) == 0)
		ioctl(r->master, TIOCSWINSZ, &size);
}

void pty_restore(struct relay *r)
{
	if (!r->raw)
		return;
	while (tcsetattr(r->in, TCSADRAIN, &r->saved) < 0 && errno == EINTR)
		;
	r->raw = 0;
}

/* Raw, if hmm holds its terminal's foreground: never from the background
 * (the shell's modes are the shell's then, and SIGTTOU would stop us). */
void pty_make_raw(struct relay *r)
{
	if (r->in < 0 || r->master < 0 || r->raw || tcgetpgrp(r->in) != getpgrp())
		return;
	if (tcgetattr(r->in, &r->saved) < 0)
		return;
	struct termios raw = r->saved;
	cfmakeraw(&raw);
	/* In a pipeline (stdout not the terminal) others write to it too
	 * (`hmm run cmd | tee log`): their newlines still need its output
	 * processing, as sudo keeps it then. */
	if (r->keep_oflag)
		raw.c_oflag = r->saved.c_oflag;
	if (tcsetattr(r->in, TCSANOW, &raw) == 0)
		r->raw = 1;
}

/* Continued: the terminal raw again if it is ours, the size it may have
 * taken meanwhile, and the command goes on. */
static void resume(struct relay *r)
{
	pty_make_raw(r);
	pty_copy_size(r);
	pty_tell_init(r, SIGCONT);
}

/* The command stopped: the terminal as the user had it, and hmm's process
 * group stopped (SIGTSTP, as the shell's own jobs stop), until continued.
 * In an orphaned process group the kernel drops the stop: go on then. */
static void suspend(struct relay *r)
{
	pty_restore(r);
	sigset_t tstp;
	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	kill(0, SIGTSTP);
	sigprocmask(SIG_UNBLOCK, &tstp, NULL); /* ours is delivered: stopped here */
	sigprocmask(SIG_BLOCK, &tstp, NULL);
	sigset_t cont = tstp;
	sigaddset(&cont, SIGCONT);
	struct timespec now = {0, 0};
	while (sigtimedwait(&cont, NULL, &now) > 0)
		; /* the SIGCONT that woke us is handled here */
	resume(r);
}

/* Writes to the user's terminal; a terminal gone takes no more. */
static void write_user(struct relay *r, const void *buf, size_t n)
{
	if (r->out >= 0 && write_all(r->out, buf, n) < 0)
		r->out = -1;
}

/* The command's output, as the filter lets it reach the user's terminal
 * (term-filter.c). */
void pty_to_user(struct relay *r, const char *buf, size_t n)
{
	if (r->record >= 0)
		write_all(r->record, buf, n);
	static unsigned char filtered[TERM_FILTER_ROOM(RELAYED)];
	write_user(r, filtered, term_filter(&r->filter, (const unsigned char *)buf, n, filtered));
}

/* What the command wrote before it ended, to the last byte: a read that
 * finds nothing has waited for the kernel to pass on what was written.
 * Then the modes and renditions it left set are put back (term-modes.c),
 * before hmm prints its closing lines and the user's shell reads. */
void pty_drain(struct relay *r)
{
	if (r->master < 0)
		return;
	fcntl(r->master, F_SETFL, fcntl(r->master, F_GETFL) | O_NONBLOCK);
	char buf[RELAYED];
	ssize_t n;
	while ((n = read(r->master, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			pty_to_user(r, buf, (size_t)n);
	pty_end_output(r);
}

void pty_end_output(struct relay *r)
{
	unsigned char end[TERM_FILTER_ROOM(0) + TERM_PUT_BACK_ROOM];
	size_t closed = term_filter_end(&r->filter, end);
	write_user(r, end, closed + term_filter_put_back(&r->filter, end + closed));
}

/* How long the fence waits for the terminal's answer, in milliseconds. */
#define FENCE_WAIT 1000

/*
 * Answers the terminal still owes the command (to queries written just
 * before it ended: the cursor's position, the device attributes) must not
 * reach the user's shell once hmm returns, which would read them as typed.
 * A terminal answers in the order it was asked, so hmm, while the terminal
 * is still raw, asks a question of its own that no command can ask (DSR 5n:
 * the filter drops it) and discards what comes in up to its answer, CSI 0 n
 * (or 3 n). Only when something the terminal answers passed, or a mode
 * whose reports may be on their way until its reset (term-modes.c), and
 * where hmm reads the terminal it writes to; bounded, for a terminal that never
 * answers (the owed answers then come when they come). What the user typed
 * after the command's end goes with them.
 */
void pty_fence(struct relay *r)
{
	struct stat in, out;
	if (!r->raw || r->out < 0 || !r->filter.asked || fstat(r->in, &in) < 0 || fstat(r->out, &out) < 0 ||
	    in.st_rdev != out.st_rdev || write_all(r->out, "\033[5n", 4) < 0)
		return;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	size_t matched = 0; /* of ESC [ 0 n, where 3 may stand for 0 */
	while (matched < 4) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		long left = FENCE_WAIT - (now.tv_sec - start.tv_sec) * 1000 - (now.tv_nsec - start.tv_nsec) / 1000000;
		struct pollfd p = {r->in, POLLIN, 0};
		int ready = left > 0 ? poll(&p, 1, (int)left) : 0;
		if (ready < 0 && errno == EINTR)
			continue;
		char c;
		ssize_t n = ready > 0 ? read(r->in, &c, 1) : -1; /* one at a time: nothing after the answer */
		if (n < 0 && ready > 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return;
		int fits = matched == 2 ? c == '0' || c == '3' : c == "\033[0n"[matched];
		matched = fits ? matched + 1 : c == '\033';
	}
}

/* The user's terminal hung up (or ended): so does the command's, and the
 * command's job gets the hangup its shell would pass on outside. The init
 * is told first: closing the master sends it the kernel's SIGHUP (which it
 * ignores: the waiter's own end hangs the pty up too), and a standard
 * signal pending is not queued twice. */
static void hang_up(struct relay *r)
{
	pty_tell_init(r, SIGHUP);
	r->in = -1;
	r->out = -1;
	if (r->master >= 0)
		close(r->master);
	r->master = -1;
	r->len = r->off = 0;
}

static void on_signal(struct relay *r, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;
	if (sig == SIGWINCH)
		pty_copy_size(r);
	else if (sig == SIGCONT)
		resume(r);
	else if (sig == SIGTSTP) {
		/* Not from our terminal (raw, it sends no signals): pass it on;
		 * with stdin relayed the command's stop suspends hmm, otherwise
		 * hmm stops with it at once. */
		pty_tell_init(r, SIGTSTP);
		if (!pty_reports_stops())
			suspend(r);
	} else if (sig != SIGCHLD && si->ssi_code != SI_KERNEL)
		pty_tell_init(r, sig); /* the terminal's own reached the command as bytes, or hmm passes them on */
}

static void from_user(struct relay *r)
{
	ssize_t n = read(r->in, r->pending, sizeof r->pending);
	if (n > 0) {
		r->len = (size_t)n;
		r->off = 0;
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN))
		hang_up(r);
}

static void to_command(struct relay *r)
{
	ssize_t n = write(r->master, r->pending + r->off, r->len - r->off);
	if (n > 0 && (r->off += (size_t)n) == r->len)
		r->len = r->off = 0;
	else if (n < 0 && errno != EINTR && errno != EAGAIN)
		r->len = r->off = 0;
}

static void from_command(struct relay *r)
{
	char buf[RELAYED];
	ssize_t n = read(r->master, buf, sizeof buf);
	if (n > 0)
		pty_to_user(r, buf, (size_t)n);
	else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		close(r->master);
		r->master = -1;
	}
}

int pty_channel(void)
{
	return channel[1];
}

int pty_take_master(struct relay *r)
{
	r->master = receive_fd(channel[1]);
	close(channel[1]);
	channel[1] = -1;
	if (r->master < 0)
		return -1;
	fcntl(r->master, F_SETFL, fcntl(r->master, F_GETFL) | O_NONBLOCK);
	r->peer = ioctl(r->master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	return r->master;
}

void pty_waiting(void)
{
	if (channel[1] >= 0)
		close(channel[0]);
}

void pty_waiter(int status_fd, pid_t init)
{
	pty_waiting();
	struct relay r = {.init = init, .in = -1, .out = -1, .user = user_terminal(), .master = -1, .peer = -1,
			  .record = -1, .keep_oflag = !(given & 2)};
	term_filter_init(&r.filter);
	if (given & 1)
		r.in = 0;
	r.out = (given & 2) ? 1 : (given & 4) ? 2 : r.in;
	signal(SIGPIPE, SIG_IGN);
	sigset_t set;
	waited_signals(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int sigs = signalfd(-1, &set, SFD_CLOEXEC);
	if (sigs < 0)
		setup_fail("terminal: signalfd: %s", strerror(errno));
	for (;;) {
		struct pollfd p[5] = {
			{sigs, POLLIN, 0},
			{status_fd, POLLIN, 0},
			{channel[1], POLLIN, 0},
			{r.master, (short)(POLLIN | (r.len ? POLLOUT : 0)), 0},
			{r.len == 0 && r.raw ? r.in : -1, POLLIN, 0}, /* raw: in the foreground */
		};
		if (poll(p, 5, -1) < 0)
			continue;
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sigs, &si, sizeof si) == sizeof si)
				on_signal(&r, &si);
			continue; /* the descriptors may have changed */
		}
		if (p[2].revents) {
			if (pty_take_master(&r) >= 0)
				pty_make_raw(&r);
			continue;
		}
		if (p[3].revents & POLLOUT)
			to_command(&r);
		if (p[3].revents & (POLLIN | POLLHUP | POLLERR))
			from_command(&r);
		if (p[4].revents)
			from_user(&r);
		if (p[1].revents) {
			int status;
			ssize_t got;
			do
				got = read(status_fd, &status, sizeof status);
			while (got < 0 && errno == EINTR);
			if (got == sizeof status && WIFSTOPPED(status)) {
				suspend(&r);
				continue;
			}
			pty_drain(&r);
			pty_fence(&r);
			pty_restore(&r);
			end_as(got == sizeof status ? status : -1, init);
		}
	}
}
#endif /* __linux__ */
