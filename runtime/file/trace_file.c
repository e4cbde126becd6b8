// SPDX-License-Identifier: MIT
/*
 * runtime/file/trace_file.c - the trace file: header, buffers, runtime
 * buffers.
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
 * stderr and stops recording; the program goes on. The file is cut back
 * to the end of the last unit it holds whole, and a last unit goes there
 * (fw_stopped()): a drop record for the records of the unit that failed
 * and a close marker "stopped" naming the error, so that the trace itself
 * says it ends early and why. Under a file size limit (RLIMIT_FSIZE) a
 * write that would leave no room for that unit is not tried (fw_room()):
 * it fails with EFBIG, the last unit fits. On a full disk the last unit is
 * tried, and the file cut back again when it does not fit.
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
 * directory, opened by fdr_file_prepare(): see fw_unnamed) and only then
 * linked at the trace path, so a process ended
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
 *
 * Direct writes: once a trace outgrows what the kernel keeps dirty (a
 * few GB), each byte written through the page cache costs the writer
 * about 2 ns of CPU time here (allocating, reclaiming and writing back
 * pages; a core for 500 MB/s), and the pool grows while the flush thread
 * falls behind. Written with O_DIRECT, a byte costs a tenth of that and
 * goes at the disk's speed. So the trace file, where its file system
 * takes direct writes (statx reports an alignment), is written through
 * the page cache until that proves slow (direct_io=auto: fw_dio_watch()),
 * then direct; direct_io=always starts direct, off never is. Direct, what
 * is written is copied into the stage, an aligned area (a memcpy); whole
 * blocks go from the stage to the disk; the bytes of the last, partial
 * block stay in the stage until a later write completes the block. They
 * are written through the page cache only when the file must show them
 * (fdr_file_settle(): the flush thread idle for FDR_SETTLE_MS, the close,
 * the fatal-signal dump), and overwritten by the next direct write.
 * Invariant: the file holds every byte before fw_dio.base, the stage holds
 * fw_dio.base to the logical end (fewer than fw_dio.align bytes between
 * writes), and the file holds those too unless fw_dio.unsettled. A process
 * killed outright (SIGKILL) while the flush thread is busy loses at most
 * that partial block, at the end: the trace reads as cut there, as after a
 * kill during a write. A file system that refuses a direct write (EINVAL)
 * is written through the page cache from then on, the write redone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#ifdef FDR_CHECK_COUNTS
#include <stdlib.h>
#endif
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "buffer_queue.h"
#include "clock.h"
#include "config.h"
#include "ext_encode.h"
#include "fd_high.h"
#include "fdr_walk.h"
#include "file_internal.h"
#include "records.h"
#include "say.h"
#include "slowpath.h"
#include "state.h"
#include "trace_file.h"

/*
 * The thread id the runtime's own units carry (the flush thread's, 0
 * before it starts; a fork child keeps its parent's until its own starts):
 * set by the flush layer (fdr_file_set_tid()), read for the last unit of
 * a stopped trace (fw_stop_write()). Plain: set once per flush thread,
 * before it writes; a stale 0 names the writing thread instead.
 */
static int32_t fw_rt_tid;

notrace void fdr_file_set_tid(int32_t tid)
{
	fw_rt_tid = tid;
}

/* The bytes the last unit needs (fw_stopped()): a whole buffer in v1. */
static notrace uint64_t fw_stop_room(void)
{
	return fdr_cfg.format_version == 1 ? fdr_cfg.buffer_size : sizeof(fw_stop_unit);
}

notrace bool fdr_file_max_size_hit(void)
{
	return atomic_load_explicit(&fw_max_size_hit, memory_order_relaxed);
}

/*
 * May @len more bytes go into the file and leave room for the last unit
 * below the file size limit? Asked again of the kernel before saying no:
 * the program may have raised the limit since.
 */
static notrace bool fw_room(size_t len)
{
	off_t end;

	if (!fw_fsize_max)
		return true;
	end = fdr_fd == fw_dio.fd ? fw_dio.base + (off_t)fw_dio.len : lseek(fdr_fd, 0, SEEK_CUR);
	if (end < 0 || (uint64_t)end + len + fw_stop_room() <= fw_fsize_max)
		return true;
	fw_fsize_probe();
	return !fw_fsize_max || (uint64_t)end + len + fw_stop_room() <= fw_fsize_max;
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
	uint64_t cpu0 = 0;
	int err;

	fw_cut_err = 0;
	fw_unit_at = -1;
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
	if (!fw_ours())
		return -EBADF;
	{
		size_t len = 0;

		for (int i = 0; i < n; i++)
			len += iov[i].iov_len;
		if (!fw_room(len)) {
			/* nothing written: the file ends where it did (the stage's bytes in it) */
			if (fdr_fd != fw_dio.fd || !fw_dio_stop())
				fw_cut_err = EFBIG;
			if (fw_fsize_option) {
				atomic_store_explicit(&fw_max_size_hit, true, memory_order_relaxed);
				return fw_fail("max_size reached", EFBIG);
			}
			return fw_fail("write failed", EFBIG);
		}
		if (fdr_fd == fw_dio.fd) {
			fw_unit_at = fw_dio.base + (off_t)fw_dio.len;
			err = fw_dio_writev(iov, n, len);
			if (err != -EAGAIN)
				return err;
		}
		fw_unit_at = lseek(fdr_fd, 0, SEEK_CUR);
		fw_prealloc(fw_unit_at, len);
		if (fdr_fd == fw_dio.cand && fw_dio.fd < 0)
			cpu0 = fw_cpu_ns();	/* direct_io=auto watches what the page cache costs */
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
	if (cpu0)
		fw_dio_watch(done, fw_cpu_ns() - cpu0);
	return 0;
cut:
	if (done) {
		off_t end = lseek(fdr_fd, 0, SEEK_CUR);

		if (end >= (off_t)done && ftruncate(fdr_fd, end - (off_t)done) == 0 &&
		    lseek(fdr_fd, end - (off_t)done, SEEK_SET) >= 0)
			fw_cut_err = err;
	} else {
		fw_cut_err = err;
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
	const off_t off = offsetof(struct fdrtrace_file_header, cycle_frequency);
	int err;

	if (fdr_fd < 0 || fdr_file_failed())
		return;
	if (fdr_fd == fw_dio.fd && fw_dio.base == 0)
		memcpy(fw_dio.stage + off, &freq, sizeof(freq));	/* the next direct write has it too */
	/* the header was written through the page cache (fw_early): so is this */
	err = fw_write_through((const uint8_t *)&freq, sizeof(freq), off);
	if (err)
		fw_fail("header update failed", err);
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
		struct fdr_walk_rec rec;
		const uint8_t *q;
		long n;

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
		/* one record by the format's rules (fdr_walk.h); a damaged or cut one ends the count */
		n = fdr_walk_next(p, (size_t)(end - p), &rec);
		if (n < 0)
			break;
		q = p + FDRTRACE_METADATA_RECORD_SIZE;	/* an event's payload */
		p += n;
		if (rec.kind == FDR_WALK_FUNCTION) {
			records++;
		} else if (drops && rec.kind == FDRTRACE_MD_CUSTOM_EVENT &&
			   rec.payload >= sizeof(struct fdrtrace_ext_header) + 21 &&
			   !memcmp(q, FDRTRACE_EXT_MAGIC, FDRTRACE_EXT_MAGIC_LEN) &&
			   q[offsetof(struct fdrtrace_ext_header, kind)] == FDRTRACE_EXT_DROP) {
			/* after the header: tid u32, reason u8, records u64, buffers u64 */
			const uint8_t *body = q + sizeof(struct fdrtrace_ext_header);
			uint8_t reason = body[4];
			uint64_t r, b;

			memcpy(&r, body + 5, 8);
			memcpy(&b, body + 13, 8);
			fdr_totals.records_dropped += r;
			fdr_totals.buffers_dropped += b;
			if (reason < FDRTRACE_DROP_REASON_COUNT)
				fdr_totals.dropped_by[reason] += r;
		}
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

/* The bytes a buffer of @len bytes takes in the file: v1 pads every buffer to buffer_size. */
static inline notrace uint64_t fw_framed_len(uint64_t len)
{
	return fdr_cfg.format_version == 1 ? fdr_cfg.buffer_size : len;
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
		if (len + sizeof(f->eob) > fw_framed_len(len))
			return -EINVAL;
		pad = fw_framed_len(len) - len - sizeof(f->eob);
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

/*
 * How the process ends, set by whoever ends it (fdr_set_end(): the exit
 * handler, _exit, a fatal signal's dump, exec) before it writes the close
 * marker, on the same thread or before handing the finish to the flush
 * thread (fdr_flush_finish(), whose wake-up and join order it). A close
 * that ends no process (a snapshot, a stop on error) says "unknown".
 */
static uint8_t fw_end;
static uint32_t fw_end_value;

notrace void fdr_set_end(uint8_t end, uint32_t value)
{
	fw_end = end;
	fw_end_value = value;
}

notrace size_t fdr_close_record(uint8_t *buf, size_t cap, uint8_t how, uint64_t freq, int error)
{
	struct fdr_ext_close_info c = {
		.how = how,
		.records = fdr_totals.records,
		.records_dropped = fdr_totals.records_dropped,
		.buffers = fdr_totals.buffers,
		.buffers_dropped = fdr_totals.buffers_dropped,
		.threads = fdr_threads_seen(),
		.cycle_frequency = freq,
		.records_left_out = fdr_totals.dropped_by[FDRTRACE_DROP_FILTERED],
		.error = error > 0 ? (uint32_t)error : 0,
	};

	if (how == FDRTRACE_CLOSE_EXIT || how == FDRTRACE_CLOSE_SIGNAL) {
		c.end = fw_end;
		c.end_value = fw_end_value;
	}

	c.end_realtime_ns = fdr_clock_ns(CLOCK_REALTIME);
	return fdr_ext_close(buf, cap, &c);
}

/* Append @len bytes of extension payload to the last unit at @n (fw_stopped()). */
static notrace size_t fw_stop_add(size_t n, const uint8_t *payload, size_t len, uint64_t tsc)
{
	if (!len || n + FDRTRACE_METADATA_RECORD_SIZE + len > sizeof(fw_stop_unit))
		return n;
	n += fdr_custom_event_md(fw_stop_unit + n, (uint32_t)len, tsc);
	memcpy(fw_stop_unit + n, payload, len);
	return n + len;
}

/* @records and @buffers were not written: counted as dropped for an I/O error. */
static notrace void fw_lost(uint64_t records, uint64_t buffers)
{
	fdr_totals.records -= records;
	fdr_totals.buffers -= buffers;
	fdr_totals.records_dropped += records;
	fdr_totals.buffers_dropped += buffers;
	fdr_totals.dropped_by[FDRTRACE_DROP_IO_ERROR] += records;
}

/*
 * Write the last unit at @at, the end of fdr_fd: a drop record for
 * @records and @buffers lost to the error @err, then the close marker
 * "stopped". Return: whether it is in the file (if not, the file is as
 * it was).
 */
static notrace bool fw_stop_write(uint64_t records, uint64_t buffers, int err, off_t at)
{
	const off_t end = at;
	uint8_t p[256];
	struct fw_frame f;
	struct iovec iov[4];
	unsigned cpu;
	uint64_t tsc;
	size_t n;
	int k;

	tsc = fdr_clock_read(&cpu);
	n = fdr_preamble(fw_stop_unit, fw_rt_tid ? fw_rt_tid : (int32_t)syscall(SYS_gettid), cpu, tsc);
	if (records || buffers)
		n = fw_stop_add(n, p, fdr_ext_drop(p, sizeof(p), 0, FDRTRACE_DROP_IO_ERROR,
						   records, buffers), tsc);
	n = fw_stop_add(n, p, fdr_close_record(p, sizeof(p), FDRTRACE_CLOSE_STOPPED,
					       fdr_clock.freq, err), tsc);
	{
		/* the totals stay those the close marker gives */
		const struct fdr_totals keep = fdr_totals;

		k = fw_frame_buffer(iov, &f, NULL, fw_stop_unit, n);
		fdr_totals = keep;
	}
	if (k < 0)
		return false;
	for (int i = 0; i < k; i++) {
		if (fw_write_all(fdr_fd, iov[i].iov_base, iov[i].iov_len, at)) {
			(void)!ftruncate(fdr_fd, end);
			return false;
		}
		at += (off_t)iov[i].iov_len;
	}
	lseek(fdr_fd, at, SEEK_SET);
	return true;
}

/*
 * A unit of @buffers buffers holding @records function records (counted
 * into the totals as it was framed) could not be written, and the file
 * was cut back to where it began (fw_cut_err): they are lost, and the
 * last unit goes where they would have (fw_stop_write()). When even that
 * does not fit (a full disk), the last unit written whole is given up to
 * make room, and lost with them. Caller holds the file lock;
 * async-signal-safe.
 */
static notrace void fw_stopped(uint64_t records, uint64_t buffers)
{
	const int err = fw_cut_err;
	struct stat st;

	fw_cut_err = 0;
	/* written through the page cache, at the end (the cut left it there) */
	if (!err || fdr_fd < 0 || fdr_fd == fw_dio.fd || !fw_ours() || fstat(fdr_fd, &st))
		return;
	fw_lost(records, buffers);
	if (fw_stop_write(records, buffers, err, st.st_size))
		return;
	if (fw_last.fd != fdr_fd || fw_last.at < 0 || fw_last.at >= st.st_size ||
	    ftruncate(fdr_fd, fw_last.at))
		return;
	fw_lost(fw_last.records, fw_last.buffers);
	fw_stop_write(records + fw_last.records, buffers + fw_last.buffers, err, fw_last.at);
	fw_last.at = -1;
}

/* A unit of @buffers buffers holding @records function records is in the file whole. */
static notrace void fw_written(uint64_t records, uint64_t buffers)
{
	fw_last.fd = fdr_fd;
	fw_last.at = fw_unit_at;
	fw_last.records = records;
	fw_last.buffers = buffers;
}

notrace int fdr_file_write_buffer(const uint8_t *data, uint64_t len)
{
	const uint64_t records = fdr_totals.records;
	struct fw_frame f;
	struct iovec iov[4];
	int n = fw_frame_buffer(iov, &f, NULL, data, len);

	if (n < 0)
		return n;
	n = fw_writev(iov, n);
	if (!n)
		fw_written(fdr_totals.records - records, 1);
	else if (fw_cut_err)
		fw_stopped(fdr_totals.records - records, 1);
	return n;
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
	const uint64_t records = fdr_totals.records, buffers = fdr_totals.buffers;
	struct fw_frame frames[FDR_WRITE_BATCH];
	struct iovec iov[4 * FDR_WRITE_BATCH];
	int n = 0;

	if (count > FDR_WRITE_BATCH)
		return -EINVAL;
	if (fw_fsize_max && count > 1) {
		uint64_t total = 0;

		for (unsigned i = 0; i < count; i++)
			if (bufs[i]->len && bufs[i]->data)
				total += fw_framed_len(bufs[i]->len);
		if (!fw_room(total)) {
			/* near the file size limit: as many whole buffers as fit, one at a time */
			for (unsigned i = 0; i < count; i++) {
				int err = fdr_file_write_buffers(&bufs[i], 1);

				if (err)
					return err;
			}
			return 0;
		}
	}
	for (unsigned i = 0; i < count; i++) {
		int k;

		if (!bufs[i]->len || !bufs[i]->data)
			continue;
		k = fw_frame_buffer(iov + n, &frames[i], bufs[i], bufs[i]->data, bufs[i]->len);
		if (k > 0)
			n += k;
	}
	if (!n)
		return 0;
	n = fw_writev(iov, n);
	if (!n)
		fw_written(fdr_totals.records - records, fdr_totals.buffers - buffers);
	else if (fw_cut_err)
		fw_stopped(fdr_totals.records - records, fdr_totals.buffers - buffers);
	return n;
}

