/*
 * counts: the kernel counts inotify instances and watches, fanotify groups
 * and marks, and namespaces per user across user namespaces, each checked
 * against the limit of every namespace above. What the command takes, the
 * user's own programs (an editor's file watchers, a desktop, another
 * sandbox) no longer get, for as long as it runs. The workspace's user
 * namespace is given half of each limit the helper sees, so the command
 * never takes the user's last ones, nested namespaces included.
 *
 * Processes too (attacker's review 9, F3): RLIMIT_NPROC counts the tasks
 * (threads included) of a real uid, at its own user namespace's level
 * against the task's own limit and at every level above against the
 * limit its creator had. Unbounded, the command took all of the user's:
 * their shell could not fork, `hmm stop` could not start. So the command
 * may start half of what the user may still start (their limit, or the
 * machine's PIDs and threads where those are fewer, less the tasks they
 * have): the workspace's user namespace's level, which holds only its
 * tasks, is limited to that half; without the namespaces the level is the
 * user's own, so the limit is what they have plus that half. Root's tasks
 * are not counted (the kernel exempts uid 0, mapped root included):
 * nothing to bound.
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <dirent.h>

/* The number a /proc file holds, or -1. */
static long read_number(int fd)
{
	if (fd < 0)
		return -1;
	char text[24];
	ssize_t n = read(fd, text, sizeof text - 1);
	close(fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	return strtol(text, NULL, 10);
}

/* The tasks of uid's processes, as /proc shows them: each process's task
 * directory has 2 links and one more per thread. A process that is not
 * dumpable shows as root's and is missed: the command then gets less. */
static long tasks_of(uid_t uid)
{
	DIR *proc = opendir("/proc");
	if (!proc)
		setup_fail("cannot count the user's processes: /proc: %s", strerror(errno));
	long tasks = 0;
	struct dirent *e;
	while ((e = readdir(proc))) {
		char path[300];
		struct stat st;
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "%s/task", e->d_name);
		if (fstatat(dirfd(proc), path, &st, 0) == 0 && st.st_uid == uid && st.st_nlink > 2)
			tasks += (long)st.st_nlink - 2;
	}
	closedir(proc);
	return tasks;
}

/* How many more tasks the user may start: their RLIMIT_NPROC, or the
 * machine's PIDs or threads where fewer, less the tasks they have (put in
 * *used); -1 for root, whose tasks are not counted. */
static long tasks_left(long *used)
{
	struct rlimit limit;
	if (getuid() == 0 || getrlimit(RLIMIT_NPROC, &limit) < 0)
		return -1;
	long room = limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > LONG_MAX ? LONG_MAX : (long)limit.rlim_cur;
	const char *machine[] = {"/proc/sys/kernel/pid_max", "/proc/sys/kernel/threads-max"};
	for (int i = 0; i < 2; i++) {
		long most = read_number(open(machine[i], O_RDONLY | O_CLOEXEC));
		if (most > 0 && most < room)
			room = most;
	}
	*used = tasks_of(getuid());
	return *used < room ? room - *used : 0;
}

/* RLIMIT_NPROC, soft and hard: without CAP_SYS_RESOURCE in the initial
 * user namespace no process below raises it. */
static void bound_tasks(long bound)
{
	struct rlimit bounded = {(rlim_t)bound, (rlim_t)bound};
	if (setrlimit(RLIMIT_NPROC, &bounded) < 0)
		setup_fail("cannot bound the processes: %s", strerror(errno));
}

static const char *const NAMES[USER_COUNTS] = {
	"max_inotify_instances", "max_inotify_watches", "max_fanotify_groups", "max_fanotify_marks",
	"max_user_namespaces", "max_mnt_namespaces", "max_pid_namespaces", "max_net_namespaces",
	"max_ipc_namespaces", "max_uts_namespaces", "max_cgroup_namespaces", "max_time_namespaces",
};

static int open_count(int i, int flags)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/sys/user/%s", NAMES[i]);
	return open(path, flags | O_CLOEXEC);
}

void user_counts_read(struct user_counts *c)
{
	/* -1 where the kernel has none: it counts nothing there. */
	for (int i = 0; i < USER_COUNTS; i++)
		c->max[i] = read_number(open_count(i, O_RDONLY));
	long used;
	c->tasks_left = tasks_left(&used);
}

void user_counts_bound(const struct user_counts *c)
{
	for (int i = 0; i < USER_COUNTS; i++) {
		if (c->max[i] < 0)
			continue;
		char text[24];
		int n = snprintf(text, sizeof text, "%ld\n", c->max[i] / 2);
		int fd = open_count(i, O_WRONLY);
		if (fd < 0 || write_all(fd, text, (size_t)n) < 0)
			setup_fail("namespaces: cannot bound %s: %s", NAMES[i], strerror(errno));
		close(fd);
	}
	/* The namespace's own level holds only the workspace's tasks (hmm's
	 * waiter and init among them). */
	if (c->tasks_left >= 0)
		bound_tasks(c->tasks_left / 2);
}

void user_processes_bound(void)
{
	long used;
	long left = tasks_left(&used);
	if (left >= 0)
		bound_tasks(used + left / 2);
}
#endif /* __linux__ */
