/*
 * members: the processes of a workspace that has no PID namespace of its
 * own (isolation = "landlock-only"), for stop.c. Without the namespace
 * nothing the kernel keeps ties every process of the command to its
 * workspace, so this goes by what does tie most of them, and only among
 * processes with the sandbox's marks: the user's own (same uid), with
 * no_new_privs and a seccomp filter (exec.c sets both before it runs the
 * command, every process it starts inherits them, none can drop them). Of
 * those, a member is one that
 *   - works in the workspace's directory (<data>/<id>/: the tree, its temp
 *     directory, the lock): its working directory or root is there, or it
 *     holds a file there open, the lock's inherited descriptor included;
 *   - or was started with HMM_WORKSPACE=<id> (every command of the
 *     workspace is, and what it starts inherits it).
 * A process that lets go of all of these (closes its descriptors, leaves
 * the directory, and executes itself anew without the variable, or, run
 * by a plain user, makes itself undumpable, which hides its directory,
 * files and environment from the user's other processes) is not found:
 * MANUAL says so. The user's own processes
 * that work in the tree (a shell in it, an editor) have not the marks and
 * are never taken for members.
 */
#include "hmm-helper.h"

#ifdef __linux__

/* Whether the process has no_new_privs and a seccomp filter
 * (/proc/PID/status, readable by anyone). */
static int confined(int proc, const char *pid)
{
	char path[64];
	snprintf(path, sizeof path, "%s/status", pid);
	int fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strstr(buf, "\nNoNewPrivs:\t1\n") && strstr(buf, "\nSeccomp:\t2\n");
}

static int within(const char *path, const char *dir)
{
	size_t len = strlen(dir);
	return strncmp(path, dir, len) == 0 && (path[len] == 0 || path[len] == '/');
}

/* Whether the link /proc/PID/<name> leads into dir. */
static int link_within(int proc, const char *pid, const char *name, const char *dir)
{
	char path[PATH_MAX], to[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", pid, name);
	ssize_t n = readlinkat(proc, path, to, sizeof to - 1);
	if (n <= 0)
		return 0;
	to[n] = 0;
	return within(to, dir);
}

static int holds_file_within(int proc, const char *pid, const char *dir)
{
	char path[64];
	snprintf(path, sizeof path, "%s/fd", pid);
	int fd = openat(proc, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *fds = fd < 0 ? NULL : fdopendir(fd);
	if (!fds) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	int found = 0;
	for (struct dirent *e; !found && (e = readdir(fds));) {
		char name[PATH_MAX];
		snprintf(name, sizeof name, "fd/%s", e->d_name);
		found = e->d_name[0] != '.' && link_within(proc, pid, name, dir);
	}
	closedir(fds);
	return found;
}

/* Whether the process's environment, as it was started, holds `var`
 * ("HMM_WORKSPACE=<id>") as a whole entry. */
static int started_with(int proc, const char *pid, const char *var)
{
	char path[64];
	snprintf(path, sizeof path, "%s/environ", pid);
	int fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t cap = 65536, len = 0;
	char *env = xmalloc(cap + 1);
	for (ssize_t n; (n = read(fd, env + len, cap - len)) > 0;) {
		len += (size_t)n;
		if (len == cap && !(env = realloc(env, (cap *= 2) + 1)))
			oom();
	}
	close(fd);
	env[len] = 0;
	size_t want = strlen(var) + 1; /* with its NUL: a whole entry */
	int found = 0;
	for (size_t at = 0; !found && at < len; at += strlen(env + at) + 1)
		found = at + want <= len + 1 && memcmp(env + at, var, want) == 0;
	free(env);
	return found;
}

/* Whether the process named `pid` in the /proc open as `proc` is a member. */
static int member_at(int proc, const char *pid, const char *dir, const char *var)
{
	/* The marks first: few processes have them, and the ties cost more. */
	struct stat st;
	return fstatat(proc, pid, &st, 0) == 0 && st.st_uid == geteuid() && confined(proc, pid) &&
	       (link_within(proc, pid, "cwd", dir) || link_within(proc, pid, "root", dir) || started_with(proc, pid, var) ||
		holds_file_within(proc, pid, dir));
}

int is_member(pid_t pid, const char *dir, const char *var)
{
	int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (proc < 0)
		return 0;
	char name[32];
	snprintf(name, sizeof name, "%ld", (long)pid);
	int member = member_at(proc, name, dir, var);
	close(proc);
	return member;
}

size_t find_members(const char *dir, const char *var, pid_t **out)
{
	size_t n = 0, cap = 16;
	*out = xmalloc(cap * sizeof **out);
	DIR *proc = opendir("/proc");
	if (!proc)
		return 0;
	for (struct dirent *e; (e = readdir(proc));) {
		/* Not stop itself, which probes the lock, nor the hmm that runs
		 * it (confined too when hmm runs inside a sandbox). */
		long pid = parse_num(e->d_name, 1, INT_MAX);
		if (pid < 0 || pid == getpid() || pid == getppid() || !member_at(dirfd(proc), e->d_name, dir, var))
			continue;
		if (n == cap && !(*out = realloc(*out, (cap *= 2) * sizeof **out)))
			oom();
		(*out)[n++] = (pid_t)pid;
	}
	closedir(proc);
	return n;
}
#endif /* __linux__ */
