/*
 * counts: the kernel counts inotify instances and watches, fanotify groups
 * and marks, and namespaces per user across user namespaces, each checked
 * against the limit of every namespace above. What the command takes, the
 * user's own programs (an editor's file watchers, a desktop, another
 * sandbox) no longer get, for as long as it runs. The workspace's user
 * namespace is given half of each limit the helper sees, so the command
 * never takes the user's last ones, nested namespaces included.
 */
#include "hmm-helper.h"

#ifdef __linux__
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
	for (int i = 0; i < USER_COUNTS; i++) {
		c->max[i] = -1; /* a kernel without it counts nothing there */
		int fd = open_count(i, O_RDONLY);
		if (fd < 0)
			continue;
		char text[24];
		ssize_t n = read(fd, text, sizeof text - 1);
		close(fd);
		if (n > 0) {
			text[n] = '\0';
			c->max[i] = strtol(text, NULL, 10);
		}
	}
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
}
#endif /* __linux__ */
