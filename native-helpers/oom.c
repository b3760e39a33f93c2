/*
 * oom: the sandbox's processes are the OOM killer's first choice
 * (attacker's review 9, F5). What the command holds in its own /dev/shm
 * (devices.c) belongs to no process: the OOM killer, which ranks processes
 * by the memory they map, would end the user's editor or browser before
 * the command's small processes. With oom_score_adj 1000 every process of
 * the sandbox ranks above every process of the user's; the namespace's
 * waiter and init among them, whose end frees the mount. Never the
 * keeper (without the namespaces): killed, it would let the command's
 * processes out of the workspace's sight. Raising one's own score needs
 * no privilege; the command cannot lower it again: /proc is read-only to
 * it under Landlock, and as root the helper sets it with CAP_SYS_RESOURCE,
 * which makes it the floor.
 */
#include "hmm-helper.h"

#ifdef __linux__
void oom_first(void)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write_all(fd, "1000\n", 5) < 0)
		setup_fail("cannot make the sandbox the OOM killer's first choice: %s", strerror(errno));
	close(fd);
}
#endif /* __linux__ */
