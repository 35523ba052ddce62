// The one way flightrec creates, writes and opens files in directories that
// other users may be able to write (docs/security.md):
//
//  * every directory is opened once (OpenDir) and checked: who owns it, who
//    else can write it; every file in it is reached relative to that
//    descriptor (openat/renameat), never by a path re-resolved later;
//  * a file is written to a unique temporary (O_CREAT|O_EXCL|O_NOFOLLOW,
//    a random name), fsynced where it must survive, and renamed into place:
//    never through a symlink, never to a fixed temporary name, and a name
//    planted in advance is replaced, not followed;
//  * an existing file is opened O_NOFOLLOW|O_NONBLOCK and judged by fstat on
//    the descriptor: a regular file owned by the running user (or by a member
//    of the trusted group), else refused with a one-line reason ("not owned
//    by you: uid 1002"). A FIFO or device never blocks the reader.
//
// Files are created 0600 (0640 and the trusted group's gid when a group is
// trusted); directories 0700 (0750). libc only, no exceptions, no heap: the
// recorder (inside the plugin) and the CLI link it alike. Not installed.
#ifndef FLIGHTREC_FILEIO_SAFE_FILE_H_
#define FLIGHTREC_FILEIO_SAFE_FILE_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

namespace flightrec {
namespace fileio {

// Room for a reason ("not owned by you: uid 1002 (...)").
constexpr size_t kWhyMax = 256;

// Whose files are believed, and how new files are shared.
struct Trust {
  uint32_t uid = 0;        // the running user (geteuid)
  uint32_t gid = 0;        // the trusted group, when group_set
  bool group_set = false;  // NCCL_FLIGHTREC_GROUP / --trust-group given
};

// The running user, no group.
Trust TrustSelf();
// The running user and the group named `group` (a name or a number);
// false with `why` when no such group exists or the user is not in it.
bool TrustGroup(const char* group, Trust* out, char* why, size_t why_len);
// TrustSelf() plus the group named by NCCL_FLIGHTREC_GROUP when it is set;
// false with `why` when it names no usable group (then `out` is TrustSelf).
bool TrustFromEnv(Trust* out, char* why, size_t why_len);

// Whether a file or directory with this stat is believed: owned by
// t.uid, or owned by a member of the trusted group and carrying its gid.
// `why` gets the one-line reason when it is not.
bool Believed(const struct stat& st, const Trust& t, char* why, size_t why_len);

// Modes flightrec creates with (before the umask): 0600/0700, or with a
// trusted group 0640/0750.
mode_t FileMode(const Trust& t);
mode_t DirMode(const Trust& t);

enum class DirRole : uint8_t {
  // Node-local ring directory: ours alone. Created (with missing parents)
  // DirMode; refused unless owned by us and writable by nobody else (the
  // trusted group may read).
  kPrivate = 0,
  // Dump directory, possibly shared by the job's nodes and by other users
  // (a project directory). Created with missing parents DirMode when absent;
  // refused when world-writable without the sticky bit. When others can
  // write it, `note` says who ("group 1001 and others can write ...").
  kShared = 1,
};

// Opens the directory `path` (creating it when `create`), checks it for
// `role` and returns its descriptor (O_DIRECTORY|O_CLOEXEC), or -1 with
// `why`. `note` (may be null) receives a line worth logging, or "".
int OpenDir(const char* path, DirRole role, const Trust& t, bool create, char* why, size_t why_len,
            char* note, size_t note_len);

// A temporary being written, to become `final_name` in its directory.
struct TempFile {
  int fd = -1;
  char name[256] = {};  // relative to the directory descriptor
};

// Creates `.<final_name>.<random>.tmp` in `dirfd` with
// O_CREAT|O_EXCL|O_NOFOLLOW|O_WRONLY|O_CLOEXEC and FileMode(t) (group set
// with fchown when a group is trusted). False with `why`.
bool CreateTemp(int dirfd, const char* final_name, const Trust& t, TempFile* out, char* why,
                size_t why_len);
// Writes all of `data` to the temporary (EINTR retried).
bool WriteAll(int fd, const void* data, size_t len);
// fsyncs (when `sync`), closes and renames the temporary to `final_name`
// (replacing whatever entry has that name: a planted symlink is replaced,
// never followed), then fsyncs the directory (when `sync`). On failure the
// temporary is removed and `why` says what failed.
bool Publish(int dirfd, TempFile* tmp, const char* final_name, bool sync, char* why,
             size_t why_len);
// Closes and removes a temporary that will not be published.
void Discard(int dirfd, TempFile* tmp);
// CreateTemp + WriteAll + Publish.
bool WriteFileAt(int dirfd, const char* final_name, const void* data, size_t len, const Trust& t,
                 bool sync, char* why, size_t why_len);

enum class OpenStatus : uint8_t {
  kOk = 0,
  kMissing = 1,  // no such entry (ENOENT)
  kRefused = 2,  // a symlink, not a regular file, or not believed: `why`
  kError = 3,    // another open/fstat failure: `why`
};

// Opens an existing file of `dirfd` (AT_FDCWD with a path works too) for
// reading: O_RDONLY|O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC, then fstat: a regular
// file that Believed() accepts. Returns the descriptor (blocking mode
// restored) and fills `st`, or -1 with `status` and `why`.
int OpenForRead(int dirfd, const char* name, const Trust& t, struct stat* st, OpenStatus* status,
                char* why, size_t why_len);

// Opens an existing file for reading with the same checks but
// O_RDWR (a lock whose mtime its holder refreshes).
int OpenForUpdate(int dirfd, const char* name, const Trust& t, struct stat* st, OpenStatus* status,
                  char* why, size_t why_len);

// Creates `name` exclusively (O_CREAT|O_EXCL|O_NOFOLLOW|O_RDWR|O_CLOEXEC,
// FileMode(t), group set): the lock protocol's one winner. -1 with errno
// kept (EEXIST: somebody else has it) and `why`.
int CreateExclusive(int dirfd, const char* name, const Trust& t, char* why, size_t why_len);

// Removes `name` from `dirfd` only when it is a file (or symlink) that
// Believed() accepts, or a symlink we own; never follows. False when it was
// not removed (missing counts as removed).
bool RemoveOurs(int dirfd, const char* name, const Trust& t);

// A token no other user can predict (16 hex digits from getrandom), for
// a name that must not be taken first by someone else.
void RandomToken(char* out, size_t out_len);

// Reads up to `len - 1` bytes of a file opened by OpenForRead into `out`
// (NUL-terminated); the number read, or -1.
ssize_t ReadSmall(int fd, char* out, size_t len);

}  // namespace fileio
}  // namespace flightrec

#endif  // FLIGHTREC_FILEIO_SAFE_FILE_H_
