#ifndef COURSEPACK_FILE_CALLS_H
#define COURSEPACK_FILE_CALLS_H

// Linux file calls that Swift's Glibc module does not expose (the flags are macros it cannot
// import). Elsewhere they fail with ENOSYS and callers take their portable path.

/// Exchanges two paths atomically (renameat2 RENAME_EXCHANGE): a reader sees one or the
/// other, never neither. Returns 0, or -1 with errno set (ENOSYS/EINVAL where unsupported).
int coursepack_exchange_paths(const char *first, const char *second);

/// Opens an unnamed regular file in `folder` for writing, and reading back (O_TMPFILE): it has no name until
/// `coursepack_link_unnamed` gives it one, and vanishes if the process dies first. Returns the
/// descriptor, or -1 with errno set (EOPNOTSUPP and others where the file system lacks it).
int coursepack_open_unnamed(const char *folder, int mode);

/// Gives the unnamed file open as `fd` the name `path`, which must not exist (EEXIST if it
/// does). Returns 0, or -1 with errno set.
int coursepack_link_unnamed(int fd, const char *path);

/// Waits until every written page and inode of the file system holding `fd` is on the disk
/// (syncfs): one flush in place of an fsync per file. Returns 0, or -1 with errno set (ENOSYS
/// where the system has no such call).
int coursepack_sync_file_system(int fd);

/// Starts writing the file's dirty pages to the disk without waiting for them
/// (sync_file_range SYNC_FILE_RANGE_WRITE): a later syncfs then waits for less. It makes
/// nothing durable by itself. Returns 0, or -1 with errno set (ENOSYS where there is none).
int coursepack_start_writeback(int fd);

/// Copies up to `count` bytes (at most 1 GiB a call) of `from`, starting at `offset`, to `to`
/// at its file position, which advances, inside the kernel (copy_file_range): the file system
/// may share the blocks (reflink) or copy pages without passing them through user space.
/// Returns how many bytes were copied (0 at the end of `from`, or where a file system copies
/// nothing), or -1 with errno set (EXDEV across file systems, ENOSYS, EOPNOTSUPP, EINVAL where
/// it cannot): the caller then reads and writes.
long long coursepack_copy_range(int from, long long offset, int to, unsigned long long count);

#endif
