/*
 * verdicts: the tunnel verdicts the bridge (bridge.c) keeps for reuse. The
 * proxy judges a CONNECT's head by its bytes alone (the host and port it
 * names; the addresses it gives it keeps for a while itself), so a head sent
 * again byte for byte gets the same verdict: for as long as the proxy says it
 * may (KEEP in its verdict), the bridge gives it without asking, and a burst
 * of connections to one host costs the proxy one verdict. Answers (refusals)
 * are never kept: each is the proxy's to count. The oldest goes first.
 */
#include "hmm-helper.h"

#define KEPT 8
static struct {
	long long until; /* ms, monotonic; 0: empty */
	size_t head_len, verdict_len;
	char head[KEPT_HEAD];
	char verdict[KEPT_VERDICT];
} kept[KEPT];

int verdict_kept(const char *head, size_t head_len, char *verdict, size_t *verdict_len, long long now)
{
	for (int k = 0; k < KEPT; k++) {
		if (kept[k].until <= now || kept[k].head_len != head_len || memcmp(kept[k].head, head, head_len) != 0)
			continue;
		memcpy(verdict, kept[k].verdict, kept[k].verdict_len);
		*verdict_len = kept[k].verdict_len;
		return 1;
	}
	return 0;
}

/* In the place of the same head's, or of the oldest. */
void verdict_keep(const char *head, size_t head_len, const char *verdict, size_t verdict_len, long keep, long long now)
{
	int k = 0;
	for (int i = 0; i < KEPT; i++) {
		if (kept[i].head_len == head_len && memcmp(kept[i].head, head, head_len) == 0) {
			k = i;
			break;
		}
		if (kept[i].until < kept[k].until)
			k = i;
	}
	kept[k].until = now + keep;
	kept[k].head_len = head_len;
	memcpy(kept[k].head, head, head_len);
	kept[k].verdict_len = verdict_len;
	memcpy(kept[k].verdict, verdict, verdict_len);
}
