/*
 * members: the processes of a workspace that has no PID namespace of its
 * own (isolation = "landlock-only"), for stop.c: those that descend from a
 * keeper (keeper.c) holding the workspace's lock. The keeper is a child
 * subreaper, so while it lives every process the command starts stays its
 * descendant, whatever it does. Nothing else is a member: not the user's
 * own processes that work in the tree (a shell or an editor, sandboxed by
 * their terminal or not), nor another workspace's. The parents come from
 * /proc/PID/status, which anyone may read, undumpable processes' too.
 */
#include "hmm-helper.h"

#ifdef __linux__

/* Parents up from a process before giving up: a /proc read piece by piece
 * while PIDs are reused may show a loop. */
#define MAX_DEPTH 4096

/* The parent of the process named `pid` in the /proc open as `proc`, or -1. */
static pid_t parent_at(int proc, const char *pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "%s/status", pid);
	int fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	const char *line = strstr(buf, "\nPPid:\t");
	return line ? (pid_t)strtol(line + 7, NULL, 10) : -1;
}

static int is_keeper(pid_t pid, const pid_t *keepers, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (keepers[i] == pid)
			return 1;
	return 0;
}

int descends_from(pid_t pid, const pid_t *keepers, size_t n)
{
	int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (proc < 0)
		return 0;
	int found = 0;
	for (int depth = 0; !found && pid > 1 && depth < MAX_DEPTH; depth++) {
		char name[32];
		snprintf(name, sizeof name, "%ld", (long)pid);
		pid = parent_at(proc, name);
		found = is_keeper(pid, keepers, n);
	}
	close(proc);
	return found;
}

struct parent {
	pid_t pid, ppid;
};

static int by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct parent *)a)->pid, y = ((const struct parent *)b)->pid;
	return (x > y) - (x < y);
}

size_t find_members(const pid_t *keepers, size_t n, pid_t **out)
{
	/* Every process's parent in one pass over /proc, then the walks up in
	 * memory: one read per process, not one per generation. */
	size_t count = 0, cap = 256;
	struct parent *all = xmalloc(cap * sizeof *all);
	DIR *proc = opendir("/proc");
	for (struct dirent *e; proc && (e = readdir(proc));) {
		long pid = parse_num(e->d_name, 1, INT_MAX);
		pid_t ppid = pid < 0 ? -1 : parent_at(dirfd(proc), e->d_name);
		if (ppid < 0)
			continue;
		if (count == cap && !(all = realloc(all, (cap *= 2) * sizeof *all)))
			oom();
		all[count++] = (struct parent){(pid_t)pid, ppid};
	}
	if (proc)
		closedir(proc);
	qsort(all, count, sizeof *all, by_pid);
	size_t found = 0;
	*out = xmalloc((count ? count : 1) * sizeof **out);
	for (size_t i = 0; i < count; i++) {
		const struct parent *at = &all[i];
		int member = 0;
		for (int depth = 0; at && !member && depth < MAX_DEPTH; depth++) {
			member = is_keeper(at->ppid, keepers, n);
			struct parent key = {at->ppid, 0};
			at = at->ppid > 1 ? bsearch(&key, all, count, sizeof *all, by_pid) : NULL;
		}
		if (member)
			(*out)[found++] = all[i].pid;
	}
	free(all);
	return found;
}
#endif /* __linux__ */
