/*
 * Feeds native-helpers/term-filter.c what it reads on stdin, in the pieces
 * the arguments say (offsets to split at, in order), as the relay feeds it
 * its reads of the command's output; writes what passes to stdout, and on
 * stderr how much passed after each piece and at the end ("passed 3 0 2"),
 * what puts back the modes left set, in hex ("back 1b5b306d", or "back -"),
 * then "asked 0" or "asked 1". With the one argument "every", it splits the
 * input at every offset in turn, and into single bytes, and says on stderr
 * where the output differs from the whole input's ("differs at: none").
 * Built by test/helper/term-filter.test.ts.
 */
#include "../../native-helpers/hmm-helper.h"

static unsigned char in[1 << 20], out[TERM_FILTER_ROOM(sizeof in)], whole[sizeof out];
static unsigned char back[TERM_PUT_BACK_ROOM], whole_back[sizeof back];

/* The input filtered in pieces ending at the offsets given (and at n); the
 * bytes passed after each piece and at the end go to passed, if given; what
 * puts back the modes left set to back (*n_back bytes). */
static size_t filter(size_t n, const size_t *ends, size_t pieces, struct term_filter *f, FILE *passed, size_t *n_back)
{
	term_filter_init(f);
	size_t at = 0, o = 0, before = 0;
	for (size_t i = 0; i <= pieces; i++, before = o) {
		size_t to = i < pieces ? ends[i] : n;
		o += term_filter(f, in + at, to - at, out + o);
		at = to;
		if (passed)
			fprintf(passed, " %zu", o - before);
	}
	o += term_filter_end(f, out + o);
	if (passed)
		fprintf(passed, " %zu\n", o - before);
	*n_back = term_filter_put_back(f, back);
	return o;
}

int main(int argc, char **argv)
{
	size_t n = 0;
	ssize_t got;
	while ((got = read(0, in + n, sizeof in - n)) > 0)
		n += (size_t)got;
	static size_t ends[sizeof in];
	struct term_filter f;
	if (argc == 2 && strcmp(argv[1], "every") == 0) {
		size_t len_back, len = filter(n, ends, 0, &f, NULL, &len_back);
		memcpy(whole, out, len);
		memcpy(whole_back, back, len_back);
		fputs("differs at:", stderr);
		int differs = 0;
		for (size_t at = 1; at <= n; at++) {
			/* at < n: split there; at == n: a byte at a time */
			size_t pieces = at < n ? 1 : n - 1;
			for (size_t i = 0; i < pieces; i++)
				ends[i] = at < n ? at : i + 1;
			size_t o_back, o = filter(n, ends, pieces, &f, NULL, &o_back);
			if (o != len || memcmp(out, whole, len) != 0 || o_back != len_back || memcmp(back, whole_back, len_back) != 0) {
				fprintf(stderr, at < n ? " %zu" : " bytes", at);
				differs = 1;
			}
		}
		fputs(differs ? "\n" : " none\n", stderr);
		return 0;
	}
	size_t pieces = 0;
	for (int i = 1; i < argc; i++) {
		ends[pieces] = strtoul(argv[i], NULL, 10);
		if (ends[pieces] > n || (pieces && ends[pieces] < ends[pieces - 1]))
			return 2;
		pieces++;
	}
	fputs("passed", stderr);
	size_t o_back, o = filter(n, ends, pieces, &f, stderr, &o_back);
	fwrite(out, 1, o, stdout);
	fputs(o_back ? "back " : "back -", stderr);
	for (size_t i = 0; i < o_back; i++)
		fprintf(stderr, "%02x", back[i]);
	fprintf(stderr, "\nasked %d\n", f.asked);
	return 0;
}
