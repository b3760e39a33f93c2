/*
 * term-filter: what of the command's output reaches the user's terminal
 * (attacker's review 5, F1). The relay (pty.c) copies the command's output
 * to the user's terminal, and some of what a terminal is sent makes it
 * answer into its input, which the relay hands to the command, or act
 * beyond the screen:
 *   - OSC 52 reads the user's clipboard (a copied password) or sets it
 *     (text the user pastes later, into a shell);
 *   - answers holding the user's settings or text the command chose:
 *     colour and font queries (OSC 4, 10-19 with '?', OSC 50), the window
 *     reports (CSI 11-21 t: the title report echoes a title the command
 *     set), DECRQSS and XTGETTCAP (DCS $ q, DCS + q), ENQ's answerback,
 *     DECID (ESC Z);
 *   - reading the screen back: DECRQCRA (checksums of a screen area, so
 *     what the user had on screen), DECRQPSR, DECRQTSR, XTREPORTSGR;
 *   - remote control: kitty (DCS @kitty-cmd), iTerm2 (OSC 1337), ConEmu
 *     (OSC 9), urxvt's extensions (OSC 777), kitty's graphics and file
 *     transfer (APC G, OSC 5113: the terminal reads files by name), tmux's
 *     passthrough (DCS tmux;) and GNU screen's (it passes any DCS on to the
 *     terminal outside);
 *   - the directory a terminal opens its next tab or window in (OSC 7; OSC 6,
 *     ConEmu's OSC 9;9, VS Code's OSC 633 P;Cwd=, iTerm2's OSC 1337
 *     CurrentDir): the command's would be its workspace's tree, and the
 *     prompt of the user's next shell there runs git with the tree's
 *     .git/config (attacker's review 8, F1); a hyperlink's target that the
 *     terminal opens with another program than a browser (file://, an
 *     editor's vscode://file: the tree again).
 * So where a terminal acts on a string the filter keeps only what is
 * known to be shown: OSC for titles (0, 1, 2), hyperlinks to web pages (8,
 * http and https only: their text may differ from the target, which only
 * a browser opens, as a page's links do), shell marks (133) and colours
 * set without '?' (4, 5, 10-19 and their resets); DCS for sixel images;
 * APC, PM, SOS and tmux's and screen's window name (ESC k, which hides
 * what follows) never; nor ESC %, which takes a terminal out of UTF-8
 * (then passed text holds C1).
 * CSI sequences and short escapes pass, but for the reports above, a
 * number above 65535 (terminals differ in reading it) and the modes
 * term-modes.c refuses, so programs keep colours, cursor motion, the
 * alternate screen, modes (bracketed paste, mouse; what is left set is put
 * back at the end, term-modes.c), the cursor position report (CSI 6n) and the
 * device attributes (DA1, DA2, XTVERSION, DECRQM) that full-screen programs
 * ask and wait for, whose answers the terminal makes alone. DSR 5n is
 * dropped too: hmm asks it itself at the command's end (pty.c fence), and
 * its answer must be hmm's alone.
 *
 * What passes is written out whole and canonical: a string holds only
 * printable UTF-8 text and ends where the filter saw it end (with the
 * command's BEL, else ST), and is cut short (ST, the rest dropped) at any
 * other byte, so a terminal never reads a string's end elsewhere than the
 * filter did. The output is taken as UTF-8: bytes that are not, and C1
 * controls (8-bit alone, or encoded), which some terminals act on, are
 * dropped. State is kept between reads (a sequence may be split anywhere);
 * what is held is bounded (a CSI sequence or colour OSC too long to hold is
 * dropped; a string is dropped as it comes, never held).
 */
#include "hmm-helper.h"

enum {
	GROUND,
	ESCAPE,	   /* after ESC */
	ESC_INTER, /* ESC and intermediates: ESC ( B, ESC # 8 */
	CSI,	   /* ESC [ and its parameters, held */
	CSI_DROP,  /* a CSI sequence too long or malformed, up to its end */
	OSC_NUM,   /* ESC ] and the number */
	OSC_TEXT,  /* an OSC that is shown, passed as it comes */
	OSC_HOLD,  /* a colour OSC, held until it is known to ask nothing */
	OSC_LINK,  /* a hyperlink, held until its target's scheme is known */
	DCS_HEAD,  /* ESC P and the parameters, held */
	DCS_TEXT,  /* sixel data, passed as it comes */
	STR_DROP,  /* a string that is not shown, up to its end */
	STR_ESC,   /* ESC in a string: ST, or the string ends and an escape starts */
};

/* Held for an ESC with intermediates; more is dropped. */
#define ESC_MAX 4
/* What a CSI sequence may hold (many SGR attributes at once fit). */
#define CSI_MAX 96
/* A DCS's parameters before its final byte. */
#define DCS_MAX 32

static const char ST[] = "\033\\";

static void put(unsigned char **o, const void *p, size_t n)
{
	memcpy(*o, p, n);
	*o += n;
}

/* ---- UTF-8 ---- */

enum { U8_MORE, U8_CHAR, U8_C1, U8_BAD };

static void utf8_drop(struct term_filter *f)
{
	f->need = 0;
	f->u8len = 0;
}

/* A byte of 0x80 or above: U8_CHAR when it completes a valid character
 * (f->u8, f->u8len), U8_MORE while one is under way, U8_C1 for a C1
 * control (8-bit, or encoded as U+0080-U+009F), U8_BAD for a byte that
 * is no UTF-8. A byte that cannot go on with the character under way
 * drops it and is taken afresh. */
static int utf8(struct term_filter *f, unsigned char b)
{
	if (f->need && b >= f->lo && b <= f->hi) {
		f->u8[f->u8len++] = b;
		f->lo = 0x80;
		f->hi = 0xBF;
		if (--f->need)
			return U8_MORE;
		return f->u8len == 2 && f->u8[0] == 0xC2 && b < 0xA0 ? U8_C1 : U8_CHAR;
	}
	utf8_drop(f);
	f->lo = 0x80;
	f->hi = 0xBF;
	if (b < 0xA0)
		return U8_C1;
	if (b < 0xC2 || b > 0xF4)
		return U8_BAD;
	f->u8[0] = b;
	f->u8len = 1;
	f->need = b < 0xE0 ? 1 : b < 0xF0 ? 2 : 3;
	if (b == 0xE0)
		f->lo = 0xA0; /* no overlong forms */
	else if (b == 0xED)
		f->hi = 0x9F; /* no surrogates */
	else if (b == 0xF0)
		f->lo = 0x90;
	else if (b == 0xF4)
		f->hi = 0x8F; /* nothing above U+10FFFF */
	return U8_MORE;
}

/* ---- deciding ---- */

/* The CSI sequence held, with its final byte: passed on, or dropped. Notes
 * whether the terminal will answer it. */
static int csi_passes(struct term_filter *f, unsigned char final)
{
	const unsigned char *p = f->held;
	size_t n = f->len;
	unsigned char marker = n && p[0] >= '<' ? p[0] : 0;
	unsigned char inter = n && p[n - 1] < 0x30 ? p[n - 1] : 0;
	/* A number above 65535 may be read as another: terminals that keep 32
	 * bits wrap it (st reads 2^32 + 1000 as 1000), others saturate it. */
	unsigned value = 0;
	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			value = 0;
		else if ((value = value * 10 + (unsigned)(p[i] - '0')) > 65535)
			return 0;
	unsigned first = 0;
	for (size_t i = marker ? 1 : 0; i < n && p[i] >= '0' && p[i] <= '9'; i++)
		first = first * 10 + (unsigned)(p[i] - '0');

	if (!marker && !inter && final == 't' && first >= 11 && first <= 21)
		return 0; /* window reports, the title's among them */
	if (!marker && !inter && final == 'n' && first == 5)
		return 0; /* DSR 5n: hmm's own question (pty.c) */
	if ((inter == '*' && final == 'y') || (inter == '$' && (final == 'w' || final == 'u')) ||
	    (inter == '#' && final == '|'))
		return 0; /* DECRQCRA, DECRQPSR, DECRQTSR, XTREPORTSGR: the screen read back */
	/* Answered: DA1-3, DSR, DECREQTPARM; XTVERSION, kitty's keyboard
	 * flags, XTQMODKEYS, XTSMGRAPHICS; DECRQM, XTREPORTCOLORS, DECRQUPSS,
	 * DECRQDE, DECRQLP. More than these is harmless: it only costs the
	 * fence a round trip. */
	if (!term_note_csi(f, marker, inter, final))
		return 0;
	if (strchr("cnx", final) || (marker && strchr("qumS", final)) || (inter && strchr("pRuvw|", final)))
		f->asked = 1;
	return 1;
}

/* Titles and shell marks: shown. */
static int osc_shown(unsigned num)
{
	return num <= 2 || num == 133;
}

/* Whether a hyperlink's target, as far as it has come (n bytes), is still a
 * web page's: 1 while its scheme may be http:// or https://, 2 once it is. */
static int web_target(const unsigned char *p, size_t n)
{
	static const char *const schemes[] = {"http://", "https://"};
	for (int i = 0; i < 2; i++) {
		size_t len = strlen(schemes[i]);
		if (n <= len && strncasecmp((const char *)p, schemes[i], n) == 0)
			return n == len ? 2 : 1;
	}
	return 0;
}

/* Colours (set, or reset), which a '?' would turn into a query. */
static int osc_colour(unsigned num)
{
	return num == 4 || num == 5 || (num >= 10 && num <= 19) || num == 104 || num == 105 ||
	       (num >= 110 && num <= 119);
}

/* ESC ] and the number, as a terminal reads it (no leading zeros). */
static size_t osc_start(unsigned char *to, unsigned num)
{
	return (size_t)sprintf((char *)to, "\033]%u", num);
}

/* The string in f->state has ended (by its terminator, or cut short): the
 * terminal is shown its end, where it was shown its start. */
static void string_end(struct term_filter *f, int bel, unsigned char **o)
{
	const char *end = bel ? "\a" : ST;
	unsigned char start[16];
	switch (f->state) {
	case OSC_NUM:
		if (f->len && osc_colour(f->num)) { /* a reset with no argument */
			put(o, start, osc_start(start, f->num));
			put(o, end, strlen(end));
			term_note_colour(f, f->num, NULL, 0);
		}
		break;
	case OSC_LINK: /* passed only without a target: a link's end */
		if (f->target != f->len)
			break;
		/* fall through */
	case OSC_HOLD:
		if (f->state == OSC_HOLD)
			term_note_colour(f, f->num, f->held, f->len);
		put(o, f->held, f->len);
		/* fall through */
	case OSC_TEXT:
		put(o, end, strlen(end));
		break;
	case DCS_TEXT:
		put(o, ST, 2);
		break;
	}
	utf8_drop(f);
	f->state = GROUND;
}

/* A byte a shown string may not hold: it ends there, the rest is dropped. */
static void cut(struct term_filter *f, unsigned char **o)
{
	string_end(f, 0, o);
	f->state = STR_DROP;
}

/* ---- the machine ---- */

/* One byte in any state but GROUND's plain text; 1 to look at it again
 * in the state it left. */
static int step(struct term_filter *f, unsigned char b, unsigned char **o)
{
	switch (f->state) {
	case GROUND:
		if (b >= 0x80) {
			if (utf8(f, b) == U8_CHAR) {
				put(o, f->u8, f->u8len);
				utf8_drop(f);
			}
			return 0;
		}
		utf8_drop(f); /* a character left unfinished is no character */
		if (b == 0x0E || b == 0x0F) /* SO, SI */
			term_note_shift(f, b);
		if (b == 0x1B)
			f->state = ESCAPE;
		else if (b != 0x05) /* ENQ: the answerback string */
			put(o, &b, 1);
		return 0;

	case ESCAPE:
		if (b == '[') {
			f->state = CSI;
			f->len = 0;
		} else if (b == ']') {
			f->state = OSC_NUM;
			f->num = 0;
			f->len = 0;
		} else if (b == 'P') {
			f->state = DCS_HEAD;
			f->len = 0;
		} else if (b == 'X' || b == '^' || b == '_' || b == 'k') {
			f->state = STR_DROP; /* SOS, PM, APC; tmux's and screen's window name */
		} else if (b >= 0x20 && b <= 0x2F) {
			f->state = ESC_INTER;
			f->held[0] = b;
			f->len = 1;
		} else if (b >= 0x30 && b <= 0x7E) {
			if (b != 'Z' && b != '\\') { /* DECID (answered as DA1); ST, ending no string */
				put(o, "\033", 1);
				put(o, &b, 1);
				term_note_esc(f, 0, b);
			}
			f->state = GROUND;
		} else if (b != 0x1B && b != 0x7F) {
			f->state = GROUND; /* a control or 8-bit byte: the ESC goes */
			return 1;
		}
		return 0;

	case ESC_INTER:
		if (b >= 0x20 && b <= 0x2F) {
			if (f->len <= ESC_MAX)
				f->held[f->len++] = b;
		} else if (b >= 0x30 && b <= 0x7E) {
			/* ESC % switches out of UTF-8 (xterm, the console): the
			 * filter's reading of what follows would no longer hold. */
			if (f->len <= ESC_MAX && f->held[0] != '%') {
				put(o, "\033", 1);
				put(o, f->held, f->len);
				put(o, &b, 1);
				term_note_esc(f, f->held[0], b);
			}
			f->state = GROUND;
		} else if (b != 0x7F) {
			f->state = GROUND;
			return 1;
		}
		return 0;

	case CSI:
		if (b >= 0x20 && b <= 0x3F) {
			/* parameters, then intermediates: one after those is malformed */
			if (f->len == CSI_MAX || (b >= 0x30 && f->len && f->held[f->len - 1] < 0x30))
				f->state = CSI_DROP;
			else
				f->held[f->len++] = b;
		} else if (b >= 0x40 && b <= 0x7E) {
			if (csi_passes(f, b)) {
				put(o, "\033[", 2);
				put(o, f->held, f->len);
				put(o, &b, 1);
			}
			f->state = GROUND;
		} else if (b != 0x7F) {
			f->state = GROUND;
			return 1;
		}
		return 0;

	case CSI_DROP:
		if (b >= 0x40 && b <= 0x7E) {
			f->state = GROUND;
		} else if ((b < 0x20 || b > 0x3F) && b != 0x7F) {
			f->state = GROUND;
			return 1;
		}
		return 0;

	case STR_ESC:
		f->state = f->string;
		string_end(f, 0, o);
		if (b == '\\')
			return 0;
		f->state = ESCAPE;
		return 1;
	}

	/* The strings: their ends first, the same for all. */
	if (b == 0x07) {
		string_end(f, 1, o);
		return 0;
	}
	if (b == 0x1B) {
		f->string = f->state;
		f->state = STR_ESC;
		return 0;
	}
	if (b == 0x18 || b == 0x1A) { /* CAN, SUB: the string is abandoned */
		string_end(f, 0, o);
		return 0;
	}
	switch (f->state) {
	case OSC_NUM:
		if (b >= '0' && b <= '9' && f->len < 5) {
			f->num = f->num * 10 + (unsigned)(b - '0');
			f->len++;
		} else if (b == ';' && f->len && f->num == 8) {
			f->len = osc_start(f->held, f->num);
			f->held[f->len++] = ';';
			f->target = 0;
			f->state = OSC_LINK;
		} else if (b == ';' && f->len && osc_shown(f->num)) {
			put(o, f->held, osc_start(f->held, f->num));
			put(o, ";", 1);
			f->state = OSC_TEXT;
		} else if (b == ';' && f->len && osc_colour(f->num)) {
			f->len = osc_start(f->held, f->num);
			f->held[f->len++] = ';';
			f->state = OSC_HOLD;
		} else {
			f->state = STR_DROP;
		}
		break;
	case OSC_TEXT:
		if (b >= 0x20 && b < 0x7F) {
			utf8_drop(f);
			put(o, &b, 1);
		} else if (b < 0x80) {
			cut(f, o);
		} else {
			int u = utf8(f, b);
			if (u == U8_CHAR) {
				put(o, f->u8, f->u8len);
				utf8_drop(f);
			} else if (u == U8_C1) {
				cut(f, o);
			}
		}
		break;
	case OSC_HOLD:
		if (b >= 0x20 && b < 0x7F && b != '?' && f->len < TERM_HELD)
			f->held[f->len++] = b;
		else
			f->state = STR_DROP;
		break;
	case OSC_LINK: /* parameters; target */
		if (b < 0x20 || b >= 0x7F || f->len == TERM_HELD) {
			f->state = STR_DROP;
			break;
		}
		f->held[f->len++] = b;
		if (!f->target) {
			if (b == ';')
				f->target = f->len;
			break;
		}
		int web = web_target(f->held + f->target, f->len - f->target);
		if (web == 2) { /* the rest passes as a title does */
			put(o, f->held, f->len);
			f->state = OSC_TEXT;
		} else if (!web) {
			f->state = STR_DROP;
		}
		break;
	case DCS_HEAD:
		if (b >= 0x30 && b <= 0x3F && f->len < DCS_MAX) {
			f->held[f->len++] = b;
		} else if (b == 'q') { /* sixel: no intermediates, only shown */
			put(o, "\033P", 2);
			put(o, f->held, f->len);
			put(o, &b, 1);
			f->state = DCS_TEXT;
		} else {
			f->state = STR_DROP;
		}
		break;
	case DCS_TEXT:
		if (b >= 0x20 && b < 0x7F)
			put(o, &b, 1);
		else
			cut(f, o);
		break;
	}
	return 0;
}

/* The length of the whole, valid UTF-8 character (no C1 control) that p
 * starts with, or 0: the text's fast way through, taken byte by byte by
 * utf8() where a character is split between reads or is not one. */
static size_t utf8_whole(const unsigned char *p, size_t n)
{
	unsigned char b = p[0];
	size_t len = b < 0xC2 ? 0 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : b < 0xF5 ? 4 : 0;
	if (!len || len > n)
		return 0;
	unsigned char lo = b == 0xC2 ? 0xA0 : b == 0xE0 ? 0xA0 : b == 0xF0 ? 0x90 : 0x80;
	unsigned char hi = b == 0xED ? 0x9F : b == 0xF4 ? 0x8F : 0xBF;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return len;
}

void term_filter_init(struct term_filter *f)
{
	memset(f, 0, sizeof *f);
}

size_t term_filter(struct term_filter *f, const unsigned char *in, size_t n, unsigned char *out)
{
	unsigned char *o = out;
	size_t i = 0;
	while (i < n) {
		/* Plain text, the bulk of it, in runs. */
		if (f->state == GROUND && !f->need) {
			size_t run = i, len;
			while (run < n) {
				if (in[run] < 0x80 && in[run] != 0x1B && in[run] != 0x05 && in[run] != 0x0E && in[run] != 0x0F)
					run++;
				else if (in[run] >= 0x80 && (len = utf8_whole(in + run, n - run)))
					run += len;
				else
					break;
			}
			put(&o, in + i, run - i);
			if ((i = run) == n)
				break;
		}
		while (step(f, in[i], &o))
			;
		i++;
	}
	return (size_t)(o - out);
}

size_t term_filter_end(struct term_filter *f, unsigned char *out)
{
	unsigned char *o = out;
	if (f->state == STR_ESC)
		f->state = f->string;
	if (f->state == OSC_TEXT || f->state == OSC_LINK || f->state == DCS_TEXT)
		string_end(f, 0, &o);
	f->state = GROUND;
	utf8_drop(f);
	return (size_t)(o - out);
}
