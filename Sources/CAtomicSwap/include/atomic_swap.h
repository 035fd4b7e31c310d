#ifndef COURSEPACK_ATOMIC_SWAP_H
#define COURSEPACK_ATOMIC_SWAP_H

/// Exchanges two paths atomically (Linux renameat2 RENAME_EXCHANGE): a reader sees one or the
/// other, never neither. Returns 0, or -1 with errno set (ENOSYS/EINVAL where unsupported).
int coursepack_exchange_paths(const char *first, const char *second);

#endif
