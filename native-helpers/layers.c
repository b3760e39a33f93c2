/*
 * layers: which layers of the sandbox this system can give, asked before
 * anything is made, so that hmm refuses, or says what is left out, rather
 * than confine less without a word (SPEC "Sandbox").
 *
 *   hmm-helper layers [PLACE...]
 *
 * prints one line per layer:
 *   landlock N          the Landlock ABI (0: none)
 *   namespaces ok       or "namespaces STEP: REASON": whether a user
 *                       namespace can be had with the user's own ids. That
 *                       is where systems refuse (a sysctl, a security
 *                       module, a container's seccomp profile); within it
 *                       the mount, PID and IPC namespaces exec's isolation
 *                       makes need only its capabilities there.
 *   seccomp ok          or "seccomp REASON" (the filter exec installs)
 *   ids ok              as root, with the command's own places given (its
 *                       home, hmm's data directory, -w places): or "ids
 *                       REASON", where its ids cannot be remapped (ids.c)
 * The last two are tried for real, each in a child that then exits, so
 * that nothing of the try stays with this process: a setting or a security
 * module can refuse what the kernel has.
 */
#include "hmm-helper.h"

/* hmm-helper abi: the Landlock ABI alone, a number (0: none). */
int cmd_abi(int argc, char **argv)
{
	(void)argv;
	if (argc != 2) {
		fprintf(stderr, "usage: hmm-helper abi\n");
		return 2;
	}
	printf("%d\n", landlock_abi());
	return 0;
}

#ifdef __linux__
#include <sched.h>
#include <sys/wait.h>

typedef void (*attempt)(char *why, size_t n);

static void write_text(const char *path, const char *text, char *why, size_t n)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
		snprintf(why, n, "%s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void try_namespaces(char *why, size_t n)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (unshare(CLONE_NEWUSER) < 0) {
		snprintf(why, n, "unshare: %s", strerror(errno));
		return;
	}
	/* Mapping its own ids is where a security module that lets the
	 * namespace be made but keeps its capabilities refuses (AppArmor's
	 * restriction on Ubuntu). */
	char map[64];
	write_text("/proc/self/setgroups", "deny\n", why, n);
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if (!*why)
		write_text("/proc/self/uid_map", map, why, n);
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if (!*why)
		write_text("/proc/self/gid_map", map, why, n);
}

static void try_seccomp(char *why, size_t n)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_confine(1, 0) < 0)
		snprintf(why, n, "%s", strerror(errno));
}

/* The command's own places, for try_ids. */
static char **places;
static int nplaces;

static void try_ids(char *why, size_t n)
{
	ids_refusal(places, nplaces, why, n);
}

/* Runs one attempt in a child and prints "NAME ok" or "NAME WHY". */
static void report(const char *name, attempt try)
{
	char why[512] = "";
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		printf("%s pipe: %s\n", name, strerror(errno));
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		report_fd = p[1]; /* a set-up step that fails says why there */
		try(why, sizeof why);
		write_all(p[1], why, strlen(why));
		_exit(0);
	}
	close(p[1]);
	size_t got = 0;
	ssize_t r;
	while (pid > 0 && got < sizeof why - 1 &&
	       ((r = read(p[0], why + got, sizeof why - 1 - got)) > 0 || (r < 0 && errno == EINTR)))
		if (r > 0)
			got += (size_t)r;
	why[got] = 0;
	close(p[0]);
	if (strncmp(why, "setup ", 6) == 0)
		memmove(why, why + 6, strlen(why + 6) + 1);
	why[strcspn(why, "\n")] = 0;
	int status = 0;
	if (pid < 0)
		snprintf(why, sizeof why, "fork: %s", strerror(errno));
	else if (waitpid(pid, &status, 0) == pid && !(WIFEXITED(status) && WEXITSTATUS(status) == 0) && !*why)
		snprintf(why, sizeof why, "the attempt ended abnormally (status %d)", status);
	printf("%s %s\n", name, *why ? why : "ok");
}
#endif

int cmd_layers(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: hmm-helper layers [PLACE...]\n");
		return 2;
	}
	printf("landlock %d\n", landlock_abi());
#ifdef __linux__
	report("namespaces", try_namespaces);
	report("seccomp", try_seccomp);
	if (argc > 2 && geteuid() == 0) {
		places = argv + 2;
		nplaces = argc - 2;
		report("ids", try_ids);
	}
#else
	(void)argv;
	printf("namespaces this system has none\nseccomp this system has none\n");
#endif
	return 0;
}
