/*
 * The hostile process of the removal tests: what a command can leave
 * running in its workspace to make a removal delete files outside it.
 *
 *   swapper ROOT VICTIM PAIRS toggle|inotify [NAME...]
 *
 * In ROOT it makes PAIRS pairs: a directory dI holding files named as
 * VICTIM's files and a subdirectory (or, NAMEs given, for a VICTIM it may
 * not list, files of 16 bytes by those names: the secrets it guesses are
 * there), and a symbolic link lI to VICTIM. Then
 * it forks a child into the background (new session, every descriptor
 * closed, so it holds no lock of hmm's and no pipe of the test) and returns.
 * The child exchanges dI and lI atomically (renameat2 RENAME_EXCHANGE):
 *  - toggle: all pairs on a tight loop, so at any moment each name is a
 *    directory or a link to VICTIM; a removal that looks at a name, then
 *    goes in by the name again, meets the link half the time;
 *  - inotify: once per pair, when the first file in dI is deleted, so a
 *    removal that listed dI and deletes its files by path (dI/NAME) deletes
 *    VICTIM/NAME from then on.
 *
 *   swapper ROOT VICTIM PAIRS file
 *
 * The same for a file: each dI is a regular file of 16 bytes and lI a
 * symbolic link to VICTIM, a file; the pairs are exchanged as for toggle,
 * so a reader that looks at dI, then opens it by name, may open VICTIM
 * (and read as many bytes of it as dI had).
 *
 * It ends when ROOT is gone, or after two minutes.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static int touch(const char *p)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	return fd < 0 ? -1 : close(fd);
}

/* A file of 16 bytes: a reader that opens VICTIM's file in its place reads that many of it. */
static int decoy(const char *p)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "0123456789abcde\n", 16) != 16)
		return -1;
	return close(fd);
}

static void make(const char *root, const char *victim, int pairs, char **names, int nnames)
{
	char p[4096];
	for (int i = 0; i < pairs; i++) {
		snprintf(p, sizeof p, "%s/d%d", root, i);
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			goto fail;
		for (int n = 0; n < nnames; n++) {
			snprintf(p, sizeof p, "%s/d%d/%s", root, i, names[n]);
			if (decoy(p) < 0)
				goto fail;
		}
		snprintf(p, sizeof p, "%s/l%d", root, i);
		if (symlink(victim, p) < 0 && errno != EEXIST)
			goto fail;
		if (nnames > 0)
			continue;
		snprintf(p, sizeof p, "%s/d%d/sub", root, i);
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			goto fail;
		snprintf(p, sizeof p, "%s/d%d/sub/f", root, i);
		if (touch(p) < 0)
			goto fail;
		DIR *v = opendir(victim);
		for (struct dirent *e; v && (e = readdir(v));) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(p, sizeof p, "%s/d%d/%s", root, i, e->d_name);
			if (touch(p) < 0)
				goto fail;
		}
		if (v)
			closedir(v);
	}
	return;
fail:
	perror(p);
	exit(1);
}

static void make_files(const char *root, const char *victim, int pairs)
{
	char p[4096];
	for (int i = 0; i < pairs; i++) {
		snprintf(p, sizeof p, "%s/d%d", root, i);
		if (decoy(p) < 0)
			goto fail;
		snprintf(p, sizeof p, "%s/l%d", root, i);
		if (symlink(victim, p) < 0 && errno != EEXIST)
			goto fail;
	}
	return;
fail:
	perror(p);
	exit(1);
}

int main(int argc, char **argv)
{
	int files = argc == 5 && strcmp(argv[4], "file") == 0;
	if (argc < 5 || (strcmp(argv[4], "toggle") != 0 && strcmp(argv[4], "inotify") != 0 && !files)) {
		fputs("usage: swapper ROOT VICTIM PAIRS toggle|inotify [NAME...]\n"
		      "       swapper ROOT VICTIM PAIRS file\n",
		      stderr);
		return 2;
	}
	const char *root = argv[1];
	int pairs = atoi(argv[3]);
	int toggle = strcmp(argv[4], "inotify") != 0;
	if (files)
		make_files(root, argv[2], pairs);
	else
		make(root, argv[2], pairs, argv + 5, argc - 5);

	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid > 0)
		return 0;
	setsid();
	for (int fd = 0; fd < 65536; fd++)
		close(fd);
	int in = -1;
	int *wds = calloc((size_t)pairs, sizeof *wds);
	if (!toggle) {
		in = inotify_init1(0);
		for (int i = 0; i < pairs; i++) {
			char p[4096];
			snprintf(p, sizeof p, "%s/d%d", root, i);
			wds[i] = inotify_add_watch(in, p, IN_DELETE | IN_DELETE_SELF);
		}
	}

	char (*d)[4096] = malloc(sizeof *d * (size_t)pairs);
	char (*l)[4096] = malloc(sizeof *l * (size_t)pairs);
	for (int i = 0; i < pairs; i++) {
		snprintf(d[i], sizeof d[i], "%s/d%d", root, i);
		snprintf(l[i], sizeof l[i], "%s/l%d", root, i);
	}
	time_t end = time(NULL) + 120;
	struct stat st;
	if (toggle) {
		while (lstat(root, &st) == 0 && time(NULL) < end)
			for (int i = 0; i < pairs; i++)
				syscall(SYS_renameat2, AT_FDCWD, d[i], AT_FDCWD, l[i], RENAME_EXCHANGE);
		return 0;
	}
	/* Each watch ends by itself when its directory is deleted. */
	int left = pairs;
	char buf[65536] __attribute__((aligned(8)));
	while (left > 0 && time(NULL) < end) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n <= 0)
			return 0;
		for (char *q = buf; q < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)q;
			q += sizeof *ev + ev->len;
			for (int i = 0; i < pairs; i++) {
				if (wds[i] != ev->wd)
					continue;
				if (ev->mask & IN_IGNORED) {
					wds[i] = -1;
					left--;
				} else if (ev->mask & IN_DELETE) {
					syscall(SYS_renameat2, AT_FDCWD, d[i], AT_FDCWD, l[i], RENAME_EXCHANGE);
					inotify_rm_watch(in, wds[i]);
				}
			}
		}
	}
	return 0;
}
