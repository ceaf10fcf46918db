// Package mount answers the sandbox's OS calls (message.OsCall) for one
// session, from an explicit table of host directories or Go file systems
// (io/fs.FS, see "Go file systems") mounted at virtual paths, an explicit
// environment map, a clock and a random source. The
// worker never touches the host: every Path/open/os.getenv/clock call in the
// sandbox reaches the parent as an OsCall, and [Table.HandleOS] builds the
// complete ResumeCall that answers it.
//
// # Answers
//
// Results have the shapes the worker expects (see the protocol-2 vectors):
//
//	exists, is_file, is_dir, is_symlink  bool (False where CPython 3.14 swallows the error)
//	read_text                            str (strict UTF-8, universal newlines)
//	read_bytes                           bytes
//	stat                                 os.stat_result named tuple, 10 fields
//	iterdir                              list of Path: the directory as written / name
//	resolve                              Path (symlinks inside the mount resolved)
//	absolute                             Path (cwd joined; pure string work)
//	unlink, rmdir, mkdir                 None
//	write_text, append_text              int: characters written
//	write_bytes, append_bytes            int: bytes written
//	open                                 file_handle{path as written, mode, position}
//	rename                               Path of the target, as written
//	getenv                               str, or the default node copied back
//	get_environ                          dict str→str, in key order
//	date_today                           date in Options.Location (nil: the session's zone)
//	date_time_now                        datetime: naive in that zone, or aware at tz
//	urandom                              bytes (at most MaxUrandom)
//	time (protocol 5, datetime=call_host) by caller, from Options.Clock:
//	  time.time                          float: Unix seconds
//	  time.time_ns                       int: Unix nanoseconds
//	  time.monotonic, time.perf_counter  float: seconds since New (_ns: int)
//	anything else                        not_handled (the sleeps too)
//
// Failures are answers too: a ResultError carrying the exception CPython
// would raise, such as FileNotFoundError
// "[Errno 2] No such file or directory: '/x'" (rename names both paths in
// every errno it fails with, the table's own refusals included:
// "... '/a' -> '/b'"). Messages repeat the path as the sandbox wrote it
// (clipped to 512 bytes), never a host path. The class is CPython's for the
// errno (PEP 3151) where the worker knows it; the errnos whose subclass it
// lacks (EAGAIN's BlockingIOError, EINTR's InterruptedError, EPIPE's
// BrokenPipeError) raise OSError, which `except OSError` catches as in
// CPython, since the worker rejects an answer naming a type it does not
// know. The worker's exceptions hold one string argument: str(e) is
// CPython's text, but e.args is that text alone, and e.errno, e.strerror
// and e.filename do not exist (AttributeError).
//
// os.listdir(p) reaches the parent as the same iterdir arm as
// Path(p).iterdir() and cannot be told apart; it is answered with Paths.
// Likewise os.rename and os.replace reach it as the rename arm of
// Path.rename, and the worker returns the answer as it is: in the sandbox
// they return the target Path where CPython's return None.
//
// # Virtual paths
//
// Paths arrive exactly as the sandbox wrote them. A relative path is joined
// to the table's virtual working directory ([Options.Cwd], "/" by default;
// [Table.SetCwd] changes it), then cleaned lexically with path.Clean: "."
// and empty components vanish and ".." removes the previous component, so
// "/data/../../etc/passwd" is "/etc/passwd" and ".." above "/" stays at
// "/". A ".." therefore never maps outside a mount: after cleaning, the
// path lies under exactly one mount's virtual path or under none. Paths
// under no mount, including the parents of mount points such as "/", are
// refused with PermissionError "[Errno 13] Permission denied: '<path>'"
// (the exception the worker raises when the parent answers not_handled);
// only absolute() and resolve() answer them, lexically.
//
// The empty path names nothing: in the arms the os functions and open()
// reach (stat, iterdir, unlink, rmdir, mkdir, rename, open) it raises
// FileNotFoundError "[Errno 2] No such file or directory" naming it, as
// os.listdir(""), os.stat("") and open("") do in CPython. The other arms
// come from pathlib alone, and the worker sends Path("") as "" where
// CPython makes it Path("."): there "" is the working directory.
//
// Because ".." is collapsed before any symlink is looked at, "a/link/../b"
// means "a/b" even when link is a symlink (POSIX would apply ".." to the
// link's target).
//
// A change to a path whose last component, as written, is "." or ".."
// follows Linux, before the mode's refusals: the directory before that
// component must exist (FileNotFoundError or NotADirectoryError
// otherwise), then rmdir raises OSError EINVAL for "." and ENOTEMPTY for
// "..", rename OSError EBUSY for either end, unlink, a write or open for
// writing IsADirectoryError, and mkdir FileExistsError (success with
// exist_ok); so os.rmdir('d/.') and Path('a/b/..').rmdir() never remove d
// or a, os.unlink('link/.') never removes the symlink, and
// os.mkdir('new/.') never makes new. With a mount at "/", "/" itself is
// treated as such a component, as Linux treats its root: os.rename with
// "/" at either end and os.rmdir('/') raise OSError EBUSY, os.unlink('/')
// IsADirectoryError. A rename with a dot or a trailing
// slash on either end looks up both parents first, as rename(2) does: a
// missing or non-directory parent is what it reports.
//
// A trailing slash (or "/.") survives from open() and the os functions,
// which pass the path as written (pathlib drops it), and keeps POSIX's
// meaning: the last component must be a directory. Reading, stat, unlink
// or rename of a file written "f/" raise NotADirectoryError, and writing
// or creating "f/" IsADirectoryError, without touching f. Unlink and
// rename (a slash on either end) look at the entry itself, as Linux does:
// a symlink, even to a directory, is not a directory there.
//
// # Host access and confinement
//
// Every host access goes through an [os.Root] opened on the mount's host
// directory when the table is built, so it stays attached to that directory
// even if the host renames it. os.Root resolves every path component with
// openat-style calls and refuses any symlink whose target is absolute or
// climbs out of the root; such refusals surface as PermissionError, and
// the predicates answer False. On top of that the package:
//
//   - rejects embedded NUL bytes with ValueError (CPython's per-call text,
//     e.g. "embedded null byte", "stat: embedded null character in path")
//     and then over-long paths (4096 bytes or more, or a component over
//     255 bytes) with OSError "[Errno 36] File name too long" (for rename,
//     of either path, naming both); the predicates
//     answer False instead, absolute() (pure string work in CPython)
//     refuses neither, and resolve() only the NUL byte (os.path.realpath
//     ignores its lstat's OSError and keeps a name too long as written);
//   - opens files with O_NONBLOCK (os.Root adds O_NOFOLLOW on the last
//     component and resolves any symlink there inside the root), checks the
//     type with stat before opening and again with fstat on the opened
//     handle, and refuses FIFOs, sockets and devices for reads, writes and
//     open with PermissionError, so a FIFO can never block a session; stat
//     and the predicates still report them;
//   - reads, truncates and writes through the handle it checked, never by
//     path after a check; unlink, rmdir and rename (on Linux) are single
//     unlinkat/renameat calls on a parent directory opened through the root,
//     so the entry checked is the entry changed and a symlink in the last
//     component is never followed (renaming onto a symlink replaces the
//     link, not its target);
//   - refuses writes (write/append, and open 'w'/'a') to a regular file with
//     more than one hard link in ReadWrite mode: a hard link the host placed
//     in the mount may share its inode with a file outside it, and a write
//     would change that file. Reads of such files are allowed: they are
//     indistinguishable from a copy the host placed in the mount. The sandbox
//     itself cannot make hard links or symlinks;
//   - refuses rename unless both ends map into the same mount (another mount:
//     OSError "[Errno 18] Invalid cross-device link"; no mount:
//     PermissionError), and refuses to remove or rename a mount's root
//     (PermissionError: it is an entry of the directory outside every
//     mount, which the sandbox cannot change; a mount at "/" answers as
//     above);
//   - leaves out of listings every symlink whose target leaves the root (in
//     overlays, every symlink), and every name that is not valid UTF-8;
//   - bounds each read and listing by Mount.MemoryLimit (MemoryError).
//
// resolve() follows relative symlinks that stay inside the mount, and stops
// (keeping the rest of the path as written) at an absolute or escaping
// symlink, a loop or a missing component, so it never reveals host paths.
// stat() reports the host's values (mode, inode, device, link count,
// owner, size, times). The times are float seconds at indexes 7–9 as well
// as in st_atime, st_mtime and st_ctime: CPython's os.stat_result holds
// int seconds at the indexes and floats in the attributes, but the
// worker's named tuple binds each field name to its index (and refuses
// more names than items), so one value serves both; the attribute, the
// usual reading, keeps CPython's float. st_mtime_ns and the other
// attributes past the ten fields are absent (AttributeError).
//
// A ReadOnly mount answers mkdir as a read-only file system does: a
// missing parent is FileNotFoundError and a file on the way
// NotADirectoryError, an existing path FileExistsError (or success with
// exist_ok for a directory), so Path(d).mkdir(parents=True, exist_ok=True)
// works for an existing d; with parents, the refusal names the first
// missing ancestor, as written, as CPython's does.
//
// Path.mkdir(parents=True) climbs as CPython's does: an ancestor that
// exists but is not a directory, such as a symlink whose target is
// missing, is FileExistsError naming that ancestor, and nothing is made
// (the symlink's target is never created).
//
// # Timeouts and cancellation
//
// Every host filesystem operation runs on its own goroutine while the
// caller waits for the result, for ctx, or for [Options.OpTimeout]. When the
// timeout fires first, the sandbox gets OSError
// "operation timed out: '<path>'" (predicates included) and the session
// continues; the goroutine lingers until the blocked system call returns (a
// stuck NFS server may keep it for a long time), then closes what it
// opened. When ctx ends first, HandleOS returns ctx's error and no answer;
// once ctx is done no operation is started. An Overlay mount answers one
// call at a time (its host reads included); a call waiting for another's
// turn on the same mount gives up as soon as its ctx ends, with ctx's
// error and nothing done. A write abandoned either way
// may still complete later, and stays charged to the write limit (it is
// refunded only if it fails before touching the file).
//
// # Modes and limits
//
// ReadOnly mounts refuse every change with PermissionError
// "[Errno 30] Read-only file system: '<path>'" (CPython would raise a plain
// OSError for EROFS), after what Linux looks up first on a read-only file
// system: a missing parent is FileNotFoundError and a file on the way
// NotADirectoryError (for rename, either end's parent, the source's
// first; a target in another mount is EXDEV), and opening or writing a
// directory, or a name written with a trailing slash, IsADirectoryError. ReadWrite mounts change the host directory, bounded by Mount.WriteLimit bytes
// written per table (OSError "[Errno 122] Disk quota exceeded: '<path>'"
// once spent; a write that failed before touching the file is not
// charged) and Mount.EntryLimit files and directories added per table
// (the same OSError once spent; Path.mkdir(parents=True) counts each
// directory it makes, a creation that failed is not counted, and each
// entry removed gives one back).
//
// # Overlay mounts
//
// An Overlay mount shows the session its host directory (or its FS: read
// "host" as "FS" in this section) with the session's own changes laid
// over it. The changes live in memory for the life of the
// Table and never reach the host: written files (their whole content),
// directories the session made (which hide whatever the host has at and
// below that path), and whiteouts for host entries the session removed or
// renamed away. What the session made and then removed leaves nothing
// behind (no whiteout, no memory charged), so a host entry that appears at
// that path later shows through, as in a ReadWrite mount. A path the session never changed is read from the host at
// the moment of the call, so reads of files the session never wrote see the
// current host content. The first write to a host file copies it (append,
// open 'a', rename) or replaces it (write, open 'w') in memory: from then on
// the host file's later changes are not seen (copy-on-write at first
// write). A directory rename copies the whole merged subtree.
//
// Host symlinks are never followed in overlay mounts: a path through a
// symlinked directory is refused with PermissionError; a symlink as the
// last component answers is_symlink() True and exists()/is_file()/is_dir()
// False, is left out of listings, and refuses reads, stat, writes, open and
// rename with PermissionError (unlink hides it from the session). The
// check walks each component with lstat; os.Root still bounds every
// access, and the opened file is compared (device and inode) with the file
// checked, so a symlink swapped in after the check is refused too. A host
// directory that still holds a symlink, or a name that is not valid
// UTF-8, lists as empty but is not: rmdir, and a directory renamed onto
// it, raise OSError "[Errno 39] Directory not empty", as on the host; and
// renaming a directory with such an entry anywhere in its host tree (the
// copy could not hold it) raises PermissionError.
//
// Every overlay entry costs its content plus its path plus 192 bytes
// against Mount.MemoryLimit, and its index by parent directory 64 bytes
// for each name it links (the directories on its way included) and 320
// for each directory that comes to hold indexed names; a change that would exceed it is
// refused with MemoryError "overlay memory limit of N bytes exceeded
// writing '<path>'" and leaves the overlay unchanged. Bytes written also
// count against WriteLimit. A file grown by appends (each f.write on an
// open handle is one) keeps up to a quarter of its size in spare capacity,
// not charged, so that writing it piece by piece costs time linear in its
// size; the memory held is thus at most 1.25 times the limit.
//
// # Go file systems
//
// A Mount with FS set shows an io/fs.FS (an embed.FS, a testing/fstest.MapFS,
// a *zip.Reader, an fs.FS over object storage) in place of a host
// directory, ReadOnly or Overlay (ReadWrite is refused by New with
// ErrReadWriteFS). Every arm is answered by the code that answers a host
// directory in that mode, reading the FS where it would read the host:
// the same answers, the same exceptions (a change on a ReadOnly FS mount
// is refused with the ReadOnly text above, after the same lookups), the
// same MemoryLimit on each read and listing, the same OpTimeout on each
// FS call. An FS file is read through an io.LimitReader at MemoryLimit+1
// bytes whatever its stat claims, so an endless file raises MemoryError,
// and a listing (on any mount) reads at most MemoryLimit/32 + 256
// entries, those it leaves out included: twice what MemoryLimit can hold
// at 64 bytes an entry, so an endless listing raises MemoryError too.
// What differs:
//
//   - Names handed to the FS are slash-separated, relative to its root and
//     valid by fs.ValidPath: the virtual path is cleaned first, so ".."
//     never reaches it, nor a leading "/" or an empty element. A lookup
//     through a file, which an fs.FS reports as missing, is
//     NotADirectoryError as on a host.
//   - Symlinks exist only in an FS that implements fs.ReadLinkFS
//     (fstest.MapFS does, embed.FS and zip do not: they have none).
//     Following them is the FS's own business (Open, Stat): the table
//     does not confine them as it confines a host directory's, so
//     mount only an FS that keeps to itself (os.DirFS follows symlinks
//     out of its directory; mount a host directory with HostDir instead).
//     A symlink the FS cannot follow (fstest.MapFS: an absolute target,
//     or one leaving the FS) is missing: FileNotFoundError, and False
//     from the predicates. resolve() follows relative symlinks as it
//     does on a host, through fs.ReadLink. An Overlay never follows them.
//   - stat() reports what the fs.FileInfo has: the type and permission
//     bits, the size, and the modification time as st_atime, st_mtime and
//     st_ctime (0, the Unix epoch, when it is the zero time, as embed.FS
//     gives). st_ino, st_dev, st_uid and st_gid are 0 and st_nlink is 1;
//     the FileInfo's Sys value is never read.
//   - The file opened is compared with the file an overlay checked by its
//     type alone (an fs.FS has no inode numbers).
//   - FIFOs, sockets and devices (by the FileInfo's mode) are refused for
//     reads as on a host; a directory is listed only if its opened file
//     is an fs.ReadDirFile (OSError "[Errno 95] Operation not supported"
//     otherwise).
//   - The FS is only read, never changed, and not closed by Close. It is
//     called from the goroutines of concurrent OS calls, so it must be
//     safe for concurrent reads; a call it does not answer within
//     OpTimeout is left running, as a host call is.
//   - A panic of the FS does not end the process from the goroutine the
//     call runs on: HandleOS panics again on its caller's goroutine (if
//     it still waits) with an error naming the operation ("mount: the
//     file system panicked during read") and a slog.LogValuer holding the
//     value and stack. A session recovers it as any OS handler's panic: a
//     RuntimeError in the sandbox, and an Error log.
//
// # Concurrency
//
// A [Table] is safe for concurrent use by multiple goroutines; it serves one
// session (its write counters and overlay contents are per table).
// Operations on one overlay mount are serialized; others run in parallel.
// [Mode], [Mount] and [Options] are plain values; the Clock returned by
// [FixedClock] is safe for concurrent use, and Options.Rand is only read
// under a lock.
package mount
