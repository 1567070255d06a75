// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-sysfs - root-aware file access (src/lib/sysfs.c) on trees built in a
 * mkdtemp() directory:
 *
 *   BASE/secret        "outside": a file next to the root, never to be read
 *   BASE/root/...      the root the tests open (the jail)
 *
 * The root is a jail (RESOLVE_IN_ROOT: "..", absolute and relative links
 * stay inside); a directory below it is opened with RESOLVE_BENEATH and
 * refuses to be left (VGPU_EESCAPE).  Anything but a regular file is
 * refused without blocking; reads are bounded and range-checked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sysfs-lock.h"
#include "sysfs-state.h"
#include "sysfs.h"
#include "test-util.h"

struct fixture {
	char base[512];
	char root[600];
	char mnt[600]; /* a tmpfs mounted by the test, "" if none */
	struct vgpu_ctx ctx;
	struct vgpu_sysfs *fs;
	struct vgpu_sysdir top; /* the root as a directory */
	char buf[4096];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int r;

	if (!f)
		return -1;
	*state = f;
	vgpu_ctx_init(&f->ctx, NULL, NULL);
	tree_make(f->base, sizeof(f->base), "sysfs");
	snprintf(f->root, sizeof(f->root), "%s/root", f->base);
	tree_mkdirs(f->root);
	tree_put(f->base, "secret", "outside\n");
	r = vgpu_sysfs_open(&f->ctx, f->root, &f->fs);
	if (r < 0)
		fail_msg("vgpu_sysfs_open('%s') = %d: %s", f->root, r, vgpu_ctx_error(&f->ctx));
	vgpu_sysdir_root(f->fs, &f->top);
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	vgpu_sysfs_free(f->fs);
	vgpu_ctx_clear(&f->ctx);
	if (f->mnt[0])
		umount2(f->mnt, MNT_DETACH);
	tree_remove(f->base);
	free(f);
	return 0;
}

/* @d/@rel as a string; the read must succeed. */
static const char *read_ok(struct fixture *f, const struct vgpu_sysdir *d, const char *rel)
{
	int r = vgpu_sysfs_read_str(d, f->buf, sizeof(f->buf), "%s", rel);

	if (r != 0)
		fail_msg("reading '%s' below '%s' = %d (%s), expected 0", rel, d->path, r,
			 vgpu_strerror(r));
	return f->buf;
}

/* Reading @d/@rel fails with @want. */
static void read_fails(struct fixture *f, const struct vgpu_sysdir *d, const char *rel, int want)
{
	int r = vgpu_sysfs_read_str(d, f->buf, sizeof(f->buf), "%s", rel);

	if (r != want)
		fail_msg("reading '%s' below '%s' = %d (%s), expected %d (%s)", rel, d->path, r,
			 r ? vgpu_strerror(r) : f->buf, want, vgpu_strerror(want));
}

/* The text of BASE/@rel (a file the test wrote or the library should have). */
static const char *host_file(struct fixture *f, const char *rel)
{
	char path[PATH_MAX * 2];
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", f->base, rel);
	fp = fopen(path, "r");
	if (!fp)
		fail_msg("cannot open '%s': %s", path, strerror(errno));
	n = fread(f->buf, 1, sizeof(f->buf) - 1, fp);
	fclose(fp);
	f->buf[n] = '\0';
	return f->buf;
}

static bool host_exists(struct fixture *f, const char *rel)
{
	char path[PATH_MAX * 2];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", f->base, rel);
	return lstat(path, &st) == 0;
}

/* A character device like /dev/zero at root/@rel; false where one cannot be made or opened. */
static bool make_zero_device(struct fixture *f, const char *rel)
{
	char path[PATH_MAX * 2];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", f->root, rel);
	if (mknod(path, S_IFCHR | 0644, makedev(1, 5)) < 0)
		return false;
	/* a nodev mount refuses to open it: then the test cannot say anything */
	fd = open(path, O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		unlink(path);
		return false;
	}
	close(fd);
	return true;
}

/* ---- the root is a jail ---------------------------------------------------------- */

static void test_root_jail(void **state)
{
	struct fixture *f = *state;
	char target[PATH_MAX * 2];
	VGPU_AUTOSYSDIR d = { .fd = -1 };

	tree_put(f->root, "secret", "inside\n");
	tree_put(f->root, "sys/a", "a\n");
	/* ".." at the root stays at the root */
	assert_string_equal(read_ok(f, &f->top, "../secret"), "inside");
	assert_string_equal(read_ok(f, &f->top, "sys/../../../secret"), "inside");
	/* relative links climbing out land inside */
	tree_link(f->root, "rel-out", "../secret");
	assert_string_equal(read_ok(f, &f->top, "rel-out"), "inside");
	tree_link(f->root, "sys/deep-out", "../../../../../secret");
	assert_string_equal(read_ok(f, &f->top, "sys/deep-out"), "inside");
	/* absolute links resolve below the root */
	tree_link(f->root, "abs-in", "/sys/a");
	assert_string_equal(read_ok(f, &f->top, "abs-in"), "a");
	tree_link(f->root, "sys-link", "/sys");
	assert_int_equal(vgpu_sysdir_open(f->fs, &d, "sys-link"), 0);
	assert_string_equal(read_ok(f, &d, "a"), "a");
	/* a link to the real BASE/secret names ROOT/BASE/secret: nothing there */
	snprintf(target, sizeof(target), "%s/secret", f->base);
	tree_link(f->root, "abs-out", target);
	read_fails(f, &f->top, "abs-out", -VGPU_EDANGLING);
	/* paths are relative: an absolute one is refused before any lookup */
	read_fails(f, &f->top, "/secret", -VGPU_EESCAPE);
	assert_int_equal(vgpu_sysdir_open(f->fs, &d, "/sys"), -VGPU_EESCAPE);
}

/* Below an opened directory nothing leaves it: "..", links up, absolute links. */
static void test_sysdir_beneath(void **state)
{
	struct fixture *f = *state;
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOSYSDIR sub = { .fd = -1 };
	VGPU_AUTOSTRV v = { 0 };
	char show[VGPU_SHOW_LEN], want[VGPU_SHOW_LEN];
	struct stat st;
	long n;

	tree_put(f->root, "sys/dev/attr", "1\n");
	tree_put(f->root, "sys/other", "0\n");
	tree_link(f->root, "sys/dev/up", "../other");
	tree_link(f->root, "sys/dev/abs", "/sys/other");
	tree_link(f->root, "sys/dev/inner", "attr");
	tree_link(f->root, "sys/dev/sub/back", "../attr");
	assert_int_equal(vgpu_sysdir_open(f->fs, &d, "sys/%s", "dev"), 0);
	assert_string_equal(d.path, "sys/dev");
	snprintf(want, sizeof(want), "%s/sys/dev/attr", f->root);
	assert_string_equal(vgpu_sysdir_show(&d, "attr", show, sizeof(show)), want);

	/* inside is fine, through links too */
	assert_string_equal(read_ok(f, &d, "attr"), "1");
	assert_string_equal(read_ok(f, &d, "inner"), "1");
	assert_string_equal(read_ok(f, &d, "sub/back"), "1");
	assert_int_equal(vgpu_sysdir_open_at(&d, &sub, "sub"), 0);
	assert_string_equal(sub.path, "sys/dev/sub");
	/* beneath the directory opened: sub/back stays in dev, not in sub */
	read_fails(f, &sub, "back", -VGPU_EESCAPE);

	/* every way out is VGPU_EESCAPE, for every kind of access */
	read_fails(f, &d, "../other", -VGPU_EESCAPE);
	read_fails(f, &d, "sub/../../other", -VGPU_EESCAPE);
	read_fails(f, &d, "up", -VGPU_EESCAPE);
	read_fails(f, &d, "abs", -VGPU_EESCAPE);
	read_fails(f, &d, "/sys/other", -VGPU_EESCAPE);
	read_fails(f, &sub, "../up", -VGPU_EESCAPE);
	assert_int_equal(vgpu_sysfs_read_long(&d, &n, 0, 1, "up"), -VGPU_EESCAPE);
	assert_int_equal(vgpu_sysfs_stat(&d, &st, "up"), -VGPU_EESCAPE);
	assert_int_equal(vgpu_sysfs_list_dir(&d, &v, ".."), -VGPU_EESCAPE);
	assert_int_equal(vgpu_sysdir_open_at(&sub, &sub, ".."), -VGPU_EESCAPE);
	assert_int_equal(vgpu_sysfs_write(&d, "1", "up"), -VGPU_EESCAPE);
	assert_string_equal(host_file(f, "root/sys/other"), "0\n");
	/* the link itself is beneath: lstat and readlink may look at it */
	assert_int_equal(vgpu_sysfs_lstat(&d, &st, "up"), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(vgpu_sysfs_readlink(&d, f->buf, sizeof(f->buf), "up"), 0);
	assert_string_equal(f->buf, "../other");
	/* single names are looked up in the directory itself: ".." is no way out either */
	assert_int_equal(vgpu_sysfs_stat(&d, &st, ".."), -VGPU_EESCAPE);
	assert_int_equal(vgpu_sysfs_lstat(&d, &st, ".."), -VGPU_EESCAPE);
	assert_int_equal(vgpu_sysfs_readlink(&d, f->buf, sizeof(f->buf), ".."), -VGPU_EESCAPE);
	assert_int_equal(vgpu_sysfs_stat(&d, &st, "."), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* a link inside is followed by stat, not by lstat */
	assert_int_equal(vgpu_sysfs_stat(&d, &st, "inner"), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(vgpu_sysfs_lstat(&d, &st, "inner"), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(vgpu_sysfs_lstat(&d, &st, "attr"), 0);
	assert_true(S_ISREG(st.st_mode));
	tree_link(f->root, "sys/dev/subdir", "sub");
	assert_int_equal(vgpu_sysfs_stat(&d, &st, "subdir"), 0);
	assert_true(S_ISDIR(st.st_mode));
}

/* ---- anything but a regular file is refused, without blocking ----------------------- */

static void assert_all_readers(struct fixture *f, const char *rel, int want)
{
	struct vgpu_cpuset cpus;
	unsigned long h;
	char *text = NULL;
	long n;

	read_fails(f, &f->top, rel, want);
	assert_int_equal(vgpu_sysfs_read_long(&f->top, &n, 0, 10, "%s", rel), want);
	assert_int_equal(vgpu_sysfs_read_hex(&f->top, &h, 0xffff, "%s", rel), want);
	assert_int_equal(vgpu_sysfs_read_cpulist(&f->top, &cpus, "%s", rel), want);
	assert_int_equal(vgpu_sysfs_read_cpumask(&f->top, &cpus, "%s", rel), want);
	assert_int_equal(vgpu_sysfs_read_file(&f->top, 1 << 16, &text, NULL, "%s", rel), want);
	assert_null(text);
}

static void test_not_regular(void **state)
{
	struct fixture *f = *state;

	/* a FIFO with no writer: an open without O_NONBLOCK would hang here */
	tree_fifo(f->root, "fifo");
	assert_all_readers(f, "fifo", -VGPU_ENOTREG);
	tree_link(f->root, "fifo-link", "/fifo");
	assert_all_readers(f, "fifo-link", -VGPU_ENOTREG);
	/* a directory is named as one (the damaged-host goldens say "Is a directory") */
	tree_dir(f->root, "dir");
	assert_all_readers(f, "dir", -EISDIR);
	/* a device: /dev/zero would stream forever if it were read */
	if (make_zero_device(f, "zero"))
		assert_all_readers(f, "zero", -VGPU_ENOTREG);
	else
		print_message("no character device can be made here: that case is skipped\n");
}

/*
 * A tmpfs mounted nodev at @f->mnt (a new directory) in a mount namespace
 * of this process's own; false where that cannot be done (not root).
 */
static bool mount_nodev_tmpfs(struct fixture *f)
{
	snprintf(f->mnt, sizeof(f->mnt), "%s/nodev", f->base);
	tree_mkdirs(f->mnt);
	if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", f->mnt, "tmpfs", MS_NODEV, "size=16m,mode=755") < 0) {
		f->mnt[0] = '\0';
		return false;
	}
	return true;
}

/*
 * On a mount that can hold no device (nodev, as sysfs and proc are), reads
 * stay on that mount and skip the fstat() of each file: what is not a
 * regular file is still refused, by the read itself, and nothing is read
 * from a FIFO.  A path into another mount gets the fstat() again.
 */
static void test_nodev(void **state)
{
	struct fixture *f = *state;
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOSYSDIR bound = { .fd = -1 };
	struct vgpu_sysfs *fs = NULL;
	struct vgpu_sysdir top;
	char path[PATH_MAX * 2], root[PATH_MAX], buf[64], *text = NULL, *big;
	bool zero;
	size_t len;
	long n;
	int rw;

	if (!mount_nodev_tmpfs(f)) {
		print_message("no nodev tmpfs can be mounted here (not root): test skipped\n");
		return;
	}
	snprintf(root, sizeof(root), "%s/root", f->mnt);
	tree_mkdirs(root);
	tree_put(root, "dev/attr", "1\n");
	tree_put(f->mnt, "outside", "0\n");
	tree_link(root, "dev/up", "../../outside");
	tree_link(root, "dev/gone", "nowhere");
	tree_dir(root, "dev/dir");
	tree_fifo(root, "dev/fifo");
	assert_int_equal(vgpu_sysfs_open(&f->ctx, root, &fs), 0);
	vgpu_sysdir_root(fs, &top);
	assert_true(top.nodev);
	assert_int_equal(vgpu_sysdir_open(fs, &d, "dev"), 0);
	assert_true(d.nodev);

	/* regular files read as anywhere else */
	assert_int_equal(vgpu_sysfs_read_long(&d, &n, 0, 10, "attr"), 0);
	assert_int_equal(n, 1);
	assert_int_equal(vgpu_sysfs_read_str(&top, buf, sizeof(buf), "dev/attr"), 0);
	assert_string_equal(buf, "1");
	big = malloc(10000);
	assert_non_null(big);
	memset(big, 'x', 10000);
	tree_put_len(root, "dev/big", big, 10000);
	assert_int_equal(vgpu_sysfs_read_file(&d, 1 << 20, &text, &len, "big"), 0);
	assert_int_equal(len, 10000);
	assert_memory_equal(text, big, 10000);
	free(text);
	text = NULL;
	assert_int_equal(vgpu_sysfs_read_file(&d, 9999, &text, &len, "big"), -EFBIG);
	tree_put_len(root, "dev/full", big, sizeof(buf) - 1); /* exactly fills the buffer */
	assert_int_equal(vgpu_sysfs_read_str(&d, buf, sizeof(buf), "full"), 0);
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
	tree_put_len(root, "dev/full", big, sizeof(buf));
	assert_int_equal(vgpu_sysfs_read_str(&d, buf, sizeof(buf), "full"), -EFBIG);
	free(big);
	tree_put(root, "dev/empty", "");
	assert_int_equal(vgpu_sysfs_read_str(&d, buf, sizeof(buf), "empty"), 0);
	assert_string_equal(buf, "");

	/* the jail and missing files are as before */
	assert_int_equal(vgpu_sysfs_read_long(&d, &n, 0, 10, "up"), -VGPU_EESCAPE);
	assert_int_equal(vgpu_sysfs_read_long(&d, &n, 0, 10, "../../outside"), -VGPU_EESCAPE);
	assert_int_equal(vgpu_sysfs_read_long(&d, &n, 0, 10, "gone"), -VGPU_EDANGLING);
	assert_int_equal(vgpu_sysfs_read_long(&d, &n, 0, 10, "absent"), -ENOENT);

	/* a directory and a FIFO are refused by every reader */
	{
		struct fixture g = *f;

		g.fs = fs;
		g.top = d;
		assert_all_readers(&g, "dir", -EISDIR);
		assert_all_readers(&g, "fifo", -VGPU_ENOTREG);
	}
	/* a FIFO that holds data: refused, and its data left where it is */
	snprintf(path, sizeof(path), "%s/dev/fifo", root);
	rw = open(path, O_RDWR | O_NONBLOCK);
	assert_true(rw >= 0);
	assert_int_equal(write(rw, "7\n", 2), 2);
	assert_int_equal(vgpu_sysfs_read_long(&d, &n, 0, 10, "fifo"), -VGPU_ENOTREG);
	assert_int_equal(vgpu_sysfs_read_file(&d, 100, &text, NULL, "fifo"), -VGPU_ENOTREG);
	assert_null(text);
	assert_int_equal(read(rw, buf, sizeof(buf)), 2);
	close(rw);
	/* a device does not even open on a nodev mount */
	snprintf(path, sizeof(path), "%s/dev/zero", root);
	if (mknod(path, S_IFCHR | 0644, makedev(1, 5)) == 0)
		assert_int_equal(vgpu_sysfs_read_long(&d, &n, 0, 10, "zero"), -EACCES);

	/*
	 * Another mount inside the tree, one that can hold devices: crossing
	 * into it costs the fstat() again, and a device there is refused.
	 */
	zero = make_zero_device(f, "zero");
	tree_dir(root, "dev/bound");
	snprintf(path, sizeof(path), "%s/dev/bound", root);
	if (zero && mount(f->root, path, NULL, MS_BIND, NULL) == 0) {
		assert_int_equal(vgpu_sysfs_read_long(&d, &n, 0, 10, "bound/zero"), -VGPU_ENOTREG);
		assert_int_equal(vgpu_sysdir_open_at(&d, &bound, "bound"), 0);
		assert_false(bound.nodev);
		assert_int_equal(vgpu_sysfs_read_long(&bound, &n, 0, 10, "zero"), -VGPU_ENOTREG);
		tree_put(f->root, "two", "2\n");
		assert_int_equal(vgpu_sysfs_read_long(&d, &n, 0, 10, "bound/two"), 0);
		assert_int_equal(n, 2);
		vgpu_sysdir_close(&bound);
		umount2(path, MNT_DETACH);
	} else {
		print_message("no device-capable mount to bind here: that case is skipped\n");
	}
	vgpu_sysdir_close(&d);
	vgpu_sysfs_free(fs);
}

/* ---- numbers ------------------------------------------------------------------------- */

static void test_read_long(void **state)
{
	static const struct {
		const char *text;
		long min, max;
		int want;
		long value;
	} cases[] = {
		{ "42\n", 0, 100, 0, 42 },
		{ "  -5 \n", -10, 10, 0, -5 },
		{ "100\n", 0, 100, 0, 100 },
		{ "0\n", 0, 100, 0, 0 },
		{ "101\n", 0, 100, -VGPU_ERANGE_VALUE, 0 },
		{ "-1\n", 0, 100, -VGPU_ERANGE_VALUE, 0 },
		{ "-11", -10, 10, -VGPU_ERANGE_VALUE, 0 },
		/* does not fit a long */
		{ "9223372036854775808\n", LONG_MIN, LONG_MAX, -VGPU_ERANGE_VALUE, 0 },
		{ "-9223372036854775809\n", LONG_MIN, LONG_MAX, -VGPU_ERANGE_VALUE, 0 },
		{ "9223372036854775807\n", LONG_MIN, LONG_MAX, 0, LONG_MAX },
		/* longer than the 64-byte buffer: no attribute's number */
		{ "1111111111111111111111111111111111111111111111111111111111111111111111\n", 0,
		  LONG_MAX, -VGPU_ERANGE_VALUE, 0 },
		{ "12abc\n", 0, 100, -EINVAL, 0 },
		{ "0x10\n", 0, 100, -EINVAL, 0 },
		{ "1 2\n", 0, 100, -EINVAL, 0 },
		{ "\n", 0, 100, -EINVAL, 0 },
		{ "", 0, 100, -EINVAL, 0 },
	};
	struct fixture *f = *state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		long v = -12345;
		int r;

		tree_put(f->root, "n", cases[i].text);
		r = vgpu_sysfs_read_long(&f->top, &v, cases[i].min, cases[i].max, "n");
		if (r != cases[i].want)
			fail_msg("'%s' in [%ld, %ld]: %d, expected %d", cases[i].text, cases[i].min,
				 cases[i].max, r, cases[i].want);
		/* out-parameters are written only on success */
		if (v != (r == 0 ? cases[i].value : -12345))
			fail_msg("'%s': value %ld", cases[i].text, v);
	}
}

static void test_read_hex(void **state)
{
	static const struct {
		const char *text;
		unsigned long max;
		int want;
		unsigned long value;
	} cases[] = {
		{ "0x10de\n", 0xffff, 0, 0x10de },
		{ "10DE\n", 0xffff, 0, 0x10de },
		{ "0xffff\n", 0xffff, 0, 0xffff },
		{ "0x030200\n", 0xffffff, 0, 0x030200 },
		{ "0x10000\n", 0xffff, -VGPU_ERANGE_VALUE, 0 },
		{ "0x1ffffffffffffffff\n", ULONG_MAX, -VGPU_ERANGE_VALUE, 0 },
		{ "0x00000000000000000000000000000000000000000000000000000000000000001\n",
		  ULONG_MAX, -VGPU_ERANGE_VALUE, 0 },
		{ "0x0x1\n", 0xffff, -EINVAL, 0 },
		{ "0x\n", 0xffff, -EINVAL, 0 },
		{ "-1\n", 0xffff, -EINVAL, 0 },
		{ "10g\n", 0xffff, -EINVAL, 0 },
		{ "\n", 0xffff, -EINVAL, 0 },
	};
	struct fixture *f = *state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned long v = 777;
		int r;

		tree_put(f->root, "h", cases[i].text);
		r = vgpu_sysfs_read_hex(&f->top, &v, cases[i].max, "h");
		if (r != cases[i].want)
			fail_msg("'%s' up to %#lx: %d, expected %d", cases[i].text, cases[i].max, r,
				 cases[i].want);
		if (v != (r == 0 ? cases[i].value : 777))
			fail_msg("'%s': value %#lx", cases[i].text, v);
	}
}

/* ---- strings: bounded, trailing newlines stripped ------------------------------------- */

static void test_read_str(void **state)
{
	static const struct {
		const char *text;
		size_t len; /* bytes of text, NULs included */
		int want;
		const char *value;
	} cases[] = {
		{ "1234567", 7, 0, "1234567" }, /* fills the 8-byte buffer */
		{ "12345678", 8, -EFBIG, NULL },
		{ "123456789abcdef", 15, -EFBIG, NULL },
		{ "123456\n", 7, 0, "123456" },
		{ "abc\n\n", 5, 0, "abc" },
		{ "abc\r\n", 5, 0, "abc" },
		{ " a c \n", 6, 0, " a c " }, /* only line ends go */
		{ "abc\0\n", 5, 0, "abc" }, /* NUL padding of some machine dumps */
		{ "a\0b\n", 4, -EINVAL, NULL }, /* a NUL inside: garbage */
		{ "\n", 1, 0, "" },
		{ "", 0, 0, "" },
	};
	struct fixture *f = *state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char buf[8];
		int r;

		tree_put_len(f->root, "s", cases[i].text, cases[i].len);
		r = vgpu_sysfs_read_str(&f->top, buf, sizeof(buf), "s");
		if (r != cases[i].want)
			fail_msg("case %zu: %d, expected %d", i, r, cases[i].want);
		if (r == 0)
			assert_string_equal(buf, cases[i].value);
	}
}

/* vgpu_sysfs_read_tail: a log's last @cap bytes, a smaller file whole. */
static void test_read_tail(void **state)
{
	struct fixture *f = *state;
	char big[10000], *text = NULL;
	size_t len = 0;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	tree_put_len(f->root, "log", big, sizeof(big));
	assert_int_equal(vgpu_sysfs_read_tail(&f->top, 100, &text, &len, "log"), 0);
	assert_int_equal(len, 100);
	assert_memory_equal(text, big + 9900, 100);
	assert_int_equal(text[100], '\0');
	free(text);
	text = NULL;
	assert_int_equal(vgpu_sysfs_read_tail(&f->top, 1 << 20, &text, &len, "log"), 0);
	assert_int_equal(len, sizeof(big));
	assert_memory_equal(text, big, sizeof(big));
	free(text);
	text = NULL;
	tree_put(f->root, "empty", "");
	assert_int_equal(vgpu_sysfs_read_tail(&f->top, 100, &text, &len, "empty"), 0);
	assert_int_equal(len, 0);
	free(text);
}

/* vgpu_sysfs_read_file: up to the cap, bigger files refused, growth across reads. */
static void test_read_file(void **state)
{
	struct fixture *f = *state;
	char *big = malloc(10000), *text = NULL;
	size_t len = 0;

	assert_non_null(big);
	for (size_t i = 0; i < 10000; i++)
		big[i] = (char)('a' + i % 26);
	tree_put_len(f->root, "ten", big, 10);
	assert_int_equal(vgpu_sysfs_read_file(&f->top, 10, &text, &len, "ten"), 0);
	assert_int_equal(len, 10);
	assert_string_equal(text, "abcdefghij");
	free(text);
	text = NULL;
	assert_int_equal(vgpu_sysfs_read_file(&f->top, 9, &text, &len, "ten"), -EFBIG);
	assert_null(text);
	/* several reads and buffer growth; the length may be left out */
	tree_put_len(f->root, "big", big, 10000);
	assert_int_equal(vgpu_sysfs_read_file(&f->top, 1 << 20, &text, NULL, "big"), 0);
	assert_int_equal(strlen(text), 10000);
	assert_memory_equal(text, big, 10000);
	free(text);
	text = NULL;
	assert_int_equal(vgpu_sysfs_read_file(&f->top, 8192, &text, &len, "big"), -EFBIG);
	assert_null(text);
	tree_put_len(f->root, "big", big, 8192);
	assert_int_equal(vgpu_sysfs_read_file(&f->top, 8192, &text, &len, "big"), 0);
	assert_int_equal(len, 8192);
	free(text);
	text = NULL;
	/* exactly the cap when the cap fills the first buffer (4096 bytes, NUL included) */
	tree_put_len(f->root, "big", big, 4095);
	assert_int_equal(vgpu_sysfs_read_file(&f->top, 4095, &text, &len, "big"), 0);
	assert_int_equal(len, 4095);
	free(text);
	text = NULL;
	tree_put_len(f->root, "big", big, 4096);
	assert_int_equal(vgpu_sysfs_read_file(&f->top, 4095, &text, &len, "big"), -EFBIG);
	assert_null(text);
	/* empty */
	tree_put(f->root, "empty", "");
	assert_int_equal(vgpu_sysfs_read_file(&f->top, 0, &text, &len, "empty"), 0);
	assert_int_equal(len, 0);
	assert_string_equal(text, "");
	free(text);
	free(big);
}

/* ---- CPU lists and masks --------------------------------------------------------------- */

static void test_cpus(void **state)
{
	static const struct {
		bool mask;
		const char *text;
		int want;
		const char *cpus;
	} cases[] = {
		{ false, "0-3,8\n", 0, "0-3,8" },
		{ false, "0-7:2\n", 0, "0,2,4,6" },
		{ false, "\n", 0, "" },
		{ false, "3-1\n", -EINVAL, NULL },
		{ false, "0-x\n", -EINVAL, NULL },
		{ false, "0;1\n", -EINVAL, NULL },
		{ false, "8192\n", -VGPU_ERANGE_VALUE, NULL },
		{ false, "0-8192\n", -VGPU_ERANGE_VALUE, NULL },
		{ false, "8191\n", 0, "8191" },
		{ true, "ff,00000000\n", 0, "32-39" },
		{ true, "00000001,00000003\n", 0, "0-1,32" },
		{ true, "0\n", 0, "" },
		{ true, "1,0\n", -EINVAL, NULL }, /* 32-bit words between commas */
		{ true, ",00000001\n", -EINVAL, NULL },
		{ true, "\n", -EINVAL, NULL },
		{ true, "xyz\n", -EINVAL, NULL },
	};
	struct fixture *f = *state;
	struct vgpu_cpuset s, sentinel;
	char *text;

	vgpu_cpuset_zero(&sentinel);
	vgpu_cpuset_set(&sentinel, 5);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int r;

		s = sentinel;
		tree_put(f->root, "c", cases[i].text);
		r = cases[i].mask ? vgpu_sysfs_read_cpumask(&f->top, &s, "c") :
				    vgpu_sysfs_read_cpulist(&f->top, &s, "c");
		if (r != cases[i].want)
			fail_msg("%s '%s': %d, expected %d", cases[i].mask ? "mask" : "list",
				 cases[i].text, r, cases[i].want);
		assert_cpus(&s, r == 0 ? cases[i].cpus : "5");
	}

	/* a mask bit past VGPU_MAX_CPUS: "1" and 2048 zero digits is CPU 8192 */
	text = malloc(2051);
	assert_non_null(text);
	text[0] = '1';
	memset(text + 1, '0', 2048);
	strcpy(text + 2049, "\n");
	tree_put(f->root, "c", text);
	s = sentinel;
	assert_int_equal(vgpu_sysfs_read_cpumask(&f->top, &s, "c"), -VGPU_ERANGE_VALUE);
	text[0] = '8'; /* CPU 8191 is the last one there is */
	memmove(text + 1, text + 2, 2049);
	tree_put(f->root, "c", text);
	assert_int_equal(vgpu_sysfs_read_cpumask(&f->top, &s, "c"), 0);
	assert_cpus(&s, "8191");
	free(text);

	/* no list of VGPU_MAX_CPUS CPUs is this long: damage, not a truncated list */
	text = malloc(40001);
	assert_non_null(text);
	for (size_t i = 0; i < 40000; i += 2)
		memcpy(text + i, "0,", 2);
	text[40000] = '\0';
	tree_put(f->root, "c", text);
	s = sentinel;
	assert_int_equal(vgpu_sysfs_read_cpulist(&f->top, &s, "c"), -EFBIG);
	assert_cpus(&s, "5");
	free(text);
}

/* ---- links ------------------------------------------------------------------------------ */

/* A link to nothing is VGPU_EDANGLING, not -ENOENT: optional files may be absent, links not. */
static void test_dangling(void **state)
{
	struct fixture *f = *state;
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOSTRV v = { 0 };
	struct stat st;
	char *text = NULL;

	tree_link(f->root, "gone", "nowhere");
	tree_link(f->root, "gone-abs", "/no/where");
	read_fails(f, &f->top, "gone", -VGPU_EDANGLING);
	read_fails(f, &f->top, "gone-abs", -VGPU_EDANGLING);
	assert_int_equal(vgpu_sysfs_read_file(&f->top, 100, &text, NULL, "gone"), -VGPU_EDANGLING);
	assert_int_equal(vgpu_sysfs_stat(&f->top, &st, "gone"), -VGPU_EDANGLING);
	assert_int_equal(vgpu_sysdir_open(f->fs, &d, "gone"), -VGPU_EDANGLING);
	assert_int_equal(vgpu_sysfs_list_dir(&f->top, &v, "gone"), -VGPU_EDANGLING);
	assert_int_equal(vgpu_sysfs_write(&f->top, "x", "gone"), -VGPU_EDANGLING);
	assert_false(host_exists(f, "root/nowhere")); /* no file made at the target */
	/* the link itself is there */
	assert_int_equal(vgpu_sysfs_lstat(&f->top, &st, "gone"), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(vgpu_sysfs_readlink(&f->top, f->buf, sizeof(f->buf), "gone"), 0);
	assert_string_equal(f->buf, "nowhere");

	/* absent is -ENOENT, also below a dangling directory link */
	read_fails(f, &f->top, "absent", -ENOENT);
	assert_int_equal(vgpu_sysfs_lstat(&f->top, &st, "absent"), -ENOENT);
	assert_int_equal(vgpu_sysfs_stat(&f->top, &st, "absent"), -ENOENT);
	read_fails(f, &f->top, "gone/x", -ENOENT);
	/* a loop is neither */
	tree_link(f->root, "loop", "loop");
	read_fails(f, &f->top, "loop", -ELOOP);
}

static void test_readlink(void **state)
{
	struct fixture *f = *state;
	char name[7], small[5];

	tree_link(f->root, "driver", "../../bus/pci/drivers/nvidia");
	assert_int_equal(vgpu_sysfs_readlink(&f->top, f->buf, sizeof(f->buf), "driver"), 0);
	assert_string_equal(f->buf, "../../bus/pci/drivers/nvidia");
	assert_int_equal(vgpu_sysfs_link_basename(&f->top, name, sizeof(name), "driver"), 0);
	assert_string_equal(name, "nvidia");
	/* a buffer too small is an error, never a cut name */
	assert_int_equal(vgpu_sysfs_link_basename(&f->top, name, 6, "driver"), -ENAMETOOLONG);
	assert_int_equal(vgpu_sysfs_readlink(&f->top, small, sizeof(small), "driver"),
			 -ENAMETOOLONG);
	/* not a link */
	tree_put(f->root, "file", "x\n");
	assert_int_equal(vgpu_sysfs_readlink(&f->top, f->buf, sizeof(f->buf), "file"), -EINVAL);
	/* a target ending in '/' has no last component */
	tree_link(f->root, "slash", "devices/");
	assert_int_equal(vgpu_sysfs_link_basename(&f->top, small, sizeof(small), "slash"), -EINVAL);
	/* a target without '/' is its own basename */
	tree_link(f->root, "bare", "42");
	assert_int_equal(vgpu_sysfs_link_basename(&f->top, small, sizeof(small), "bare"), 0);
	assert_string_equal(small, "42");
	assert_int_equal(vgpu_sysfs_readlink(&f->top, f->buf, sizeof(f->buf), "absent"), -ENOENT);
}

/* ---- directories ---------------------------------------------------------------------- */

static void test_list_dir(void **state)
{
	static const char *const want[] = { ".hidden", "a.b", "virtfn1", "virtfn2", "virtfn10" };
	struct fixture *f = *state;
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOSTRV v = { 0 };

	for (size_t i = ARRAY_SIZE(want); i-- > 0;) {
		char rel[64];

		snprintf(rel, sizeof(rel), "pf/%s", want[i]);
		tree_put(f->root, rel, "");
	}
	vgpu_strv_push(&v, strdup("stale"));
	assert_int_equal(vgpu_sysfs_list_dir(&f->top, &v, "pf"), 0);
	assert_int_equal(v.n, ARRAY_SIZE(want));
	for (size_t i = 0; i < v.n; i++)
		assert_string_equal(v.items[i], want[i]);
	/* "" lists the directory itself */
	assert_int_equal(vgpu_sysdir_open(f->fs, &d, "pf"), 0);
	assert_int_equal(vgpu_sysfs_list_dir(&d, &v, "%s", ""), 0);
	assert_int_equal(v.n, ARRAY_SIZE(want));
	assert_string_equal(v.items[4], "virtfn10");
	/* failures leave the list as it was */
	assert_int_equal(vgpu_sysfs_list_dir(&f->top, &v, "absent"), -ENOENT);
	assert_int_equal(vgpu_sysfs_list_dir(&f->top, &v, "pf/a.b"), -ENOTDIR);
	assert_int_equal(v.n, ARRAY_SIZE(want));
	assert_string_equal(v.items[0], ".hidden");
	/* empty */
	tree_dir(f->root, "empty");
	assert_int_equal(vgpu_sysfs_list_dir(&f->top, &v, "empty"), 0);
	assert_int_equal(v.n, 0);
}

/* More entries than one getdents64() buffer holds (32 KiB): every one, sorted. */
static void test_list_dir_large(void **state)
{
	struct fixture *f = *state;
	VGPU_AUTOSTRV v = { 0 };
	const unsigned n = 1500;

	for (unsigned i = n; i-- > 0;) {
		char rel[128];

		snprintf(rel, sizeof(rel), "many/entry-with-a-rather-long-name-%u", i);
		tree_put(f->root, rel, "");
	}
	assert_int_equal(vgpu_sysfs_list_dir(&f->top, &v, "many"), 0);
	assert_int_equal(v.n, n);
	for (unsigned i = 0; i < n; i++) {
		char want[128];

		snprintf(want, sizeof(want), "entry-with-a-rather-long-name-%u", i);
		assert_string_equal(v.items[i], want);
	}
}

/* The order is strverscmp()'s, for names alike in all but their numbers too. */
static void test_list_dir_order(void **state)
{
	static const char *const pre[] = { "", "a", "virtfn", "nvidia-", "x.", "0000:10:0", "1." };
	static const char *const suf[] = { "", "a", ".1", "-2", "0" };
	/* numbers with and without leading zeros, and ending in letters */
	char num[] = "0 00 01 001 1 9 10 09 010 100 99 1a 9z 10b 0a 19", *save = NULL;
	struct fixture *f = *state;
	VGPU_AUTOSTRV v = { 0 };
	size_t want = 0;

	tree_dir(f->root, "order");
	for (char *n = strtok_r(num, " ", &save); n; n = strtok_r(NULL, " ", &save))
		for (size_t i = 0; i < ARRAY_SIZE(pre); i++)
			for (size_t k = 0; k < ARRAY_SIZE(suf); k++) {
				char rel[128], path[PATH_MAX];
				struct stat st;

				snprintf(rel, sizeof(rel), "order/%s%s%s", pre[i], n, suf[k]);
				tree_path(path, sizeof(path), f->root, rel);
				if (lstat(path, &st) == 0)
					continue; /* made by another combination */
				tree_put(f->root, rel, "");
				want++;
			}
	assert_int_equal(vgpu_sysfs_list_dir(&f->top, &v, "order"), 0);
	assert_int_equal(v.n, want);
	for (size_t i = 0; i + 1 < v.n; i++)
		if (strverscmp(v.items[i], v.items[i + 1]) >= 0)
			fail_msg("'%s' listed before '%s'", v.items[i], v.items[i + 1]);
}

/* ---- writing ---------------------------------------------------------------------------- */

static void test_write(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX * 2];
	int reader;
	char c;

	tree_put(f->root, "sys/attr", "");
	assert_int_equal(vgpu_sysfs_write(&f->top, "nvidia-684", "sys/%s", "attr"), 0);
	assert_string_equal(host_file(f, "root/sys/attr"), "nvidia-684");
	/* through a link inside the root */
	tree_put(f->root, "sys/attr2", "");
	tree_link(f->root, "alias", "/sys/attr2");
	assert_int_equal(vgpu_sysfs_write(&f->top, "1", "alias"), 0);
	assert_string_equal(host_file(f, "root/sys/attr2"), "1");

	/* only an existing file: nothing is created */
	assert_int_equal(vgpu_sysfs_write(&f->top, "1", "sys/new"), -ENOENT);
	assert_false(host_exists(f, "root/sys/new"));
	/* a directory */
	assert_int_equal(vgpu_sysfs_write(&f->top, "1", "sys"), -EISDIR);
	/* a FIFO without a reader: refused at once, not waited on */
	tree_fifo(f->root, "fifo");
	assert_int_equal(vgpu_sysfs_write(&f->top, "1", "fifo"), -ENXIO);
	/* ... and with one: not a regular file, and nothing reaches the reader */
	snprintf(path, sizeof(path), "%s/fifo", f->root);
	reader = open(path, O_RDONLY | O_NONBLOCK);
	assert_true(reader >= 0);
	assert_int_equal(vgpu_sysfs_write(&f->top, "1", "fifo"), -VGPU_ENOTREG);
	assert_true(read(reader, &c, 1) <= 0);
	close(reader);
	/* a device */
	if (make_zero_device(f, "zero"))
		assert_int_equal(vgpu_sysfs_write(&f->top, "1", "zero"), -VGPU_ENOTREG);
	/* the path is relative to the root */
	assert_int_equal(vgpu_sysfs_write(&f->top, "1", "/sys/attr"), -VGPU_EESCAPE);
	assert_string_equal(host_file(f, "root/sys/attr"), "nvidia-684");
}

/* ---- a user's own file ------------------------------------------------------------------- */

/* vgpu_file_read(@path) fails with @want and "@prefix'PATH'@suffix"; *out untouched. */
static void file_read_fails(struct fixture *f, const char *path, size_t cap, int want,
			    const char *prefix, const char *suffix)
{
	char *out = (char *)"sentinel";
	char msg[PATH_MAX * 3];
	int r = vgpu_file_read(&f->ctx, path, cap, &out, NULL);

	if (r != want)
		fail_msg("vgpu_file_read('%s') = %d, expected %d", path, r, want);
	assert_string_equal(out, "sentinel");
	snprintf(msg, sizeof(msg), "%s'%s'%s", prefix, path, suffix);
	assert_string_equal(vgpu_ctx_error(&f->ctx), msg);
}

static void test_file_read(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX * 2], *text = NULL;
	char cause[128];
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/domain.xml", f->base);
	tree_put(f->base, "domain.xml", "<domain/>\n");
	assert_int_equal(vgpu_file_read(&f->ctx, path, 10, &text, &len), 0);
	assert_string_equal(text, "<domain/>\n");
	assert_int_equal(len, 10);
	free(text);
	file_read_fails(f, path, 9, -EFBIG, "", " is larger than 9 bytes");

	snprintf(cause, sizeof(cause), ": %s", strerror(ENOENT));
	snprintf(path, sizeof(path), "%s/absent.xml", f->base);
	file_read_fails(f, path, 100, -ENOENT, "cannot read ", cause);

	snprintf(cause, sizeof(cause), ": %s", strerror(EISDIR));
	file_read_fails(f, f->base, 100, -EISDIR, "cannot read ", cause);

	/* a FIFO: not opened for a blocking read, not read */
	tree_fifo(f->base, "pipe.xml");
	snprintf(path, sizeof(path), "%s/pipe.xml", f->base);
	file_read_fails(f, path, 100, -VGPU_ENOTREG, "cannot read ", ": not a regular file");

	/* the user's path is taken as given: not inside any root */
	assert_int_equal(vgpu_file_read(&f->ctx, "/proc/self/status", 1 << 16, &text, NULL), 0);
	assert_non_null(strstr(text, "Name:"));
	free(text);
}

/* ---- opening a root ------------------------------------------------------------------- */

static void test_open(void **state)
{
	struct fixture *f = *state;
	struct vgpu_sysfs *fs = NULL;
	char path[PATH_MAX * 2], want[PATH_MAX * 3];

	assert_int_equal(vgpu_sysfs_open(&f->ctx, "", &fs), -EINVAL);
	assert_null(fs);
	assert_string_equal(vgpu_ctx_error(&f->ctx),
			    "sysroot '': an empty root is not a directory");

	snprintf(path, sizeof(path), "%s/no-root", f->base);
	assert_int_equal(vgpu_sysfs_open(&f->ctx, path, &fs), -ENOENT);
	assert_null(fs);
	snprintf(want, sizeof(want), "cannot open sysroot '%s': %s", path, strerror(ENOENT));
	assert_string_equal(vgpu_ctx_error(&f->ctx), want);

	snprintf(path, sizeof(path), "%s/secret", f->base);
	assert_int_equal(vgpu_sysfs_open(&f->ctx, path, &fs), -ENOTDIR);
	assert_null(fs);
	snprintf(want, sizeof(want), "sysroot '%s' is not a directory", path);
	assert_string_equal(vgpu_ctx_error(&f->ctx), want);

	/* a root reached through a link, trailing slashes dropped for messages */
	tree_link(f->base, "root-link", f->root);
	snprintf(path, sizeof(path), "%s/root-link///", f->base);
	assert_int_equal(vgpu_sysfs_open(&f->ctx, path, &fs), 0);
	path[strlen(path) - 3] = '\0';
	assert_string_equal(vgpu_sysfs_root(fs), path);
	vgpu_sysfs_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_root_jail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sysdir_beneath, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nodev, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_long, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_hex, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_str, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpus, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dangling, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_dir_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_dir_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open, setup, teardown),
	};

	return cmocka_run_group_tests_name("sysfs", tests, NULL, NULL);
}
