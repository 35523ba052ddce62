// Users for the tests that try flightrec as another user would
// (adversary_test.cc, docs/security.md): the job's user and a stranger who
// shares the job's project group, each a uid the test process (root) drops
// to in a forked child (setgroups, setresgid, setresuid; no /etc/passwd
// entry needed), and the files of a shared project directory between them.
#ifndef FLIGHTREC_TESTS_INTEGRATION_ADVERSARY_H_
#define FLIGHTREC_TESTS_INTEGRATION_ADVERSARY_H_

#include <stdint.h>
#include <sys/types.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace flightrec {
namespace itest {

// The project group both users are in; the job's user; the stranger.
constexpr gid_t kProjectGid = 4444;
constexpr uid_t kJobUid = 4343;
constexpr gid_t kJobGid = 4343;
constexpr uid_t kStrangerUid = 4242;
constexpr gid_t kStrangerGid = 4242;

struct Identity {
  uid_t uid;
  gid_t gid;
  std::vector<gid_t> groups;  // supplementary groups
};
Identity JobUser();   // 4343, groups 4444
Identity Stranger();  // 4242, groups 4444

// The environment a process of `home`'s user starts with: this process's
// environment without HOME, TMPDIR, XDG_RUNTIME_DIR, NCCL_* and FLIGHTREC_*
// (sanitizer settings pass), then HOME=home, PATH=/usr/bin:/bin, and `env`
// (an empty value unsets the name).
std::vector<std::string> UserEnv(const std::string& home,
                                 const std::map<std::string, std::string>& env);

// A command run by `/bin/sh -c "exec CMD"` as `who`, umask 022, in `cwd`,
// with `envp` as its whole environment; its stdout and stderr go to `out`
// ("" = /dev/null). The pid is CMD's. Every wait is bounded; one still
// running at the bound, or at destruction, is SIGKILLed.
class UserProcess {
 public:
  UserProcess(const Identity& who, const std::string& cmd, const std::vector<std::string>& envp,
              const std::string& cwd, const std::string& out);
  ~UserProcess();
  UserProcess(const UserProcess&) = delete;
  UserProcess& operator=(const UserProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  // Exit status (128 + signal when killed); -1 when SIGKILLed at the bound.
  int Wait(int bound_s);
  int Stop(int sig, int bound_s);

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int result_ = -1;
};

// Runs `cmd` as `who` to its end (at most `bound_s`); its output in `*out`.
int RunAs(const Identity& who, const std::string& cmd, const std::vector<std::string>& envp,
          const std::string& cwd, int bound_s, std::string* out);

// A process of the stranger: calls `step` every `period_ms` until it is
// stopped (destructor, or Stop()). `step` runs in the child, as the stranger.
class StrangerLoop {
 public:
  StrangerLoop(const std::function<void()>& step, int period_ms);
  ~StrangerLoop();
  StrangerLoop(const StrangerLoop&) = delete;
  StrangerLoop& operator=(const StrangerLoop&) = delete;
  void Stop();

 private:
  pid_t pid_ = -1;
};

// Runs `fn` once as `who` in a forked child; its exit status (fn's return).
int DoAs(const Identity& who, const std::function<int()>& fn);

// Processes whose real uid is `uid` (from /proc), with their command names.
std::map<pid_t, std::string> ProcessesOf(uid_t uid);

// What a test keeps of a file to tell later whether it changed.
struct Fingerprint {
  bool exists = false;
  mode_t mode = 0;
  uid_t uid = 0;
  ino_t ino = 0;
  int64_t mtime_ns = 0;
  std::string content;
  bool operator==(const Fingerprint& o) const {
    return exists == o.exists && mode == o.mode && uid == o.uid && ino == o.ino &&
           mtime_ns == o.mtime_ns && content == o.content;
  }
};
Fingerprint FingerprintOf(const std::string& path);  // lstat: a symlink is itself

// Creates `path` (a regular file or a directory) owned by uid:gid with `mode`
// exactly (no umask). False when it could not.
bool MakeFileAs(const std::string& path, const std::string& content, uid_t uid, gid_t gid,
                mode_t mode);
bool MakeDirAs(const std::string& path, uid_t uid, gid_t gid, mode_t mode);

// The host name the plugin records and puts in file names (sanitized).
std::string PluginHostName();

// The decompressed bytes of a dump (`zstd -dc`), "" when it is no zstd frame.
std::string DecompressedDump(const std::string& path);

}  // namespace itest
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_INTEGRATION_ADVERSARY_H_
