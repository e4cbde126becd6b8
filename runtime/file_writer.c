// SPDX-License-Identifier: MIT
/*
 * runtime/file_writer.c - the trace file: header, buffers, runtime buffers.
 *
 * Contract: one writer at a time, the holder of the file lock (an atomic
 * flag: the flush thread, the finisher through the flush thread, or the
 * fatal-signal handler). Everything here is async-signal-safe except
 * fdr_file_prepare() (initialisation and fork child only): writev, pwrite and
 * clock_gettime, no allocation, no stdio.
 *
 * What a buffer looks like on disk:
 *   v5: BufferExtents(size) NewBuffer(tid) WallTimeMarker Pid NewCPUId records...
 *   v1: NewBuffer(tid) WallTimeMarker NewCPUId records... EndOfBuffer padding
 *	 (exactly buffer_size bytes)
 * Buffers in memory start with the same preamble (the v5 extents size is
 * filled in here, from the length being written, so a buffer snapshotted
 * while its owner still writes is never modified).
 *
 * A write error (disk full, EFBIG past ulimit -f, EIO) is reported once on
 * stderr and stops recording; the program goes on.
 *
 * The file is created lazily. fdr_file_prepare() (initialisation, fork
 * child) only chooses the path; what is written before the file exists
 * (the header and the start records) is kept in memory, in order, and
 * fdr_file_create() creates the file and writes it first. Whoever has
 * real data to write creates the file (the flush thread, the finisher,
 * the fatal-signal handler), so a process that never runs an
 * instrumented function leaves no file at all, and nothing is ever
 * unlinked. fdr_file_create() is async-signal-safe (open, write, linkat).
 *
 * The file appears whole: it is written unnamed (O_TMPFILE in the trace's
 * directory) and only then linked at the trace path, so a process ended
 * at any moment (_exit or SIGKILL on another thread while the flush
 * thread creates it) leaves no file or one that starts with the header
 * and the start records, never an empty one. Where there is no O_TMPFILE
 * (the file system or kernel has none) or no /proc to link it through,
 * the file is created by name and written at once, as before.
 *
 * Blocks ahead: once a file is past FW_PREALLOC bytes, its next
 * FW_PREALLOC bytes of disk blocks are reserved before they are written
 * (fallocate FALLOC_FL_KEEP_SIZE: the size does not change, so a reader
 * never sees them). A buffered write into reserved (unwritten) blocks
 * skips ext4's delayed-allocation bookkeeping per 4 KiB block: a fifth
 * to a third of what writing costs the flush thread (docs/performance.md).
 * fdr_file_trim() gives back what was reserved and not written, when the
 * file is closed or after the fatal-signal dump; a process killed outright
 * (SIGKILL, _exit) leaves at most FW_PREALLOC bytes of blocks reserved
 * past the end until the file is removed or truncated. A file system
 * that refuses (no fallocate, disk full) is written as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#ifdef FDR_CHECK_COUNTS
#include <stdlib.h>
#endif
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ext_writer.h"
#include "runtime.h"

char fdr_path[4200];
int fdr_fd = -1;
struct fdr_totals fdr_totals;

static _Atomic int fw_lock;	/* 0, or the thread id of the holder */
static _Atomic bool fw_failed;
/*
 * The path is chosen, the file not created yet: writes go to fw_early.
 * Changed under the file lock only; read without it by the flush thread's
 * loop and the finisher (relaxed: a stale "pending" only delays creation
 * to the next look, which takes the lock).
 */
static _Atomic bool fw_pending;
static uint8_t *fw_early;
static size_t fw_early_len;
/* the trace's directory (fdr_path up to its last '/'; "/" for the root) */
static char fw_dir[sizeof(fdr_path)];
#define FW_EARLY_CAP (4u << 20)	/* reserved, touched only as far as written */
static const uint8_t *fw_zeros;	/* buffer_size zero bytes, for v1 padding */
#define FW_PREALLOC (8 << 20)
static int fw_pre_fd = -1;	/* the file whose blocks are reserved up to fw_pre_end */
static off_t fw_pre_end;
static bool fw_pre_refused;	/* fallocate failed once: never again in this process */
static struct fdrtrace_md_custom_event_v1 fw_pad_md = {
	.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_CUSTOM_EVENT),
};

notrace bool fdr_file_lock(unsigned spin_limit)
{
	unsigned spins = 0;
	int expect = 0, self = (int)syscall(SYS_gettid);

	/* acquire: pairs with the release in fdr_file_unlock() (the previous writer's state) */
	while (!atomic_compare_exchange_weak_explicit(&fw_lock, &expect, self, memory_order_acquire,
						      memory_order_relaxed)) {
		expect = 0;
		if (spin_limit && ++spins > spin_limit)
			return false;
		if (spins > 1000) {
			struct timespec ts = { 0, 100000 };

			nanosleep(&ts, NULL);
		} else {
			__asm__ __volatile__("pause");
		}
	}
	return true;
}

notrace bool fdr_file_locked_here(void)
{
	return atomic_load_explicit(&fw_lock, memory_order_relaxed) == (int)syscall(SYS_gettid);
}

notrace void fdr_file_unlock(void)
{
	atomic_store_explicit(&fw_lock, 0, memory_order_release);
}

notrace bool fdr_file_failed(void)
{
	return atomic_load_explicit(&fw_failed, memory_order_relaxed);
}

notrace int fdr_file_prepare(void)
{
	fdr_fd = -1;
	atomic_store_explicit(&fw_pending, true, memory_order_relaxed);
	fw_early_len = 0;
	atomic_store_explicit(&fw_failed, false, memory_order_relaxed);
	atomic_store_explicit(&fw_lock, 0, memory_order_relaxed);
	memset(&fdr_totals, 0, sizeof(fdr_totals));
	fw_pre_fd = -1;	/* a fork child's descriptor may have the parent's number */
	fw_pre_end = 0;
	{
		const char *slash = strrchr(fdr_path, '/');
		size_t len = slash ? (size_t)(slash - fdr_path) : 0;

		if (slash && !len)
			len = 1;	/* "/x.fdr": the root */
		memcpy(fw_dir, slash ? fdr_path : ".", slash ? len : 1);
		fw_dir[slash ? len : 1] = '\0';
	}
	if (!fw_zeros) {
		void *z = mmap(NULL, fdr_cfg.buffer_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (z == MAP_FAILED)
			return -ENOMEM;
		fw_zeros = z;
	}
	if (!fw_early) {
		void *m = mmap(NULL, FW_EARLY_CAP, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (m == MAP_FAILED)
			return -ENOMEM;
		fw_early = m;
	}
	return 0;
}

notrace bool fdr_file_created(void)
{
	return !atomic_load_explicit(&fw_pending, memory_order_relaxed);
}

static notrace int fw_fail(const char *what, int err);
static notrace void fw_report(const char *what, int err);

/* write(2) all of @len bytes; Return: 0 or an errno. */
static notrace int fw_write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/*
 * Give the unnamed file @fd the trace's name, through /proc/self/fd
 * (linkat's AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH). Like open's
 * O_EXCL | O_NOFOLLOW, it fails with EEXIST when anything is at the path
 * (a file, a planted symlink or fifo): nothing there is followed or
 * replaced. Async-signal-safe (fdr_u64_text()).
 * Return: 0 or an errno.
 */
static notrace int fw_link(int fd, const char *path)
{
	char proc[40] = "/proc/self/fd/";

	fdr_u64_text(proc + strlen(proc), (uint64_t)fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) < 0)
		return errno;
	return 0;
}

/**
 * fdr_file_open_unnamed - an unnamed file in the trace's directory
 *
 * For a snapshot: it is written unnamed and named by fdr_file_link()
 * once whole, so that its path never shows a snapshot being written (a
 * program or a script that waits for the file reads it complete).
 *
 * Return: the descriptor (writable), or a negative errno when this way is
 * not available here (no O_TMPFILE, or no /proc to link it through): the
 * caller then creates the file by name.
 */
notrace int fdr_file_open_unnamed(void)
{
	char proc[40] = "/proc/self/fd/";
	int fd = open(fw_dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	int err;

	if (fd < 0)
		return -errno;
	/* the link fdr_file_link() goes through: known now, not after the writes */
	fdr_u64_text(proc + strlen(proc), (uint64_t)fd);
	if (access(proc, F_OK) == 0)
		return fd;
	err = errno;
	close(fd);
	return -err;
}

/**
 * fdr_file_link - name the unnamed file @fd (fdr_file_open_unnamed()) @path
 *
 * Fails with -EEXIST when anything is at @path (nothing there is followed
 * or replaced), as open's O_EXCL | O_NOFOLLOW would.
 * Return: 0 or a negative errno.
 */
notrace int fdr_file_link(int fd, const char *path)
{
	return -fw_link(fd, path);
}

/*
 * The file, unnamed, already holding what was kept in memory; linked at
 * the trace path. Return: the descriptor; -EEXIST when something is at
 * the path; -ENOSPC and the like when the early bytes could not be
 * written (@write_failed set: nothing is linked, so there is no file); any other
 * negative errno when this way is not available here (no O_TMPFILE, no
 * /proc), for the caller to create the file by name.
 */
static notrace int fw_create_whole(bool *write_failed)
{
	int fd = open(fw_dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	int err;

	*write_failed = false;
	if (fd < 0)
		return -errno;
	err = fw_write_all(fd, fw_early, fw_early_len);
	if (err) {
		*write_failed = true;
	} else {
		err = fw_link(fd, fdr_path);
		if (!err)
			return fd;
	}
	close(fd);
	return -err;
}

notrace int fdr_file_create(void)
{
	bool write_failed;
	int fd, err;

	if (!atomic_load_explicit(&fw_pending, memory_order_relaxed))
		return fdr_fd >= 0 ? 0 : -EBADF;
	if (atomic_load_explicit(&fw_failed, memory_order_relaxed))
		return -EIO;
	atomic_store_explicit(&fw_pending, false, memory_order_relaxed);
	fd = fw_create_whole(&write_failed);
	if (fd >= 0) {
		fdr_fd = fd;
		return 0;
	}
	if (write_failed)
		return fw_fail("write failed", -fd);
	if (fd != -EEXIST) {
		/* no O_TMPFILE or no /proc here: by name, then written at once */
		fd = open(fdr_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			fd = -errno;
	}
	if (fd < 0) {
		if (!atomic_exchange_explicit(&fw_failed, true, memory_order_relaxed)) {
			fw_report(NULL, -fd);
			fdr_stop_on_error();
		}
		return fd;
	}
	fdr_fd = fd;
	err = fw_write_all(fd, fw_early, fw_early_len);
	if (err)
		return fw_fail("write failed", err);
	return 0;
}

notrace void fdr_file_trim(void)
{
	struct stat st;

	if (fdr_fd < 0 || fdr_fd != fw_pre_fd)
		return;
	/* truncating to its own size frees the blocks reserved past the end */
	if (!fstat(fdr_fd, &st) && st.st_size < fw_pre_end)
		(void)!ftruncate(fdr_fd, st.st_size);
	fw_pre_fd = -1;
	fw_pre_end = 0;
}

notrace void fdr_file_close(void)
{
	if (fdr_fd >= 0) {
		fdr_file_trim();
		close(fdr_fd);
	}
	fdr_fd = -1;
}

/*
 * Before writing @len bytes at the end of fdr_fd: reserve the blocks
 * ahead (see the top of the file). Async-signal-safe (lseek, the
 * fallocate system call).
 */
static notrace void fw_prealloc(size_t len)
{
	off_t pos;

	if (fw_pre_refused)
		return;
	if (fdr_fd != fw_pre_fd) {
		/* another file now (a snapshot, a fork child's): nothing reserved in it yet */
		fw_pre_fd = fdr_fd;
		fw_pre_end = 0;
	}
	pos = lseek(fdr_fd, 0, SEEK_CUR);
	/* small traces never reserve anything */
	if (pos < FW_PREALLOC || pos + (off_t)len <= fw_pre_end)
		return;
	if (fw_pre_end < pos)
		fw_pre_end = pos;
	/* the system call itself: glibc's wrapper is one, but not on POSIX's signal-safe list */
	if (syscall(SYS_fallocate, fdr_fd, FALLOC_FL_KEEP_SIZE, fw_pre_end,
		    (off_t)len + FW_PREALLOC - (fw_pre_end - pos)) == 0)
		fw_pre_end = pos + (off_t)len + FW_PREALLOC;
	else
		fw_pre_refused = true;	/* EOPNOTSUPP, ENOSPC...: the write says what matters */
}

/*
 * Async-signal-safe "fdrtrace: PATH: what: description" on stderr. Not
 * strerror(): it translates (locale, malloc) and is not async-signal-safe;
 * strerrordesc_np() returns a constant string.
 */
static notrace void fw_report(const char *what, int err)
{
	char msg[4600];
	const char *es = strerrordesc_np(err);
	size_t n = 0;
	const char *parts[] = { "fdrtrace: ", fdr_path, ": ", what, ": ", es,
				"; recording stopped\n" };

	if (!es)
		parts[5] = "unknown error";
	if (!what) {
		/* the file could not be created (@what NULL) */
		parts[0] = "fdrtrace: cannot create trace file ";
		parts[2] = "";
		parts[3] = "";
		parts[6] = "; recording off\n";
	}
	for (size_t i = 0; i < FDR_ARRAY_SIZE(parts); i++) {
		size_t l = strlen(parts[i]);

		if (n + l > sizeof(msg))
			l = sizeof(msg) - n;
		memcpy(msg + n, parts[i], l);
		n += l;
	}
	fdr_say_raw(msg, n);
}

static notrace int fw_fail(const char *what, int err)
{
	if (!atomic_exchange_explicit(&fw_failed, true, memory_order_relaxed)) {
		fw_report(what, err);
		fdr_stop_on_error();
	}
	return -err;
}

/*
 * Write one unit (a header or a whole buffer). When the file takes only
 * part of it (disk full, RLIMIT_FSIZE), cut the file back to where the unit
 * began, so that the trace ends at a buffer boundary and reads cleanly.
 * lseek and ftruncate are async-signal-safe, as this must be.
 */
static notrace int fw_writev(struct iovec *iov, int n)
{
	size_t done = 0;
	int err;

	if (atomic_load_explicit(&fw_failed, memory_order_relaxed))
		return -EIO;
	if (fdr_fd < 0 && atomic_load_explicit(&fw_pending, memory_order_relaxed)) {
		/* before the file exists: keep the bytes, in order */
		size_t len = 0;

		for (int i = 0; i < n; i++)
			len += iov[i].iov_len;
		if (len > FW_EARLY_CAP - fw_early_len) {
			/* more start records than we keep: the file is needed now */
			err = fdr_file_create();
			if (err)
				return err;
		} else {
			for (int i = 0; i < n; i++) {
				memcpy(fw_early + fw_early_len, iov[i].iov_base, iov[i].iov_len);
				fw_early_len += iov[i].iov_len;
			}
			return 0;
		}
	}
	if (fdr_fd < 0)
		return -EBADF;
	{
		size_t len = 0;

		for (int i = 0; i < n; i++)
			len += iov[i].iov_len;
		fw_prealloc(len);
	}
	while (n > 0) {
		ssize_t w = writev(fdr_fd, iov, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			goto cut;
		}
		if (w == 0) {
			err = EIO;
			goto cut;
		}
		done += (size_t)w;
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
cut:
	if (done) {
		off_t end = lseek(fdr_fd, 0, SEEK_CUR);

		if (end >= (off_t)done && ftruncate(fdr_fd, end - (off_t)done) == 0)
			lseek(fdr_fd, end - (off_t)done, SEEK_SET);
	}
	return fw_fail("write failed", err);
}

notrace int fdr_file_write_header(void)
{
	struct fdrtrace_file_header h;
	struct iovec iov;

	memset(&h, 0, sizeof(h));
	h.version = (uint16_t)fdr_cfg.format_version;
	h.type = FDRTRACE_LOG_FDR;
	h.bitfield = (fdr_clock.constant_tsc ? FDRTRACE_HDR_CONSTANT_TSC : 0) |
		     (fdr_clock.nonstop_tsc ? FDRTRACE_HDR_NONSTOP_TSC : 0);
	h.cycle_frequency = fdr_clock.freq;
	h.buffer_size = fdr_cfg.buffer_size;
	iov.iov_base = &h;
	iov.iov_len = sizeof(h);
	return fw_writev(&iov, 1);
}

notrace void fdr_file_patch_freq(uint64_t freq)
{
	if (fdr_fd < 0 || fdr_file_failed())
		return;
	if (pwrite(fdr_fd, &freq, sizeof(freq), offsetof(struct fdrtrace_file_header,
							   cycle_frequency)) != sizeof(freq))
		fw_fail("header update failed", errno ? errno : EIO);
}

/*
 * Count function records and (with @drops) add our drop notices to the
 * totals, reading what is written: for the buffers the writer could not
 * count itself (struct fdr_buffer's @counted: those with a report or an
 * event, snapshots, the flush thread's own). Runs of function records
 * (type bit 0 clear) go eight at a time: when the eight words starting at
 * a record all have bit 0 clear, each is a function record (by induction:
 * a function record is 8 bytes, so the next word starts the next record).
 * Metadata goes one record at a time. Return: the function records.
 */
static notrace uint64_t fw_count(const uint8_t *p, const uint8_t *end, bool drops)
{
	uint64_t records = 0;

	while (p < end) {
		uint8_t type;

		while (end - p >= 8 * FDRTRACE_FUNC_RECORD_SIZE) {
			uint64_t w[8];

			memcpy(w, p, sizeof(w));
			if ((w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7]) & 1)
				break;
			records += 8;
			p += sizeof(w);
		}
		if (p >= end)
			break;
		type = p[0];
		if (!(type & 1)) {
			records++;
			p += FDRTRACE_FUNC_RECORD_SIZE;
			continue;
		}
		if ((type >> 1) == FDRTRACE_MD_TYPED_EVENT) {
			int32_t size;

			memcpy(&size, p + 1, sizeof(size));
			p += FDRTRACE_METADATA_RECORD_SIZE;
			if (size < 0 || (size_t)size > (size_t)(end - p))
				return records;
			p += size;
			continue;
		}
		if ((type >> 1) == FDRTRACE_MD_CUSTOM_EVENT) {
			int32_t size;
			struct fdrtrace_ext_header eh;

			memcpy(&size, p + 1, sizeof(size));
			p += FDRTRACE_METADATA_RECORD_SIZE;
			if (size < 0 || (size_t)size > (size_t)(end - p))
				return records;
			if (drops && (size_t)size >= sizeof(eh) + 21) {
				memcpy(&eh, p, sizeof(eh));
				if (!memcmp(eh.magic, FDRTRACE_EXT_MAGIC, 4) &&
				    eh.kind == FDRTRACE_EXT_DROP) {
					uint64_t r, b;

					uint8_t reason = p[sizeof(eh) + 4];

					memcpy(&r, p + sizeof(eh) + 5, 8);
					memcpy(&b, p + sizeof(eh) + 13, 8);
					fdr_totals.records_dropped += r;
					fdr_totals.buffers_dropped += b;
					if (reason < FDRTRACE_DROP_REASON_COUNT)
						fdr_totals.dropped_by[reason] += r;
				}
			}
			p += size;
			continue;
		}
		p += FDRTRACE_METADATA_RECORD_SIZE;
	}
	return records;
}

/*
 * What one buffer adds to a write besides its bytes: the v5 extents
 * record, or v1's EndOfBuffer and padding marker. Kept per buffer of a
 * batch (fdr_file_write_buffers()), as each has its own size.
 */
struct fw_frame {
	struct fdrtrace_md_buffer_extents ext;
	struct fdrtrace_md_end_of_buffer eob;
	struct fdrtrace_md_custom_event_v1 pad;
};

/*
 * The function records of @data[@from..@len) into the totals: @b's own
 * count when its writer kept one (struct fdr_buffer's @counted; checked
 * against a reading in builds with FDR_CHECK_COUNTS), else read (with the
 * drop notices). @b is NULL for a buffer that is not a thread's.
 */
static notrace void fw_count_buffer(const struct fdr_buffer *b, const uint8_t *data,
				    uint64_t from, uint64_t len)
{
	if (b && b->counted && b->meta >= from && b->meta <= len &&
	    !((len - b->meta) % FDRTRACE_FUNC_RECORD_SIZE)) {
		uint64_t n = (len - b->meta) / FDRTRACE_FUNC_RECORD_SIZE;

#ifdef FDR_CHECK_COUNTS
		if (fw_count(data + from, data + len, false) != n) {
			static const char msg[] = "fdrtrace: FDR_CHECK_COUNTS: a buffer's kept count is wrong\n";

			fdr_say_raw(msg, sizeof(msg) - 1);
			abort();
		}
#endif
		fdr_totals.records += n;
		return;
	}
	fdr_totals.records += fw_count(data + from, data + len, true);
}

/*
 * Append the iovecs of one buffer (at most 4) to @iov and count what it
 * holds (@b: the thread's buffer it is, or NULL). Return: the iovecs
 * added, or -EINVAL for a length no buffer has.
 */
static notrace int fw_frame_buffer(struct iovec *iov, struct fw_frame *f,
				   const struct fdr_buffer *b, const uint8_t *data, uint64_t len)
{
	int n = 0;

	if (fdr_cfg.format_version == 1) {
		uint64_t pad;

		memset(&f->eob, 0, sizeof(f->eob));
		f->eob.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_END_OF_BUFFER);
		if (len + sizeof(f->eob) > fdr_cfg.buffer_size)
			return -EINVAL;
		pad = fdr_cfg.buffer_size - len - sizeof(f->eob);
		iov[n++] = (struct iovec){ (void *)data, len };
		iov[n++] = (struct iovec){ &f->eob, sizeof(f->eob) };
		if (pad % FDRTRACE_FUNC_RECORD_SIZE && pad >= FDRTRACE_METADATA_RECORD_SIZE) {
			/*
			 * llvm-xray 14 does not skip v1 padding: it reads it as
			 * 8-byte function records, and loses its footing when
			 * custom events left the padding unaligned. One
			 * custom-event marker whose payload is the rest of the
			 * padding keeps it aligned; readers that honour
			 * EndOfBuffer never look at these bytes.
			 */
			f->pad = fw_pad_md;
			f->pad.size = (int32_t)(pad - FDRTRACE_METADATA_RECORD_SIZE);
			iov[n++] = (struct iovec){ &f->pad, sizeof(f->pad) };
			pad -= FDRTRACE_METADATA_RECORD_SIZE;
		}
		if (pad)
			iov[n++] = (struct iovec){ (void *)fw_zeros, pad };
		fw_count_buffer(b, data, 0, len);
	} else {
		if (len < sizeof(f->ext))
			return -EINVAL;
		memset(&f->ext, 0, sizeof(f->ext));
		f->ext.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_BUFFER_EXTENTS);
		f->ext.size = len - sizeof(f->ext);
		iov[n++] = (struct iovec){ &f->ext, sizeof(f->ext) };
		iov[n++] = (struct iovec){ (void *)(data + sizeof(f->ext)), len - sizeof(f->ext) };
		fw_count_buffer(b, data, sizeof(f->ext), len);
	}
	fdr_totals.buffers++;
	return n;
}

notrace int fdr_file_write_buffer(const uint8_t *data, uint64_t len)
{
	struct fw_frame f;
	struct iovec iov[4];
	int n = fw_frame_buffer(iov, &f, NULL, data, len);

	return n < 0 ? n : fw_writev(iov, n);
}

/*
 * Several buffers in one writev: one system call, and the page cache
 * gets whole runs of pages at once (larger folios), which is most of what
 * the flush thread costs per byte. A failed write cuts the file back to
 * where the batch began (fw_writev()), so the trace still ends at a
 * buffer boundary. Buffers with no bytes are skipped.
 */
notrace int fdr_file_write_buffers(struct fdr_buffer *const *bufs, unsigned count)
{
	struct fw_frame frames[FDR_WRITE_BATCH];
	struct iovec iov[4 * FDR_WRITE_BATCH];
	int n = 0;

	if (count > FDR_WRITE_BATCH)
		return -EINVAL;
	for (unsigned i = 0; i < count; i++) {
		int k;

		if (!bufs[i]->len || !bufs[i]->data)
			continue;
		k = fw_frame_buffer(iov + n, &frames[i], bufs[i], bufs[i]->data, bufs[i]->len);
		if (k > 0)
			n += k;
	}
	return n ? fw_writev(iov, n) : 0;
}

notrace size_t fdr_preamble(uint8_t *p, int32_t tid, unsigned cpu, uint64_t tsc)
{
	uint8_t *start = p;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (fdr_cfg.format_version != 1) {
		struct fdrtrace_md_buffer_extents e;

		memset(&e, 0, sizeof(e));
		e.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_BUFFER_EXTENTS);
		memcpy(p, &e, sizeof(e));
		p += sizeof(e);
	}
	{
		struct fdrtrace_md_new_buffer nb;

		memset(&nb, 0, sizeof(nb));
		nb.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_NEW_BUFFER);
		nb.tid = tid;
		memcpy(p, &nb, sizeof(nb));
		p += sizeof(nb);
	}
	{
		struct fdrtrace_md_walltime w;

		memset(&w, 0, sizeof(w));
		w.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_WALLTIME);
		w.seconds = (uint64_t)ts.tv_sec;
		w.micros = (uint32_t)(ts.tv_nsec / 1000);
		memcpy(p, &w, sizeof(w));
		p += sizeof(w);
	}
	if (fdr_cfg.format_version != 1) {
		struct fdrtrace_md_pid pr;

		memset(&pr, 0, sizeof(pr));
		pr.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_PID);
		pr.pid = fdr_pid;
		memcpy(p, &pr, sizeof(pr));
		p += sizeof(pr);
	}
	{
		struct fdrtrace_md_new_cpu_id c;

		memset(&c, 0, sizeof(c));
		c.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_NEW_CPU_ID);
		c.cpu = (uint16_t)cpu;
		c.tsc = tsc;
		memcpy(p, &c, sizeof(c));
		p += sizeof(c);
	}
	return (size_t)(p - start);
}

notrace size_t fdr_custom_event_md(uint8_t *p, uint32_t size, uint64_t tsc)
{
	if (fdr_cfg.format_version == 1) {
		struct fdrtrace_md_custom_event_v1 m;

		memset(&m, 0, sizeof(m));
		m.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_CUSTOM_EVENT);
		m.size = (int32_t)size;
		m.tsc = tsc;
		memcpy(p, &m, sizeof(m));
	} else {
		struct fdrtrace_md_custom_event_v5 m;

		memset(&m, 0, sizeof(m));
		m.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_CUSTOM_EVENT);
		m.size = (int32_t)size;
		m.delta = 0;	/* the event shares the previous record's time */
		memcpy(p, &m, sizeof(m));
	}
	return FDRTRACE_METADATA_RECORD_SIZE;
}

/* ---- runtime buffers ---- */

static notrace size_t rb_cap(void)
{
	return fdr_cfg.buffer_size - (fdr_cfg.format_version == 1 ? FDR_V1_TAIL : 0);
}

notrace int fdr_rtbuf_init(struct fdr_rtbuf *rb, int32_t tid)
{
	if (!rb->data) {
		void *m = mmap(NULL, fdr_cfg.buffer_size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

		if (m == MAP_FAILED)
			return -errno;
		rb->data = m;
	}
	rb->cap = rb_cap();
	rb->len = 0;
	rb->tid = tid;
	return 0;
}

static uint64_t rb_tsc;

notrace int fdr_rtbuf_add(struct fdr_rtbuf *rb, const uint8_t *payload, size_t len)
{
	unsigned cpu;

	if (!rb->data || !len)
		return -EINVAL;
	if (rb->len && rb->len + FDRTRACE_METADATA_RECORD_SIZE + len > rb->cap) {
		int err = fdr_rtbuf_flush(rb);

		if (err)
			return err;
	}
	if (!rb->len) {
		rb_tsc = fdr_clock_read(&cpu);
		rb->len = fdr_preamble(rb->data, rb->tid, cpu, rb_tsc);
	}
	if (rb->len + FDRTRACE_METADATA_RECORD_SIZE + len > rb->cap)
		return -EMSGSIZE;	/* never fits in one buffer: dropped */
	rb->len += fdr_custom_event_md(rb->data + rb->len, (uint32_t)len, rb_tsc);
	memcpy(rb->data + rb->len, payload, len);
	rb->len += len;
	return 0;
}

/**
 * fdr_rtbuf_add_drops - add one drop record per reason with a count to @rb
 * @rb:		the runtime buffer
 * @tid:	the thread that dropped them (0: the process)
 * @rec:	records dropped, by reason
 * @bufs:	buffers dropped, by reason
 *
 * Context: whoever owns @rb; async-signal-safe.
 */
notrace void fdr_rtbuf_add_drops(struct fdr_rtbuf *rb, int32_t tid, const uint64_t *rec,
				 const uint64_t *bufs)
{
	for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++) {
		uint8_t p[64];
		size_t n;

		if (!rec[r] && !bufs[r])
			continue;
		n = fdr_ext_drop(p, sizeof(p), (uint32_t)tid, (uint8_t)r, rec[r], bufs[r]);
		if (n)
			fdr_rtbuf_add(rb, p, n);
	}
}

notrace int fdr_rtbuf_flush(struct fdr_rtbuf *rb)
{
	int err;

	if (!rb->len)
		return 0;
	err = fdr_file_write_buffer(rb->data, rb->len);
	rb->len = 0;
	return err;
}
