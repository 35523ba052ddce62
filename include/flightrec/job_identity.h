// Who a flightrec process is, as every process of a job resolves it alike:
// the job id and the host name, sanitized to the characters of
// flightrec/job_dir.h (NameChar). Header-only, libc only.
#ifndef FLIGHTREC_JOB_IDENTITY_H_
#define FLIGHTREC_JOB_IDENTITY_H_

#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "flightrec/job_dir.h"

namespace flightrec {
namespace format {

// The job id: NCCL_FLIGHTREC_JOB_ID, else SLURM_JOB_ID, else
// TORCHELASTIC_RUN_ID, else "nojob"; sanitized.
inline void ResolveJobId(char* out, size_t out_len) {
  const char* vars[] = {"NCCL_FLIGHTREC_JOB_ID", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID"};
  const char* job = nullptr;
  for (const char* var : vars) {
    const char* v = getenv(var);
    if (v != nullptr && v[0] != '\0') {
      job = v;
      break;
    }
  }
  SanitizeName(job, "nojob", out, out_len);
}

// The host name sanitized for use in file names.
inline void HostName(char* out, size_t out_len) {
  char raw[256] = {};
  if (gethostname(raw, sizeof(raw) - 1) != 0) raw[0] = '\0';
  SanitizeName(raw, "unknown-host", out, out_len);
}

}  // namespace format
}  // namespace flightrec

#endif  // FLIGHTREC_JOB_IDENTITY_H_
