// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * vgpuctl diagnose: the logs of one vGPU or VM, joined and matched.
 *
 * Sources (under the root): the kernel's log stream dev/kmsg (records
 * "PRIO,SEQ,TS_USEC,FLAGS;MESSAGE", read without blocking until EAGAIN, their
 * boot-relative times made wall-clock times with proc/stat's btime), the
 * kernel's and the vGPU manager's syslog files (var/log/kern.log, messages,
 * syslog: Debian, RHEL, both in one) and the domain's QEMU log
 * (var/log/libvirt/qemu/NAME.log).  Where dev/kmsg could be read, a syslog
 * file's kernel line that is one of its records (same message, within
 * KMSG_SLACK seconds) is left out; where it cannot (not root), the syslog
 * files alone carry the kernel's lines.  Each log is read from its tail, at
 * most LOG_TAIL_MAX bytes, and walked once: the cost is linear in what is
 * read (a line is searched for each identity, then for each row's literal
 * before its expression runs).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "diagnose.h"
#include "exec.h"
#include "sysfs.h"

/* How long journalctl may take: its output is capped by vgpu_exec() (VGPU_EXEC_OUTPUT_MAX). */
#define JOURNAL_TIMEOUT_MS 10000

/* The last bytes of a log that are read: a few days of a busy host's kernel log. */
#define LOG_TAIL_MAX (4u << 20)

/* One read() of dev/kmsg: the kernel's records are shorter (it answers EINVAL otherwise). */
#define KMSG_READ_MAX 8192
/* The most reads of dev/kmsg: a host that logs faster than it is read cannot keep us here. */
#define KMSG_READS_MAX 200000
/* A syslog copy of a kernel record is stamped within this many seconds of it. */
#define KMSG_SLACK 2
#define KMSG_LOG "dev/kmsg"

static const char *const host_logs[] = { "var/log/kern.log", "var/log/messages", "var/log/syslog" };

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* "dddd:bb:dd": a GPU's address without its function (the Xid lines' "PCI:0000:3b:00") */
static bool is_slot_form(const char *id)
{
	return strlen(id) == 10 && id[4] == ':' && id[7] == ':';
}

/* Whether @line names @id as a whole word, case-insensitively. */
static bool names_id(const char *line, const char *id)
{
	size_t l = strlen(id);

	for (const char *p = line; (p = strcasestr(p, id)); p++) {
		char after = p[l];

		if (p > line && word_char(p[-1]))
			continue;
		if (word_char(after) || (after == '.' && is_slot_form(id)))
			continue;
		return true;
	}
	return false;
}

static int month_of(const char *s)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";

	for (int i = 0; i < 12; i++)
		if (!strncmp(s, months + 3 * i, 3))
			return i;
	return -1;
}

/* @n digits at @s as a number, or -1 */
static int digits(const char *s, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

size_t vgpu_diag_parse_time(const char *s, long long now, long long *out)
{
	struct tm tm = { 0 };
	const char *p = s;
	long off = 0;
	bool zone = false;
	time_t t;

	tm.tm_isdst = -1;
	if (digits(p, 4) >= 0 && p[4] == '-' && digits(p + 5, 2) >= 0 && p[7] == '-' &&
	    digits(p + 8, 2) >= 0) {
		tm.tm_year = digits(p, 4) - 1900;
		tm.tm_mon = digits(p + 5, 2) - 1;
		tm.tm_mday = digits(p + 8, 2);
		p += 10;
		if ((*p == 'T' || *p == ' ') && digits(p + 1, 2) >= 0 && p[3] == ':' &&
		    digits(p + 4, 2) >= 0) {
			tm.tm_hour = digits(p + 1, 2);
			tm.tm_min = digits(p + 4, 2);
			p += 6;
			if (*p == ':' && digits(p + 1, 2) >= 0) {
				tm.tm_sec = digits(p + 1, 2);
				p += 3;
				if (*p == '.' || *p == ',')
					for (p++; isdigit((unsigned char)*p); p++)
						;
			}
			if (*p == 'Z') {
				zone = true;
				p++;
			} else if ((*p == '+' || *p == '-') && digits(p + 1, 2) >= 0) {
				int sign = *p == '-' ? -1 : 1;
				const char *m = p + 3;

				if (*m == ':')
					m++;
				if (digits(m, 2) >= 0) {
					zone = true;
					off = sign *
					      (digits(p + 1, 2) * 3600L + digits(m, 2) * 60L);
					p = m + 2;
				}
			}
		}
		if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
		    tm.tm_min > 59 || tm.tm_sec > 60)
			return 0;
		t = zone ? timegm(&tm) - off : mktime(&tm);
	} else if (month_of(p) >= 0 && p[3] == ' ') {
		time_t n = (time_t)now;
		struct tm nowtm;
		int day;

		tm.tm_mon = month_of(p);
		p += 4;
		if (*p == ' ')
			p++;
		day = isdigit((unsigned char)p[1]) ? digits(p, 2) : digits(p, 1);
		if (day < 1 || day > 31)
			return 0;
		p += day > 9 || *p == '0' ? 2 : 1;
		if (*p != ' ' || digits(p + 1, 2) < 0 || p[3] != ':' || digits(p + 4, 2) < 0 ||
		    p[6] != ':' || digits(p + 7, 2) < 0)
			return 0;
		tm.tm_mday = day;
		tm.tm_hour = digits(p + 1, 2);
		tm.tm_min = digits(p + 4, 2);
		tm.tm_sec = digits(p + 7, 2);
		p += 9;
		localtime_r(&n, &nowtm);
		tm.tm_year = nowtm.tm_year;
		t = mktime(&tm);
		if ((long long)t > now + 86400) { /* December's lines read in January */
			tm.tm_year--;
			tm.tm_isdst = -1;
			t = mktime(&tm);
		}
	} else {
		return 0;
	}
	if (t == (time_t)-1)
		return 0;
	*out = (long long)t;
	return (size_t)(p - s);
}

/*
 * The vGPU manager's vmiop_log lines name no vGPU: one nvidia-vgpu-mgr
 * process serves one VM, so a process whose line names an identity (its
 * "Received start call ... mdev uuid ...") makes all its lines the object's.
 * The tags ("nvidia-vgpu-mgr[PID]") of @text's such processes into @tags.
 */
static void manager_tags(const struct vgpu_strv *ids, const char *text, struct vgpu_strv *tags)
{
	static const char tag[] = "nvidia-vgpu-mgr[";

	for (const char *p = text; (p = strstr(p, tag));) {
		const char *eol = strchr(p, '\n');
		const char *end = strchr(p, ']');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		VGPU_AUTOFREE char *line = NULL;

		if (end && (!eol || end < eol)) {
			line = vgpu_xstrndup(p, len);
			for (size_t i = 0; i < ids->n; i++)
				if (names_id(line, ids->items[i])) {
					vgpu_strv_push(tags,
						       vgpu_xstrndup(p, (size_t)(end - p) + 1));
					break;
				}
		}
		p += len;
	}
	vgpu_strv_uniq(tags);
}

void vgpu_diag_lines(const struct vgpu_catalogue *cat, const struct vgpu_strv *ids,
		     const char *source, const char *text, bool all_lines,
		     const struct vgpu_diag_query *q, struct vgpu_diag *out)
{
	VGPU_AUTOSTRV tags = { 0 };
	long long when = 0;
	size_t lineno = 0;
	const char *p = text;

	if (!all_lines && ids->n)
		manager_tags(ids, text, &tags);

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		VGPU_AUTOFREE char *line = vgpu_xstrndup(p, len);
		const struct vgpu_cat_row *row;
		unsigned long code = 0;
		bool joined = all_lines || !ids->n;
		long long t;

		lineno++;
		p += len + (nl ? 1 : 0);
		if (vgpu_diag_parse_time(line, q->now, &t))
			when = t;
		if (q->since && (when ? when < q->since : q->timed_only))
			continue;
		for (size_t i = 0; !joined && i < ids->n; i++)
			joined = names_id(line, ids->items[i]);
		for (size_t i = 0; !joined && i < tags.n; i++)
			joined = strstr(line, tags.items[i]) != NULL;
		if (!joined)
			continue;
		code = ~0ul;
		row = vgpu_catalogue_match(cat, line, &code);
		if (!row)
			continue;
		out->v = vgpu_xreallocarray(out->v, out->n + 1, sizeof(*out->v));
		out->v[out->n] = (struct vgpu_diag_entry){
			.source = source,
			.lineno = lineno,
			.text = vgpu_steal_ptr(&line),
			.when = when,
			.row = row,
			.has_code = row->decode != VGPU_CAT_DECODE_NONE && code != ~0ul,
			.code = code,
			.seq = out->n,
		};
		out->n++;
	}
}

static int entry_cmp(const void *a, const void *b)
{
	const struct vgpu_diag_entry *x = a, *y = b;

	if (x->when != y->when)
		return x->when < y->when ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * What two repeats of a line share: the text after its time, without the
 * numbers in brackets (a dmesg stamp "[ 2720.206992]", a process "[2314]").
 */
static char *repeat_key(const char *text)
{
	long long t;
	size_t skip = vgpu_diag_parse_time(text, 0, &t);
	char *key = vgpu_xstrdup(text + skip), *w = key;

	for (const char *p = key; *p;) {
		size_t n = *p == '[' ? strspn(p + 1, "0123456789. ") : 0;

		if (*p == '[' && n && p[1 + n] == ']') {
			*w++ = '[';
			*w++ = ']';
			p += n + 2;
		} else {
			*w++ = *p++;
		}
	}
	*w = '\0';
	return key;
}

struct repeat {
	char *key;
	const struct vgpu_diag_entry *e;
	size_t pos;
};

static int repeat_cmp(const void *a, const void *b)
{
	const struct repeat *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	if (x->e->row != y->e->row)
		return strcmp(x->e->row->id, y->e->row->id);
	if (x->e->has_code != y->e->has_code)
		return x->e->has_code ? 1 : -1;
	if (x->e->code != y->e->code)
		return x->e->code < y->e->code ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/*
 * Fold each entry that repeats an earlier one into it (d->v in time order):
 * sorted by what repeats share, each run's first keeps the count.  n log n.
 */
static void fold_repeats(struct vgpu_diag *d)
{
	struct repeat *r = vgpu_xcalloc(d->n ? d->n : 1, sizeof(*r));
	bool *gone = vgpu_xcalloc(d->n ? d->n : 1, sizeof(*gone));
	size_t w = 0;

	for (size_t i = 0; i < d->n; i++) {
		d->v[i].count = 1;
		r[i] = (struct repeat){ repeat_key(d->v[i].text), &d->v[i], i };
	}
	qsort(r, d->n, sizeof(*r), repeat_cmp);
	for (size_t i = 0, first = 0; i < d->n; i++) {
		struct vgpu_diag_entry *f = &d->v[r[first].pos];
		const struct vgpu_diag_entry *e = r[i].e;

		if (i == first || strcmp(r[i].key, r[first].key) || e->row != f->row ||
		    e->has_code != f->has_code || e->code != f->code) {
			first = i;
			continue;
		}
		f->count++;
		f->last_source = e->source;
		f->last_lineno = e->lineno;
		f->last_when = e->when;
		gone[r[i].pos] = true;
	}
	for (size_t i = 0; i < d->n; i++) {
		free(r[i].key);
		if (gone[i])
			free(d->v[i].text);
		else
			d->v[w++] = d->v[i];
	}
	free(r);
	free(gone);
	d->n = w;
}

void vgpu_diag_finish(struct vgpu_diag *d)
{
	if (d->n)
		qsort(d->v, d->n, sizeof(*d->v), entry_cmp);
	fold_repeats(d);
	d->verdict = d->symptom = NULL;
	for (size_t i = 0; i < d->n && !d->verdict; i++) {
		if (d->v[i].row->kind == VGPU_CAT_CAUSE)
			d->verdict = &d->v[i];
		else if (d->v[i].row->kind == VGPU_CAT_SYMPTOM && !d->symptom)
			d->symptom = &d->v[i];
	}
	if (d->verdict)
		d->symptom = NULL;
}

/*
 * The JSON string at @p (after its opening quote) into @out, escapes decoded
 * (\uXXXX as UTF-8; a surrogate pair's halves each as U+FFFD: the journal
 * writes non-ASCII as UTF-8 bytes).  Return: after the closing quote, or NULL.
 */
static const char *json_str(const char *p, char **out)
{
	size_t n = 0, cap = 64;
	char *s = vgpu_xmalloc(cap);

	for (; *p && *p != '"'; p++) {
		char c = *p;
		unsigned u = 0;

		if (n + 4 >= cap)
			s = vgpu_xrealloc(s, cap *= 2);
		if (c != '\\') {
			s[n++] = c;
			continue;
		}
		c = *++p;
		switch (c) {
		case 'n':
			s[n++] = '\n';
			break;
		case 't':
			s[n++] = '\t';
			break;
		case 'r':
		case 'b':
		case 'f':
			s[n++] = ' ';
			break;
		case 'u':
			for (int i = 1; i <= 4; i++) {
				if (!isxdigit((unsigned char)p[i])) {
					free(s);
					return NULL;
				}
				u = u * 16 +
				    (unsigned)(isdigit((unsigned char)p[i]) ?
						       p[i] - '0' :
						       (tolower((unsigned char)p[i]) - 'a' + 10));
			}
			p += 4;
			if (u >= 0xd800 && u < 0xe000)
				u = 0xfffd;
			if (u < 0x80) {
				s[n++] = (char)u;
			} else if (u < 0x800) {
				s[n++] = (char)(0xc0 | (u >> 6));
				s[n++] = (char)(0x80 | (u & 0x3f));
			} else {
				s[n++] = (char)(0xe0 | (u >> 12));
				s[n++] = (char)(0x80 | ((u >> 6) & 0x3f));
				s[n++] = (char)(0x80 | (u & 0x3f));
			}
			break;
		case '\0':
			free(s);
			return NULL;
		default: /* " \ / */
			s[n++] = c;
		}
	}
	if (*p != '"') {
		free(s);
		return NULL;
	}
	s[n] = '\0';
	*out = s;
	return p + 1;
}

/* The string value of @key in the one-line JSON object @obj, or NULL (allocated). */
static char *json_get(const char *obj, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = obj; (p = strchr(p, '"'));) {
		char *k = NULL, *v = NULL;
		const char *q = json_str(p + 1, &k);
		bool hit;

		if (!q)
			return NULL;
		hit = strlen(k) == kl && !memcmp(k, key, kl);
		free(k);
		while (*q == ' ')
			q++;
		if (*q != ':') { /* a value, not a key: go on after it */
			p = q;
			continue;
		}
		for (q++; *q == ' '; q++)
			;
		if (*q != '"') { /* a number, null or an array (binary data): skip it */
			p = q;
			while (*p && *p != ',' && *p != '}')
				p += *p == '[' ? strcspn(p, "]") : 1;
			if (hit)
				return NULL;
			continue;
		}
		q = json_str(q + 1, &v);
		if (!q)
			return NULL;
		if (hit)
			return v;
		free(v);
		p = q;
	}
	return NULL;
}

char *vgpu_diag_journal_text(const char *json)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		abort(); /* no memory for a stream: the OOM policy (metrics.c does the same) */

	for (const char *p = json; *p;) {
		size_t len = strcspn(p, "\n");
		VGPU_AUTOFREE char *line = vgpu_xstrndup(p, len);
		VGPU_AUTOFREE char *msg = json_get(line, "MESSAGE");
		VGPU_AUTOFREE char *ts = json_get(line, "__REALTIME_TIMESTAMP");
		VGPU_AUTOFREE char *id = json_get(line, "SYSLOG_IDENTIFIER");
		VGPU_AUTOFREE char *pid = json_get(line, "_PID");
		char when[40] = "";

		p += len + (p[len] ? 1 : 0);
		if (!msg)
			continue;
		if (ts) {
			long long us = strtoll(ts, NULL, 10);
			time_t t = (time_t)(us / 1000000);
			char day[24];
			struct tm tm;

			if (us > 0 && gmtime_r(&t, &tm) &&
			    strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm))
				snprintf(when, sizeof(when), "%s.%06lldZ ", day, us % 1000000);
		}
		/* one record, one line: a message's own newlines become blanks */
		for (char *m = msg; *m; m++)
			if (*m == '\n')
				*m = ' ';
		fprintf(f, "%s%s", when, id ? id : "journal");
		if (pid)
			fprintf(f, "[%s]", pid);
		fprintf(f, ": %s\n", msg);
	}
	if (fclose(f))
		abort();
	return text;
}

/* nvidia-vgpu-mgr's and nvidia-vgpud's journal, when a journalctl is named. */
static void read_journal(struct vgpu_ctx *ctx, const struct vgpu_catalogue *cat,
			 const struct vgpu_diag_query *q, struct vgpu_diag *d)
{
	char since[32];
	const char *argv[] = {
		q->journalctl, "-o",	       "json", "--no-pager", "-u", "nvidia-vgpu-mgr",
		"-u",	       "nvidia-vgpud", NULL,   NULL,	     NULL
	};
	struct vgpu_exec_result res = { 0 };
	VGPU_AUTOFREE char *text = NULL;

	if (q->since) {
		snprintf(since, sizeof(since), "@%lld", q->since);
		argv[8] = "--since";
		argv[9] = since;
	}
	if (vgpu_exec_ok(ctx, argv, JOURNAL_TIMEOUT_MS, &res) < 0) {
		vgpu_log(ctx, LOG_WARNING, "the journal is left out: %s", vgpu_ctx_error(ctx));
		return;
	}
	text = vgpu_diag_journal_text(res.out);
	vgpu_exec_clear(&res);
	vgpu_strv_push(&d->logs, vgpu_xstrdup("journal"));
	vgpu_diag_lines(cat, &d->identities, d->logs.items[d->logs.n - 1], text, false, q, d);
}

void vgpu_diag_clear(struct vgpu_diag *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].text);
	free(d->v);
	vgpu_strv_clear(&d->identities);
	vgpu_strv_clear(&d->logs);
	*d = (struct vgpu_diag){ 0 };
}

/* A PCI address in the forms logs use: 0000:3b:00.7, 00:3b:00.7, 0:3b:0.7 (and 0000:3b:00 for a
 * GPU). */
static void add_bdf(struct vgpu_strv *ids, const char *bdf, bool gpu)
{
	unsigned dom, bus, dev, fn;

	if (!*bdf || sscanf(bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
		return;
	vgpu_strv_push(ids, vgpu_asprintf("%04x:%02x:%02x.%x", dom, bus, dev, fn));
	vgpu_strv_push(ids, vgpu_asprintf("%02x:%02x:%02x.%x", dom & 0xff, bus, dev, fn));
	vgpu_strv_push(ids, vgpu_asprintf("%x:%x:%x.%x", dom, bus, dev, fn));
	if (gpu)
		vgpu_strv_push(ids, vgpu_asprintf("%04x:%02x:%02x", dom, bus, dev));
}

static void add_str(struct vgpu_strv *ids, const char *s)
{
	if (*s)
		vgpu_strv_push(ids, vgpu_xstrdup(s));
}

/*
 * The identities a domain's QEMU log gives, for a domain without owner
 * records (another manager's): its -uuid (the last start's), and each
 * device's sysfsdev= path: an mdev's UUID, a PCI address (a VF, or an mdev's
 * parent in the /sys/bus/pci/devices/BDF/UUID form).
 */
static void qemu_log_ids(const char *text, struct vgpu_strv *ids)
{
	static const char mdev[] = "/sys/bus/mdev/devices/", pci[] = "/sys/bus/pci/devices/";
	const char *last = NULL;
	char u[VGPU_UUID_LEN], b[VGPU_BDF_LEN], buf[64];

	for (const char *p = text; (p = strstr(p, "-uuid ")); p += 6)
		last = p + 6;
	if (last && sscanf(last, "%36s", buf) == 1 && vgpu_uuid_normalize(buf, u))
		add_str(ids, u);
	for (const char *p = text; (p = strstr(p, mdev)); p += sizeof(mdev) - 1)
		if (sscanf(p + sizeof(mdev) - 1, "%36[0-9a-fA-F-]", buf) == 1 &&
		    vgpu_uuid_normalize(buf, u))
			add_str(ids, u);
	for (const char *p = text; (p = strstr(p, pci)); p += sizeof(pci) - 1) {
		const char *a = p + sizeof(pci) - 1;

		if (sscanf(a, "%12[0-9a-fA-F:.]", buf) == 1 && vgpu_bdf_normalize(buf, b) == 0)
			add_bdf(ids, b, false);
		a += strlen(buf);
		if (*a == '/' && sscanf(a + 1, "%36[0-9a-fA-F-]", buf) == 1 &&
		    vgpu_uuid_normalize(buf, u))
			add_str(ids, u);
	}
}

/*
 * When the host booted, in Unix seconds: proc/stat's btime, else now minus
 * proc/uptime, under the root; 0 when neither can be read.
 */
static long long boot_time(struct vgpu_sysfs *fs, long long now)
{
	VGPU_AUTOFREE char *stat = NULL;
	struct vgpu_sysdir root;
	char up[64];

	vgpu_sysdir_root(fs, &root);
	if (vgpu_sysfs_read_file(&root, 1u << 20, &stat, NULL, "proc/stat") == 0)
		for (const char *p = stat; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
			if (!strncmp(p, "btime ", 6) && isdigit((unsigned char)p[6]))
				return strtoll(p + 6, NULL, 10);
	if (vgpu_sysfs_read_str(&root, up, sizeof(up), "proc/uptime") == 0 &&
	    isdigit((unsigned char)*up))
		return now - strtoll(up, NULL, 10);
	return 0;
}

/*
 * dev/kmsg's records as log lines: "2026-11-28T19:02:11.123456Z kernel: MESSAGE"
 * (the time from @boot and the record's microseconds since boot; without
 * @boot, "kernel: MESSAGE").  Continuation lines (" KEY=VALUE") are left out.
 * Each read is bounded; a reader that does not get whole records (a plain
 * file) is served by splitting on newlines.  Return: the text (allocated), or
 * NULL when dev/kmsg cannot be opened.
 */
static char *kmsg_text(struct vgpu_sysfs *fs, long long boot)
{
	struct vgpu_sysdir dev;
	VGPU_AUTOFREE char *raw = NULL;
	size_t n = 0, cap = 2 * KMSG_READ_MAX;
	char *text = NULL;
	size_t size = 0;
	FILE *f;
	int fd;

	if (vgpu_sysdir_open(fs, &dev, "dev") < 0)
		return NULL;
	fd = openat(dev.fd, "kmsg", O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	vgpu_sysdir_close(&dev);
	if (fd < 0)
		return NULL;
	raw = vgpu_xmalloc(cap + 1);
	for (size_t reads = 0; reads < KMSG_READS_MAX; reads++) {
		ssize_t k;

		if (cap - n < KMSG_READ_MAX) {
			if (n >= LOG_TAIL_MAX) { /* keep the newer half, from a record's start */
				const char *keep = memchr(raw + n / 2, '\n', n - n / 2);
				size_t from = keep ? (size_t)(keep + 1 - raw) : n / 2;

				memmove(raw, raw + from, n - from);
				n -= from;
			} else {
				raw = vgpu_xrealloc(raw, (cap *= 2) + 1);
			}
		}
		k = read(fd, raw + n, KMSG_READ_MAX);
		if (k < 0 && (errno == EINTR || errno == EPIPE))
			continue; /* EPIPE: records were overwritten before they were read */
		if (k <= 0)
			break; /* EAGAIN: the end; 0: the end of a plain file */
		n += (size_t)k;
	}
	close(fd);
	raw[n] = '\0';
	f = open_memstream(&text, &size);
	if (!f)
		abort(); /* no memory for a stream: the OOM policy (metrics.c does the same) */
	for (char *p = raw, *nl; *p; p = nl ? nl + 1 : p + strlen(p)) {
		unsigned long long usec;
		char *msg;

		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		msg = strchr(p, ';');
		if (*p == ' ' || !msg || sscanf(p, "%*u,%*u,%llu", &usec) != 1)
			continue;
		if (boot > 0) {
			time_t t = (time_t)(boot + (long long)(usec / 1000000));
			char day[24];
			struct tm tm;

			if (gmtime_r(&t, &tm) &&
			    strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm))
				fprintf(f, "%s.%06lluZ ", day, usec % 1000000);
		}
		fprintf(f, "kernel: %s\n", msg + 1);
	}
	if (fclose(f))
		abort();
	return text;
}

/* The kernel's message of a log line: after "kernel: " and a "[ 123.456] " stamp, or NULL. */
static const char *kernel_message(const char *line)
{
	const char *p = strstr(line, "kernel: ");

	if (!p)
		return NULL;
	p += 8;
	if (*p == '[') {
		const char *e = strchr(p, ']');

		if (e && e[1] == ' ')
			p = e + 2;
	}
	return p;
}

/*
 * Leave out the entries of the syslog files that copy one of dev/kmsg's
 * (entries [@kmsg_from, @kmsg_to)): the same kernel message within
 * KMSG_SLACK seconds (or of an unknown time).
 */
static void drop_kmsg_copies(struct vgpu_diag *d, size_t kmsg_from, size_t kmsg_to,
			     size_t syslog_to)
{
	size_t w = kmsg_to;

	for (size_t i = kmsg_to; i < d->n; i++) {
		struct vgpu_diag_entry *e = &d->v[i];
		const char *m = i < syslog_to ? kernel_message(e->text) : NULL;
		bool copy = false;

		for (size_t k = kmsg_from; m && k < kmsg_to && !copy; k++) {
			const struct vgpu_diag_entry *o = &d->v[k];
			const char *km = kernel_message(o->text);

			copy = km && !strcmp(km, m) &&
			       (!e->when || !o->when || llabs(e->when - o->when) <= KMSG_SLACK);
		}
		if (copy) {
			free(e->text);
			continue;
		}
		d->v[w++] = *e;
	}
	d->n = w;
}

/*
 * The GPU of PCI function @bdf (its physfn: a VF's PF; else itself) and that
 * GPU's UUID (the driver's proc/driver/nvidia/gpus/BDF/information "GPU UUID:"
 * line, as NVML and nvidia-smi name it), into @ids.
 */
static void add_gpu_of(struct vgpu_sysfs *fs, const char *bdf, struct vgpu_strv *ids)
{
	VGPU_AUTOFREE char *info = NULL;
	char pf[64], gpu[VGPU_BDF_LEN];
	struct vgpu_sysdir root;

	vgpu_sysdir_root(fs, &root);
	snprintf(gpu, sizeof(gpu), "%s", bdf);
	if (vgpu_sysfs_link_basename(&root, pf, sizeof(pf), "sys/bus/pci/devices/%s/physfn", bdf) ==
		    0 &&
	    vgpu_bdf_normalize(pf, gpu) == 0)
		add_bdf(ids, gpu, true);
	if (vgpu_sysfs_read_file(&root, 1u << 16, &info, NULL,
				 "proc/driver/nvidia/gpus/%s/information", gpu) < 0)
		return;
	for (const char *p = info; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char u[64];

		if (!strncmp(p, "GPU UUID:", 9) && sscanf(p + 9, " %63s", u) == 1 &&
		    !strncmp(u, "GPU-", 4))
			add_str(ids, u);
	}
}

/*
 * The GPUs behind @ids' PCI functions and mdevs (an mdev's parent from its
 * sys/bus/mdev/devices link), with their UUIDs, added to @ids.
 */
static void gpu_identities(struct vgpu_sysfs *fs, struct vgpu_strv *ids)
{
	VGPU_AUTOSTRV more = { 0 };
	struct vgpu_sysdir root;

	vgpu_sysdir_root(fs, &root);
	for (size_t i = 0; i < ids->n; i++) {
		const char *id = ids->items[i];
		char b[VGPU_BDF_LEN], u[VGPU_UUID_LEN], link[VGPU_PATH_MAX];
		char *slash, *parent;

		if (strlen(id) == 12 && vgpu_bdf_normalize(id, b) == 0 && !strcmp(b, id)) {
			add_gpu_of(fs, b, &more);
			continue;
		}
		if (!vgpu_uuid_normalize(id, u) ||
		    vgpu_sysfs_readlink(&root, link, sizeof(link), "sys/bus/mdev/devices/%s", u) <
			    0)
			continue;
		slash = strrchr(link, '/');
		if (!slash)
			continue;
		*slash = '\0';
		parent = strrchr(link, '/');
		if (vgpu_bdf_normalize(parent ? parent + 1 : link, b) == 0) {
			add_bdf(&more, b, false);
			add_gpu_of(fs, b, &more);
		}
	}
	for (size_t i = 0; i < more.n; i++)
		vgpu_strv_push(ids, vgpu_xstrdup(more.items[i]));
	vgpu_strv_uniq(ids);
}

/* A log's tail, or NULL when it cannot be read (it is then left out). */
static char *log_text(struct vgpu_sysfs *fs, const char *path)
{
	char *text = NULL;
	struct vgpu_sysdir root;

	vgpu_sysdir_root(fs, &root);
	if (vgpu_sysfs_read_tail(&root, LOG_TAIL_MAX, &text, NULL, "%s", path) < 0)
		return NULL;
	return text;
}

/*
 * The domains whose QEMU log started a VM with "-uuid @uuid" or with the
 * mdev @uuid (a UUID that no owner record names), into @domains.
 */
static void domains_of_vm(struct vgpu_sysfs *fs, const char *uuid, struct vgpu_strv *domains)
{
	VGPU_AUTOSTRV logs = { 0 };
	VGPU_AUTOFREE char *needle = vgpu_asprintf("-uuid %s", uuid);
	VGPU_AUTOFREE char *mdev = vgpu_asprintf("/sys/bus/mdev/devices/%s", uuid);
	struct vgpu_sysdir root;

	vgpu_sysdir_root(fs, &root);
	if (vgpu_sysfs_list_dir(&root, &logs, "var/log/libvirt/qemu") < 0)
		return;
	for (size_t i = 0; i < logs.n; i++) {
		size_t l = strlen(logs.items[i]);
		VGPU_AUTOFREE char *name = NULL;
		VGPU_AUTOFREE char *path = NULL;
		VGPU_AUTOFREE char *text = NULL;

		if (l <= 4 || strcmp(logs.items[i] + l - 4, ".log"))
			continue;
		name = vgpu_xstrndup(logs.items[i], l - 4);
		if (vgpu_domain_name_check(name))
			continue;
		path = vgpu_asprintf("var/log/libvirt/qemu/%s", logs.items[i]);
		text = log_text(fs, path);
		if (text && (strcasestr(text, needle) || strcasestr(text, mdev)))
			vgpu_strv_push(domains, vgpu_steal_ptr(&name));
	}
}

static void read_log(struct vgpu_sysfs *fs, const struct vgpu_catalogue *cat,
		     const struct vgpu_strv *ids, const char *path, bool all_lines,
		     const struct vgpu_diag_query *q, struct vgpu_diag *d)
{
	VGPU_AUTOFREE char *text = log_text(fs, path);

	if (!text)
		return;
	vgpu_strv_push(&d->logs, vgpu_xstrdup(path));
	vgpu_diag_lines(cat, ids, d->logs.items[d->logs.n - 1], text, all_lines, q, d);
}

/*
 * The kernel's lines @ids name (empty: every line) the catalogue knows, into
 * @d: dev/kmsg's records, then the syslog files' lines less their copies of
 * those records (or the syslog files alone where dev/kmsg cannot be read).
 */
static void read_kernel(struct vgpu_sysfs *fs, const struct vgpu_catalogue *cat,
			const struct vgpu_strv *ids, const struct vgpu_diag_query *q,
			struct vgpu_diag *d)
{
	VGPU_AUTOFREE char *kmsg = kmsg_text(fs, boot_time(fs, q->now));
	size_t kmsg_from = d->n, kmsg_to;

	if (kmsg) {
		vgpu_strv_push(&d->logs, vgpu_xstrdup(KMSG_LOG));
		vgpu_diag_lines(cat, ids, d->logs.items[d->logs.n - 1], kmsg, false, q, d);
	}
	kmsg_to = d->n;
	for (size_t i = 0; i < sizeof(host_logs) / sizeof(host_logs[0]); i++)
		read_log(fs, cat, ids, host_logs[i], false, q, d);
	if (kmsg)
		drop_kmsg_copies(d, kmsg_from, kmsg_to, d->n);
}

void vgpu_diag_kernel(struct vgpu_sysfs *fs, const struct vgpu_catalogue *cat,
		      const struct vgpu_diag_query *q, struct vgpu_diag *out)
{
	static const struct vgpu_strv every = { 0 };

	memset(out, 0, sizeof(*out));
	read_kernel(fs, cat, &every, q, out);
}

int vgpu_diagnose(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_records *recs,
		  const struct vgpu_catalogue *cat, const struct vgpu_diag_query *q,
		  struct vgpu_diag *out)
{
	struct vgpu_diag d = { 0 };
	VGPU_AUTOSTRV domains = { 0 };
	VGPU_AUTOSTRV qemu_paths = { 0 };
	VGPU_AUTOSTRV qemu_texts = { 0 };
	char uuid[VGPU_UUID_LEN] = "", bdf[VGPU_BDF_LEN] = "";
	bool found = false;

	if (q->target) {
		const char *t = q->target;
		bool is_uuid = vgpu_uuid_normalize(t, uuid);
		bool is_bdf = !is_uuid && vgpu_bdf_normalize(t, bdf) == 0;

		if (!is_uuid && !is_bdf && vgpu_domain_name_check(t))
			return vgpu_error(ctx, -EINVAL,
					  "'%s' is no domain name, UUID or PCI address: %s", t,
					  vgpu_domain_name_check(t));
		for (size_t i = 0; i < recs->n; i++) {
			const struct vgpu_record *r = &recs->v[i];

			if (is_uuid ? strcasecmp(r->mdev_uuid, uuid) &&
					      strcasecmp(r->domain_uuid, uuid) :
			    is_bdf ? strcmp(r->parent, bdf) && strcmp(r->gpu, bdf) :
				     strcmp(r->domain, t))
				continue;
			found = true;
			add_str(&d.identities, r->domain);
			add_str(&d.identities, r->domain_uuid);
			add_str(&d.identities, r->mdev_uuid);
			add_bdf(&d.identities, r->parent, !strcmp(r->parent, r->gpu));
			add_bdf(&d.identities, r->gpu, true);
			add_str(&domains, r->domain);
		}
		if (!found) {
			if (is_uuid) {
				add_str(&d.identities, uuid);
				domains_of_vm(fs, uuid, &domains);
				for (size_t i = 0; i < domains.n; i++)
					add_str(&d.identities, domains.items[i]);
			} else if (is_bdf) {
				add_bdf(&d.identities, bdf, true);
			} else {
				add_str(&d.identities, t);
				add_str(&domains, t);
			}
		}
		vgpu_strv_uniq(&domains);
	}
	/*
	 * The domains' QEMU logs are read first: they name the domain's devices
	 * (a domain of another manager has no records).  Their lines are matched
	 * last, all of them the domain's, so a line of the kernel's and one of
	 * QEMU's in the same second keep that order (the kernel refused, QEMU said).
	 */
	for (size_t i = 0; i < domains.n; i++) {
		VGPU_AUTOFREE char *path = NULL;
		char *text;

		if (vgpu_domain_name_check(domains.items[i]))
			continue; /* no '/' may make it another path */
		path = vgpu_asprintf("var/log/libvirt/qemu/%s.log", domains.items[i]);
		text = log_text(fs, path);
		if (!text)
			continue;
		qemu_log_ids(text, &d.identities);
		vgpu_strv_push(&qemu_paths, vgpu_steal_ptr(&path));
		vgpu_strv_push(&qemu_texts, text);
	}
	vgpu_strv_uniq(&d.identities);
	gpu_identities(fs, &d.identities);
	read_kernel(fs, cat, &d.identities, q, &d);
	if (q->journalctl)
		read_journal(ctx, cat, q, &d);
	for (size_t i = 0; i < qemu_paths.n; i++) {
		vgpu_strv_push(&d.logs, vgpu_xstrdup(qemu_paths.items[i]));
		vgpu_diag_lines(cat, &d.identities, d.logs.items[d.logs.n - 1], qemu_texts.items[i],
				true, q, &d);
	}
	vgpu_diag_finish(&d);
	*out = d;
	return 0;
}
