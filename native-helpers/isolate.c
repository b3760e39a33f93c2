/*
 * isolate: the namespaces and mounts that cut the command off from the
 * user's session (DESIGN "Isolation on Linux", "Running state"), before
 * Landlock confines what it may touch.
 *
 * Three processes, for three jobs:
 *   - the helper hmm started (the "waiter") makes a user namespace (the
 *     user's own uid and gid; root's whole range as root), a mount, PID and
 *     IPC namespace, forks the init, and waits for the command's status,
 *     which it exits with (or dies of), passing hmm's signals on and
 *     relaying the command's terminal (pty.c);
 *   - the init, PID 1 of the new PID namespace, takes the workspace's lock,
 *     makes the mounts, leads the session of the command's terminal, forks
 *     the command and then only reaps: it holds the
 *     lock while any process of the workspace lives (the command never has
 *     the lock's descriptor, so nothing it does can drop it), and when it
 *     exits the kernel kills whatever is left in the namespace;
 *   - the command (exec.c confines and execs it).
 *
 * Signals: hmm forwards SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2 to
 * the waiter, which queues them to the init marked as forwarded; the init
 * sends them to the command. The command never shares hmm's terminal or
 * session (pty.c): Ctrl-C and the like reach it as bytes through its own
 * pty; without a terminal those the terminal sends hmm (SI_KERNEL) are
 * passed on by hmm, not twice by the waiter. Stops go to the command's
 * process group (SIGTSTP, SIGCONT: pty.c). A SIGTERM sent to the init by
 * anyone else (hmm stop) ends every process of the namespace.
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <sched.h>
#include <sys/mount.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

static const int PASSED_ON[] = {SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2};

static pid_t init_pid;

static int passed_on(int sig)
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

static void write_file(pid_t pid, const char *name, const char *text)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
		setup_fail("namespaces: cannot write %s: %s", path, strerror(errno));
	close(fd);
}

/* The user namespace maps the user to itself: files keep their owners, and
 * the command runs as the user it is. A plain user can map only itself
 * (which needs setgroups denied), and does so from inside. Root maps the
 * whole range, so root stays root over every file; only a process left
 * outside may write that map: the mapper, forked before the unshare, which
 * writes it once told the namespace exists. */
static pid_t start_mapper(int *tell)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		setup_fail("namespaces: pipe: %s", strerror(errno));
	pid_t parent = getpid();
	pid_t mapper = fork();
	if (mapper < 0)
		setup_fail("namespaces: cannot start the mapper: %s", strerror(errno));
	if (mapper == 0) {
		close(p[1]);
		char go;
		if (read(p[0], &go, 1) != 1)
			_exit(EXIT_SETUP); /* the unshare failed; the helper says why */
		write_file(parent, "uid_map", "0 0 4294967295\n");
		write_file(parent, "gid_map", "0 0 4294967295\n");
		_exit(0);
	}
	close(p[0]);
	*tell = p[1];
	return mapper;
}

static void map_ids(uid_t uid, gid_t gid, pid_t mapper, int tell)
{
	if (mapper > 0) {
		int status;
		if (write(tell, "m", 1) != 1)
			setup_fail("namespaces: cannot reach the mapper: %s", strerror(errno));
		close(tell);
		while (waitpid(mapper, &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			_exit(EXIT_SETUP); /* the mapper has reported why */
		return;
	}
	char map[64];
	pid_t self = getpid();
	write_file(self, "setgroups", "deny\n");
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	write_file(self, "uid_map", map);
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	write_file(self, "gid_map", map);
}

static int status_w = -1;

void isolate_namespaces(const struct exec_opts *o)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int tell = -1;
	pid_t mapper = uid == 0 ? start_mapper(&tell) : -1;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC) < 0)
		setup_fail("namespaces: cannot make user, mount and PID namespaces: %s "
			   "(unprivileged user namespaces may be turned off: "
			   "sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces, "
			   "or AppArmor's kernel.apparmor_restrict_unprivileged_userns)",
			   strerror(errno));
	map_ids(uid, gid, mapper, tell);
	/* Nothing mounted here reaches the user's mount namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		setup_fail("namespaces: cannot make the mounts private: %s", strerror(errno));

	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		setup_fail("namespaces: pipe: %s", strerror(errno));
	net_prepare(o);
	pty_prepare();
	/* Blocked from here: the waiter reads them from a signalfd, the init
	 * waits for them with sigwaitinfo, the command unblocks them. */
	sigset_t set;
	waited_signals(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
	init_pid = fork();
	if (init_pid < 0)
		setup_fail("namespaces: cannot start the init: %s", strerror(errno));
	if (init_pid > 0) {
		close(p[1]);
		/* The init and the command have their own copies; hmm reads
		 * EOF once the command has started. */
		if (report_fd >= 0)
			close(report_fd);
		if (o->wait_fd >= 0)
			close(o->wait_fd);
		net_waiter(o);
		pty_waiter(p[0], init_pid);
	}
	close(p[0]);
	status_w = p[1];
	/* Until the command has ended, the init dies with the waiter, so a
	 * killed waiter cannot leave a namespace nobody reports on. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

void mount_or_fail(const char *step, const char *src, const char *target, const char *type,
		   unsigned long flags, const char *data)
{
	if (mount(src, target, type, flags, data) < 0)
		setup_fail("%s: cannot mount %s on %s: %s", step, type ? type : src, target,
			   strerror(errno));
}

/* mkdir -p, for the workspace's own directories in hmm's data directory,
 * which the command never writes. */
static void make_dirs(const char *step, const char *path)
{
	char *p = xstrdup(path);
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			setup_fail("%s: cannot make %s: %s", step, p, strerror(errno));
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
}

static int beneath_or_at(const char *p, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static int strictly_beneath(const char *p, const char *dir)
{
	return beneath_or_at(p, dir) && strcmp(p, dir) != 0;
}

/* A mount's target by a descriptor (util.c open_no_links), so that no link
 * on the way can move the mount elsewhere. */
static char *fd_path(int fd)
{
	char *p = xmalloc(32);
	snprintf(p, 32, "/proc/self/fd/%d", fd);
	return p;
}

/* The directories of rel ("/a/b") made beneath the directory dir, which the
 * command wrote in an earlier run: each made and entered relative to the
 * last, none through a link. A link or file the command left on the way
 * ends the making there: its $TMPDIR is then missing, its own doing. */
static void make_dirs_beneath(int dir, const char *rel)
{
	char *p = xstrdup(rel);
	int at = dup(dir);
	if (at < 0)
		setup_fail("tmp: cannot make %s: %s", rel, strerror(errno));
	for (char *name = strtok(p, "/"); name && at >= 0; name = strtok(NULL, "/")) {
		if (mkdirat(at, name, 0700) < 0 && errno != EEXIST)
			setup_fail("tmp: cannot make %s: %s", rel, strerror(errno));
		int next = openat(at, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(at);
		at = next;
	}
	if (at >= 0)
		close(at);
	free(p);
}

/* The workspace's own /tmp and $TMPDIR: one directory, bound over each. A
 * temporary directory beneath one already covered is made in the
 * workspace's instead, so the command's TMPDIR exists. */
static void own_tmp(const struct exec_opts *o)
{
	char *tmp = path_join(o->isolate, "tmp");
	make_dirs("tmp", tmp);
	int own = open(tmp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (own < 0)
		setup_fail("tmp: cannot open %s: %s", tmp, strerror(errno));
	const char **bound = xmalloc(sizeof *bound * (o->ntmp_over + 1));
	size_t nbound = 0;
	for (size_t i = 0; i < o->ntmp_over; i++) {
		const char *t = o->tmp_over[i];
		const char *over = NULL;
		for (size_t j = 0; j < nbound && !over; j++)
			if (beneath_or_at(t, bound[j]))
				over = bound[j];
		if (over) {
			make_dirs_beneath(own, t + strlen(over));
			continue;
		}
		int at = open_no_links(t, O_PATH | O_DIRECTORY);
		if (at < 0)
			continue; /* not a directory as hmm named it: nothing to cover */
		char *target = fd_path(at);
		if (mount(tmp, target, NULL, MS_BIND, NULL) < 0)
			setup_fail("tmp: cannot mount %s on %s: %s", tmp, t, strerror(errno));
		free(target);
		close(at);
		bound[nbound++] = t;
	}
	free(bound);
	close(own);
	free(tmp);
}

/* A directory hmm named, opened through no link; made first where missing,
 * in its parent opened the same way. -1 where it is not there as named. */
static int open_or_make_dir(const char *path)
{
	int fd = open_no_links(path, O_PATH | O_DIRECTORY);
	if (fd >= 0 || errno != ENOENT)
		return fd;
	char *parent = xstrdup(path);
	char *slash = strrchr(parent, '/');
	*slash = '\0';
	int at = open_no_links(slash == parent ? "/" : parent, O_PATH | O_DIRECTORY);
	if (at >= 0) {
		if (mkdirat(at, slash + 1, 0700) == 0 || errno == EEXIST)
			fd = openat(at, slash + 1, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(at);
	}
	free(parent);
	return fd;
}

/* The caches whose layer whites out every hidden path beneath them. */
static const char **sealed;
static size_t nsealed;

int isolate_sealed(const char *path)
{
	for (size_t i = 0; i < nsealed; i++)
		if (strcmp(sealed[i], path) == 0)
			return 1;
	return 0;
}

/* The next directory on the way down, never through a link (-1: none). */
static int down(int dir, const char *name)
{
	return dir == -1 ? -1 : openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* A hidden path beneath a cache (~/.cargo/credentials.toml) whited out in
 * the cache's layer (a character device 0/0, which the kernel lets a user
 * make): the overlay then shows nothing there, whatever the user's cache
 * holds, now or later (a `cargo login` while the command runs), so Landlock
 * can grant the whole cache and the command make new entries directly in it
 * (registry/, git/). Granted around a hidden path, the cache itself would
 * get no rule and nothing new could be made in it. The directories on the
 * way are made in the layer, as the user's are (or 0700 where the user has
 * none yet). Returns 0 where the layer cannot be vouched for, and Landlock
 * then grants around the hidden path as before: a part of the way that is
 * not a directory in the user's cache (the layer's directory would cover
 * it), or a directory in the layer at the hidden path (it may let the
 * user's show through). Relative to directories opened without following
 * links: another command of the workspace may be changing the layer. */
static int white_out(const char *cache, const char *upper, const char *hidden)
{
	char *rel = xstrdup(hidden + strlen(cache) + 1);
	int dir = down(AT_FDCWD, upper);
	int user = open_no_links(cache, O_RDONLY | O_DIRECTORY);
	int ok = 0;
	for (char *part = rel; dir >= 0;) {
		char *slash = strchr(part, '/');
		if (slash)
			*slash = '\0';
		struct stat st;
		if (fstatat(dir, part, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (!S_ISDIR(st.st_mode)) {
				ok = 1; /* a file of the layer's (or a whiteout): nothing beneath shows */
				break;
			}
			if (!slash)
				break;
		} else if (errno != ENOENT) {
			break;
		} else if (!slash) {
			ok = mknodat(dir, part, S_IFCHR, makedev(0, 0)) == 0;
			break;
		} else {
			mode_t mode = 0700;
			if (user >= 0 && fstatat(user, part, &st, AT_SYMLINK_NOFOLLOW) == 0) {
				if (!S_ISDIR(st.st_mode))
					break;
				mode = st.st_mode & 07777;
			} else if (user >= 0 && errno != ENOENT) {
				break;
			}
			if (mkdirat(dir, part, mode) < 0)
				break;
		}
		int next = down(dir, part), user_next = down(user, part);
		close(dir);
		if (user >= 0)
			close(user);
		dir = next;
		user = user_next;
		part = slash + 1;
	}
	if (dir >= 0)
		close(dir);
	if (user >= 0)
		close(user);
	free(rel);
	return ok;
}

/* Whites out the hidden paths beneath cache c in its layer (those not
 * beneath another), and notes c sealed where every one is. */
static void seal(const struct exec_opts *o, const char *c, const char *upper)
{
	int whole = 1;
	for (size_t i = 0; i < o->nhides; i++) {
		const char *h = o->hides[i];
		if (!strictly_beneath(h, c))
			continue;
		int inner = 0;
		for (size_t j = 0; j < o->nhides; j++)
			inner |= strictly_beneath(o->hides[j], c) && strictly_beneath(h, o->hides[j]);
		if (!inner && !white_out(c, upper, h))
			whole = 0;
	}
	if (!whole)
		return;
	sealed = realloc(sealed, sizeof *sealed * (nsealed + 1));
	if (!sealed)
		oom();
	sealed[nsealed++] = c;
}

/* Each tool cache: an overlay whose lower layer is the real cache and whose
 * upper layer is the workspace's, so the command reads the warm cache and
 * what it writes stays with the workspace. A cache the user has not got yet
 * is made first, empty, as the tool would make it on first use: the command
 * cannot make it (the home is not writable), and an overlay needs a
 * directory to go on. Where it cannot be made (no home, a dangling link
 * there), there is no cache, as before; nor where a link is on the way:
 * the namespaces may have put the command's own layer there already. */
static void overlay_caches(const struct exec_opts *o)
{
	for (size_t i = 0; i < o->ncaches; i++) {
		const char *c = o->caches[i];
		/* An agent's directory may lie in a cache mounted before it. */
		int at = open_or_make_dir(c);
		if (at < 0)
			continue;
		if (strpbrk(c, ",:\\"))
			setup_fail("cache %s: a cache's path may not hold ',', ':' or '\\'", c);
		const char *base = strrchr(c, '/') + 1;
		if (*base == '.')
			base++;
		char *dir = path_join(o->isolate, "caches");
		char *mine = path_join(dir, base);
		char *upper = path_join(mine, "upper");
		char *work = path_join(mine, "work");
		make_dirs("cache", upper);
		make_dirs("cache", work);
		seal(o, c, upper);
		/* The lower layer and the mount's place: the directory opened. */
		char *lower = fd_path(at);
		size_t len = strlen(lower) + strlen(upper) + strlen(work) + 64;
		char *data = xmalloc(len);
		snprintf(data, len, "lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
		if (mount("overlay", lower, "overlay", MS_NOSUID | MS_NODEV, data) < 0)
			setup_fail("cache %s: cannot mount an overlay on it: %s", c, strerror(errno));
		free(data);
		free(lower);
		close(at);
		free(work);
		free(upper);
		free(mine);
		free(dir);
	}
}

/* Files bound over others once the caches are mounted: an agent's login,
 * bound over the copy its layer would show so that a token it refreshes
 * reaches the user's (source and target are the same path), and the
 * workspace's copy of an agent's state, bound over the user's so that the
 * user's stays as it was; and directories: the workspace's own records of
 * an agent (transcripts), bound over the user's, which hold every other
 * project's. Each source is opened before the layers are mounted over it.
 * A source or target that is not there (no login; removed in the
 * workspace's layer) is left out: the agent then runs without it. */
static int *open_bind_sources(const struct exec_opts *o)
{
	int *fds = xmalloc(sizeof *fds * (o->nbind_src + 1));
	for (size_t i = 0; i < o->nbind_src; i++) {
		fds[i] = open_no_links(o->bind_src[i], O_PATH);
		if (fds[i] < 0 && errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
			setup_fail("bind: cannot open %s: %s", o->bind_src[i], strerror(errno));
	}
	return fds;
}

static void bind_files(const struct exec_opts *o, int *fds)
{
	for (size_t i = 0; i < o->nbind_src; i++) {
		struct stat st;
		if (fds[i] < 0)
			continue;
		if (fstat(fds[i], &st) < 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			setup_fail("bind: %s is not a file or directory", o->bind_src[i]);
		/* The target may lie in an agent's layer, which the command
		 * wrote: one of the source's kind there, reached through no
		 * link, or nothing. */
		mode_t kind = st.st_mode & S_IFMT;
		int dst = open_no_links(o->bind_dst[i], O_PATH);
		if (dst >= 0 && fstat(dst, &st) == 0 && (st.st_mode & S_IFMT) == kind) {
			char *src = fd_path(fds[i]), *target = fd_path(dst);
			if (mount(src, target, NULL, MS_BIND, NULL) < 0)
				setup_fail("bind: cannot mount %s on %s: %s", o->bind_src[i],
					   o->bind_dst[i], strerror(errno));
			free(src);
			free(target);
		}
		if (dst >= 0)
			close(dst);
		close(fds[i]);
	}
	free(fds);
}

/* The user's sockets and session directories, the hidden paths: an empty
 * read-only tmpfs over a directory, an empty file over anything else. */
static void mask(const struct exec_opts *o)
{
	/* What covers a file or socket: an empty file of the workspace's, in
	 * hmm's data directory, which Landlock grants nothing on. Not
	 * /dev/null: the command may read and write that, and Landlock
	 * judges a bound file by its own inode. */
	char *empty = path_join(o->isolate, "masked");
	int fd = open(empty, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		setup_fail("mask: cannot make %s: %s", empty, strerror(errno));
	char *from = fd_path(fd);
	for (size_t i = 0; i < o->nmasks; i++) {
		/* A link is not covered (where it leads is, if hidden); a hidden
		 * path in a cache's layer is reached through none the command
		 * left there. */
		const char *m = o->masks[i];
		int at = open_no_links(m, O_PATH);
		struct stat st;
		if (at < 0)
			continue;
		char *target = fd_path(at);
		if (fstat(at, &st) < 0)
			setup_fail("mask: cannot stat %s: %s", m, strerror(errno));
		if (S_ISDIR(st.st_mode) &&
		    mount("tmpfs", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755") < 0)
			setup_fail("mask: cannot mount tmpfs on %s: %s", m, strerror(errno));
		if (!S_ISDIR(st.st_mode) && mount(from, target, NULL, MS_BIND, NULL) < 0)
			setup_fail("mask: cannot mount %s on %s: %s", from, m, strerror(errno));
		free(target);
		close(at);
	}
	free(from);
	close(fd);
	free(empty);
}

void isolate_mounts(const struct exec_opts *o)
{
	/* Processes of this namespace only; needs the init to mount it. */
	mount_or_fail("proc", "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	/* A /dev of its own (devices.c). */
	isolate_dev();
	int *sources = open_bind_sources(o);
	overlay_caches(o);
	bind_files(o, sources);
	own_tmp(o);
	mask(o);
	cover_data(o);
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
	stdio_to_null();
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
			if (command > 0)
				kill(sig == SIGTSTP || sig == SIGCONT ? -command : command, sig);
		} else if (si.si_code == SI_KERNEL || !passed_on(sig))
			; /* its pty's hang-up, or none of the init's business */
		else if (sig == SIGTERM)
			kill(-1, SIGTERM); /* hmm stop: every process of the workspace */
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
