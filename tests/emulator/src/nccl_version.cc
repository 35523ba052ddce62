#include "emulator/src/nccl_version.h"

#include <strings.h>

#include <cstdio>
#include <cstring>

namespace flightrec {
namespace emu {

std::string NcclVersion::ToString() const {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%d.%d.%d", major, minor, patch);
  return buf;
}

bool ParseNcclVersion(const std::string& text, NcclVersion* out, std::string* error) {
  if (strcasecmp(text.c_str(), "master") == 0 || strcasecmp(text.c_str(), "master-next") == 0) {
    *out = NcclVersion{2, 31, 0};
    return true;
  }
  int mj = 0, mn = 0, pt = 0;
  char extra = 0;
  int n = std::sscanf(text.c_str(), "%d.%d.%d%c", &mj, &mn, &pt, &extra);
  if (n == 2) pt = 0;
  if ((n != 2 && n != 3) || mj != 2 || mn < 23 || mn > 99 || pt < 0) {
    *error = "--nccl-version '" + text + "': expected 2.Y[.Z] with Y >= 23, or 'master'";
    return false;
  }
  *out = NcclVersion{mj, mn, pt};
  return true;
}

int MaxProfilerApi(const NcclVersion& v) {
  if (v.AtLeast(2, 31)) return 7;
  if (v.AtLeast(2, 29)) return 6;
  if (v.AtLeast(2, 28)) return 5;
  if (v.AtLeast(2, 27)) return 4;
  if (v.AtLeast(2, 26)) return 3;
  if (v.AtLeast(2, 24)) return 2;
  return 1;
}

std::vector<int> SymbolLookupOrder(const NcclVersion& v, int forced_api) {
  if (forced_api >= 1 && forced_api <= kNewestProfilerApi) return {forced_api};
  std::vector<int> order;
  for (int api = MaxProfilerApi(v); api >= 1; --api) order.push_back(api);
  return order;
}

namespace {
bool IsStaticPluginPrefix(const char* env) {
  size_t n = std::strlen(env);
  return n > 0 && n <= std::strlen("STATIC_PLUGIN") && strncasecmp(env, "STATIC_PLUGIN", n) == 0;
}
bool LooksLikeLibName(const std::string& v) {
  return v.size() >= 6 && v.compare(0, 3, "lib") == 0 && v.compare(v.size() - 3, 3, ".so") == 0;
}
}  // namespace

std::vector<LibCandidate> LibraryCandidates(const char* env, const NcclVersion& v, bool* disabled) {
  *disabled = false;
  if (env == nullptr) return {{"libnccl-profiler.so", false}};
  std::string value(env);
  if (v.AtLeast(2, 28, 3) && strcasecmp(env, "none") == 0) {
    *disabled = true;
    return {};
  }
  if (v.AtLeast(2, 28) && IsStaticPluginPrefix(env)) return {{"", true}};
  std::vector<LibCandidate> out{{value, false}};
  if (!v.AtLeast(2, 26)) {
    out.push_back({value, false});  // 2.23-2.25 retry the same name
    return out;
  }
  bool expand = true;
  if (v.AtLeast(2, 28)) {
    expand = value.find('/') == std::string::npos && !LooksLikeLibName(value);
  }
  if (expand) out.push_back({"libnccl-profiler-" + value + ".so", false});
  return out;
}

InitFailurePolicy InitFailurePolicyFor(const NcclVersion& v) {
  if (!v.AtLeast(2, 28)) return InitFailurePolicy::kDisableGlobally;
  if (!v.AtLeast(2, 30, 3)) return InitFailurePolicy::kContinue;
  return InitFailurePolicy::kContinueAndUnload;
}

}  // namespace emu
}  // namespace flightrec
